"""Block-scaled MMA emulation: every K-block of A and B is multiplied by its scale factor.

The reference applies the PTX ISA's definition (block_scale: D = sum_k (A[m,k] * SFA[m, k/vs]) *
(B[n,k] * SFB[n, k/vs]) + C) in float64 with scale values built independently of cutemma:
ue8m0 as exact powers of two, ue4m3 through ml_dtypes' e4m3 (its non-negative values).
"""

import ml_dtypes
import numpy as np
import pytest

from cutemma import AtomError, make_mma_atom, numeric_type

NAMES = [
    "SM120_16x8x32_F32E4M3E4M3F32UE8M0_TN_VS32",
    "SM120_16x8x32_F32E2M1E3M2F32UE8M0_TN_VS32",
    "SM120_16x8x64_F32E2M1E2M1F32UE8M0_TN_VS32",
    "SM120_16x8x64_F32E2M1E2M1F32UE8M0_TN_VS16",
    "SM120_16x8x64_F32E2M1E2M1F32UE4M3_TN_VS16",
]


def _scales(rng, rows, blocks, sf):
    if sf == "ue8m0":
        return 2.0 ** rng.integers(-6, 7, size=(rows, blocks)).astype(float)
    e4m3 = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(float)
    ok = e4m3[np.isfinite(e4m3) & (e4m3 > 0)]
    return rng.choice(ok, size=(rows, blocks))


@pytest.mark.parametrize("name", NAMES)
def test_block_scaled_emulation_matches_definition(name):
    atom = make_mma_atom(name)
    vs, sf = atom.block_scale
    M, N, K = atom.shape_mnk
    assert K % vs == 0 and vs in (16, 32)
    rng = np.random.default_rng(K + vs)
    A = atom.val_type_A.quantize(rng.standard_normal((M, K)) * 2)
    B = atom.val_type_B.quantize(rng.standard_normal((N, K)) * 2)
    C = rng.standard_normal((M, N)).astype(np.float32).astype(float)
    sa = _scales(rng, M, K // vs, sf.name)
    sb = _scales(rng, N, K // vs, sf.name)
    want = C.copy()
    for k in range(K):
        want += np.outer(A[:, k] * sa[:, k // vs], B[:, k] * sb[:, k // vs])
    got = atom.emulate_tiles(A, B, C, scale_A=sa, scale_B=sb)
    scale = np.abs(C) + np.abs(A * np.repeat(sa, vs, 1)) @ np.abs(B * np.repeat(sb, vs, 1)).T
    assert np.all(np.abs(got - want) <= 2.0**-23 * scale)
    # the factors matter: without them the result differs
    assert not np.allclose(atom.emulate_tiles(A, B, C), got)
    # and the fragment-level entry point agrees
    frag = atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C), 1, sa, sb)
    assert np.array_equal(atom.tile_C(frag), got)


def test_scale_shapes_and_non_block_scaled_ops_are_checked():
    atom = make_mma_atom(NAMES[0])
    A, B, C = np.zeros((16, 32)), np.zeros((8, 32)), np.zeros((16, 8))
    with pytest.raises(AtomError, match=r"expected \(16, 1\)"):
        atom.emulate_tiles(A, B, C, scale_A=np.ones((16, 2)))
    plain = make_mma_atom("SM89_16x8x32_F32E4M3E4M3F32_TN")
    with pytest.raises(AtomError, match="not block-scaled"):
        plain.emulate_tiles(A, B, C, scale_A=np.ones((16, 1)))
    assert plain.block_scale is None and numeric_type("ue8m0").bits == 8
