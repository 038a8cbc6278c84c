"""emulate() against a float64 / int64 reference for every dense type class.

Inputs are drawn already representable in their formats (cast through numpy /
ml_dtypes here, not through cutemma), the reference sums exactly in float64 /
int64, and the tolerance is what rounding D once to its format allows. One test
places fragments with the PTX ISA's m16n8k16 formulas instead of the layouts.
"""

import ml_dtypes
import numpy as np
import pytest

from cutemma.mma import make_mma_atom

RNG = np.random.default_rng(2024)

FLOAT_INPUT = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e5m2": ml_dtypes.float8_e5m2,
    "f64": np.float64,
}
EPS = {"f32": 2.0**-24, "f16": 2.0**-11, "f64": 2.0**-53}  # unit roundoff of D


def _tf32(x):
    bits = x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)  # keep 10 mantissa bits
    return bits.view(np.float32).astype(np.float64)


def _draw(tname, shape, scale=1.0):
    x = RNG.normal(scale=scale, size=shape)
    if tname == "tf32":
        return _tf32(x)
    return x.astype(FLOAT_INPUT[tname]).astype(np.float64)


def _run(atom, A, B, C):
    d = atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C))
    return atom.tile_C(d).astype(np.float64 if atom.val_type_D.kind == "float" else np.int64)


FLOAT_ATOMS = [
    "SM70_8x8x4_F32F16F16F32_NT",
    "SM70_8x8x4_F16F16F16F16_TT",
    "SM75_16x8x8_F32F16F16F32_TN",
    "SM75_16x8x8_F16F16F16F16_TN",
    "SM80_16x8x16_F16F16F16F16_TN",
    "SM80_16x8x16_F32F16F16F32_TN",
    "SM80_16x8x8_F32BF16BF16F32_TN",
    "SM80_16x8x16_F32BF16BF16F32_TN",
    "SM80_16x8x4_F32TF32TF32F32_TN",
    "SM80_16x8x8_F32TF32TF32F32_TN",
    "SM80_8x8x4_F64F64F64F64_TN",
    "SM89_16x8x32_F32E4M3E5M2F32_TN",
    "SM89_16x8x32_F16E5M2E4M3F16_TN",
    "SM89_16x8x32_F32E4M3E4M3F32_TN",
    "SM90_16x8x16_F64F64F64F64_TN",
]


@pytest.mark.parametrize("name", FLOAT_ATOMS)
def test_float_atoms_match_exact_sum_within_one_rounding(name):
    atom = make_mma_atom(name)
    m, n, k = atom.shape_mnk
    for _ in range(3):
        A, B = _draw(atom.val_type_A.name, (m, k)), _draw(atom.val_type_B.name, (n, k))
        C = _draw(atom.val_type_C.name if atom.val_type_C.name != "f32" else "f64", (m, n))
        C = C.astype(np.float32 if atom.val_type_C.name == "f32" else np.float64)
        C = C.astype(np.float16) if atom.val_type_C.name == "f16" else C
        C = C.astype(np.float64)
        exact = A @ B.T + C
        got = _run(atom, A, B, C)
        bound = EPS[atom.val_type_D.name] * (np.abs(A) @ np.abs(B).T + np.abs(C))
        assert np.all(np.abs(got - exact) <= bound + 1e-300), name
        # and it is really rounded to D's format
        if atom.val_type_D.name == "f16":
            assert np.array_equal(got, got.astype(np.float16).astype(np.float64))


def test_tf32_inputs_are_truncated_before_multiplying():
    atom = make_mma_atom("SM80_16x8x8_F32TF32TF32F32_TN")
    A = np.full((16, 8), 1 + 2.0**-10 + 2.0**-12)  # the 2^-12 bit is dropped by the hardware
    B = np.zeros((8, 8))
    B[0, :] = 1.0  # column n = 0 of B is all ones: D[:, 0] sums a row of A
    got = _run(atom, A, B, np.zeros((16, 8)))
    assert got[0, 0] == 8 * (1 + 2.0**-10)


def test_complex_atoms_match_complex_product():
    for name in ("SM80_8x8x4_C64C64C64C64_TN", "SM90_16x8x8_C64C64C64C64_TN"):
        atom = make_mma_atom(name)
        m, n, k = atom.shape_mnk

        def z(shape):
            return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)

        A, B, C = z((m, k)), z((n, k)), z((m, n))
        got = atom.tile_C(
            atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C))
        )
        np.testing.assert_allclose(got, A @ B.T + C, rtol=1e-12)


INT_RANGES = {"s8": (-128, 128), "u8": (0, 256), "s4": (-8, 8), "u4": (0, 16)}
INT_ATOMS = [
    "SM75_8x8x16_S32S8S8S32_TN",
    "SM80_8x8x16_S32U8S8S32_TN",
    "SM80_16x8x16_S32S8U8S32_TN",
    "SM80_16x8x32_S32U8U8S32_TN",
    "SM80_8x8x32_S32S4U4S32_TN",
    "SM80_16x8x32_S32U4S4S32_TN",
    "SM80_16x8x64_S32S4S4S32_TN",
]


def _ints(tname, shape):
    lo, hi = INT_RANGES[tname]
    return RNG.integers(lo, hi, size=shape)


@pytest.mark.parametrize("name", INT_ATOMS)
def test_integer_atoms_exact_wrap_and_saturate(name):
    plain = make_mma_atom(name)
    m, n, k = plain.shape_mnk
    sat = None if name.startswith("SM75") else make_mma_atom(name + "_SATURATE")
    A = _ints(plain.val_type_A.name, (m, k))
    B = _ints(plain.val_type_B.name, (n, k))
    # C near the s32 limits so that some sums overflow
    C = RNG.choice([2**31 - 50, -(2**31) + 50, 0, 12345], size=(m, n))
    exact = A @ B.T + C
    wrapped = exact.astype(np.int64).astype(np.int32).astype(np.int64)  # two's complement wrap
    clipped = np.clip(exact, -(2**31), 2**31 - 1)
    assert (exact != wrapped).any(), "the data must overflow somewhere"
    assert np.array_equal(_run(plain, A, B, C), wrapped)
    if sat is not None:
        assert np.array_equal(_run(sat, A, B, C), clipped)


@pytest.mark.parametrize("shape", ["8x8x128", "16x8x128", "16x8x256"])
def test_b1_xor_and_popc_exact(shape):
    xor = make_mma_atom(f"SM80_{shape}_S32U1U1S32_TN_XORPOPC")
    andp = make_mma_atom(f"SM80_{shape}_S32U1U1S32_TN_ANDPOPC")
    m, n, k = xor.shape_mnk
    A, B = RNG.integers(0, 2, size=(m, k)), RNG.integers(0, 2, size=(n, k))
    C = RNG.integers(-1000, 1000, size=(m, n))
    want_xor = np.array([[np.count_nonzero(A[i] != B[j]) for j in range(n)] for i in range(m)]) + C
    want_and = np.array([[np.count_nonzero(A[i] & B[j]) for j in range(n)] for i in range(m)]) + C
    assert np.array_equal(_run(xor, A, B, C), want_xor)
    assert np.array_equal(_run(andp, A, B, C), want_and)


def test_dp4a_and_dp2a():
    dp4a, dp2a = make_mma_atom("SM61_DP4A"), make_mma_atom("SM61_DP2A")
    a, b = np.array([[-128, 127, 5, -7]]), np.array([[-128, -128, 3, 2]])
    c = np.array([[10]])
    assert dp4a.emulate(a, b, c).tolist() == [[16384 - 16256 + 15 - 14 + 10]]
    a2, b2 = np.array([[-32768, 300]]), np.array([[-128, 127]])
    assert dp2a.emulate(a2, b2, c).tolist() == [[32768 * 128 + 300 * 127 + 10]]


def test_fragments_placed_by_ptx_formulas_m16n8k16():
    # PTX ISA 9.7.14.5.8 (mma.m16n8k16, .f16): groupID = lane >> 2, t = lane % 4.
    atom = make_mma_atom("SM80_16x8x16_F32F16F16F32_TN")
    A = RNG.normal(size=(16, 16)).astype(np.float16).astype(np.float64)
    B = RNG.normal(size=(8, 16)).astype(np.float16).astype(np.float64)  # (n, k)
    C = RNG.normal(size=(16, 8)).astype(np.float32).astype(np.float64)
    a, b, c = atom.make_fragment_A(), atom.make_fragment_B(), atom.make_fragment_C()
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i in range(8):
            a[lane, i] = A[g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)]
        for i in range(4):
            b[lane, i] = B[g, 2 * t + (i & 1) + 8 * (i >> 1)]
            c[lane, i] = C[g + 8 * (i >> 1), 2 * t + (i & 1)]
    d = atom.emulate(a, b, c)
    D = A @ B.T + C
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i in range(4):
            want = D[g + 8 * (i >> 1), 2 * t + (i & 1)]
            assert abs(float(d[lane, i]) - want) <= 1e-5 * (1 + abs(want))


def test_fragment_shapes_and_dtypes():
    atom = make_mma_atom("SM89_16x8x32_F32E4M3E4M3F32_TN")
    assert atom.make_fragment_A().shape == (32, 16)
    assert atom.make_fragment_A().dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    assert atom.make_fragment_C().dtype == np.float32
    with pytest.raises(ValueError, match="fragment is \\(32, 16\\)"):
        atom.emulate(np.zeros((32, 8)), atom.make_fragment_B(), atom.make_fragment_C())
    with pytest.raises(ValueError, match="A tile has shape \\(8, 8\\)"):
        atom.partition_A(np.zeros((8, 8)))


def test_scale_d_zero_drops_c():
    atom = make_mma_atom("SM80_16x8x8_F32F16F16F32_TN")
    A, B, C = np.ones((16, 8)), np.ones((8, 8)), np.full((16, 8), 5.0)
    d = atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C), scale_d=0)
    assert (atom.tile_C(d) == 8.0).all()


def test_negation_modifiers():
    import dataclasses

    from cutemma.mma import MmaAtom

    base = make_mma_atom("SM80_16x8x8_F32F16F16F32_TN")
    neg_a = MmaAtom(dataclasses.replace(base.op, modifiers=("neg.a",)), base.traits)
    neg_ab = MmaAtom(dataclasses.replace(base.op, modifiers=("neg.a", "neg.b")), base.traits)
    A, B, C = np.ones((16, 8)), np.full((8, 8), 2.0), np.full((16, 8), 1.0)
    assert (neg_a.emulate_tiles(A, B, C) == -16 + 1).all()
    assert (neg_ab.emulate_tiles(A, B, C) == 16 + 1).all()


def test_gauss_complex_atom_matches_complex_product():
    from cutemma.mma.types import from_gauss, to_gauss

    atom = make_mma_atom("SM80_8x8x4_GC64C64C64GC64_TN")
    assert str(atom.op.registers[0]) == "GaussComplex[2]"
    A = RNG.normal(size=(8, 4)) + 1j * RNG.normal(size=(8, 4))
    B = RNG.normal(size=(8, 4)) + 1j * RNG.normal(size=(8, 4))
    C = RNG.normal(size=(8, 8)) + 1j * RNG.normal(size=(8, 8))
    d = atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(to_gauss(C)))
    np.testing.assert_allclose(from_gauss(atom.tile_C(d)), A @ B.T + C, rtol=1e-12, atol=1e-12)
    # t1 holds exactly the sum of imaginary products (the Gauss form's middle term)
    np.testing.assert_allclose(atom.tile_C(d)["t1"], A.imag @ B.imag.T, rtol=1e-12)
