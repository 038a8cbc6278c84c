"""cutemma.gemm's argument errors, raised before any GPU work (needs torch, not a GPU)."""

from __future__ import annotations

import pytest

from cutemma.errors import LaunchError
from cutemma.kernels import gemm, pick_config

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "a,b,match",
    [
        (
            (3, 4),
            (5, 6),
            r"A is \(3, 4\) and B is \(5, 6\); A's columns \(4\) must equal B's rows \(5\)",
        ),
        (
            (3,),
            (3, 6),
            r"A must be a 2-D or 3-D \(batch, rows, cols\) torch tensor.* of shape \(3,\)",
        ),
        ((3, 4), (2, 4, 2, 1), "B must be a 2-D or 3-D"),
        ((2, 3, 4), (3, 4, 5), "their batch sizes 2 and 3 must be equal, or one of them 1"),
        ((2, 3, 4), (5, 6), "A's columns \\(4\\) must equal B's rows \\(5\\)"),
    ],
)
def test_shape_errors(a, b, match):
    with pytest.raises(LaunchError, match=match):
        gemm(torch.zeros(a, dtype=torch.float16), torch.zeros(b, dtype=torch.float16))


def test_dtype_errors_name_both():
    with pytest.raises(LaunchError, match="A is float16 and B is bfloat16; both must be"):
        gemm(torch.zeros(2, 2, dtype=torch.float16), torch.zeros(2, 2, dtype=torch.bfloat16))
    with pytest.raises(LaunchError, match="A is float64"):
        gemm(torch.zeros(2, 2, dtype=torch.float64), torch.zeros(2, 2, dtype=torch.float64))


def test_cpu_tensors_are_refused_with_the_fix():
    with pytest.raises(LaunchError, match="A is on cpu; move it to a CUDA device"):
        gemm(torch.zeros(2, 2, dtype=torch.float16), torch.zeros(2, 2, dtype=torch.float16))


def test_small_problems_get_small_tiles():
    assert pick_config(100, 100, 4096).block_m == 32
    assert pick_config(1024, 1024, 64).block_m == 64
    assert pick_config(8192, 8192, 64).block_m == 128


def test_fp8_pairs_and_unsupported_types():
    e4, e5 = torch.float8_e4m3fn, torch.float8_e5m2
    # mixed e4m3 x e5m2 is accepted (the catalog has both mixed atoms): only the device is wrong
    with pytest.raises(LaunchError, match="A is on cpu"):
        gemm(torch.zeros(2, 2).to(e4), torch.zeros(2, 2).to(e5))
    with pytest.raises(LaunchError, match="A is float8_e4m3fn and B is bfloat16; both must be"):
        gemm(torch.zeros(2, 2).to(e4), torch.zeros(2, 2, dtype=torch.bfloat16))
    with pytest.raises(LaunchError, match="float8_e4m3fn, float8_e5m2"):
        gemm(torch.zeros(2, 2, dtype=torch.float64), torch.zeros(2, 2, dtype=torch.float64))


def test_batched_broadcasting_passes_the_shape_checks():
    """torch.matmul's 3-D rules: a batch of 1 or a 2-D operand is shared (device checked last)."""
    for a, b in [((4, 3, 5), (1, 5, 2)), ((1, 3, 5), (4, 5, 2)), ((3, 5), (4, 5, 2))]:
        with pytest.raises(LaunchError, match="A is on cpu"):
            gemm(torch.zeros(a, dtype=torch.float16), torch.zeros(b, dtype=torch.float16))
    with pytest.raises(LaunchError, match="batch 70000 exceeds the 65535"):
        gemm(torch.zeros(70000, 1, 1, dtype=torch.half), torch.zeros(1, 1, dtype=torch.half))
