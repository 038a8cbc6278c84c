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
        ((3,), (3, 6), "A must be a 2-D torch tensor, got \\(3,\\)"),
        ((3, 4), (4, 2, 1), "B must be a 2-D torch tensor"),
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
