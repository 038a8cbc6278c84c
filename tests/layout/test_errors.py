"""Acceptance 4 of issue 2: bad input raises LayoutError, naming what it was given.

One table of bad inputs. Each must raise ``cutemma.errors.LayoutError`` (or a subclass),
never a bare IndexError/ZeroDivisionError/RecursionError/TypeError, and the message must
name every operand (a layout by its CuTe text, a shape by its tuple, a coordinate by the
component that is out of range, parse errors by the column). Where CuTe requires divisibility the reason is cited from CuTe's
02_layout_algebra.md ("stride divisibility condition", "shape divisibility condition") or
its complement post-conditions (the complement of a non-injective layout does not exist).
Since issue 11 the table holds only inputs CuTe C++ refuses (a static_assert) or answers
wrongly (docs/cpp_defects.md); what C++ computes, cutemma computes
(tests/layout/test_cpp_divergences.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.errors import LayoutError, LayoutParseError
from cutemma.layout import (
    Layout,
    Swizzle,
    blocked_product,
    coalesce,
    complement,
    composition,
    group,
    left_inverse,
    logical_divide,
    logical_product,
    raked_product,
    select,
    slice_and_offset,
    tile_to_shape,
    upcast,
)
from cutemma.tensor import make_tensor

L = Layout
DEEP = 3000  # nesting deeper than Python's default recursion limit


def deep_tuple(n):
    t = 1
    for _ in range(n):
        t = (t,)
    return t


def cute_text(t):
    if isinstance(t, tuple):
        return "(" + ",".join(cute_text(x) for x in t) + ")"
    return str(t)


def names(x):
    """Ways the message may spell operand x: CuTe's text, or Python's repr for a tuple."""
    if isinstance(x, Layout):
        return [str(x)]
    return [cute_text(x), str(x).replace(" ", ""), str(x)]


# (id, thunk, operands the message must name)
CASES = [
    # --- composition: CuTe's stride / shape divisibility conditions -------------------
    (
        # C++ accepts this (its stride check is the weak one) and answers (2,2):(8,1), which is
        # not the composition; cutemma says why (docs/cpp_defects.md)
        "composition that C++ answers wrongly",
        lambda: composition(L((6, 2), (2, 1)), L(4, 4)),
        [L((6, 2), (2, 1)), L(4, 4)],
    ),
    (
        "composition shape-divisibility",
        lambda: composition(L((3, 2), (2, 1)), L(4, 1)),
        [L((3, 2), (2, 1)), L(4, 1)],
    ),
    (
        "composition 3 out of (2,3) after dividing out 2",
        lambda: composition(L((4, 3), (3, 1)), L(3, 2)),
        [L((4, 3), (3, 1)), L(3, 2)],
    ),
    (
        "composition tiler longer than the layout",
        lambda: composition(L((4, 4)), (2, 2, 2)),
        [L((4, 4)), (2, 2, 2)],
    ),
    (
        "composition by-mode tiler not divisible",
        lambda: composition(L(((3, 2), 8), ((2, 1), 6)), (L(4, 1), L(2, 1))),
        [L(((3, 2), 8), ((2, 1), 6))],
    ),
    # --- divides and products that need divisibility or an injective operand -----------
    (
        "logical_divide whose composition is not defined",
        lambda: logical_divide(L((3, 2), (2, 1)), L(4, 1)),
        [L((3, 2), (2, 1)), L(4, 1)],
    ),
    (
        "complement with a negative stride",
        lambda: complement(L(4, -1)),
        [L(4, -1)],
    ),
    (
        "left_inverse with a negative stride",
        lambda: left_inverse(L(4, -1)),
        [L(4, -1)],
    ),
    (
        "complement of an extent-0 layout",
        lambda: complement(L(0, 1)),
        [L(0, 1)],
    ),
    (
        "raked_product with a non-injective tile",
        lambda: raked_product(L((2, 2), (1, 1)), L((2, 2))),
        [L((2, 2), (1, 1)), L((2, 2))],
    ),
    (
        "upcast 6:3 by 4",
        lambda: upcast(L(6, 3), 4),
        [L(6, 3), 4],
    ),
    (
        "logical_divide tiler with a zero extent",
        lambda: logical_divide(L((8, 4)), (0, 2)),
        [L((8, 4)), (0, 2)],
    ),
    (
        "complement of a non-injective layout",
        lambda: complement(L((2, 2), (1, 1)), 8),
        [L((2, 2), (1, 1)), 8],
    ),
    (
        "logical_product with a non-injective tile",
        lambda: logical_product(L((2, 2), (1, 1)), L(2)),
        [L((2, 2), (1, 1)), L(2)],
    ),
    (
        "blocked_product with a non-injective tile",
        lambda: blocked_product(L((2, 2), (1, 1)), L((2, 2))),
        [L((2, 2), (1, 1)), L((2, 2))],
    ),
    (
        "tile_to_shape 5 not a multiple of 2",
        lambda: tile_to_shape(L((2, 2)), (5, 4)),
        [L((2, 2)), (5, 4)],
    ),
    # --- structure: profiles, modes, groups --------------------------------------------
    (
        "coalesce profile with more modes",
        lambda: coalesce(L((2, 3)), (1, 1, 1)),
        [L((2, 3)), (1, 1, 1)],
    ),
    ("group end before begin", lambda: group(L((2, 3, 5)), 2, 1), [L((2, 3, 5))]),
    ("group past the last mode", lambda: group(L((2, 3, 5)), 0, 5), [L((2, 3, 5))]),
    ("select a missing mode", lambda: select(L((2, 3)), 5), [L((2, 3)), 5]),
    ("mode index out of range", lambda: L((2, 3))[5], [L((2, 3)), 5]),
    # --- negative extents, incongruent strides (extent 0 is valid, as in CuTe) ----------
    ("negative extent", lambda: L(-4), [-4]),
    ("negative nested extent", lambda: L((2, (3, -1))), [(2, (3, -1))]),
    ("stride rank differs", lambda: L((2, 3), (1,)), [(2, 3), (1,)]),
    ("stride int for tuple shape", lambda: L((2, 3), 1), [(2, 3)]),
    ("stride tuple for int shape", lambda: L(4, (1, 2)), [4, (1, 2)]),
    ("non-int extent", lambda: L((2.5, 2)), [2.5]),
    ("swizzle shift smaller than bits", lambda: Swizzle(3, 4, 2), [3, 4, 2]),
    ("swizzle negative bits", lambda: Swizzle(-1, 4, 3), [-1]),
    # --- coordinates out of range ------------------------------------------------------
    ("index past size", lambda: L((4, 2))(8, strict=True), [L((4, 2)), 8]),
    ("negative index", lambda: L((4, 2))(-1), [L((4, 2)), -1]),
    ("mode-0 coordinate past extent", lambda: L((4, 2))(4, 0, strict=True), [L((4, 2)), 4]),
    ("mode-1 coordinate past extent", lambda: L((4, 2))(0, 2, strict=True), [L((4, 2)), 2]),
    (
        "nested coordinate past extent",
        lambda: L(((2, 2), 2))((2, 0), 0, strict=True),
        [L(((2, 2), 2)), 2],
    ),
    ("too many coordinates", lambda: L((4, 2))(0, 0, 0), [L((4, 2)), (0, 0, 0)]),
    ("coordinate deeper than shape", lambda: L((4, 2))((0, 0), 0), [L((4, 2)), (0, 0)]),
    (
        "slice coordinate past extent",
        lambda: slice_and_offset((None, 5), L((4, 2))),
        [L((4, 2))],
    ),
    (
        "tensor index past size",
        lambda: make_tensor(np.arange(8), L((4, 2)))(8),
        [L((4, 2)), 8],
    ),
    (
        "tensor data shorter than the layout's cosize",
        lambda: make_tensor(np.arange(4), L((4, 2))),
        [L((4, 2)), 4],
    ),
    # --- malformed text (LayoutParseError names the column) ----------------------------
    ("parse unclosed stride", lambda: L.parse("(4,2):(1,4"), ["(4,2):(1,4"]),
    ("parse missing colon", lambda: L.parse("(4,2)(1,4)"), ["(4,2)(1,4)"]),
    ("parse empty text", lambda: L.parse(""), []),
    ("parse empty element", lambda: L.parse("(4,,2):(1,4)"), ["(4,,2):(1,4)"]),
    ("parse trailing text", lambda: L.parse("(4,2):(1,4) x"), ["(4,2):(1,4) x"]),
    ("parse letter extent", lambda: L.parse("(a,2):(1,4)"), ["(a,2):(1,4)"]),
    ("parse float extent", lambda: L.parse("(4.5,2):(1,4)"), ["(4.5,2):(1,4)"]),
    ("parse unbalanced", lambda: L.parse("((4,2):(1,4)"), ["((4,2):(1,4)"]),
    ("parse underscore alone", lambda: L.parse("_:1"), ["_:1"]),
    ("parse incongruent", lambda: L.parse("(4,2):(1,4,8)"), ["(4,2)", "(1,4,8)"]),
    (
        "parse C++ unterminated",
        lambda: L.parse("Layout<Shape<_4,_2>"),
        ["Layout<Shape<_4,_2>"],
    ),
    (
        "parse C++ incongruent",
        lambda: L.parse("Layout<Shape<_4,_2>,Stride<_1>>"),
        [],
    ),
    ("parse bad swizzle", lambda: L.parse("Sw<3,4> o 0 o (8,64):(64,1)"), []),
    # --- inputs deep enough to exhaust Python's recursion -----------------------------
    (
        "parse nesting deeper than the recursion limit",
        lambda: L.parse("(" * DEEP + "2" + ")" * DEEP + ":" + "(" * DEEP + "1" + ")" * DEEP),
        [],
    ),
    (
        "construct nesting deeper than the recursion limit",
        lambda: L(deep_tuple(DEEP), deep_tuple(DEEP)),
        [],
    ),
]


def test_table_is_large_enough():
    assert len(CASES) >= 30


@pytest.mark.parametrize("name,thunk,operands", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_layout_error(name, thunk, operands):
    try:
        thunk()
    except LayoutError as e:
        msg = str(e)
    except Exception as e:  # noqa: BLE001 - the point is which exception escapes
        pytest.fail(f"{name}: raised {type(e).__name__}: {str(e)[:200]}, not LayoutError")
    else:
        pytest.fail(f"{name}: no error (a silent answer)")
    for op in operands:
        assert any(n in msg for n in names(op)), f"{name}: message does not name {op!r}: {msg}"


@pytest.mark.parametrize(
    "text",
    ["(4,2):(1,4", "(4,2)(1,4)", "(4,,2):(1,4)", "(a,2):(1,4)", "((4,2):(1,4)", "_:1"],
)
def test_parse_errors_name_the_column(text):
    with pytest.raises(LayoutParseError, match="column"):
        Layout.parse(text)
