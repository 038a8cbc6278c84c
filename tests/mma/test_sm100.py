"""sm100 UMMA (tcgen05.mma) families and the FFMA2 atoms against their witnesses.

Witnesses: CuTe's published traits (cute/atom/mma_traits_sm100.hpp: ThrID 1 or 2,
A/B/C layouts; its tutorial's 2SM 256x256x16 A layout), CuTe's static asserts in
cute/arch/mma_sm100_umma.hpp (TS needs K-major A, block-scaled 1-SM M=128), the PTX
ISA (Table 39 of valid M and N; K is 256 bits of A, doubled by .sp; the mnemonic),
float64 arithmetic.
"""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.errors import AtomError
from cutemma.mma import families, make_mma_atom, mma_op, mma_ops, parse_name, tv_table

KIND_TOKENS = ["TF32", "F16BF16", "S8", "F8F6F4", "MXF8F6F4", "MXF4", "MXF4NVF4"]
# Default types per family, used when a test only needs a valid instance.
TYPES = {
    "TF32": dict(a_type="tf32", b_type="tf32", c_type="f32"),
    "F16BF16": dict(a_type="bf16", b_type="bf16", c_type="f32"),
    "S8": dict(a_type="s8", b_type="u8", c_type="s32"),
    "F8F6F4": dict(a_type="e2m1", b_type="e4m3", c_type="f16"),
    "MXF8F6F4": dict(a_type="e3m2", b_type="e5m2", c_type="f32", sf_type="ue8m0", vs=32),
    "MXF4": dict(a_type="e2m1", b_type="e2m1", c_type="f32", sf_type="ue8m0", vs=32),
    "MXF4NVF4": dict(a_type="e2m1", b_type="e2m1", c_type="f32", sf_type="ue4m3", vs=16),
}
# PTX ISA: K of one tcgen05.mma is 256 bits of A (f8f6f4 types padded to 8 bits);
# mxf4 kinds pack e2m1 to 64 elements.
ISA_K = {
    "TF32": 8,
    "F16BF16": 16,
    "S8": 32,
    "F8F6F4": 32,
    "MXF8F6F4": 32,
    "MXF4": 64,
    "MXF4NVF4": 64,
}


def test_brief_example_and_cute_1sm_layouts():
    atom = make_mma_atom(
        "SM100_MMA_F16BF16_SS", a_type="bf16", b_type="bf16", c_type="f32",
        m=128, n=256, a_major="K", b_major="K",
    )  # fmt: skip
    assert atom.shape_mnk == (128, 256, 16)
    assert atom.traits.threads == 1 and atom.thr_id(0) == 0
    assert str(atom.tv_layout_A) == "(1,(128,16)):(0,(1,128))"
    assert str(atom.tv_layout_B) == "(1,(256,16)):(0,(1,256))"
    assert str(atom.tv_layout_C) == "(1,(128,256)):(0,(1,128))"
    assert atom.op.a_source == "smem" and atom.op.b_source == "smem"


def test_cute_tutorial_2sm_256x256x16():
    # "ALayout = Layout<Shape<_2, Shape<_128, _16>>, Stride<_128, Stride<_1, _256>>>"
    atom = make_mma_atom("SM100_MMA_F16BF16_2x1SM_SS", **TYPES["F16BF16"], m=256, n=256)
    assert atom.shape_mnk == (256, 256, 16)
    assert atom.traits.threads == 2
    assert str(atom.tv_layout_A) == "(2,(128,16)):(128,(1,256))"
    assert str(atom.tv_layout_B) == "(2,(128,16)):(128,(1,256))"
    assert str(atom.tv_layout_C) == "(2,(128,256)):(128,(1,256))"


@pytest.mark.parametrize("token", KIND_TOKENS)
@pytest.mark.parametrize("two_sm", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_k_and_c_bijection(token, two_sm, sparse):
    name = f"SM100_MMA_{token}{'_2x1SM' if two_sm else ''}_SS{'_SPARSE' if sparse else ''}"
    m = 256 if two_sm else 128
    atom = make_mma_atom(name, **TYPES[token], m=m, n=64)
    assert atom.shape_mnk == (m, 64, ISA_K[token] * (2 if sparse else 1))
    table = tv_table(atom.tv_layout_C)
    assert table.shape == (2 if two_sm else 1, m * 64 // (2 if two_sm else 1))
    assert sorted(table.ravel().tolist()) == list(range(m * 64))
    if two_sm:  # CTA 0 holds rows 0..M/2-1, CTA 1 the rest (cta_group::2 splits M)
        assert (table[0] % m < m // 2).all() and (table[1] % m >= m // 2).all()


def _isa_mn_rule(two_sm: bool, scaled: bool, m: int, n: int) -> bool:
    """PTX ISA 9.7.16.2.1 Table 39 (block-scaled one-SM M=128: CuTe's assert)."""
    if two_sm:
        return m in (128, 256) and n % 16 == 0 and 16 <= n <= 256
    return m in ((128,) if scaled else (64, 128)) and n % 8 == 0 and 8 <= n <= 256


@pytest.mark.parametrize("token", ["F16BF16", "TF32", "MXF8F6F4"])
@pytest.mark.parametrize("variant", ["SS", "TS", "2x1SM_SS", "2x1SM_TS"])
def test_allowed_m_and_n(token, variant):
    name = f"SM100_MMA_{token}_{variant}"
    for m in (32, 64, 128, 256):
        for n in range(0, 272, 8):
            ok = _isa_mn_rule("2x1SM" in variant, token.startswith("MX"), m, n)
            if ok:
                assert mma_op(name, **TYPES[token], m=m, n=n).param("n") == n
            else:
                with pytest.raises(AtomError, match=r"(M must be one of|N must be a multiple of)"):
                    mma_op(name, **TYPES[token], m=m, n=n)


def test_operation_as_cute_arch():
    ss = mma_op("SM100_MMA_F16BF16_SS", **TYPES["F16BF16"])
    ts = mma_op("SM100_MMA_TF32_2x1SM_TS", **TYPES["TF32"], m=128, n=64)
    # DRegisters void; SS: A, B uint64_t[1] descriptors; TS: A a tmem address; C tmem uint32_t[1]
    assert [None if r is None else str(r) for r in ss.registers] == [
        None, "uint64_t[1]", "uint64_t[1]", "uint32_t[1]",
    ]  # fmt: skip
    assert str(ts.a) == "uint32_t[1]" and ts.a_source == "tmem"
    assert ss.ptx == "tcgen05.mma.cta_group::1.kind::f16"
    assert ts.ptx == "tcgen05.mma.cta_group::2.kind::tf32"
    sp = mma_op("SM100_MMA_S8_SS_SPARSE", **TYPES["S8"])
    assert sp.ptx == "tcgen05.mma.sp.cta_group::1.kind::i8"
    assert sp.extras[0].name == "sp_meta_tmem"
    bs = mma_op("SM100_MMA_MXF4NVF4_SS", **TYPES["MXF4NVF4"])
    assert bs.ptx == "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X"
    assert [e.name for e in bs.extras] == [
        "idesc",
        "scale_A_tmem",
        "scale_B_tmem",
        "enable_input_d",
    ]


def test_template_spelling_equals_parameters():
    by_template = mma_op(
        "cute::SM100_MMA_F16BF16_2x1SM_SS<half_t,half_t,float,256,128,UMMA::Major::MN,UMMA::Major::K>"
    )
    by_params = mma_op(
        "SM100_MMA_F16BF16_2x1SM_SS", a_type="f16", b_type="f16", c_type="f32",
        m=256, n=128, a_major="MN", b_major="K",
    )  # fmt: skip
    assert by_template == by_params
    assert by_template.name == "SM100_MMA_F16BF16_2x1SM_SS"


@pytest.mark.parametrize("token", KIND_TOKENS)
def test_counts_and_round_trip(token):
    ops = mma_ops("sm100", family=token.lower())
    assert len(ops) == 8  # {1SM, 2SM} x {SS, TS} x {dense, sparse}
    for fam in families(100):
        for name in fam.members():
            assert parse_name(name).text == name
            assert mma_op(name).name == name


@pytest.mark.parametrize(
    "name,params,rule",
    [
        ("SM100_MMA_F16BF16_SS", dict(n=12), "N must be a multiple of 8 in 8..256"),
        ("SM100_MMA_F16BF16_TS", dict(m=128, n=260), "N must be a multiple of 8"),
        ("SM100_MMA_F16BF16_2x1SM_TS", dict(m=256, n=40), "multiple of 16 in 16..256"),
        ("SM100_MMA_F16BF16_2x1SM_SS", dict(m=64), "M must be one of (128, 256)"),
        ("SM100_MMA_MXF4_SS", dict(m=64), "M must be one of (128,)"),
        ("SM100_MMA_TF32_TS", dict(a_major="MN"), "must be K-major"),
        ("SM100_MMA_F16BF16_SS", dict(a_type="bf16", b_type="bf16", c_type="f16"), "allowed: f32"),
        ("SM100_MMA_F16BF16_SS", dict(a_type="f16", b_type="bf16"), "not a kind::f16 pair"),
        ("SM100_MMA_S8_SS", dict(a_type="s8", b_type="e4m3", c_type="s32"), "not a kind::i8 pair"),
        ("SM100_MMA_MXF4NVF4_SS", dict(sf_type="ue4m3", vs=32), "allowed: ue8m0 with vs=32"),
        ("SM100_MMA_TF32_SS", dict(vs=32), "unknown parameter"),
        ("SM100_MMA_F16BF16_SS<half_t,half_t,float,128,64>", dict(n=128), "given twice"),
        ("SM90_MMA_F16BF16_SS", {}, "arch too old: SM100_MMA_F16BF16_SS first appears on sm100"),
        ("SM100_MMA_F16BF16_ST", {}, "no sm100 family takes this name"),
        ("SM100_4x1x1_F32F32F32F32", {}, "FFMA2 shapes are 2x1x1 and 1x2x1"),
    ],
)
def test_invalid_say_the_rule(name, params, rule):
    with pytest.raises(AtomError) as err:
        mma_op(name, **params)
    assert rule in str(err.value)


@pytest.mark.parametrize(
    "name,params,eps",
    [
        ("SM100_MMA_F16BF16_SS", dict(TYPES["F16BF16"], m=64, n=8), 2.0**-23),
        (
            "SM100_MMA_F16BF16_2x1SM_SS",
            dict(a_type="f16", b_type="f16", c_type="f16", m=128, n=16),
            2.0**-10,
        ),
        ("SM100_MMA_TF32_TS", dict(TYPES["TF32"], m=64, n=16), 2.0**-23),
        ("SM100_MMA_F8F6F4_SS", dict(TYPES["F8F6F4"], m=64, n=8), 2.0**-10),
    ],
)
def test_emulate_matches_float64(name, params, eps):
    atom = make_mma_atom(name, **params)
    m, n, k = atom.shape_mnk
    rng = np.random.default_rng(1)
    A = atom.val_type_A.quantize(rng.normal(size=(m, k)))
    B = atom.val_type_B.quantize(rng.normal(size=(n, k)))
    C = atom.val_type_C.quantize(rng.normal(size=(m, n)))
    ref = A @ B.T + C
    got = atom.tile_C(atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C)))
    assert np.all(np.abs(got.astype(np.float64) - ref) <= eps * np.abs(ref) + 1e-6)


def test_emulate_i8_saturate():
    A, B = np.full((64, 32), -128), np.full((8, 32), 255)
    C = np.full((64, 8), -(2**31) + 5)
    for saturate, want in ((False, -(2**31) + 5 - 128 * 255 * 32 + 2**32), (True, -(2**31))):
        atom = make_mma_atom(
            "SM100_MMA_S8_SS", a_type="s8", b_type="u8", c_type="s32", m=64, n=8, saturate=saturate
        )
        d = atom.tile_C(atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C)))
        assert (d == want).all()


def test_ffma2():
    for name, a_vals, b_vals in (
        ("SM100_2x1x1_F32F32F32F32", 2, 1),
        ("SM100_1x2x1_F32F32F32F32", 1, 2),
    ):
        atom = make_mma_atom(name)
        assert atom.op.ptx == "fma.rn.f32x2" and atom.traits.threads == 1
        assert (atom.op.a.count, atom.op.b.count, atom.op.c.count) == (a_vals, b_vals, 2)
        a = np.array([[3.0, 5.0][:a_vals]])
        b = np.array([[7.0, 11.0][:b_vals]])
        c = np.array([[1.0, 2.0]])
        d = atom.emulate(a, b, c)
        # elementwise on the pair, the single operand used for both lanes
        want = [a.ravel()[i % a_vals] * b.ravel()[i % b_vals] + c.ravel()[i] for i in range(2)]
        assert d.ravel().tolist() == want
