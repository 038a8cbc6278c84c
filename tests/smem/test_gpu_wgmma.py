"""wgmma on the GPU reads tiles through cutemma's descriptors (see gpu_wgmma_check.py)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cutemma.cuda.launch import device_arch, gpu_unavailable_reason

HERE = Path(__file__).parent


@pytest.mark.gpu
def test_wgmma_reads_cutemma_tiles_through_cutemma_descriptors():
    if gpu_unavailable_reason() is not None:
        pytest.skip(f"needs an NVIDIA GPU: {gpu_unavailable_reason()}")
    if device_arch() != "sm_90a":
        pytest.skip(f"wgmma needs sm_90a (Hopper); this GPU is {device_arch()}")
    if importlib.util.find_spec("torch") is None:
        pytest.skip("the check feeds torch tensors; torch is not installed")
    env = dict(os.environ, PYTHONPATH=str(HERE.parents[1]))
    # the controls corrupt SBO / clear the base offset: the check must notice
    for flag in ([], ["--control"], ["--base-offset"], ["--base-offset", "--control"]):
        run = subprocess.run([sys.executable, str(HERE / "gpu_wgmma_check.py"), *flag], env=env,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
