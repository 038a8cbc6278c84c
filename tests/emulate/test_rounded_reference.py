"""``emulate.gemm`` rounds float64 inputs to the atom's types (issue 22): the docstring says
so, and ``rounded_reference`` is the product of the rounded inputs to compare with."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import cutemma as cm

RNG = np.random.default_rng(22)


def test_the_readme_example_matches_the_rounded_reference_not_a_at_b():
    tiled = cm.make_tiled_mma("SM80_16x8x16_F32BF16BF16F32_TN", (2, 2, 1))
    A, B = RNG.random((100, 70)), RNG.random((50, 70))
    D = cm.emulate.gemm(tiled, A, B)
    # independent of cutemma's types: round through ml_dtypes' bfloat16
    a = A.astype(ml_dtypes.bfloat16).astype(np.float64)
    b = B.astype(ml_dtypes.bfloat16).astype(np.float64)
    R = cm.emulate.rounded_reference(tiled, A, B)
    assert np.array_equal(R, a @ b.T)
    assert np.abs(D - R).max() < 1e-4  # f32 accumulation order only
    assert np.abs(D - A @ B.T).max() > 1e-3  # the rounding the docstring now names


def test_integer_atoms_are_exact_and_c_is_added():
    tiled = cm.make_tiled_mma("SM80_16x8x32_S32S8S8S32_TN")
    A = RNG.integers(-128, 128, (20, 64), dtype=np.int8)
    B = RNG.integers(-128, 128, (9, 64), dtype=np.int8)
    C = RNG.integers(-1000, 1000, (20, 9))
    R = cm.emulate.rounded_reference(tiled, A, B, C)
    assert R.dtype == np.int64
    assert np.array_equal(R, A.astype(np.int64) @ B.astype(np.int64).T + C)
    assert np.array_equal(cm.emulate.gemm(tiled, A, B, C), R)


def test_docstring_names_the_rounding():
    doc = cm.emulate.gemm.__doc__
    assert "rounded to the atom's A, B and C types" in doc and "rounded_reference" in doc


@pytest.mark.parametrize("bad", [np.ones((2, 3)), np.ones(3)])
def test_shapes_are_checked(bad):
    with pytest.raises(cm.TiledMmaError):
        cm.emulate.rounded_reference(
            cm.make_tiled_mma("SM80_16x8x16_F32BF16BF16F32_TN"), np.ones((2, 2)), bad
        )
