"""emulate.gemm against a float64 / int64 reference on quantized inputs."""

import numpy as np
import pytest

from cutemma import Layout, TiledMmaError, emulate, make_tiled_mma, numeric_type

# atom name, atom layout, A/B type, per-k-step relative tolerance of the accumulator
CASES = [
    ("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1), "f16", 2.0**-22),
    ("SM80_16x8x16_F32BF16BF16F32_TN", (2, 2, 1), "bf16", 2.0**-22),
    ("SM80_16x8x8_F32TF32TF32F32_TN", (1, 2, 1), "tf32", 2.0**-22),
    ("SM89_16x8x32_F32E4M3E4M3F32_TN", (2, 1, 1), "e4m3", 2.0**-22),
    ("SM80_16x8x32_S32S8S8S32_TN", (2, 2, 1), "s8", 0),
    ("SM70_8x8x4_F32F16F16F32_NT", Layout((2, 2), (2, 1)), "f16", 2.0**-22),
]
SHAPES = [(1, 1, 1), (37, 29, 53), (64, 16, 48), (17, 40, 7)]


def _data(rng, shape, t):
    if t == "s8":
        return rng.integers(-128, 128, size=shape).astype(np.int8)
    x = rng.standard_normal(shape) * (4 if t == "e4m3" else 1)
    return x


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_gemm_matches_reference(case, shape, order):
    name, lay, tname, rtol = case
    M, N, K = shape
    rng = np.random.default_rng(M * 1000 + N * 10 + K)
    tiled = make_tiled_mma(name, lay)
    t = numeric_type(tname)
    A = np.asarray(_data(rng, (M, K), tname), order=order)
    B = np.asarray(_data(rng, (N, K), tname), order=order)
    if tname == "s8":
        C = rng.integers(-1000, 1000, size=(M, N))
        want = A.astype(np.int64) @ B.astype(np.int64).T + C
        got = emulate.gemm(tiled, A, B, C)
        assert np.array_equal(got, want)
        return
    C = rng.standard_normal((M, N)).astype(np.float32)
    Aq, Bq = t.quantize(A), t.quantize(B)
    want = Aq @ Bq.T + C.astype(np.float64)
    got = emulate.gemm(tiled, A, B, C)
    # one f32 rounding per K-step of the accumulator, relative to the magnitudes summed
    scale = np.abs(Aq) @ np.abs(Bq).T + np.abs(C)
    steps = -(-K // tiled.tile_size_mnk[2]) + 1
    assert np.all(np.abs(got - want) <= rtol * steps * scale + 1e-30)
    # the emulation really rounds inputs: unrounded inputs would differ for these formats
    if tname in ("bf16", "e4m3") and M * N * K > 1:
        assert not np.allclose(A @ B.T + C, got, rtol=1e-6, atol=0)


def test_gemm_errors_name_the_shapes():
    tiled = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN")
    with pytest.raises(TiledMmaError, match=r"4x5 .* 3x6"):
        emulate.gemm(tiled, np.ones((4, 5)), np.ones((3, 6)))
    with pytest.raises(TiledMmaError, match="C has shape"):
        emulate.gemm(tiled, np.ones((4, 5)), np.ones((3, 5)), np.ones((3, 3)))
    with pytest.raises(TiledMmaError, match="2-D"):
        emulate.gemm(tiled, np.ones(4), np.ones((3, 4)))
