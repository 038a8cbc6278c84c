"""sm90 GMMA (wgmma.mma_async) families against their witnesses.

Witnesses: seed 004 (ThrID, the 64xN C layout, the SS A layout), seed 003 (the
MMA_64x8x16_F32F16F16_RS registers and operand order), CuTe's published GMMA
layouts (cute/atom/mma_traits_sm90_gmma.hpp, written out here as text), the PTX
ISA (9.7.15.5.2 shapes and N lists, register fragments through ptx_spec), and
float64 arithmetic for emulation.
"""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.errors import AtomError
from cutemma.layout import Layout
from cutemma.mma import families, make_mma_atom, mma_op, mma_ops, parse_name, tv_table
from cutemma.mma.ptx_spec import tables_for

# PTX ISA 9.7.15.5.2 shape table: N per class (ints skip 40, 56, 72, ...).
ISA_N_FLOAT = list(range(8, 257, 8))
ISA_N_INT = [8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256]


# --- seeds ----------------------------------------------------------------------------


def test_seed004_thread_id_and_c_layout_of_64x128x16_f16():
    atom = make_mma_atom("SM90_64x128x16_F16F16F16_SS")
    assert atom.thr_id == Layout(128, 1)
    assert str(atom.tv_layout_C) == "((4,8,4),(2,2,16)):((128,1,16),(64,8,512))"
    assert atom.shape_mnk == (64, 128, 16)


def test_seed004_c_layout_64x8_and_ss_a_layout():
    atom = make_mma_atom("SM90_64x8x16_F16F16F16_SS")
    # seed 004 prints ((4,8,4),(2,2)):((128,1,16),(64,8)); CuTe's CLayout_64xN<8> keeps the
    # N/8 = 1 mode (the same function), and so does cutemma, so TiledMMA views match C++
    seed = Layout.parse("((4,8,4),(2,2)):((128,1,16),(64,8))")
    assert [atom.tv_layout_C(i) for i in range(512)] == [seed(i) for i in range(512)]
    assert str(atom.tv_layout_C) == "((4,8,4),(2,2,1)):((128,1,16),(64,8,512))"
    assert str(atom.tv_layout_A) == "(128,(64,16)):(0,(1,64))"


def test_seed004_f32_accumulator_has_the_same_c_layout():
    f16 = make_mma_atom("SM90_64x128x16_F16F16F16_SS").tv_layout_C
    assert make_mma_atom("SM90_64x128x16_F32F16F16_SS").tv_layout_C == f16


def test_seed003_rs_registers_and_operand_order():
    op = mma_op("SM90::GMMA::MMA_64x8x16_F32F16F16_RS")
    assert op.name == "SM90_64x8x16_F32F16F16_RS"
    assert op.ptx == "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"
    assert [None if r is None else str(r) for r in op.registers] == [
        None,
        "uint32_t[4]",
        "uint64_t[1]",
        "float[4]",
    ]
    # seed 003: " p, %10, %11, %12" <- scale_D, scaleA, scaleB, tnspB (no tnspA for RS)
    assert [e.name for e in op.extras] == ["scale_D", "scale_A", "scale_B", "tnsp_B"]
    assert (op.a_source, op.b_source) == ("reg", "smem")


def test_seed003_rs_requires_k_major_a():
    with pytest.raises(AtomError, match="must be K-major"):
        mma_op("SM90_64x8x16_F32F16F16_RS", a_major="MN")


def test_brief_register_counts_64x128x16_f32():
    op = mma_op("SM90_64x128x16_F32BF16BF16_SS")
    assert (str(op.c), str(op.a), str(op.b), op.d) == (
        "float[64]",
        "uint64_t[1]",
        "uint64_t[1]",
        None,
    )


# --- CuTe's published layouts (mma_traits_sm90_gmma*.hpp) ------------------------------

CUTE_LAYOUTS = {
    # ALayout_64x8 (32-bit types from registers)
    ("SM90_64x8x8_F32TF32TF32_RS_TN", "A"): "((4,8,4),(2,2)):((64,1,16),(8,256))",
    # ALayout_64x16 = CLayout_64x16
    ("SM90_64x8x16_F32BF16BF16_RS", "A"): "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))",
    # ALayout_64x32 (8-bit)
    ("SM90_64x8x32_S32S8S8_RS_TN", "A"): "((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))",
    # sparse: 16-bit uses ALayout_64x32, 8-bit ALayout_64x64
    ("SM90_SPARSE_64x8x32_F16F16F16_RS", "A"): "((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))",
    ("SM90_SPARSE_64x8x64_F32E4M3E4M3_RS_TN", "A"): "((4,8,4),(8,2,2)):((512,1,16),(64,8,2048))",
    ("SM90_SPARSE_64x8x32_F16F16F16_SS", "A"): "(128,(64,32)):(0,(1,64))",
    ("SM90_64x96x16_F16F16F16_SS", "B"): "(128,(96,16)):(0,(1,96))",
    ("SM90_64x96x16_F16F16F16_SS", "C"): "((4,8,4),(2,2,12)):((128,1,16),(64,8,512))",
    ("SM90_64x256x32_F32E5M2E4M3_SS_TN", "C"): "((4,8,4),(2,2,32)):((128,1,16),(64,8,512))",
}


@pytest.mark.parametrize("name,operand", sorted(CUTE_LAYOUTS))
def test_layouts_equal_cutes(name, operand):
    atom = make_mma_atom(name)
    assert str(getattr(atom, f"tv_layout_{operand}")) == CUTE_LAYOUTS[(name, operand)]


# --- the PTX ISA -----------------------------------------------------------------------

ISA_SAMPLE = [
    "SM90_64x8x16_F16F16F16_RS",
    "SM90_64x40x16_F32F16F16_RS",
    "SM90_64x256x16_F32BF16BF16_RS",
    "SM90_64x24x8_F32TF32TF32_RS_TN",
    "SM90_64x200x8_F32TF32TF32_SS_TN",
    "SM90_64x56x32_F16E4M3E5M2_RS_TN",
    "SM90_64x48x32_S32U8S8_RS_TN_SATURATE",
    "SM90_64x256x32_S32S8S8_SS_TN",
    "SM90_SPARSE_64x16x32_F32BF16BF16_SS",
    "SM90_64x8x256_S32U1U1_RS_TN_ANDPOPC",
    "SM90_64x80x256_S32U1U1_SS_TN_ANDPOPC",
]


@pytest.mark.parametrize("name", ISA_SAMPLE)
def test_fragments_agree_with_ptx_isa(name):
    atom = make_mma_atom(name)
    isa = tables_for(atom.op)
    assert isa.mnk == atom.shape_mnk
    for operand in "ABC":
        ref = getattr(isa, operand)
        if ref is None:
            continue
        got = tv_table(getattr(atom, f"tv_layout_{operand}"))
        assert np.array_equal(got, ref), f"{name} {operand}"


@pytest.mark.parametrize("n", ISA_N_FLOAT)
def test_c_layout_is_a_bijection_onto_the_tile(n):
    table = tv_table(make_mma_atom(f"SM90_64x{n}x16_F32F16F16_SS").tv_layout_C)
    assert table.shape == (128, n // 2)
    assert sorted(table.ravel().tolist()) == list(range(64 * n))


@pytest.mark.parametrize("k,name", [(8, "F32TF32TF32"), (16, "F16F16F16"), (32, "F32E4M3E4M3")])
def test_rs_a_layout_is_a_bijection(k, name):
    suffix = "" if name == "F16F16F16" else "_TN"
    table = tv_table(make_mma_atom(f"SM90_64x8x{k}_{name}_RS{suffix}").tv_layout_A)
    assert sorted(table.ravel().tolist()) == list(range(64 * k))


def test_allowed_n_per_class_is_the_isa_list():
    for n in range(8, 257, 8):
        for name, allowed in (
            (f"SM90_64x{n}x32_S32S8U8_SS_TN", ISA_N_INT),
            (f"SM90_64x{n}x32_F16E5M2E5M2_SS_TN", ISA_N_FLOAT),
            (f"SM90_SPARSE_64x{n}x64_S32U8U8_RS_TN", ISA_N_INT),
        ):
            if n in allowed:
                assert f".m64n{n}k" in mma_op(name).ptx
            else:
                with pytest.raises(AtomError, match="N must be 8, 16, 24, 32 or a multiple of 16"):
                    mma_op(name)


def test_immediates_follow_the_isa_syntax():
    def names(n):
        return [e.name for e in mma_op(n).extras]

    assert names("SM90_64x8x16_F16F16F16_SS") == [
        "scale_D",
        "scale_A",
        "scale_B",
        "tnsp_A",
        "tnsp_B",
    ]
    assert names("SM90_64x8x8_F32TF32TF32_SS_TN") == ["scale_D", "scale_A", "scale_B"]
    assert names("SM90_64x8x32_F32E4M3E5M2_RS_TN") == ["scale_D", "scale_A", "scale_B"]
    assert names("SM90_64x8x32_S32S8S8_SS_TN") == ["scale_D"]
    # .sp: d, a, b, sp-meta, sp-sel, scale-d, ... (9.7.15.6.3)
    assert names("SM90_SPARSE_64x8x64_S32S8S8_SS_TN")[:3] == ["sp_meta", "sp_sel", "scale_D"]
    assert mma_op("SM90_64x8x32_S32S8S8_SS_TN_SATURATE").ptx.endswith(".s32.s8.s8.satfinite")
    assert mma_op("SM90_SPARSE_64x8x32_F16F16F16_SS").ptx.startswith("wgmma.mma_async.sp.sync")


def test_majors_become_transpose_immediates():
    op = mma_op("SM90_64x128x16_F32BF16BF16_SS<K,MN>")
    assert {e.name: e.value for e in op.extras}["tnsp_B"] == 1
    assert {e.name: e.value for e in op.extras}["tnsp_A"] == 0
    assert op == mma_op("SM90_64x128x16_F32BF16BF16_SS", a_major="K", b_major="MN")
    assert op.name == "SM90_64x128x16_F32BF16BF16_SS<K,MN>"
    assert mma_op("SM90_64x128x16_F32BF16BF16_SS<MN,K>").param("a_major") == "MN"


def test_scale_in_negation_is_recorded():
    op = mma_op("SM90_64x8x16_F32F16F16_SS", scale_a=-1)
    assert {e.name: e.value for e in op.extras}["scale_A"] == -1
    assert mma_op("SM90_64x8x32_F16E4M3E4M3_SS_TN<One,Neg>").param("scale_b") == -1


# --- names, counts, errors -------------------------------------------------------------

# 3 f16/bf16 rows, 1 tf32, 8 fp8 (2 accumulators x 2 x 2), 4 s8/u8 (x2 saturate); SS and RS.
COUNTS = {
    "gmma_f16": 3 * 32 * 2,
    "gmma_tf32": 1 * 32 * 2,
    "gmma_f8": 8 * 32 * 2,
    "gmma_int": 4 * 18 * 2 * 2,
}


def test_b1_family_count_and_no_sparse_form():
    assert len(mma_ops("sm90", family="gmma_b1")) == 18 * 2  # integer N list, SS and RS
    with pytest.raises(AtomError, match="no sm90 family takes this name"):
        mma_op("SM90_SPARSE_64x8x512_S32U1U1_SS_TN_ANDPOPC")


@pytest.mark.parametrize("short,n", sorted(COUNTS.items()))
def test_counts_per_family(short, n):
    assert len(mma_ops("sm90", family=short)) == n
    assert len(mma_ops("sm90", family=short.replace("gmma_", "gmma_sparse_"))) == n


def test_every_member_round_trips():
    for fam in families(90):
        if not fam.short.startswith("gmma"):
            continue
        for name in fam.members():
            assert parse_name(name).text == name
            assert mma_op(name).name == name


@pytest.mark.parametrize(
    "spelling,canonical",
    [
        ("SM90::GMMA::SPARSE::GMMA_64x8x32_F16F16F16_SS", "SM90_SPARSE_64x8x32_F16F16F16_SS"),
        ("cute::SM90::GMMA::MMA_64x16x16_F16F16F16_SS<K,K>", "SM90_64x16x16_F16F16F16_SS"),
        ("SM90_64x16x16_F16F16F16_SS_TN", "SM90_64x16x16_F16F16F16_SS"),
        ("SM90_64x16x16_F16F16F16_SS_NT", "SM90_64x16x16_F16F16F16_SS<MN,MN>"),
        ("SM90_64x32x32_F32E4M3E4M3_SS", "SM90_64x32x32_F32E4M3E4M3_SS_TN"),
        ("SM90_64x32x32_F32E4M3E4M3_SS_TN", "SM90_64x32x32_F32E4M3E4M3_SS_TN"),
    ],
)
def test_spellings(spelling, canonical):
    assert mma_op(spelling).name == canonical


@pytest.mark.parametrize(
    "name,params,rule",
    [
        (
            "SM90_64x12x16_F16F16F16_SS",
            {},
            "N must be a multiple of 8 in 8..256 for f16 GMMA; got 12",
        ),
        ("SM90_64x264x16_F16F16F16_SS", {}, "N must be a multiple of 8"),
        ("SM90_64x40x32_S32S8S8_SS_TN", {}, "got 40"),
        ("SM90_64x8x32_F16F16F16_SS", {}, "wrong K for the type: f16 GMMA takes K=16"),
        ("SM90_SPARSE_64x8x16_F16F16F16_SS", {}, "f16 sparse GMMA takes K=32"),
        ("SM90_128x8x16_F16F16F16_SS", {}, "M must be 64"),
        ("SM90_64x8x16_F16BF16BF16_SS", {}, "type combination F16BF16BF16"),
        ("SM90_64x8x32_F32E4M3E4M3_SS_NT", {}, "MN-major operands need imm-trans"),
        ("SM90_64x8x8_F32TF32TF32_SS", {"b_major": "MN"}, "only f16/bf16"),
        ("SM90_64x8x16_F16F16F16_SS_SATURATE", {}, "only for s8/u8"),
        ("SM90_64x8x32_S32S8S8_SS_TN", {"scale_a": -1}, "unknown parameter"),
        ("SM90_64x8x16_F16F16F16_SS<K,MN>", {"b_major": "K"}, "given twice"),
        ("SM90_64x8x16_F16F16F16_SS", {"a_major": "T"}, "'K' or 'MN'"),
        (
            "SM80_64x8x16_F16F16F16_SS",
            {},
            "arch too old: SM90_64x8x16_F16F16F16_SS first appears on sm90",
        ),
        ("SM90_64x8x16_F16F16F16_SS_XY", {}, "unexpected suffix"),
    ],
)
def test_invalid_names_say_the_rule(name, params, rule):
    with pytest.raises(AtomError) as err:
        mma_op(name, **params)
    assert rule in str(err.value)


# --- emulation against float64 -----------------------------------------------------------

EMULATE = [
    ("SM90_64x16x16_F16F16F16_SS", 2.0**-10),
    ("SM90_64x24x16_F32BF16BF16_RS", 2.0**-23),
    ("SM90_64x8x8_F32TF32TF32_RS_TN", 2.0**-23),
    ("SM90_64x32x32_F32E4M3E5M2_SS_TN", 2.0**-23),
    ("SM90_64x16x32_F16E5M2E5M2_RS_TN", 2.0**-10),
]


def _random_tiles(atom, rng):
    m, n, k = atom.shape_mnk
    return rng.normal(size=(m, k)), rng.normal(size=(n, k)), rng.normal(size=(m, n))


@pytest.mark.parametrize("name,eps", EMULATE)
def test_emulate_matches_float64(name, eps):
    atom = make_mma_atom(name)
    rng = np.random.default_rng(7)
    A, B, C = _random_tiles(atom, rng)
    A = atom.val_type_A.quantize(A)
    B = atom.val_type_B.quantize(B)
    C = atom.val_type_C.quantize(C)
    ref = A @ B.T + C
    frag = atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C))
    got = atom.tile_C(frag).astype(np.float64)
    assert np.all(np.abs(got - ref) <= eps * np.abs(ref) + 1e-6)


def test_emulate_sparse_uses_the_structured_a_tile():
    atom = make_mma_atom("SM90_SPARSE_64x8x32_F32F16F16_RS")
    rng = np.random.default_rng(3)
    A, B, C = _random_tiles(atom, rng)
    A[:, 1::2] = 0  # 2 of every 4 kept: a 2:4 pattern
    A, B = np.float16(A).astype(np.float64), np.float16(B).astype(np.float64)
    frag = atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C))
    ref = A @ B.T + np.float32(C)
    assert np.allclose(atom.tile_C(frag), ref, rtol=2.0**-22, atol=1e-6)


def test_emulate_integer_wraps_or_saturates():
    base = "SM90_64x8x32_S32S8U8_SS_TN"
    A = np.full((64, 32), 127)
    B = np.full((8, 32), 255)
    C = np.full((64, 8), 2**31 - 1000)
    exact = 127 * 255 * 32 + 2**31 - 1000  # past INT32_MAX
    for name, want in ((base, exact - 2**32), (base + "_SATURATE", 2**31 - 1)):
        atom = make_mma_atom(name)
        d = atom.tile_C(atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C)))
        assert np.all(d == want), name


def test_emulate_honours_imm_scale_negation():
    # PTX ISA 9.7.15.5.2: imm-scale-a/b = -1 negates every element of A / B.
    rng = np.random.default_rng(5)
    A, B, C = rng.normal(size=(64, 16)), rng.normal(size=(8, 16)), rng.normal(size=(64, 8))
    A, B, C = np.float16(A).astype(float), np.float16(B).astype(float), np.float32(C).astype(float)
    for scales, sign in (({"scale_a": -1}, -1), ({"scale_a": -1, "scale_b": -1}, 1)):
        atom = make_mma_atom("SM90_64x8x16_F32F16F16_SS", **scales)
        d = atom.tile_C(atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C)))
        assert np.allclose(d, sign * (A @ B.T) + C, rtol=2.0**-22, atol=1e-6)


def test_b1_and_popc():
    # PTX ISA 9.7.15.5.2 example: wgmma...m64n8k256.s32.b1.b1.and.popc {4 x s32}, {4 x b32}, descB
    op = mma_op("SM90_64x8x256_S32U1U1_RS_TN_ANDPOPC")
    assert op.ptx == "wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc"
    assert (str(op.c), str(op.a)) == ("uint32_t[4]", "uint32_t[4]")
    with pytest.raises(AtomError, match="_ANDPOPC"):
        mma_op("SM90_64x8x256_S32U1U1_RS_TN")
    atom = make_mma_atom(op)
    rng = np.random.default_rng(2)
    A, B = rng.integers(0, 2, size=(64, 256)), rng.integers(0, 2, size=(8, 256))
    C = rng.integers(-100, 100, size=(64, 8))
    d = atom.tile_C(atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C)))
    want = np.array([[int(np.sum(A[i] & B[j])) for j in range(8)] for i in range(64)]) + C
    assert (d == want).all()


# --- the GPU, the third witness ---------------------------------------------------------
# Runs in a child process that imports torch first (see tests/cuda/gpu_checks.py for why).
# A and B hold small integers, so every product and sum is exact: the GPU's D must equal
# A @ B^T element for element once gathered through the atom's C layout; the RS forms
# scatter A into registers through the atom's A layout. The kernel text comes from the
# Operation: its PTX, its register counts and its immediates (extras).

GPU_ATOMS = [
    "SM90_64x8x16_F32F16F16_RS",
    "SM90_64x8x16_F32F16F16_SS",
    "SM90_64x16x16_F16F16F16_SS",
    "SM90_64x24x16_F32BF16BF16_RS",
    "SM90_64x16x8_F32TF32TF32_RS_TN",
    "SM90_64x16x8_F32TF32TF32_SS_TN",
    "SM90_64x16x32_F32E4M3E5M2_RS_TN",
    "SM90_64x8x32_F16E5M2E4M3_SS_TN",
    "SM90_64x16x32_S32S8U8_RS_TN",
    "SM90_64x48x32_S32U8S8_SS_TN",
]

_GPU_SCRIPT = r"""
import sys
import torch  # before cutemma (cuda.core / cuda.bindings)
import numpy as np
from cutemma.cuda.compile import compile
from cutemma.cuda.launch import device_arch, load_kernel
from cutemma.cuda.source import FIXED_WIDTH_TYPES, Param, kernel, translation_unit
from cutemma.mma import make_mma_atom

PARAMS = [Param("const uint32_t*", "a_frag"), Param("const uint8_t*", "a_img"),
          Param("const uint8_t*", "b_img"), Param("uint32_t*", "d_frag"),
          Param("uint64_t", "a_desc"), Param("uint64_t", "b_desc")]


def image(tile, t):
    # K-major, no swizzle (PTX ISA 9.7.15.5.1.2): core matrices of 8 rows x 16 bytes;
    # 128 bytes apart along M/N (SBO), rows*16 bytes apart along K (LBO).
    rows, k = tile.shape
    e = 16 * 8 // t.bits  # elements per 16 bytes
    img = np.zeros(rows * k, t.host)
    for r in range(rows):
        for c in range(k):
            img[(r % 8) * e + (r // 8) * 8 * e + c % e + (c // e) * rows * e] = tile[r, c]
    return torch.from_numpy(img.view(np.int8).copy()).cuda(), len(img.view(np.int8))


def desc(rows):  # start address is added in the kernel; LBO bits 16-29, SBO 32-45 (>> 4)
    return ((rows * 16) >> 4) << 16 | (128 >> 4) << 32


def source(op, a_bytes, b_bytes):
    nc = op.c.count
    imms = ", ".join(["0"] + [str(e.value) for e in op.extras[1:]])  # scale-d = 0: D = A*B
    c_ops = ",".join("%%%d" % i for i in range(nc))
    if op.a_source == "reg":
        a_ops, ins = "{%s}" % ",".join("%%%d" % (nc + i) for i in range(4)), "a0, a1, a2, a3"
        ins = ['"r"(a%d)' % i for i in range(4)] + ['"l"(db)']
        b_op = "%%%d" % (nc + 4)
    else:
        a_ops, ins, b_op = "%%%d" % nc, ['"l"(da)', '"l"(db)'], "%%%d" % (nc + 1)
    cons = "+f" if op.c.cpp == "float" else "+r"
    body = [
        "__shared__ __align__(256) uint8_t sA[%d];" % a_bytes,
        "__shared__ __align__(256) uint8_t sB[%d];" % b_bytes,
        "int t = threadIdx.x;",
        "for (int i = t; i < %d; i += 128) sA[i] = a_img[i];" % a_bytes,
        "for (int i = t; i < %d; i += 128) sB[i] = b_img[i];" % b_bytes,
        "__syncthreads();",
        'asm volatile("fence.proxy.async.shared::cta;" ::: "memory");',
        "uint32_t sa, sb;",
        'asm volatile("{ .reg .u64 p; cvta.to.shared.u64 p, %1; cvt.u32.u64 %0, p; }" : "=r"(sa) : "l"(sA));',
        'asm volatile("{ .reg .u64 p; cvta.to.shared.u64 p, %1; cvt.u32.u64 %0, p; }" : "=r"(sb) : "l"(sB));',
        "uint64_t da = a_desc + ((sa >> 4) & 0x3FFF), db = b_desc + ((sb >> 4) & 0x3FFF);",
        "%s d[%d] = {0};" % (op.c.cpp, nc),
        "uint32_t a0 = a_frag[t*4], a1 = a_frag[t*4+1], a2 = a_frag[t*4+2], a3 = a_frag[t*4+3];",
        'asm volatile("wgmma.fence.sync.aligned;" ::: "memory");',
        'asm volatile("%s {%s}, %s, %s, %s;" : %s : %s);' % (
            op.ptx, c_ops, a_ops, b_op, imms,
            ", ".join('"%s"(d[%d])' % (cons, i) for i in range(nc)), ", ".join(ins)),
        'asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");',
        'asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");',
        "for (int i = 0; i < %d; ++i) d_frag[t * %d + i] = *(uint32_t*)&d[i];" % (nc, nc),
    ]
    return translation_unit(FIXED_WIDTH_TYPES, kernel("k", PARAMS, "\n".join(body), 128))


rng = np.random.default_rng(0)
for name in sys.argv[1:]:
    atom = make_mma_atom(name)
    op = atom.op
    m, n, k = atom.shape_mnk
    A = atom.val_type_A.quantize(rng.integers(-3, 4, size=(m, k)))
    B = atom.val_type_B.quantize(rng.integers(0 if atom.val_type_B.min == 0 else -3, 4, size=(n, k)))
    ref = A.astype(np.float64) @ B.astype(np.float64).T
    a_img, a_bytes = image(A, atom.val_type_A)
    b_img, b_bytes = image(B, atom.val_type_B)
    kern = load_kernel(compile(source(op, a_bytes, b_bytes), device_arch()), "k", PARAMS)
    a_frag = np.zeros((128, 4), np.uint32)
    if op.a_source == "reg":
        frag = atom.val_type_A.to_host(atom.partition_A(A))  # through the atom's A layout
        a_frag = np.ascontiguousarray(frag).view(np.uint32)
    d = torch.zeros(128 * op.c.count, dtype=torch.int32, device="cuda")
    kern(torch.from_numpy(a_frag.view(np.int32)).cuda(), a_img, b_img, d, desc(m), desc(n),
         grid=1, block=128)
    torch.cuda.synchronize()
    raw = d.cpu().numpy().reshape(128, op.c.count)
    frag = raw.view({"float": np.float32, "uint32_t": atom.val_type_C.host}[op.c.cpp])
    got = atom.tile_C(frag.reshape(128, n // 2))  # through the atom's C layout
    assert np.array_equal(got.astype(np.float64), ref), (name, np.argwhere(got != ref)[:5])
    print("OK", name)
"""


@pytest.mark.gpu
def test_gmma_layouts_on_the_gpu(tmp_path):
    import os
    import subprocess
    import sys

    script = tmp_path / "gmma_gpu.py"
    script.write_text(_GPU_SCRIPT)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, str(script), *GPU_ATOMS],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("OK") == len(GPU_ATOMS)
