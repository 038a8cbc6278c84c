"""cutemma.gemm on the GPU: tests/kernels/gpu_gemm_checks.py in a child process (torch first)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("gpu_gemm_checks.py")


@pytest.mark.gpu
def test_gemm_matches_float64_reference(tmp_path):
    pytest.importorskip("torch")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "checks.json")],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
