"""ptx_spec against witnesses that do not come from it.

* Published CuTe layouts: seeds 003/004 (SM70, SM80_16x8_Row/SM80_8x8_Row, GMMA C)
  and CuTe's include/cute/atom/mma_traits_sm80.hpp (NVIDIA/cutlass), evaluated
  through cutemma.layout's Layout call.
* Hand-read entries of the ISA figures (seed 002 text, PTX ISA 9.7.14.5.x).
* Structural facts: every fragment table covers its matrix exactly once.
"""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.errors import AtomError
from cutemma.layout import Layout
from cutemma.mma.infer import infer_layout
from cutemma.mma.ptx_spec import (
    SPECS,
    WGMMA_K,
    flat_coords,
    fragment_coords,
    parse_ptx,
    parse_shape,
    tables_for,
)

QUADPAIR0 = [
    0,
    1,
    2,
    3,
    16,
    17,
    18,
    19,
]  # seed 002: MMA computation 1 (and CuTe's ThrID (4,2):(1,16))

# One element type per (shape, class), to name each SPECS entry.
EXAMPLE_TYPE = {"f16": "f16", "tf32": "tf32", "f64": "f64", "i8": "s8", "i4": "s4", "b1": "b1"}


def layout_table(text: str, threads=None) -> np.ndarray:
    """Evaluate a published layout at every (t, v) through Layout's own call."""
    lay = Layout.parse(text)
    t_size, v_size = (int(np.prod(_flatten(s))) for s in lay.shape)
    rows = range(t_size) if threads is None else threads
    return np.array([[lay(t, v) for v in range(v_size)] for t in rows])


def _flatten(s):
    return [s] if isinstance(s, int) else [x for y in s for x in _flatten(y)]


def spec_table(shape, atype, operand, lanes=None, **kw):
    coords = fragment_coords(shape, atype, operand, **kw)
    if lanes is not None:
        coords = coords[lanes]
    return flat_coords(coords, operand, parse_shape(shape))


# (shape, A type, operand, options, published CuTe layout, where it is published)
PUBLISHED = [
    # seed 004 (SM70 8x8x4 quadpair)
    ("m8n8k4", "f16", "A", {"major": "row"}, "(8,4):(1,8)", "seed 004 TN ALayout"),
    ("m8n8k4", "f16", "B", {"major": "col"}, "(8,4):(1,8)", "seed 004 TN BLayout"),
    ("m8n8k4", "f16", "A", {"major": "col"}, "((4,2),4):((8,4),1)", "seed 004 NT ALayout"),
    ("m8n8k4", "f16", "B", {"major": "row"}, "((4,2),4):((8,4),1)", "seed 004 NT BLayout"),
    ("m8n8k4", "f16", "C", {"ctype": "f32"}, "((2,2,2),(2,2,2)):((1,16,4),(8,2,32))", "seed 004"),
    ("m8n8k4", "f16", "C", {"ctype": "f16"}, "(8,8):(1,8)", "seed 004 F16 CLayout"),
    # seed 003 (SM80_16x8x8_F16F16F16F16_TN)
    ("m16n8k8", "f16", "A", {}, "((4,8),(2,2)):((32,1),(16,8))", "seed 003 SM80_16x8_Row"),
    ("m16n8k8", "f16", "B", {}, "((4,8),2):((16,1),8)", "seed 003 SM80_8x8_Row"),
    ("m16n8k8", "f16", "C", {}, "((4,8),(2,2)):((32,1),(16,8))", "seed 003 SM80_16x8_Row"),
    # CuTe mma_traits_sm80.hpp
    ("m16n8k16", "bf16", "A", {}, "((4,8),(2,2,2)):((32,1),(16,8,128))", "sm80 16x8x16 F16"),
    ("m16n8k16", "bf16", "B", {}, "((4,8),(2,2)):((16,1),(8,64))", "sm80 16x8x16 F16"),
    ("m16n8k4", "tf32", "A", {}, "((4,8),2):((16,1),8)", "sm80 16x8x4 TF32"),
    ("m16n8k4", "tf32", "B", {}, "((4,8),1):((8,1),0)", "SM80_8x4"),
    ("m16n8k8", "tf32", "A", {}, "((4,8),(2,2)):((16,1),(8,64))", "sm80 16x8x8 TF32"),
    ("m16n8k8", "tf32", "B", {}, "((4,8),2):((8,1),32)", "sm80 16x8x8 TF32"),
    ("m8n8k4", "f64", "A", {}, "((4,8),1):((8,1),0)", "SM80_8x4 (F64)"),
    ("m8n8k4", "f64", "B", {}, "((4,8),1):((8,1),0)", "SM80_8x4 (F64)"),
    ("m8n8k4", "f64", "C", {}, "((4,8),2):((16,1),8)", "SM80_8x8_Row (F64)"),
    ("m8n8k16", "s8", "A", {}, "((4,8),4):((32,1),8)", "SM80_8x16_Row"),
    ("m8n8k16", "u8", "B", {}, "((4,8),4):((32,1),8)", "SM80_8x16_Row"),
    ("m8n8k16", "s8", "C", {}, "((4,8),2):((16,1),8)", "SM80_8x8_Row"),
    ("m16n8k16", "s8", "A", {}, "((4,8),(4,2)):((64,1),(16,8))", "sm80 16x8x16 S8"),
    ("m16n8k16", "s8", "B", {}, "((4,8),4):((32,1),8)", "sm80 16x8x16 S8"),
    ("m16n8k32", "s8", "A", {}, "((4,8),(4,2,2)):((64,1),(16,8,256))", "sm80 16x8x32 S8"),
    ("m16n8k32", "u8", "B", {}, "((4,8),(4,2)):((32,1),(8,128))", "sm80 16x8x32 S8"),
    ("m16n8k32", "s8", "C", {}, "((4,8),(2,2)):((32,1),(16,8))", "SM80_16x8_Row"),
    ("m8n8k128", "b1", "A", {}, "((4,8),32):((256,1),8)", "sm80 8x8x128 B1"),
    ("m8n8k128", "b1", "B", {}, "((4,8),32):((256,1),8)", "sm80 8x8x128 B1"),
    ("m16n8k128", "b1", "B", {}, "((4,8),32):((256,1),8)", "sm80 16x8x128 B1"),
    ("m16n8k256", "b1", "A", {}, "((4,8),(32,2,2)):((512,1),(16,8,2048))", "sm80 16x8x256 B1"),
    ("m16n8k256", "b1", "B", {}, "((4,8),(32,2)):((256,1),(8,1024))", "sm80 16x8x256 B1"),
    # seed 004 (SM90 GMMA 64x128x16 F16 accumulator)
    ("m64n128k16", "f16", "C", {}, "((4,8,4),(2,2,16)):((128,1,16),(64,8,512))", "seed 004"),
    # CuTe mma_traits_sm90_gmma.hpp register-source A layouts
    ("m64n8k8", "tf32", "A", {}, "((4,8,4),(2,2)):((64,1,16),(8,256))", "GMMA ALayout_64x8"),
    (
        "m64n8k16",
        "bf16",
        "A",
        {},
        "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))",
        "GMMA ALayout_64x16",
    ),
    (
        "m64n8k32",
        "e4m3",
        "A",
        {},
        "((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))",
        "GMMA ALayout_64x32",
    ),
]


@pytest.mark.parametrize(("shape", "atype", "operand", "kw", "text", "where"), PUBLISHED)
def test_matches_published_cute_layout(shape, atype, operand, kw, text, where):
    lanes = QUADPAIR0 if (shape, atype) == ("m8n8k4", "f16") else None
    assert np.array_equal(spec_table(shape, atype, operand, lanes, **kw), layout_table(text)), where


@pytest.mark.parametrize(("shape", "atype", "operand", "kw", "text", "where"), PUBLISHED)
def test_infer_from_isa_prints_the_published_layout(shape, atype, operand, kw, text, where):
    # Stronger than equal-as-functions: the simplest form is the one CuTe wrote.
    lanes = QUADPAIR0 if (shape, atype) == ("m8n8k4", "f16") else None
    assert str(infer_layout(spec_table(shape, atype, operand, lanes, **kw))) == text, where


def _spec_cases():
    for (shape, tclass), spec in SPECS.items():
        for operand in ("A", "B", "C"):
            for variant in spec.variants.get(operand, (None,)):
                yield shape, EXAMPLE_TYPE[tclass], operand, variant


@pytest.mark.parametrize(("shape", "atype", "operand", "variant"), list(_spec_cases()))
def test_every_fragment_covers_its_matrix_once(shape, atype, operand, variant):
    m, n, k = parse_shape(shape)
    rows, cols = {"A": (m, k), "B": (k, n), "C": (m, n)}[operand]
    kw = {}
    if variant is not None:
        kw = {"ctype": variant} if operand == "C" else {"major": variant}
    coords = fragment_coords(shape, atype, operand, **kw)
    groups = (
        [QUADPAIR0, [4, 5, 6, 7, 20, 21, 22, 23]]
        if shape == "m8n8k4" and atype == "f16"
        else [None]
    )
    for lanes in groups:
        c = coords if lanes is None else coords[lanes]
        assert c[..., 0].min() >= 0 and c[..., 0].max() < rows
        assert c[..., 1].min() >= 0 and c[..., 1].max() < cols
        seen = np.zeros((rows, cols), dtype=int)
        np.add.at(seen, (c[..., 0].ravel(), c[..., 1].ravel()), 1)
        assert (seen == 1).all(), (
            f"{shape} {atype} {operand}: some elements held {seen.max()} times"
        )


def test_isa_figure_entries_by_hand():
    # Figure 79 (m16n8k16 .f16 A): lane 5 (group 1, thread 1) holds
    # a0,a1 at (1,2),(1,3); a2,a3 at (9,2),(9,3); a4..a7 the same + 8 columns.
    got = fragment_coords("m16n8k16", "f16", "A")[5].tolist()
    assert got == [[1, 2], [1, 3], [9, 2], [9, 3], [1, 10], [1, 11], [9, 10], [9, 11]]
    # seed 002, m8n8k4 .f32 C: lane 17 (high group) c5 -> row (1&1)+(5&2)+4 = 5, col 4+0+1 = 5.
    assert fragment_coords("m8n8k4", "f16", "C", ctype="f32")[17, 5].tolist() == [5, 5]
    # 9.7.14.5.10, m16n8k32 .s8 B: lane 7 b5 -> row 3*4 + 1 + 16 = 29, col 1.
    assert fragment_coords("m16n8k32", "e4m3", "B")[7, 5].tolist() == [29, 1]
    # m16n8k64 .e2m1 is the packed class (eight per register): lane 0 a31 -> (8, 39).
    assert fragment_coords("m16n8k64", "e2m1", "A")[0, 31].tolist() == [8, 39]


def test_seed_sm70_walkthrough_positions():
    # Seed 004 lists (m,n) of (T0..T7, V0) and (T0, V0..V7) for the F32 accumulator.
    c = fragment_coords("m8n8k4", "f16", "C", ctype="f32")[QUADPAIR0]
    assert c[:, 0].tolist() == [[0, 0], [1, 0], [0, 2], [1, 2], [4, 0], [5, 0], [4, 2], [5, 2]]
    assert c[0, :].tolist() == [[0, 0], [0, 1], [2, 0], [2, 1], [0, 4], [0, 5], [2, 4], [2, 5]]


def test_m16n8k256_literal_isa_column_would_duplicate():
    # The ISA text says col = tig*32 + i for i < 64 (not i & 0x1F). Taken literally,
    # lane 0's a32..a63 and lane 0's a96..a127 both land on row 8, columns 128..159.
    lane, i = np.arange(32)[:, None], np.arange(128)[None, :]
    g, t = lane >> 2, lane % 4
    row = np.where((i < 32) | ((64 <= i) & (i < 96)), g, g + 8)
    col = np.where(i < 64, t * 32 + i, t * 32 + (i & 0x1F) + 128)
    pairs = {(int(r), int(c)) for r, c in zip(row.ravel(), col.ravel(), strict=True)}
    assert len(pairs) < 16 * 256  # the literal text is not a bijection ...
    ours = fragment_coords("m16n8k256", "b1", "A")
    assert len({tuple(p) for p in ours.reshape(-1, 2).tolist()}) == 16 * 256  # ... ours is


@pytest.mark.parametrize("n", [8, 16, 24, 64, 136, 256])
def test_wgmma_d_covers_64xN_once(n):
    c = fragment_coords(f"m64n{n}k16", "bf16", "C")
    assert c.shape == (128, n // 2, 2)
    seen = np.zeros((64, n), dtype=int)
    np.add.at(seen, (c[..., 0].ravel(), c[..., 1].ravel()), 1)
    assert (seen == 1).all()
    # Figure 149: warp w owns rows 16w..16w+15.
    assert ((c[..., 0] // 16) == (np.arange(128) // 32)[:, None]).all()


@pytest.mark.parametrize(
    ("tclass", "atype"), [("f16", "f16"), ("tf32", "tf32"), ("i8", "e5m2"), ("b1", "b1")]
)
def test_wgmma_rs_a_covers_64xK_once(tclass, atype):
    k = WGMMA_K[tclass][0]
    n = 64
    c = fragment_coords(f"m64n{n}k{k}", atype, "A")
    seen = np.zeros((64, k), dtype=int)
    np.add.at(seen, (c[..., 0].ravel(), c[..., 1].ravel()), 1)
    assert (seen == 1).all()


def test_wgmma_f16_rs_a_matches_warp_level_m16n8k16_per_warp():
    # Figure 148: each warp holds its 16 rows exactly as mma.m16n8k16 A does.
    wg = fragment_coords("m64n32k16", "f16", "A")
    warp = fragment_coords("m16n8k16", "f16", "A")
    for w in range(4):
        assert np.array_equal(wg[32 * w : 32 * w + 32, :, 0] - 16 * w, warp[..., 0])
        assert np.array_equal(wg[32 * w : 32 * w + 32, :, 1], warp[..., 1])


def test_dp4a_single_thread():
    # 9.7.1.23: d = c + sum a.byte[i]*b.byte[i] -> A is row 0, B is column 0, K = 4.
    assert fragment_coords("dp4a", "s8", "A")[0].tolist() == [[0, 0], [0, 1], [0, 2], [0, 3]]
    assert fragment_coords("dp4a", "s8", "B")[0].tolist() == [[0, 0], [1, 0], [2, 0], [3, 0]]
    assert fragment_coords("dp2a", "s8", "C").shape == (1, 1, 2)


@pytest.mark.parametrize(
    ("args", "kw", "needle"),
    [
        (("m16n8k16", "f16", "D"), {}, "operand"),
        (("m16n8k12", "f16", "A"), {}, "m16n8k12"),
        (("m16n8k16", "f16", "A"), {"major": "col"}, "row"),
        (("m16n8k16", "f32", "A"), {}, "f32"),
        (("m64n12k16", "f16", "C"), {}, "N=12"),
        (("m64n40k32", "s8", "C"), {}, "N=40"),  # integer wgmma: N = 8..32 step 8, then step 16
        (("m64n64k16", "f16", "B"), {}, "shared memory"),
        (("m64n64k8", "f16", "A"), {}, "K="),
        (("q16", "f16", "A"), {}, "PTX shape"),
    ],
)
def test_bad_requests_name_the_rule(args, kw, needle):
    with pytest.raises(AtomError, match=needle):
        fragment_coords(*args, **kw)


def test_parse_ptx_reads_kind_and_block_scale_forms():
    p = parse_ptx(
        "mma.sync.aligned.kind::mxf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0"
    )
    assert (p["shape"], p["types"][:4], p["majors"]) == (
        "m16n8k64",
        ["f32", "e2m1", "e2m1", "f32"],
        ["row", "col"],
    )


def test_tables_for_descriptor_and_tmem_operands():
    from types import SimpleNamespace as NS

    ss = NS(
        name="SM90_64x16x16_F32F16F16_SS",
        a_source="smem",
        b_source="smem",
        ptx="wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16",
    )
    tab = tables_for(ss)
    # seed 004: the SS A layout is (128,(64,16)):(0,(1,64)): every thread sees all of A.
    some = [0, 37, 127]
    assert np.array_equal(tab.A[some], layout_table("(128,(64,16)):(0,(1,64))", some))
    assert tab.kind["A"] == "descriptor" and tab.kind["C"] == "fragment"
    umma = NS(
        name="SM100_MMA_F16BF16_SS",
        a_source="smem",
        b_source="smem",
        ptx="tcgen05.mma.cta_group::1.kind::f16",
    )
    assert tables_for(umma) is None


def test_sparse_wgmma_rs_a_is_cute_sparse_layout():
    from types import SimpleNamespace as NS

    # CuTe's SPARSE::GMMA_64x8x32_F16F16F16_RS uses GMMA::ALayout_64x32 over logical K=32.
    op = NS(
        name="SM90_SPARSE_64x8x32_F16F16F16_RS",
        a_source="reg",
        b_source="smem",
        ptx="wgmma.mma_async.sp.sync.aligned.m64n8k32.f16.f16.f16",
    )
    tab = tables_for(op)
    assert np.array_equal(tab.A, layout_table("((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))"))
    assert np.array_equal(tab.C, layout_table("((4,8,4),(2,2)):((128,1,16),(64,8))"))


def _op(name, ptx, a="reg", b="reg"):
    from types import SimpleNamespace as NS

    return NS(name=name, ptx=ptx, a_source=a, b_source=b)


def test_tables_for_fma2_single_thread():
    # fma.rn.f32x2 is elementwise on a pair: as 2x1x1 the pair runs along M.
    tab = tables_for(_op("SM100_2x1x1_F32F32F32F32", "fma.rn.f32x2"))
    assert (tab.mnk, tab.A.tolist(), tab.B.tolist(), tab.C.tolist()) == (
        (2, 1, 1),
        [[0, 1]],
        [[0]],
        [[0, 1]],
    )
    tab = tables_for(_op("SM100_1x2x1_F32F32F32F32", "fma.rn.f32x2"))
    assert (tab.A.tolist(), tab.B.tolist(), tab.C.tolist()) == ([[0]], [[0, 1]], [[0, 1]])


def test_tables_for_sm120_kind_forms_use_the_container_width():
    f8f6f4 = tables_for(
        _op("SM120_16x8x32_TN", "mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f32.e2m1.e3m2.f32")
    )
    s8 = tables_for(
        _op("SM80_16x8x32_S32S8S8S32_TN", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32")
    )
    assert np.array_equal(f8f6f4.A, s8.A) and np.array_equal(f8f6f4.B, s8.B)
    mxf4 = tables_for(
        _op(
            "SM120_16x8x64_TN_VS",
            "mma.sync.aligned.kind::mxf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0",
        )
    )
    s4 = tables_for(
        _op("SM80_16x8x64_S32S4S4S32_TN", "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32")
    )
    assert np.array_equal(mxf4.A, s4.A) and np.array_equal(mxf4.B, s4.B)
