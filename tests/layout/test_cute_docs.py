"""Acceptance 2 of issue 2: CuTe's own documentation of layouts and their algebra.

Every expected value below is quoted from one of these NVIDIA/cutlass documents
(each test names its source):

- ``media/docs/cpp/cute/01_layout.md``          ("01_layout")
- ``media/docs/cpp/cute/02_layout_algebra.md``  ("02_layout_algebra")
- ``media/docs/cpp/cute/03_tensor.md``          ("03_tensor")
- ``media/docs/cute/02_layout_operations.md``   ("02_layout_operations", the older guide
  with printed tables for products and divides)

CuTe prints static ints with a leading underscore; cutemma prints them without.
"""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.layout import (
    Layout,
    append,
    blocked_product,
    coalesce,
    complement,
    composition,
    cosize,
    flat_divide,
    group,
    logical_divide,
    logical_product,
    make_layout,
    prepend,
    raked_product,
    select,
    size,
    slice_and_offset,
    tiled_divide,
    zipped_divide,
)
from cutemma.layout.int_tuple import crd2idx, idx2crd, shape_div

P = Layout.parse


def values(L):
    return [L(i) for i in range(size(L))]


def table(L):
    """Rows of L(m, n) for a rank-2 layout, as print_layout shows them."""
    return [[L(m, n) for n in range(size(L[1]))] for m in range(size(L[0]))]


def parse_table(text):
    """Read a markdown/ASCII table of ints from the docs (numbers only, row by row)."""
    rows = []
    for line in text.strip().splitlines():
        cells = [c for c in line.replace("|", " ").split() if c.lstrip("-").isdigit()]
        if cells:
            rows.append([int(c) for c in cells])
    return rows


# ---------------------------------------------------------------------------
# 01_layout: construction, printing, print1D/print2D, coordinates
# ---------------------------------------------------------------------------


def test_01_layout_default_strides_and_printing():
    # 01_layout "Constructing a Layout": print output, underscores dropped
    assert str(Layout(8)) == "8:1"
    assert str(Layout((2, 4))) == "(2,4):(1,2)"
    assert str(Layout((2, 4), (12, 1))) == "(2,4):(12,1)"
    assert str(Layout((2, (2, 2)), (4, (2, 1)))) == "(2,(2,2)):(4,(2,1))"
    # LayoutLeft of a hierarchical shape ignores the hierarchy: s2xh4_col
    assert str(Layout((2, (2, 2)))) == "(2,(2,2)):(1,(2,4))"


def test_01_layout_print2d_and_print1d():
    # 01_layout "Using a Layout": print2D and print1D outputs
    s2xs4 = P("(_2,_4):(_1,_2)")
    s2xd4_a = P("(_2,4):(_12,_1)")
    s2xh4_col = P("(2,(2,2)):(_1,(2,4))")
    s2xh4 = P("(2,(2,2)):(4,(2,1))")
    assert table(s2xs4) == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert table(s2xd4_a) == [[0, 1, 2, 3], [12, 13, 14, 15]]
    assert table(s2xh4_col) == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert table(s2xh4) == [[0, 2, 1, 3], [4, 6, 5, 7]]
    assert values(s2xs4) == [0, 1, 2, 3, 4, 5, 6, 7]
    assert values(s2xd4_a) == [0, 12, 1, 13, 2, 14, 3, 15]
    assert values(s2xh4_col) == [0, 1, 2, 3, 4, 5, 6, 7]
    assert values(s2xh4) == [0, 4, 2, 6, 1, 5, 3, 7]


def test_01_layout_vector_and_matrix_examples():
    # 01_layout "Vector Layouts" and "Matrix examples"
    assert values(P("8:1")) == list(range(8))
    assert values(P("8:2")) == [0, 2, 4, 6, 8, 10, 12, 14]
    assert values(P("((4,2)):((2,1))")) == [0, 2, 4, 6, 1, 3, 5, 7]
    assert values(P("((4,2)):((1,4))")) == list(range(8))
    assert table(P("(4,2):(1,4)")) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert table(P("(4,2):(2,1)")) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert table(P("((2,2),2):((4,1),2)")) == [[0, 2], [4, 6], [1, 3], [5, 7]]


# 01_layout "Coordinate Mapping": the table for shape (3,(2,3)), 1-D -> 2-D -> natural
COORD_TABLE = [
    (0, (0, 0), (0, (0, 0))),
    (1, (1, 0), (1, (0, 0))),
    (2, (2, 0), (2, (0, 0))),
    (3, (0, 1), (0, (1, 0))),
    (4, (1, 1), (1, (1, 0))),
    (5, (2, 1), (2, (1, 0))),
    (6, (0, 2), (0, (0, 1))),
    (7, (1, 2), (1, (0, 1))),
    (8, (2, 2), (2, (0, 1))),
    (9, (0, 3), (0, (1, 1))),
    (10, (1, 3), (1, (1, 1))),
    (11, (2, 3), (2, (1, 1))),
    (12, (0, 4), (0, (0, 2))),
    (13, (1, 4), (1, (0, 2))),
    (14, (2, 4), (2, (0, 2))),
    (15, (0, 5), (0, (1, 2))),
    (16, (1, 5), (1, (1, 2))),
    (17, (2, 5), (2, (1, 2))),
]


@pytest.mark.parametrize("i,c2,nat", COORD_TABLE)
def test_01_layout_coordinate_table(i, c2, nat):
    shape = (3, (2, 3))
    assert idx2crd(i, shape) == nat
    assert idx2crd(c2, shape) == nat
    assert idx2crd(nat, shape) == nat


def test_01_layout_idx2crd_and_crd2idx_examples():
    # 01_layout: idx2crd(16, (3,(2,3))) == (1,(1,2)); crd2idx(..., (3,(12,1))) == 17
    shape, stride = (3, (2, 3)), (3, (12, 1))
    assert idx2crd(16, shape) == (1, (1, 2))
    assert idx2crd((1, 5), shape) == (1, (1, 2))
    assert crd2idx(16, shape, stride) == 17
    assert crd2idx((1, 5), shape, stride) == 17
    assert crd2idx((1, (1, 2)), shape, stride) == 17


def test_01_layout_index_table():
    # 01_layout "Index Mapping": (3,(2,3)):(3,(12,1)) as a 3x6 table
    L = P("(3,(2,3)):(3,(12,1))")
    assert table(L) == [
        [0, 12, 1, 13, 2, 14],
        [3, 15, 4, 16, 5, 17],
        [6, 18, 7, 19, 8, 20],
    ]


def test_01_layout_sublayouts_select_group():
    # 01_layout "Sublayouts"
    a = P("Layout<Shape<_4,Shape<_3,_6>>>")
    assert str(a) == "(4,(3,6)):(1,(4,12))"
    assert str(a[0]) == "4:1"
    assert str(a[1]) == "(3,6):(4,12)"
    assert str(a[1][0]) == "3:4"
    assert str(a[1][1]) == "6:12"
    b = P("Layout<Shape<_2,_3,_5,_7>>")
    assert str(b) == "(2,3,5,7):(1,2,6,30)"
    assert str(select(b, 1, 3)) == "(3,7):(2,30)"
    assert str(select(b, 0, 1, 3)) == "(2,3,7):(1,2,30)"
    assert str(select(b, 2)) == "(5):(6)"
    # "Grouping and flattening"
    g = group(b, 0, 2)
    assert str(g) == "((2,3),5,7):((1,2),6,30)"
    assert str(group(g, 1, 3)) == "((2,3),(5,7)):((1,2),(6,30))"


def test_01_layout_concatenation():
    # 01_layout "Concatenation"
    a, b = P("3:1"), P("4:3")
    row = make_layout(a, b)
    col = make_layout(b, a)
    assert str(row) == "(3,4):(1,3)"
    assert str(col) == "(4,3):(3,1)"
    assert str(make_layout(row, col)) == "((3,4),(4,3)):((1,3),(3,1))"
    aa = make_layout(a)
    assert str(aa) == "(3):(1)"
    assert str(make_layout(aa)) == "((3)):((1))"
    assert str(make_layout(a, make_layout(a), a)) == "(3,(3),3):(1,(1),1)"
    ab = append(a, b)
    assert str(ab) == "(3,4):(1,3)"
    assert str(prepend(a, b)) == "(4,3):(3,1)"
    assert str(append(ab, ab)) == "(3,4,(3,4)):(1,3,(1,3))"


# ---------------------------------------------------------------------------
# 02_layout_algebra: coalesce, composition, complement, divide, product
# ---------------------------------------------------------------------------


def test_02_coalesce():
    # 02_layout_algebra "Coalesce": Layout<Shape<_2,Shape<_1,_6>>, Stride<_1,Stride<_6,_2>>>
    layout = P("Layout<Shape <_2,Shape <_1,_6>>, Stride<_1,Stride<_6,_2>>>")
    assert coalesce(layout) == Layout(12, 1)
    # "By-mode Coalesce": coalesce(a, Step<_1,_1>{}) is (_2,_6):(_1,_2)
    assert coalesce(layout, (1, 1)) == Layout((2, 6), (1, 2))
    assert coalesce(layout, (1, 1)) == make_layout(coalesce(layout[0]), coalesce(layout[1]))
    # "(_2,_4):(_1,_2) act identically to _8:_1"
    assert coalesce(P("(2,4):(1,2)")) == P("8:1")


def test_02_composition_worked_example():
    # 02_layout_algebra "Composition": A = (6,2):(8,2), B = (4,3):(3,1)
    A, B = P("(6,2):(8,2)"), P("(4,3):(3,1)")
    R = composition(A, B)
    assert values(R) == [0, 24, 2, 26, 8, 32, 10, 34, 16, 40, 18, 42]
    assert R == P("((2,2),3):((24,2),8)")


def test_02_composition_reshape_examples():
    # 02_layout_algebra Example 2: 20:2 o (5,4):(4,1) = (5,4):(8,2)
    assert composition(P("20:2"), P("(5,4):(4,1)")) == P("(5,4):(8,2)")
    # 02_layout_operations: 20:2 o (4,5):(1,4) = (4,5):(2,8); o (4,5):(5,1) = (4,5):(10,2)
    assert composition(P("20:2"), P("(4,5):(1,4)")) == P("(4,5):(2,8)")
    assert composition(P("20:2"), P("(4,5):(5,1)")) == P("(4,5):(10,2)")


def test_02_composition_example_3_static_or_dynamic_form():
    # 02_layout_algebra Example 3: (10,2):(16,4) o (5,4):(1,5); CuTe prints
    # (_5,(_2,_2)):(_16,(_80,_4)) with static ints, ((5,1),(2,2)):((16,4),(80,4)) dynamic.
    R = composition(P("(10,2):(16,4)"), P("(5,4):(1,5)"))
    assert str(R) in ("(5,(2,2)):(16,(80,4))", "((5,1),(2,2)):((16,4),(80,4))")
    assert values(R) == values(P("(5,(2,2)):(16,(80,4))"))
    assert table(R) == table(P("(5,(2,2)):(16,(80,4))"))


def test_02_composition_divide_out_and_mod_out():
    # 02_layout_algebra: "(3,6,2,8):(w,x,y,z) o 16:9 = (1,2,2,4):(9*w,3*x,y,z)"
    w, x, y, z = 1, 7, 100, 1000  # any strides: the doc's statement is symbolic
    R = composition(Layout((3, 6, 2, 8), (w, x, y, z)), Layout(16, 9))
    assert values(R) == values(Layout((1, 2, 2, 4), (9 * w, 3 * x, y, z)))


@pytest.mark.parametrize(
    "shape,d,out",
    [
        ((6, 2), 2, (3, 2)),
        ((6, 2), 3, (2, 2)),
        ((6, 2), 6, (1, 2)),
        ((6, 2), 12, (1, 1)),
        ((3, 6, 2, 8), 3, (1, 6, 2, 8)),
        ((3, 6, 2, 8), 6, (1, 3, 2, 8)),
        ((3, 6, 2, 8), 9, (1, 2, 2, 8)),
        ((3, 6, 2, 8), 72, (1, 1, 1, 4)),
    ],
)
def test_02_shape_div_examples(shape, d, out):
    # 02_layout_algebra "Computing Composition": progressively dividing out d
    assert shape_div(shape, d) == out


def test_02_by_mode_composition():
    # 02_layout_algebra "By-mode Composition"
    a = Layout((12, (4, 8)), (59, (13, 1)))
    R = composition(a, (Layout(3, 4), Layout(8, 2)))
    assert R == P("(_3,(2,4)):(236,(26,1))")
    assert R == make_layout(composition(a[0], Layout(3, 4)), composition(a[1], Layout(8, 2)))
    # a Shape as a tiler means stride-1 layouts: "(_3,(4,2)):(59,(13,1))"
    assert composition(a, (3, 8)) == P("(_3,(4,2)):(59,(13,1))")


@pytest.mark.parametrize(
    "A,M,R",
    [
        # 02_layout_algebra "Complement Examples"
        ("4:1", 24, "6:4"),
        ("6:4", 24, "4:1"),
        ("(4,6):(1,4)", 24, "1:0"),
        ("4:2", 24, "(2,3):(1,8)"),
        ("(2,4):(1,6)", 24, "3:2"),
        ("(2,2):(1,6)", 24, "(3,2):(2,12)"),
    ],
)
def test_02_complement_examples(A, M, R):
    got = complement(P(A), M)
    assert got == P(R)
    # the doc's "Note that ... has cosize 24 [and produces unique indices]"
    full = make_layout(P(A), got)
    assert cosize(full) == 24
    assert sorted(values(full)) == list(range(24))


def test_02_logical_divide_1d():
    # 02_layout_algebra "Logical Divide 1-D Example"
    A, B = P("(4,2,3):(2,1,8)"), P("4:2")
    assert complement(B, size(A)) == P("(2,3):(1,8)")
    assert make_layout(B, complement(B, 24)) == P("(4,(2,3)):(2,(1,8))")
    assert logical_divide(A, B) == P("((2,2),(2,3)):((4,1),(2,8))")


def test_02_logical_divide_2d_and_zipped():
    # 02_layout_algebra "Logical Divide 2-D Example" and "Zipped, Tiled, Flat Divides".
    # The current guide gives the tile as (3,(2,4)):(177,(13,2)); an older version of the
    # same page printed (3,(2,4)):(236,(13,52)), which is not 9:59 o 3:3 = 3:177.
    A = P("(9,(4,8)):(59,(13,1))")
    tiler = (P("3:3"), P("(2,4):(1,8)"))
    tile = P("(3,(2,4)):(177,(13,2))")
    assert composition(A, tiler) == tile
    ld = logical_divide(A, tiler)
    # ((TileM,RestM), (TileN,RestN)) with shape ((3,3), (8,4))
    assert [[size(m) for m in mode] for mode in ld] == [[3, 3], [8, 4]]
    assert make_layout(ld[0][0], ld[1][0]) == tile
    zd = zipped_divide(A, tiler)
    # ((TileM,TileN), (RestM,RestN)) with shape ((3,8), (3,4))
    assert [[size(m) for m in mode] for mode in zd] == [[3, 8], [3, 4]]
    # "layout<0>(zipped_divide(a, b)) == composition(a, b)"
    assert zd[0] == composition(A, tiler)
    # tiled: ((TileM,TileN), RestM, RestN); flat: (TileM, TileN, RestM, RestN)
    td = tiled_divide(A, tiler)
    assert [size(m) for m in td] == [24, 3, 4] and td[0] == zd[0]
    fd = flat_divide(A, tiler)
    assert [size(m) for m in fd] == [3, 8, 3, 4]
    for L in (ld, zd, td, fd):
        assert sorted(values(L)) == sorted(values(A))


def test_02_logical_product_1d():
    # 02_layout_algebra "Logical Product 1-D Example"
    A, B = P("(2,2):(4,1)"), P("6:1")
    assert complement(A, 24) == P("(2,3):(2,8)")
    assert composition(P("(2,3):(2,8)"), B) == P("(2,3):(2,8)")
    assert logical_product(A, B) == P("((2,2),(2,3)):((4,1),(2,8))")


# ---------------------------------------------------------------------------
# 02_layout_operations (older guide): products and divides with printed tables
# ---------------------------------------------------------------------------

TILE = "(2,2):(1,2)"
MATRIX_OF_TILES = "(3,4):(4,1)"

BLOCKED_TABLE = """
|  0    |  2    |  4    |  6    |  8    | 10    | 12    | 14    |
|  1    |  3    |  5    |  7    |  9    | 11    | 13    | 15    |
| 16    | 18    | 20    | 22    | 24    | 26    | 28    | 30    |
| 17    | 19    | 21    | 23    | 25    | 27    | 29    | 31    |
| 32    | 34    | 36    | 38    | 40    | 42    | 44    | 46    |
| 33    | 35    | 37    | 39    | 41    | 43    | 45    | 47    |
"""

LOGICAL_TABLE = """
|  0    | 16    | 32    |  4    | 20    | 36    |  8    | 24    | 40    | 12    | 28    | 44    |
|  1    | 17    | 33    |  5    | 21    | 37    |  9    | 25    | 41    | 13    | 29    | 45    |
|  2    | 18    | 34    |  6    | 22    | 38    | 10    | 26    | 42    | 14    | 30    | 46    |
|  3    | 19    | 35    |  7    | 23    | 39    | 11    | 27    | 43    | 15    | 31    | 47    |
"""

RAKED_TABLE = """
|  0    |  4    |  8    | 12    |  2    |  6    | 10    | 14    |
| 16    | 20    | 24    | 28    | 18    | 22    | 26    | 30    |
| 32    | 36    | 40    | 44    | 34    | 38    | 42    | 46    |
|  1    |  5    |  9    | 13    |  3    |  7    | 11    | 15    |
| 17    | 21    | 25    | 29    | 19    | 23    | 27    | 31    |
| 33    | 37    | 41    | 45    | 35    | 39    | 43    | 47    |
"""


def test_02_ops_blocked_product():
    # 02_layout_operations "Blocked product": Shape ((2,3),(2,4)), Stride ((1,16),(2,4))
    # "and the second mode can be coalesced"
    R = blocked_product(P(TILE), P(MATRIX_OF_TILES))
    assert table(R) == parse_table(BLOCKED_TABLE)
    assert R[0] == P("(2,3):(1,16)")
    assert coalesce(R[1]) == coalesce(P("(2,4):(2,4)"))


def test_02_ops_logical_product():
    # 02_layout_operations "Logical product": Shape ((2,2),(3,4)), Stride ((1,2),(16,4))
    R = logical_product(P(TILE), P(MATRIX_OF_TILES))
    assert R == P("((2,2),(3,4)):((1,2),(16,4))")
    assert table(R) == parse_table(LOGICAL_TABLE)


def test_02_ops_raked_product():
    # 02_layout_operations "Raked product": Shape ((3,2),(4,2)), Stride ((16,1),(4,2))
    R = raked_product(P(TILE), P(MATRIX_OF_TILES))
    assert R == P("((3,2),(4,2)):((16,1),(4,2))")
    assert table(R) == parse_table(RAKED_TABLE)


def test_02_ops_divide_raked_back_to_blocked():
    # 02_layout_operations "Logical divide": dividing the raked product by <2:3, 2:4>
    # "does produce the result from the Blocked Product section"; zipped_divide gives
    # "the same layout as the result in the Logical Product section".
    raked = P("Layout<Shape <Shape < _3,_2>,Shape <_4,_2>>, Stride<Stride<_16,_1>,Stride<_4,_2>>>")
    subtile = (P("Layout<_2,_3>"), P("Layout<_2,_4>"))
    assert table(logical_divide(raked, subtile)) == parse_table(BLOCKED_TABLE)
    assert table(zipped_divide(raked, subtile)) == parse_table(LOGICAL_TABLE)


@pytest.mark.parametrize(
    "tiler,result",
    [
        # 02_layout_operations "folding a vector into a matrix", vec = 16:3
        ("4:1", "(4,4):(3,12)"),
        ("4:4", "(4,4):(12,3)"),
        ("4:2", "(4,(2,2)):(6,(3,24))"),
        ("(2,2):(4,1)", "((2,2),(2,2)):((12,3),(6,24))"),
    ],
)
def test_02_ops_logical_divide_vector(tiler, result):
    assert logical_divide(P("16:3"), P(tiler)) == P(result)


@pytest.mark.parametrize(
    "layout,ld,zd",
    [
        # 02_layout_operations "More Examples of Divide", tile_shape (_4,_8)
        (
            "(_12,_32,_6):(_1,_128,_0)",
            "((_4,_3),(_8,_4),_6):((_1,_4),(_128,_1024),_0)",
            "((_4,_8),(_3,_4,_6)):((_1,_128),(_4,_1024,_0))",
        ),
        (
            "(_12,(_4,_8),_6):(_1,(_32,_512),_0)",
            "((_4,_3),((_4,_2),_4),_6):((_1,_4),((_32,_512),_1024),_0)",
            "((_4,(_4,_2)),(_3,_4,_6)):((_1,(_32,_512)),(_4,_1024,_0))",
        ),
    ],
)
def test_02_ops_divide_by_shape(layout, ld, zd):
    assert logical_divide(P(layout), (4, 8)) == P(ld)
    assert zipped_divide(P(layout), (4, 8)) == P(zd)


# ---------------------------------------------------------------------------
# 03_tensor: slicing (layout level); tensors are tested once cutemma.tensor exists
# ---------------------------------------------------------------------------

SLICE_A = "((_3,2),(2,_5,_2)):((4,1),(_2,13,100))"


@pytest.mark.parametrize(
    "crd,sub,offset",
    [
        # 03_tensor "Slicing a Tensor"; offsets are A evaluated at the slice's fixed part
        ((2, None), "((2,_5,_2)):((_2,13,100))", 8),
        ((None, 5), "((_3,_2)):((4,1))", 28),
        (((None, None), 5), "(_3,2):(4,1)", 28),
        (((None, 1), (0, None, 1)), "(_3,_5):(4,13)", 101),
        (((2, None), (None, 3, None)), "(2,2,_2):(1,_2,100)", 47),
    ],
)
def test_03_tensor_slicing(crd, sub, offset):
    A = P(SLICE_A)
    got, off = slice_and_offset(crd, A)
    assert got == P(sub)
    assert off == offset
    assert A(*crd) == P(sub)


# ---------------------------------------------------------------------------
# 03_tensor: tensors (cutemma.tensor)
# ---------------------------------------------------------------------------


def test_03_tensor_access_natural_variadic_and_1d():
    # 03_tensor "Accessing a Tensor": Shape<Shape<_4,_5>,_13>, Stride<Stride<_12,_1>,_64>
    from cutemma.tensor import make_tensor

    layout = P("Layout<Shape <Shape < _4,_5>,Int<13>>, Stride<Stride<_12,_1>,    _64>>")
    A = make_tensor(np.arange(cosize(layout)), layout)
    for m0 in range(4):
        for m1 in range(5):
            for n in range(13):
                want = 12 * m0 + m1 + 64 * n  # the inner product with the strides
                assert A(((m0, m1), n)) == want  # natural coordinate, op[]
                assert A(m0 + 4 * m1, n) == want  # variadic op(), 1-D within mode 0
    assert [A(i) for i in range(20)] == [12 * (i % 4) + i // 4 for i in range(20)]


def test_03_tensor_slicing_tensors():
    # 03_tensor "Slicing a Tensor": the sub-tensor starts at the sliced-off coordinate
    from cutemma.tensor import make_tensor

    layout = P(SLICE_A)
    A = make_tensor(np.arange(cosize(layout)), layout)
    E = A((None, 1), (0, None, 1))  # (_3,_5):(4,13)
    assert [[E(i, j) for j in range(5)] for i in range(3)] == [
        [101 + 4 * i + 13 * j for j in range(5)] for i in range(3)
    ]
    F = A((2, None), (None, 3, None))  # (2,2,_2):(1,_2,100)
    assert F(1, 1, 1) == 47 + 1 + 2 + 100


def test_03_tensor_identity_tensor_coordinates():
    # an identity tensor's element i is its coordinate; 01_layout's coordinate table
    from cutemma.tensor import make_identity_tensor

    T = make_identity_tensor((3, (2, 3)))
    for i, _, nat in COORD_TABLE:
        assert T(i) == nat


def test_03_tensor_inner_partition_local_tile():
    # 03_tensor "Inner and outer partitioning": (8,24) tiled by (_4,_8) is ((_4,_8),(2,3));
    # the tile of threadgroup (bx, by) holds rows 4*bx.. and columns 8*by..
    from cutemma.tensor import local_tile, make_identity_tensor

    A = make_identity_tensor((8, 24))
    assert [[size(m) for m in mode] for mode in zipped_divide(A.layout, (4, 8))] == [
        [4, 8],
        [2, 3],
    ]
    for bx in range(2):
        for by in range(3):
            cta = local_tile(A, (4, 8), (bx, by))
            assert [size(m) for m in cta.layout] == [4, 8]
            for i in range(4):
                for j in range(8):
                    assert cta(i, j) == (4 * bx + i, 8 * by + j)


def test_03_tensor_outer_partition_local_partition():
    # 03_tensor: 32 threads over the 4x8 tiles, one element of each tile per thread:
    # thr_a = tiled_a(threadIdx.x, (_,_)) has shape (2,3)
    from cutemma.tensor import local_partition, make_identity_tensor

    A = make_identity_tensor((8, 24))
    for t in range(32):
        thr = local_partition(A, Layout((4, 8)), t)
        assert [size(m) for m in thr.layout] == [2, 3]
        got = sorted(thr(i) for i in range(6))
        want = sorted((t % 4 + 4 * r0, t // 4 + 8 * r1) for r0 in range(2) for r1 in range(3))
        assert got == want


def test_03_tensor_tv_partitioning():
    # 03_tensor "Thread-Value partitioning": (T8,V4) -> (M4,N8) composed with a 4x8 tensor
    from cutemma.tensor import composition_tensor, make_tensor

    tv_layout = P(
        "Layout<Shape <Shape <_2,_4>,Shape <_2, _2>>, Stride<Stride<_8,_1>,Stride<_4,_16>>>"
    )
    A = make_tensor(np.arange(32), Layout((4, 8), (8, 1)))  # LayoutRight
    tv = composition_tensor(A, tv_layout)
    assert [size(m) for m in tv.layout] == [8, 4]
    seen = set()
    for t in range(8):
        v = tv(t, None)
        assert size(v) == 4
        for k in range(4):
            c = tv_layout(t, k)  # a 1-D coordinate of the 4x8 tensor
            assert v(k) == A(c)
            seen.add(c)
    assert seen == set(range(32))  # every element of the tile goes to one (thread, value)
