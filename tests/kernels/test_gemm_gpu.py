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


@pytest.mark.gpu
def test_sm90_gemm_matches_float64_reference(tmp_path):
    # tests/kernels/gpu_sm90_checks.py --quick: every major pair, the built-in configs,
    # edges in M/N/K, alpha/beta with C, NaN propagation; it needs an sm_90 GPU
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the sm90 GEMM needs an sm_90 GPU (H100/H200)")
    script = Path(__file__).with_name("gpu_sm90_checks.py")
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "sm90.json"), "--quick", "--no-bench"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
