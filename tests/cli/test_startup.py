"""Start-up (issue 22): ``import cutemma``, ``cutemma --version`` and ``cutemma layout`` load
only what they use. Held by what is NOT imported (timings live in bench/, not in tests):
the measured figures are in the issue's closing note (farm-bench, CPU seconds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "cutemma.emulate", "cutemma.mma", "cutemma.viz", "cutemma.kernels", "torch")


def loaded_after(code: str) -> set[str]:
    """The modules of HEAVY (or their packages) in sys.modules after ``code`` in a fresh process."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    ).stdout.splitlines()[-1]
    mods = json.loads(out)
    return {h for h in HEAVY if any(m == h or m.startswith(h + ".") for m in mods)}


def test_import_cutemma_loads_no_emulator_numpy_or_catalog():
    assert loaded_after("import cutemma") == set()


def test_version_loads_nothing_heavy():
    code = "from cutemma.cli import main\nassert main(['--version']) == 0"
    assert loaded_after(code) == set()


def test_layout_command_loads_only_the_algebra():
    code = "from cutemma.cli import main\nassert main(['layout', '(4,2):(2,1)']) == 0"
    assert loaded_after(code) == set()


def test_names_still_load_on_first_use():
    code = (
        "import cutemma\n"
        "assert str(cutemma.Layout(4)) == '4:1'\n"
        "assert cutemma.emulate.__name__ == 'cutemma.emulate'\n"
        "assert 'make_mma_atom' in cutemma.__all__ and 'Layout' in dir(cutemma)\n"
        "assert 'image/svg+xml' in cutemma.Layout(4)._repr_mimebundle_()\n"
    )
    assert {"cutemma.emulate", "cutemma.viz"} <= loaded_after(code)
