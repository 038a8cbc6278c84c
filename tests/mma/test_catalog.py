"""The catalog against CuTe's published traits (cute/atom/mma_traits_sm61/75/80/89/90.hpp,
copied here as CuTe prints them) and the PTX ISA's mma syntax; counts per arch and family."""

import numpy as np
import pytest

from cutemma.errors import AtomError
from cutemma.layout import Layout
from cutemma.mma import families, make_mma_atom, mma_op, mma_ops, tv_table

P = Layout.parse
R16x8 = "((4,8),(2,2)):((32,1),(16,8))"  # CuTe SM80_16x8_Row
R8x8 = "((4,8),2):((16,1),8)"  # CuTe SM80_8x8_Row
R8x4 = "((4,8),1):((8,1),0)"  # CuTe SM80_8x4
R8x16 = "((4,8),4):((32,1),8)"  # CuTe SM80_8x16_Row

# name: (A, B, C) layouts as published by CuTe.
CUTE = {
    "SM75_16x8x8_F32F16F16F32_TN": (R16x8, "((4,8),2):((16,1),8)", R16x8),
    "SM75_8x8x16_S32S8S8S32_TN": (R8x16, R8x16, R8x8),
    "SM80_16x8x8_F16F16F16F16_TN": (R16x8, R8x8, R16x8),
    "SM80_16x8x16_F32BF16BF16F32_TN": (
        "((4,8),(2,2,2)):((32,1),(16,8,128))",
        "((4,8),(2,2)):((16,1),(8,64))",
        R16x8,
    ),
    "SM80_16x8x4_F32TF32TF32F32_TN": ("((4,8),2):((16,1),8)", R8x4, R16x8),
    "SM80_16x8x8_F32TF32TF32F32_TN": (
        "((4,8),(2,2)):((16,1),(8,64))",
        "((4,8),2):((8,1),32)",
        R16x8,
    ),
    "SM80_8x8x4_F64F64F64F64_TN": (R8x4, R8x4, R8x8),
    "SM80_8x8x4_C64C64C64C64_TN": (R8x4, R8x4, R8x8),
    "SM80_8x8x16_S32U8S8S32_TN_SATURATE": (R8x16, R8x16, R8x8),
    "SM80_16x8x16_S32S8S8S32_TN": ("((4,8),(4,2)):((64,1),(16,8))", R8x16, R16x8),
    "SM80_16x8x32_S32S8U8S32_TN": (
        "((4,8),(4,2,2)):((64,1),(16,8,256))",
        "((4,8),(4,2)):((32,1),(8,128))",
        R16x8,
    ),
    # CuTe's B here is ((4,8),(8)):((32,1),(8)), which holds some elements twice; the ISA's
    # B fragment (k = 8*threadID_in_group + i) is below, nested as CuTe nests it.
    "SM80_16x8x32_S32S4S4S32_TN": (
        "((4,8),(8,2)):((128,1),(16,8))",
        "((4,8),(8)):((64,1),(8))",
        R16x8,
    ),
    "SM80_16x8x64_S32U4U4S32_TN_SATURATE": (
        "((4,8),(8,2,2)):((128,1),(16,8,512))",
        "((4,8),(8,2)):((64,1),(8,256))",
        R16x8,
    ),
    "SM80_8x8x128_S32U1U1S32_TN_ANDPOPC": (
        "((4,8),32):((256,1),8)",
        "((4,8),32):((256,1),8)",
        R8x8,
    ),
    "SM80_16x8x256_S32U1U1S32_TN_XORPOPC": (
        "((4,8),(32,2,2)):((512,1),(16,8,2048))",
        "((4,8),(32,2)):((256,1),(8,1024))",
        R16x8,
    ),
    # CuTe's A here is malformed (stride nested deeper than shape); the ISA's is below.
    "SM80_16x8x128_S32U1U1S32_TN_XORPOPC": (
        "((4,8),(32,2)):((512,1),(16,8))",
        "((4,8),32):((256,1),8)",
        R16x8,
    ),
    "SM89_16x8x32_F32E5M2E4M3F32_TN": (
        "((4,8),(4,2,2)):((64,1),(16,8,256))",
        "((4,8),(4,2)):((32,1),(8,128))",
        R16x8,
    ),
    "SM90_16x8x4_F64F64F64F64_TN": ("((4,8),2):((16,1),8)", R8x4, R16x8),
    "SM90_16x8x8_C64C64C64C64_TN": (
        "((4,8),(2,2)):((16,1),(8,64))",
        "((4,8),2):((8,1),32)",
        R16x8,
    ),
    "SM90_16x8x16_F64F64F64F64_TN": (
        "((4,8),(2,4)):((16,1),(8,64))",
        "((4,8),4):((8,1),32)",
        R16x8,
    ),
    "SM61_DP4A": ("(1,4):(0,1)", "(1,4):(0,1)", "(1,1):(0,0)"),
}


@pytest.mark.parametrize("name", sorted(CUTE))
def test_layouts_equal_cutes_published_ones(name):
    atom = make_mma_atom(name)
    want = [P(s) for s in CUTE[name]]
    got = [atom.tv_layout_A, atom.tv_layout_B, atom.tv_layout_C]
    for w, g in zip(want, got, strict=True):
        # equal as functions of (t, v); structurally equal too except DP4A's size-1 strides
        assert np.array_equal(tv_table(w), tv_table(g)), (name, str(g), str(w))
        if not name.startswith("SM61"):
            assert g == w, (name, str(g), str(w))


def test_cutes_16x8x128_b1_a_layout_is_malformed():
    with pytest.raises(Exception):  # noqa: B017 - any layout error: it cannot even be built
        Layout(((4, 8), (32, 2)), ((512, 1), ((16, 8),)))


def test_cutes_16x8x32_s4_b_layout_repeats_elements():
    # 32 threads x 8 values should cover the 8x32 B tile once; CuTe's published layout does not.
    cute_b = tv_table(P("((4,8),8):((32,1),8)"))
    assert len(set(cute_b.reshape(-1).tolist())) < 256
    ours = tv_table(make_mma_atom("SM80_16x8x32_S32S4S4S32_TN").tv_layout_B)
    assert sorted(ours.reshape(-1).tolist()) == list(range(256))


# The families this catalog layer owns (GMMA / UMMA / sm120 test their own).
MINE = [
    "sm61.dp", "sm70.quadpair", "sm75.f16", "sm75.int8", "sm80.f16", "sm80.tf32", "sm80.f64",
    "sm80.c64", "sm80.int8", "sm80.int4", "sm80.b1", "sm89.fp8", "sm90.f64", "sm90.c64",
]  # fmt: skip
MY_OPS = [op for fam in MINE for op in mma_ops(family=fam)]


COUNTS = {61: 2, 70: 8, 75: 3, 80: 65, 89: 8, 90: 6}
FAMILY_COUNTS = {
    "sm80.f16": 6, "sm80.tf32": 2, "sm80.f64": 1, "sm80.c64": 2, "sm80.int8": 24,
    "sm80.int4": 24, "sm80.b1": 6, "sm89.fp8": 8, "sm90.f64": 3, "sm90.c64": 3,
}  # fmt: skip


@pytest.mark.parametrize("arch, n", sorted(COUNTS.items()))
def test_counts_per_arch(arch, n):
    assert len([op for op in MY_OPS if op.arch == arch]) == n
    assert {f.name for f in families(arch)} >= {f for f in MINE if f.startswith(f"sm{arch}.")}


@pytest.mark.parametrize("family, n", sorted(FAMILY_COUNTS.items()))
def test_counts_per_family(family, n):
    assert len(mma_ops(family=family)) == n
    arch, short = family.split(".")
    assert len(mma_ops(arch, family=short)) == n


def test_unknown_family_lists_known_ones():
    with pytest.raises(AtomError, match="no family 'nope'.*int8"):
        mma_ops("sm80", family="nope")


@pytest.mark.parametrize(
    "name, ptx, regs",
    [
        ("SM61_DP4A", "dp4a.s32.s32", "int32_t[1] uint32_t[1] uint32_t[1] int32_t[1]"),
        ("SM70_8x8x4_F16F16F16F16_TT", "mma.sync.aligned.m8n8k4.row.row.f16.f16.f16.f16",
         "uint32_t[4] uint32_t[2] uint32_t[2] uint32_t[4]"),
        ("SM80_16x8x16_F32BF16BF16F32_TN", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
         "float[4] uint32_t[4] uint32_t[2] float[4]"),
        ("SM80_16x8x8_F32TF32TF32F32_TN", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
         "float[4] uint32_t[4] uint32_t[2] float[4]"),
        ("SM80_8x8x4_F64F64F64F64_TN", "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
         "double[2] double[1] double[1] double[2]"),
        ("SM80_8x8x4_C64C64C64C64_TN", "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
         "complex<double>[2] complex<double>[1] complex<double>[1] complex<double>[2]"),
        ("SM80_16x8x32_S32U8S8S32_TN_SATURATE",
         "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32",
         "uint32_t[4] uint32_t[4] uint32_t[2] uint32_t[4]"),
        ("SM80_16x8x64_S32S4U4S32_TN", "mma.sync.aligned.m16n8k64.row.col.s32.s4.u4.s32",
         "uint32_t[4] uint32_t[4] uint32_t[2] uint32_t[4]"),
        ("SM80_16x8x256_S32U1U1S32_TN_ANDPOPC",
         "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc",
         "uint32_t[4] uint32_t[4] uint32_t[2] uint32_t[4]"),
        ("SM89_16x8x32_F16E4M3E5M2F16_TN", "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e5m2.f16",
         "uint32_t[2] uint32_t[4] uint32_t[2] uint32_t[2]"),
        ("SM90_16x8x16_F64F64F64F64_TN", "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64",
         "double[4] double[8] double[4] double[4]"),
    ],
)  # fmt: skip
def test_ptx_and_registers(name, ptx, regs):
    op = mma_op(name)
    assert op.ptx == ptx
    assert " ".join(str(r) for r in op.registers) == regs


@pytest.mark.parametrize("op", MY_OPS, ids=lambda op: op.name)
def test_every_atom_is_consistent(op):
    atom = make_mma_atom(op)
    m, n, k = atom.shape_mnk
    threads = atom.traits.threads
    for which, lay, extent in (("A", atom.tv_layout_A, m * k), ("B", atom.tv_layout_B, n * k),
                               ("C", atom.tv_layout_C, m * n)):  # fmt: skip
        table = tv_table(lay)
        assert table.shape[0] == threads
        # each element of the tile is held by exactly one (thread, value)
        assert sorted(table.reshape(-1).tolist()) == list(range(extent)), which
    # registers carry exactly the values of the fragments
    for reg, t, lay in ((op.a, atom.val_type_A, atom.tv_layout_A),
                        (op.b, atom.val_type_B, atom.tv_layout_B),
                        (op.c, atom.val_type_C, atom.tv_layout_C)):  # fmt: skip
        values = tv_table(lay).shape[1]
        width = {"float": 32, "double": 64, "complex<double>": 128, "GaussComplex": 192}
        width = width.get(reg.cpp, 32)
        # the fewest registers that hold the values (DP2A's b uses half of its register)
        assert (reg.count - 1) * width < values * t.bits <= reg.count * width
    assert make_mma_atom(op.name).op is op or make_mma_atom(op.name).op == op


def test_traits_reject_layouts_that_do_not_fit():
    from cutemma.mma import Traits, numeric_type

    f16 = numeric_type("f16")
    good = make_mma_atom("SM80_16x8x8_F16F16F16F16_TN").traits
    with pytest.raises(AtomError, match="has 16 threads; thr_id 32:1 has 32"):
        Traits(f16, f16, f16, f16, (16, 8, 8), Layout(32), Layout((16, 8)), good.tv_layout_B,
               good.tv_layout_C)  # fmt: skip
    with pytest.raises(AtomError, match="reaches index 136; the A tile .* has only 128"):
        Traits(f16, f16, f16, f16, (16, 8, 8), Layout(32), Layout((32, 4), (1, 35)),
               good.tv_layout_B, good.tv_layout_C)  # fmt: skip


def test_family_names_are_unique():
    from cutemma.mma import Family, register_family

    fam = families(80)[0]
    clone = Family(fam.name, fam.arch, fam.description, fam.claims, fam.build, fam.members)
    with pytest.raises(AtomError, match="registered twice"):
        register_family(clone)
    assert register_family(fam) is fam


def test_arch_spellings():
    assert len(mma_ops(80)) == len(mma_ops("sm80")) == len(mma_ops("SM_80")) >= 64
    with pytest.raises(AtomError, match="write it as 80"):
        mma_ops("ampere")
