"""Complements and inverses: the layouts that fill in or undo another one.

``complement`` (the offsets a layout misses), ``right_inverse`` and ``left_inverse``
(CuTe's algorithms, their tie-breaking included) and ``nullspace`` (the indices sent to 0).

>>> str(complement(Layout(4, 2), 24)), str(right_inverse(Layout((4, 2), (2, 1))))
('(2,3):(1,8)', '(2,4):(4,1)')
"""

from __future__ import annotations

from cutemma.errors import LayoutError
from cutemma.layout import checks as ck
from cutemma.layout import int_tuple as it
from cutemma.layout.int_tuple import IntTuple, is_int, is_tuple
from cutemma.layout.layout import (
    Layout,
    _from_lists,
    _push,
)
from cutemma.layout.swizzle import Swizzle, compose_functions, swizzle_after_layout
from cutemma.layout.tiler import _is_composed


def _ceil_div_shape(target: IntTuple, n: int) -> int:
    """CuTe's ``coalesce(ceil_div(target, n))`` for static ints: ``n`` divides mode by mode."""
    total = 1
    for t in it.flatten(target):
        if not is_int(t) or t < 0:
            raise LayoutError(f"the cotarget {target!r} must be an int or a shape of ints >= 0")
        if t == 0 and is_tuple(target):
            raise LayoutError(f"the cotarget {target!r} has an extent 0 (C++ divides by it)")
        total *= -(-t // n)
        n = -(-n // t) if t else 1
    return total


def complement(layout: Layout, cotarget: IntTuple | None = None) -> Layout:
    """The layout of the offsets ``layout`` does not reach, ordered after it, up to ``cotarget``.

    ``cotarget`` (an int or a shape, default ``cosize(layout)``) is the size of the codomain
    to fill; a shape is divided mode by mode. As in CuTe, a layout whose strides do not nest
    gets a partial complement (the gaps its strides divide evenly).

    >>> str(complement(Layout(4, 2), 24)), str(complement(Layout((4, 6), (1, 6))))
    ('(2,3):(1,8)', '1:0')
    """
    layout = ck.layout_arg(layout, "complement")
    if cotarget is not None:
        cotarget = ck.int_tuple_arg(cotarget, "complement", "cotarget", 0, layout)
    # CuTe's filter: broadcast and extent-1 modes dropped, contiguous ones merged
    shapes: list[int] = []
    strides: list[int] = []
    odd = False  # a negative stride or an extent-0 mode
    for s, d in zip(*layout.flat()):
        if s == 1 or d == 0:
            continue
        if d < 0 or s == 0:
            odd = True
        if shapes and strides[-1] * shapes[-1] == d:
            shapes[-1] *= s
        else:
            shapes.append(s)
            strides.append(d)
    if cotarget is None:
        cotarget = 1
        for s, d in zip(shapes, strides):
            cotarget += (s - 1) * (d if d > 0 else -d)
    if odd:
        raise LayoutError(
            f"complement({layout}, {cotarget}) is not defined: "
            + (
                "negative strides are not supported (CuTe returns a layout with negative extents)"
                if min(strides) < 0
                else "the layout has an extent-0 mode"
            )
        )
    if not shapes:  # nothing reached: the whole cotarget is the complement
        _ceil_div_shape(cotarget, 1)  # validates it
        return Layout(it.product(cotarget))
    # take the modes by increasing stride (the first of equal ones first, as CuTe's find);
    # each contributes the gap below it, truncated as CuTe's static division does
    order = sorted(range(len(strides)), key=strides.__getitem__) if len(strides) > 1 else (0,)
    res_s: list[int] = []
    res_d: list[int] = []
    span = 1
    for i in order:
        d = strides[i]
        gap = d // span
        if gap == 0:
            raise LayoutError(
                f"complement({layout}, {cotarget}) is not defined: the layout is not "
                f"injective (stride {d} lies inside the span {span} already covered; "
                "CuTe: 'Non-injective Layout detected in complement')"
            )
        if gap != 1:
            if res_s and res_d[-1] * res_s[-1] == span:
                res_s[-1] *= gap
            else:
                res_s.append(gap)
                res_d.append(span)
        span = d * shapes[i]
    if type(cotarget) is int and cotarget >= 0:
        rest = -(-cotarget // span)
    else:
        try:
            rest = _ceil_div_shape(cotarget, span)
        except LayoutError as e:
            raise LayoutError(f"complement({layout}, {cotarget!r}): {e}") from None
    if rest != 1:
        if res_s and res_d[-1] * res_s[-1] == span:
            res_s[-1] *= rest
        else:
            res_s.append(rest)
            res_d.append(span)
    return _from_lists(res_s, res_d)


def _exchange_order(keys: list) -> list[int]:
    """The indices of ``keys`` in the order CuTe's compile-time exchange sort leaves them.

    The sort is not stable: equal strides can come out in a different order than given,
    which decides which of two equal-stride modes an inverse uses.
    """
    a = list(enumerate(keys))
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            if a[j][1] < a[i][1]:
                a[i], a[j] = a[j], a[i]
    return [i for i, _ in a]


def _wrapped_coalesce(layout: Layout) -> tuple[list, list, list]:
    """The coalesced flat modes and the prefix products of their extents."""
    shapes: list[int] = []
    strides: list[int] = []
    for s, d in zip(*layout.flat()):
        _push(shapes, strides, s, d)
    if not shapes:
        shapes, strides = [1], [0]
    pre = [1]
    for s in shapes:
        pre.append(pre[-1] * s)
    return shapes, strides, pre


def _stride_order(strides: list) -> list[int]:
    if len(set(strides)) == len(strides):  # no ties: the exchange sort is a plain sort
        return sorted(range(len(strides)), key=strides.__getitem__)
    return _exchange_order(strides)


def _composed_inverse(layout, inv):
    """The inverse (``inv``: right_inverse or left_inverse) of ``outer o offset o inner``:
    ``inv(inner) o -offset o inv(outer)``, a swizzle (its own inverse) at offset 0 moved past
    ``inv(inner)`` to the left, as CuTe does."""

    def part(x):
        return x if isinstance(x, Swizzle) else inv(x)

    if isinstance(layout.outer, Swizzle) and layout.offset == 0:
        return swizzle_after_layout(part(layout.inner), layout.outer)
    return compose_functions(part(layout.inner), -layout.offset, part(layout.outer))


def right_inverse(layout: Layout) -> Layout:
    """A layout ``R`` with ``layout(R(i)) == i`` for ``i`` in the largest contiguous range reached.

    Follows CuTe: walk the coalesced modes by increasing stride and keep each whose stride is
    the span reached so far.

    >>> str(right_inverse(Layout((4, 2), (2, 1)))), str(right_inverse(Layout((3, 1, 2), (1, 0, 1))))
    ('(2,4):(4,1)', '3:1')

    A ComposedLayout's is ``rinv(inner) o -offset o rinv(outer)``:

    >>> from cutemma.layout import ComposedLayout, Swizzle
    >>> str(right_inverse(ComposedLayout(Swizzle(2, 0, 2), 0, Layout((4, 4), (4, 1)))))
    'Sw<2,0,-2> o 0 o (4,4):(4,1)'
    """
    layout = ck.layout_arg(layout, "right_inverse", composed=True)
    if _is_composed(layout):
        return _composed_inverse(layout, right_inverse)
    shapes, strides, pre = _wrapped_coalesce(layout)
    out_s: list[int] = []
    out_d: list[int] = []
    current = 1
    for i in _stride_order(strides):
        if strides[i] == current:
            _push(out_s, out_d, shapes[i], pre[i])
            current = shapes[i] * strides[i]
    return _from_lists(out_s, out_d)


def left_inverse(layout: Layout) -> Layout:
    """A layout ``L`` with ``L(layout(i)) == i`` for every ``i`` of an injective ``layout``.

    Follows CuTe's direct algorithm (modes by increasing stride, each stride a multiple of
    the span before it); for a non-injective layout it is CuTe's quasi-inverse.

    >>> str(left_inverse(Layout((4, 2), (2, 1)))), str(left_inverse(Layout((4, 8), (1, 5))))
    ('(2,4):(4,1)', '(5,8):(1,4)')

    A ComposedLayout's is built from its parts' left inverses, as ``right_inverse``'s:

    >>> from cutemma.layout import ComposedLayout, Swizzle
    >>> str(left_inverse(ComposedLayout(Swizzle(2, 1, 3), 4, Layout(32))))
    '32:1 o -4 o Sw<2,1,3>'
    """
    layout = ck.layout_arg(layout, "left_inverse", composed=True)
    if _is_composed(layout):
        return _composed_inverse(layout, left_inverse)
    shapes, strides, pre = _wrapped_coalesce(layout)
    if any(d < 0 for d in strides):
        raise LayoutError(
            f"left_inverse({layout}) is not defined for negative strides (CuTe returns a "
            "layout with a negative extent)"
        )
    order = _stride_order(strides)
    out_s: list[int] = []
    out_d: list[int] = [0]
    span = 1
    for i in order:
        d = strides[i]
        if d == 0:
            continue
        if d % span:
            raise LayoutError(
                f"left_inverse({layout}) is not defined: stride {d} is not a multiple of the "
                f"span {span} below it (CuTe's left inverse divisibility condition)"
            )
        out_s.append(d // span)
        out_d.append(pre[i])
        span *= d // span
    out_s.append(shapes[order[-1]])
    res_s: list[int] = []
    res_d: list[int] = []
    for s, d in zip(out_s, out_d):
        _push(res_s, res_d, s, d)
    return _from_lists(res_s, res_d)


def nullspace(layout: Layout) -> Layout:
    """The layout of the indices that ``layout`` maps to offset 0 (its stride-0 modes).

    CuTe's ``nullspace``: one mode per stride-0 leaf, strided by that leaf's compact index
    stride, not coalesced.

    >>> str(nullspace(Layout((2, 4, 3), (1, 0, 2)))), str(nullspace(Layout((2, 3), (0, 0))))
    ('4:2', '(2,3):(1,2)')
    """
    layout = ck.layout_arg(layout, "nullspace")
    shapes, strides = layout.flat()
    index = it.compact_col_major(tuple(shapes))
    keep = [(s, i) for s, d, i in zip(shapes, strides, index) if d == 0]
    if not keep:
        return Layout._raw(1, 0)
    if len(keep) == 1:
        return Layout._raw(*keep[0])
    return Layout._raw(tuple(s for s, _ in keep), tuple(i for _, i in keep))
