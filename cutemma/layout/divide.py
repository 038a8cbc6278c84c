"""The divides: ``logical_divide`` and its zipped, tiled and flat forms.

>>> str(logical_divide(Layout(16), 4)), str(flat_divide(Layout((4, 6)), (2, 3)))
('(4,4):(1,4)', '(2,3,2,2):(1,4,2,12)')
"""

from __future__ import annotations

from cutemma.errors import LayoutError
from cutemma.layout import checks as ck
from cutemma.layout.compose import _compose_checked
from cutemma.layout.int_tuple import IntTuple
from cutemma.layout.inverse import complement
from cutemma.layout.layout import (
    Layout,
    as_layout,
    coalesced_pairs,
)
from cutemma.layout.tiler import _by_mode, _is_composed, _is_tiler_tuple, gathered


def _coalesced_shape(a: Layout) -> IntTuple:
    """``coalesce(a).shape`` without building the layout."""
    shapes = [s for s, _ in coalesced_pairs(a)]
    return tuple(shapes) if len(shapes) > 1 else (shapes[0] if shapes else 1)


def _divide_1(a: Layout, b) -> Layout:
    if _is_tiler_tuple(b):
        return _by_mode(_divide_1, a, b, "logical_divide")
    if b is None:
        return a
    b = as_layout(b)
    try:
        # the complement fills coalesce(a)'s shape mode by mode; a tile that does not divide
        # size(a) gets a rest mode that runs past it (CuTe's padded divide)
        tile = complement(b, _coalesced_shape(a))
        return _compose_checked(a, Layout._raw((b.shape, tile.shape), (b.stride, tile.stride)))
    except LayoutError as e:
        raise LayoutError(f"logical_divide({a}, {b}) is not defined: {e}") from None


def logical_divide(a, tiler):
    """Split ``a`` into (tile, rest): ``a o (tiler, complement(tiler, size(a)))``, by mode for tuples.

    >>> str(logical_divide(Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2)))
    '((2,2),(2,3)):((4,1),(2,8))'
    """
    a, tiler = (
        ck.layout_arg(a, "logical_divide", composed=True),
        ck.tiler_arg(tiler, "logical_divide", a),
    )
    if _is_composed(a):
        return a.with_inner(logical_divide(a.inner, tiler))
    return _divide_1(a, tiler)  # a tuple tiler goes mode by mode there


def zipped_divide(a, tiler):
    """``((tile modes), (rest modes))``: the tile gathered in mode 0.

    >>> str(zipped_divide(Layout((4, 6)), (2, 3)))
    '((2,3),(2,2)):((1,4),(2,12))'
    """
    return gathered(a, tiler, "zipped_divide", logical_divide, "zipped")


def tiled_divide(a, tiler):
    """``((tile modes), rest0, rest1, ...)``.

    >>> str(tiled_divide(Layout((4, 6)), (2, 3)))
    '((2,3),2,2):((1,4),2,12)'
    """
    return gathered(a, tiler, "tiled_divide", logical_divide, "tiled")


def flat_divide(a, tiler):
    """``(tile0, tile1, ..., rest0, rest1, ...)``.

    >>> str(flat_divide(Layout((4, 6)), (2, 3)))
    '(2,3,2,2):(1,4,2,12)'
    """
    return gathered(a, tiler, "flat_divide", logical_divide, "flat")
