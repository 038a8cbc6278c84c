"""sm120 kind::f8f6f4 and block-scaled mma.sync atoms against their witnesses.

Witnesses: CuTe's published layouts (SM80_16x8x32_S32S8S8S32_TN, which CuTe's
SM120_16x8x32_TN traits inherit, and SM120_16x8x64_TN_VS), the register arrays of
cute/arch/mma_sm120.hpp, the PTX ISA (mma syntax with .kind, the valid
kind/scale-type/vector-size combinations, fragments through ptx_spec), and
float64 arithmetic.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from cutemma.errors import AtomError
from cutemma.mma import families, make_mma_atom, mma_op, mma_ops, parse_name, tv_table
from cutemma.mma.ptx_spec import tables_for

TYPES = ["E4M3", "E5M2", "E3M2", "E2M3", "E2M1"]  # PTX .f8f6f4type

# cute/atom/mma_traits_sm80.hpp SM80_16x8x32_S32S8S8S32_TN; mma_traits_sm120.hpp 16x8x64.
CUTE_K32 = (
    "((4,8),(4,2,2)):((64,1),(16,8,256))",
    "((4,8),(4,2)):((32,1),(8,128))",
    "((4,8),(2,2)):((32,1),(16,8))",
)
CUTE_K64 = (
    "((4,8),(8,2,2)):((128,1),(16,8,512))",
    "((4,8),(8,2)):((64,1),(8,256))",
    "((4,8),(2,2)):((32,1),(16,8))",
)


def _layouts(name):
    atom = make_mma_atom(name)
    return tuple(str(x) for x in (atom.tv_layout_A, atom.tv_layout_B, atom.tv_layout_C))


@pytest.mark.parametrize("a,b", list(itertools.product(TYPES, TYPES)))
def test_f8f6f4_layouts_are_cutes_8bit_m16n8k32(a, b):
    assert _layouts(f"SM120_16x8x32_F32{a}{b}F32_TN") == CUTE_K32
    assert _layouts(f"SM120_16x8x32_F32{a}{b}F32UE8M0_TN_VS32") == CUTE_K32


@pytest.mark.parametrize("sf,vs", [("UE8M0", 32), ("UE8M0", 16), ("UE4M3", 16)])
def test_mxf4_layouts_are_cutes_16x8x64(sf, vs):
    assert _layouts(f"SM120_16x8x64_F32E2M1E2M1F32{sf}_TN_VS{vs}") == CUTE_K64


def test_same_layouts_as_the_sm89_fp8_atom():
    sm89 = make_mma_atom("SM89_16x8x32_F16E4M3E5M2F16_TN")
    sm120 = make_mma_atom("SM120_16x8x32_F16E2M1E3M2F16_TN")
    for x in "ABC":
        assert getattr(sm89, f"tv_layout_{x}") == getattr(sm120, f"tv_layout_{x}")


@pytest.mark.parametrize(
    "name",
    [
        "SM120_16x8x32_F32E2M1E2M1F32_TN",
        "SM120_16x8x32_F16E3M2E5M2F16_TN",
        "SM120_16x8x32_F32E2M3E4M3F32UE8M0_TN_VS32",
        "SM120_16x8x64_F32E2M1E2M1F32UE4M3_TN_VS16",
    ],
)
def test_fragments_agree_with_ptx_isa(name):
    atom = make_mma_atom(name)
    isa = tables_for(atom.op)
    for x in "ABC":
        assert np.array_equal(tv_table(getattr(atom, f"tv_layout_{x}")), getattr(isa, x)), x


def test_registers_as_cute():
    # cute/arch/mma_sm120.hpp: A uint32_t[4], B uint32_t[2], C/D float[4] (f16: 2 packed regs)
    def regs(n):
        return [str(r) for r in mma_op(n).registers]

    assert regs("SM120_16x8x32_F32E2M1E2M1F32_TN") == [
        "float[4]",
        "uint32_t[4]",
        "uint32_t[2]",
        "float[4]",
    ]
    assert regs("SM120_16x8x32_F16E4M3E4M3F16_TN")[0] == "uint32_t[2]"
    assert regs("SM120_16x8x64_F32E2M1E2M1F32UE8M0_TN_VS32") == regs(
        "SM120_16x8x32_F32E2M1E2M1F32_TN"
    )


def test_ptx_text():
    assert (
        mma_op("SM120_16x8x32_F32E4M3E2M1F32UE8M0_TN_VS32").ptx
        == "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X"
        ".f32.e4m3.e2m1.f32.ue8m0"
    )
    assert (
        ".kind::mxf4.block_scale.scale_vec::2X."
        in mma_op("SM120_16x8x64_F32E2M1E2M1F32UE8M0_TN_VS32").ptx
    )
    assert (
        ".kind::mxf4nvf4.block_scale.scale_vec::4X."
        in mma_op("SM120_16x8x64_F32E2M1E2M1F32UE8M0_TN_VS16").ptx
    )
    extras = [e.name for e in mma_op("SM120_16x8x64_F32E2M1E2M1F32UE4M3_TN_VS16").extras]
    # d, a, b, c, scale-a-data, {byte-id-a, thread-id-a}, scale-b-data, {byte-id-b, thread-id-b}
    assert extras == [
        "scale_A_data",
        "byte_id_A",
        "thread_id_A",
        "scale_B_data",
        "byte_id_B",
        "thread_id_B",
    ]


# 25 A/B pairs x {f32, f16}; block-scaled: f32 only; mxf4: 3 (kind, scale, VS) rows.
@pytest.mark.parametrize("short,n", [("f8f6f4", 50), ("mxf8f6f4", 25), ("mxf4", 3)])
def test_counts(short, n):
    assert len(mma_ops("sm120", family=short)) == n


def test_every_member_round_trips():
    for fam in families(120):
        for name in fam.members():
            assert parse_name(name).text == name
            assert mma_op(name).name == name


@pytest.mark.parametrize(
    "spelling,params,canonical",
    [
        (
            "SM120_16x8x32_TN<float_e2m1_t,float_e4m3_t,float>",
            {},
            "SM120_16x8x32_F32E2M1E4M3F32_TN",
        ),
        (
            "SM120_16x8x32_TN",
            dict(a_type="e3m2", b_type="e2m3", c_type="f16"),
            "SM120_16x8x32_F16E3M2E2M3F16_TN",
        ),
        (
            "cute::SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue4m3_t,16>",
            {},
            "SM120_16x8x64_F32E2M1E2M1F32UE4M3_TN_VS16",
        ),
        (
            "SM120::BLOCKSCALED::SM120_16x8x32_TN_VS",
            dict(a_type="e5m2", b_type="e2m1", c_type="f32", sf_type="ue8m0", vs=32),
            "SM120_16x8x32_F32E5M2E2M1F32UE8M0_TN_VS32",
        ),
        ("SM120_16x8x32_F32E4M3E4M3F32UE8M0_TN", {}, "SM120_16x8x32_F32E4M3E4M3F32UE8M0_TN_VS32"),
    ],
)
def test_cute_spellings(spelling, params, canonical):
    assert mma_op(spelling, **params).name == canonical


@pytest.mark.parametrize(
    "name,rule",
    [
        ("SM120_16x8x32_F32E4M3E4M3F16_TN", "takes D = C in f32, f16"),
        ("SM120_16x8x16_F32E4M3E4M3F32_TN", "it is 16x8x32"),
        ("SM120_16x8x32_F32F16E4M3F32_TN", "no sm120 family takes this name"),
        ("SM120_16x8x32_F16E4M3E4M3F16UE8M0_TN_VS32", "kind::mxf8f6f4 takes D = C in f32"),
        ("SM120_16x8x32_F32E4M3E4M3F32UE4M3_TN_VS16", "allowed: ue8m0 with VS32"),
        ("SM120_16x8x64_F32E2M1E2M1F32UE4M3_TN_VS32", "ue4m3 with VS16"),
        ("SM120_16x8x64_F32E4M3E2M1F32UE8M0_TN_VS32", "A type e4m3 is not allowed for kind::mxf4"),
        ("SM120_16x8x32_F32E4M3E4M3F32_TN_VS32", "only block-scaled names take VS"),
        ("SM100_16x8x32_F32E2M1E2M1F32_TN", "arch too old"),
    ],
)
def test_invalid_names_say_the_rule(name, rule):
    with pytest.raises(AtomError) as err:
        mma_op(name)
    assert rule in str(err.value)


@pytest.mark.parametrize(
    "name,eps",
    [
        ("SM120_16x8x32_F32E2M1E3M2F32_TN", 2.0**-23),
        ("SM120_16x8x32_F16E2M3E5M2F16_TN", 2.0**-10),
        ("SM120_16x8x32_F32E4M3E2M1F32UE8M0_TN_VS32", 2.0**-23),
        ("SM120_16x8x64_F32E2M1E2M1F32UE4M3_TN_VS16", 2.0**-23),
    ],
)
def test_emulate_matches_float64(name, eps):
    atom = make_mma_atom(name)
    m, n, k = atom.shape_mnk
    rng = np.random.default_rng(11)
    A = atom.val_type_A.quantize(rng.normal(size=(m, k)))
    B = atom.val_type_B.quantize(rng.normal(size=(n, k)))
    C = atom.val_type_C.quantize(rng.normal(size=(m, n)))
    assert np.isfinite(A).all() and np.isfinite(B).all()
    ref = A @ B.T + C
    got = atom.tile_C(atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C)))
    assert np.all(np.abs(got.astype(np.float64) - ref) <= eps * np.abs(ref) + 1e-6)
