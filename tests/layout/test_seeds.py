"""Acceptance 1 of issue 2: every layout in the seeds, written as the seed writes it.

Each layout below is pasted from ../shared/seeds/*.md exactly as it appears there
(C++ ``Layout<Shape<...>,Stride<...>>`` spellings keep the seed's line breaks and
spaces). The expected values come from the seeds' own tables and prose, or from
the PTX ISA fragment formulas (seed 002 for m8n8k4; the PTX ISA for m16n8k8 and
wgmma), never from cutemma itself.
"""

from __future__ import annotations

import re

import pytest

from cutemma.layout import ComposedLayout, Layout, Swizzle, cosize, size

# ---------------------------------------------------------------------------
# Seed 000/004 (CuTe 0t_mma_atom.md, Volta and Hopper sections)
# ---------------------------------------------------------------------------

# Seed 000 writes the C++ with indentation, seed 004 without: both must parse.
SM70_THRID_000 = """Layout<Shape <_4, _2>,
                       Stride<_1,_16>>"""
SM70_THRID_004 = """Layout<Shape <_4, _2>,
Stride<_1,_16>>"""

SM70_C_F32_000 = """Layout<Shape <Shape <_2, _2,_2>, Shape <_2,_2, _2>>,
                         Stride<Stride<_1,_16,_4>, Stride<_8,_2,_32>>>"""
SM70_C_F32_004 = """Layout<Shape <Shape <_2, _2,_2>, Shape <_2,_2, _2>>,
Stride<Stride<_1,_16,_4>, Stride<_8,_2,_32>>>"""

SM70_C_F16 = """Layout<Shape <_8,_8>,
                         Stride<_1,_8>>"""
SM70_A_TN = """Layout<Shape <_8,_4>,
                         Stride<_1,_8>>"""
SM70_A_NT = """Layout<Shape <Shape <_4,_2>,_4>,
                         Stride<Stride<_8,_4>,_1>>"""

SM90_THRID = "Layout<_128, _1>"
SM90_C_64x8 = """Layout<Shape <Shape <  _4, _8,  _4>, Shape < _2, _2>>,
                       Stride<Stride<_128, _1, _16>, Stride<_64, _8>>>"""
SM90_C_64x128 = """Layout<Shape <Shape <  _4, _8,  _4>, Shape < _2, _2,  _16>>,
                       Stride<Stride<_128, _1, _16>, Stride<_64, _8, _512>>>"""
SM90_A_SS = """Layout<Shape <_128, Shape <_64,_16>>,
                       Stride<  _0, Stride< _1,_64>>>"""

ATOM_LAYOUT_2x2 = """Layout<Shape <_2,_2>,
Stride<_2,_1>>"""
M_PERMUTATION = """Layout<Shape <_4,_4,_2>,
Stride<_1,_8,_4>>"""

# ---------------------------------------------------------------------------
# Seed 003 (CuTe detail notes): SM80 named layouts and printed ThrIDs
# ---------------------------------------------------------------------------
SM80_8x8_ROW = """Layout<Shape <Shape < _4,_8>,_2>,
                             Stride<Stride<_16,_1>,_8>>"""
SM80_16x8_ROW = """Layout<Shape <Shape < _4,_8>,Shape < _2,_2>>,
                             Stride<Stride<_32,_1>,Stride<_16,_8>>>"""

# (seed text, how CuTe prints it without underscores)
SEED_LAYOUTS = [
    (SM70_THRID_000, "(4,2):(1,16)"),
    (SM70_THRID_004, "(4,2):(1,16)"),
    (SM70_C_F32_000, "((2,2,2),(2,2,2)):((1,16,4),(8,2,32))"),
    (SM70_C_F32_004, "((2,2,2),(2,2,2)):((1,16,4),(8,2,32))"),
    (SM70_C_F16, "(8,8):(1,8)"),
    (SM70_A_TN, "(8,4):(1,8)"),
    (SM70_A_NT, "((4,2),4):((8,4),1)"),
    (SM90_THRID, "128:1"),
    (SM90_C_64x8, "((4,8,4),(2,2)):((128,1,16),(64,8))"),
    (SM90_C_64x128, "((4,8,4),(2,2,16)):((128,1,16),(64,8,512))"),
    (SM90_A_SS, "(128,(64,16)):(0,(1,64))"),
    (ATOM_LAYOUT_2x2, "(2,2):(2,1)"),
    (M_PERMUTATION, "(4,4,2):(1,8,4)"),
    (SM80_8x8_ROW, "((4,8),2):((16,1),8)"),
    (SM80_16x8_ROW, "((4,8),(2,2)):((32,1),(16,8))"),
    # seed 003 prints ThrIDs CuTe-style, with underscores and a space
    ("(_4, _2):(_1, _16)", "(4,2):(1,16)"),
    ("(_128):(_1)", "(128):(1)"),
    # seed 004 prose
    ("(2,2):(2,1)", "(2,2):(2,1)"),
    ("(4,4,2):(1,8,4)", "(4,4,2):(1,8,4)"),
    # issue 2 names this C++ spelling explicitly
    ("Layout<Shape<Shape<_4,_8>,_2>, Stride<Stride<_16,_1>,_8>>", "((4,8),2):((16,1),8)"),
]


@pytest.mark.parametrize("text,printed", SEED_LAYOUTS)
def test_seed_layout_parses_and_prints(text, printed):
    L = Layout.parse(text)
    assert str(L) == printed
    # printing is a fixed point: the printed form reads back to the same layout
    assert Layout.parse(printed) == L
    assert str(Layout.parse(printed)) == printed


def test_sm70_f32_accumulator_tables_from_seed():
    # seed 004: "(T0,V0) is located at (m,n) = (0,0) = 0" ... "(T7,V0) ... = 21"
    C = Layout.parse(SM70_C_F32_004)
    assert [C(t, 0) for t in range(8)] == [0, 1, 16, 17, 4, 5, 20, 21]
    # seed 004: "(T0,V1) is located at (m,n) = (0,1) = 8" ... "(T0,V7) ... = 42"
    assert [C(0, v) for v in range(8)] == [0, 8, 2, 10, 32, 40, 34, 42]
    assert size(C) == 64
    assert cosize(C) == 64


def test_sm70_f32_accumulator_matches_ptx_formula():
    # Seed 002 (PTX ISA 9.7.14.5.1), .f32 accumulators of mma.m8n8k4:
    #   row = X (+4 for lanes >= 16), X = (lane & 1) + (i & 2)
    #   col = (i & 4) + (lane & 2) + (i & 1)
    # Logical thread t maps to lane ThrID(t) = (4,2):(1,16) (seed 004).
    C = Layout.parse(SM70_C_F32_000)
    thr = Layout.parse(SM70_THRID_000)
    for t in range(8):
        lane = thr(t)
        for i in range(8):
            row = (lane & 1) + (i & 2) + (4 if lane >= 16 else 0)
            col = (i & 4) + (lane & 2) + (i & 1)
            assert C(t, i) == row + 8 * col, (t, i)


def test_sm70_quadpair_thread_ids():
    # seed 004: maps logical thread id [0,8) onto [0,4) U [16,20)
    thr = Layout.parse(SM70_THRID_004)
    assert [thr(t) for t in range(8)] == [0, 1, 2, 3, 16, 17, 18, 19]


def _sm70_lane(t):
    return (t % 4) + 16 * (t // 4)  # seed 004: T4..T7 are lanes 16..19


def test_sm70_f16_accumulator_matches_ptx_formula():
    # seed 002: C/D .f16: row = lane % 4 (+4 for lanes >= 16), col = i
    C = Layout.parse(SM70_C_F16)
    for t in range(8):
        lane = _sm70_lane(t)
        for i in range(8):
            row = lane % 4 + (4 if lane >= 16 else 0)
            assert C(t, i) == row + 8 * i


def test_sm70_a_tn_and_b_tn_match_ptx_formula():
    # seed 002: row-major A: row = lane % 4 (+4), col = i; col-major B: row(k) = i,
    # col(n) = lane % 4 (+4). CuTe writes A as (m,k) and B as (n,k), both m + 8k.
    L = Layout.parse(SM70_A_TN)
    for t in range(8):
        lane = _sm70_lane(t)
        for i in range(4):
            m = lane % 4 + (4 if lane >= 16 else 0)
            assert L(t, i) == m + 8 * i


def test_sm70_a_nt_and_b_nt_match_ptx_formula():
    # seed 002: col-major A: row = i % 4 (+4 for lanes >= 16), col = lane % 4;
    # row-major B: row(k) = lane % 4, col(n) = i (+4 for lanes >= 16).
    L = Layout.parse(SM70_A_NT)
    for t in range(8):
        lane = _sm70_lane(t)
        for i in range(4):
            mn = i % 4 + (4 if lane >= 16 else 0)
            k = lane % 4
            assert L(t, i) == mn + 8 * k


def _wgmma_c(lane128, i):
    # PTX ISA, wgmma .m64nNk16 accumulator D fragment: row = 16*warp + lane/4
    # + 8*((i/2)%2), col = 2*(lane%4) + (i%2) + 8*(i/4). Layout index m + 64*n.
    warp, lane = divmod(lane128, 32)
    row = 16 * warp + lane // 4 + 8 * ((i // 2) % 2)
    col = 2 * (lane % 4) + (i % 2) + 8 * (i // 4)
    return row + 64 * col


@pytest.mark.parametrize("text,n", [(SM90_C_64x8, 8), (SM90_C_64x128, 128)])
def test_sm90_gmma_accumulator(text, n):
    C = Layout.parse(text)
    assert size(C) == 64 * n
    # seed 004: "(m,n) = (16,0) = 16" for T32; "(m,n) = (0,8) = 512" starts V4
    assert C(32, 0) == 16
    if n > 8:
        assert C(0, 4) == 512
    vals = n // 2  # each of 128 threads holds 64*N/128 values
    image = set()
    for t in range(128):
        for v in range(vals):
            assert C(t, v) == _wgmma_c(t, v), (t, v)
            image.add(C(t, v))
    assert image == set(range(64 * n))  # a bijection onto the 64xN tile


def test_sm90_gmma_a_smem_layout_and_thrid():
    A = Layout.parse(SM90_A_SS)
    # seed 004: "all threads are mapped to (m,k) = (0,0) = 0" and values unchanged
    assert {A(t, 0) for t in range(128)} == {0}
    assert [A(5, v) for v in range(64 * 16)] == list(range(64 * 16))
    assert size(A) == 128 * 1024
    thr = Layout.parse(SM90_THRID)
    assert [thr(t) for t in range(128)] == list(range(128))
    assert [Layout.parse("Layout<_32>")(t) for t in range(32)] == list(range(32))


def test_layout_shape_only_cpp_spelling():
    # seed 003: `using ThrID = Layout<_32>;` - stride defaults to column-major
    L = Layout.parse("Layout<_32>")
    assert str(L) == "32:1"
    # seed 004: Layout<Shape<_1,_1,_1>> (a single atom) has one element at 0
    one = Layout.parse("Layout<Shape<_1,_1,_1>>")
    assert size(one) == 1 and one(0) == 0 and len(one) == 3


def test_m_permutation_scatter_table():
    # seed 004, verbatim: "old m-coord" and "new m-coord" rows
    old = "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31"
    new = "0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31"
    P = Layout.parse(M_PERMUTATION)
    assert P == Layout.parse("(4,4,2):(1,8,4)")
    assert [P(int(m)) for m in old.split()] == [int(m) for m in new.split()]


def _ptx_m16n8k8_a(lane, i):
    # PTX ISA, mma.m16n8k8 .f16 A fragment: groupID = lane>>2, tig = lane%4;
    # row = groupID (+8 for a2,a3), col = 2*tig + (i & 1). Index m + 16*k.
    row = (lane >> 2) + 8 * (i >> 1)
    col = 2 * (lane % 4) + (i & 1)
    return row + 16 * col


def _ptx_m16n8k8_b(lane, i):
    # PTX ISA, mma.m16n8k8 .f16 B fragment: row(k) = 2*tig + i, col(n) = groupID.
    # CuTe writes B as (n,k): index n + 8*k.
    return (lane >> 2) + 8 * (2 * (lane % 4) + i)


def test_sm80_named_layouts_match_ptx():
    A = Layout.parse(SM80_16x8_ROW)
    B = Layout.parse(SM80_8x8_ROW)
    for lane in range(32):
        for i in range(4):
            assert A(lane, i) == _ptx_m16n8k8_a(lane, i)
        for i in range(2):
            assert B(lane, i) == _ptx_m16n8k8_b(lane, i)


# ---------------------------------------------------------------------------
# Seed 001 (PTX ISA 9.7.16.3.3, tcgen05 shared memory canonical layouts)
# ---------------------------------------------------------------------------

# (exact layout as printed, canonical layout, parameters in elements)
# LBO and SBO in the seed are "N*sizeof(type)" bytes, so N elements.
SEED001_EXAMPLES = [
    (
        "Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))",
        "Swizzle<0,4,3> o ((8,m),(T,2k)):((1T,SBO),(1,LBO))",
        dict(T=4, m=2, k=2, LBO=64, SBO=32),
    ),
    (
        "Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))",
        "Swizzle<1,4,3> o ((8,m),(T,2k)):((2T,SBO),(1,T))",
        dict(T=4, m=2, k=2, SBO=64),
    ),
    (
        "Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))",
        "Swizzle<0,4,3> o ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))",
        dict(T=8, m=2, k=2, LBO=128, SBO=64),
    ),
    (
        "Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))",
        "Swizzle<1,4,3> o ((T,2,m),(8,k)):((1,T,LBO),(2T,SBO))",
        dict(T=8, m=2, k=2, LBO=128, SBO=256),
    ),
    (
        "Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))",
        "Swizzle<2,4,3> o ((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))",
        dict(T=8, m=2, k=2, LBO=256, SBO=512),
    ),
]


def _substitute(canonical: str, params: dict) -> str:
    """Replace 'cX' tokens (c an optional integer coefficient) by c*params[X]."""

    def repl(mo):
        coef = int(mo.group(1)) if mo.group(1) else 1
        return str(coef * params[mo.group(2)])

    head, _, body = canonical.partition(" o ")
    return head + " o " + re.sub(r"(\d*)(LBO|SBO|T|m|k)\b", repl, body)


def _swizzle_bits(b, m, s, x):
    # CuTe swizzle.hpp: the b bits at [m+s, m+s+b) are XORed into [m, m+b)
    mask = ((1 << b) - 1) << (m + s)
    return x ^ ((x & mask) >> s)


@pytest.mark.parametrize("exact,canonical,params", SEED001_EXAMPLES)
def test_seed001_canonical_layouts(exact, canonical, params):
    E = Layout.parse(exact)
    assert isinstance(E, ComposedLayout)
    # the canonical formula with the table's parameters is the exact layout
    assert Layout.parse(_substitute(canonical, params)) == E
    bits, base, shift = (int(x) for x in re.findall(r"\d+", exact.split(" o ")[0]))
    inner = Layout.parse(exact.split(" o ", 1)[1])
    assert str(E) == f"Sw<{bits},{base},{shift}> o 0 o {inner}"
    assert size(E) == size(inner)
    for i in range(size(inner)):
        assert E(i) == _swizzle_bits(bits, base, shift, inner(i))


@pytest.mark.parametrize("bits", [0, 1, 2, 3])
def test_seed001_swizzle_atoms(bits):
    # seed 001 names Swizzle<0..3,4,3>; Swizzle<0,4,3> is the identity
    sw = Swizzle(bits, 4, 3)
    assert str(sw) == f"Sw<{bits},4,3>"
    span = 1 << (4 + 3 + bits + 1)
    assert [sw(x) for x in range(span)] == [_swizzle_bits(bits, 4, 3, x) for x in range(span)]
