"""Run ``verify(hardware=True)`` on a sample of atoms in a child process (torch first).

Shared by the GPU tests of the GMMA probes, dense and sparse.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_SCRIPT = r"""
import json, sys
import torch  # before cutemma (notes/CUDA.md)
from cutemma.cuda.verify import verify
from cutemma.mma import mma_op
sample = json.loads(sys.argv[1])
report = verify([mma_op(n, **kw) for n, kw in sample], hardware=True, progress=False)
for a in report.atoms:
    print(a.status, a.name, a.stages, a.max_err, a.detail)
sys.exit(0 if report.failed == 0 and report.passed == len(sample) else 1)
"""


def verify_on_gpu(sample: list[tuple[str, dict]], tmp_path: Path) -> str:
    """Run the sample through the hardware sweep; return its per-atom lines, assert all pass."""
    script = tmp_path / "verify_sample.py"
    script.write_text(_SCRIPT)
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, str(script), json.dumps(sample)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("pass ") == len(sample), done.stdout
    return done.stdout
