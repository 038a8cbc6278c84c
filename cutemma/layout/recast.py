"""Changing units and finding common vectors: ``upcast``, ``downcast``,
``max_common_layout`` and ``max_common_vector`` (swizzled layouts included, as CuTe's
swizzle_layout.hpp treats them).

>>> str(upcast(Layout((8, 4), (1, 8)), 8)), max_common_vector(Layout((4, 8)), Layout(32))
('(1,4):(1,1)', 32)
"""

from __future__ import annotations

from cutemma.errors import LayoutError
from cutemma.layout import checks as ck
from cutemma.layout import int_tuple as it
from cutemma.layout.compose import composition
from cutemma.layout.compose_impl import _cmod
from cutemma.layout.int_tuple import is_int, is_tuple
from cutemma.layout.inverse import right_inverse
from cutemma.layout.layout import (
    Layout,
    coalesce,
)
from cutemma.layout.tiler import _is_composed


def _swizzle_base(x) -> int | None:
    """``2**M`` of a swizzled layout's Swizzle<B,M,S> (the run it leaves contiguous), else None."""
    from cutemma.layout.swizzle import Swizzle

    if _is_composed(x) and isinstance(x.outer, Swizzle):
        return 1 << x.outer.base
    if _is_composed(x):
        raise LayoutError(
            f"{x}: only a swizzled layout (Swizzle o offset o Layout) is supported here"
        )
    return None


def max_common_layout(a: Layout, b: Layout) -> Layout:
    """The largest layout ``R`` such that ``a o R`` and ``b o R`` are both contiguous (stride 1).

    A swizzled operand keeps at most its swizzle's ``2**M`` contiguous elements (CuTe).

    >>> str(max_common_layout(Layout((4, 8)), Layout((4, 8), (1, 8))))
    '4:1'
    """
    a = ck.layout_arg(a, "max_common_layout", composed=True)
    b = ck.layout_arg(b, "max_common_layout", composed=True, which="the second argument")
    base_a, base_b = _swizzle_base(a), _swizzle_base(b)
    if base_a is not None or base_b is not None:
        if base_a is not None and base_b is not None:
            raise LayoutError(f"max_common_layout({a}, {b}): CuTe has no case for two swizzles")
        # CuTe swaps a plain left operand to the right: mcl(a, Sw o B) = mcl(B, a)
        base, common = (
            (base_a, max_common_layout(a.inner, b))
            if base_a is not None
            else (base_b, max_common_layout(b.inner, a))
        )
        return composition(common, base) if base < it.product(common.shape) else common
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    first = common[0] if is_tuple(common.shape) else common
    if first.stride == 1 and is_int(first.shape):
        return composition(inv_b, Layout._raw(first.shape, 1))
    return Layout._raw(1, 0)


def max_common_vector(a: Layout, b: Layout) -> int:
    """Number of elements contiguous in both ``a`` and ``b`` from offset 0 (vector width).

    A swizzled operand caps it at its swizzle's ``2**M`` (CuTe); two swizzled operands with
    the same swizzle compare their inner layouts.

    >>> max_common_vector(Layout((4, 8)), Layout((4, 8), (1, 8)))
    4
    """
    a = ck.layout_arg(a, "max_common_vector", composed=True)
    b = ck.layout_arg(b, "max_common_vector", composed=True, which="the second argument")
    base_a, base_b = _swizzle_base(a), _swizzle_base(b)
    if base_a is not None or base_b is not None:
        if base_a is not None and base_b is not None:
            vec = max_common_vector(a.inner, b.inner)
            return vec if a.outer == b.outer else min(vec, base_a, base_b)
        # CuTe swaps a plain left operand to the right: mcv(a, Sw o B) = mcv(B, a)
        if base_a is not None:
            return min(max_common_vector(a.inner, b), base_a)
        return min(max_common_vector(b.inner, a), base_b)
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    first = common[0] if is_tuple(common.shape) else common
    return first.shape if first.stride == 1 and is_int(first.shape) else 1


def _scale_leaves(layout: Layout, fn) -> Layout:
    def go(s, d):
        if is_tuple(s):
            parts = [go(x, y) for x, y in zip(s, d)]
            return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
        return fn(s, d)

    return Layout._raw(*go(layout.shape, layout.stride))


def upcast(layout: Layout, n: int) -> Layout:
    """The layout in units ``n`` times larger (e.g. from 16-bit elements to 128-bit vectors).

    CuTe's ``upcast<N>``: a stride that ``n`` divides is divided; a smaller stride (which must
    divide ``n``) becomes +-1 and its extent shrinks by ``n / |stride|``, rounded up.

    >>> str(upcast(Layout((8, 4), (1, 8)), 8)), str(upcast(Layout(6, 1), 4))
    ('(1,4):(1,1)', '2:1')
    """
    layout = ck.layout_arg(layout, "upcast", composed=True)
    n = ck.int_arg(n, "upcast", "n", 1, layout)  # a whole number >= 1, else a LayoutError
    if not isinstance(layout, Layout):
        return _cast_function(layout, n, upcast)

    def leaf(s, d):
        if d == 0:
            return s, 0
        if _cmod(d, n) != 0 and _cmod(n, d) != 0:
            raise LayoutError(
                f"upcast({layout}, {n}) is not defined: stride {d} and {n} do not divide one "
                "another (CuTe's divisibility condition)"
            )
        step = -(-n // abs(d))
        return -(-s // step), (1 if d > 0 else -1) * -(-abs(d) // n)

    return _scale_leaves(layout, leaf)


def _cast_part(x, n: int, cast):
    """One part of a ComposedLayout cast: a Swizzle or nested ComposedLayout by the swizzle
    rules, a Layout by ``cast`` itself."""
    return cast(x, n) if isinstance(x, Layout) else _cast_function(x, n, cast)


def _cast_function(x, n: int, cast):
    """upcast/downcast of a Swizzle or ComposedLayout, part by part (CuTe's swizzle_layout.hpp):
    a swizzle's base bit moves by log2(n), the offset is divided (exactly) or multiplied."""
    from cutemma.layout.swizzle import ComposedLayout, Swizzle

    if n & (n - 1):
        raise LayoutError(f"{cast.__name__}({x}, {n}): a swizzle scales only by a power of two")
    log2 = n.bit_length() - 1
    if isinstance(x, Swizzle):
        if cast is downcast:
            return Swizzle(x.bits, x.base + log2, x.shift)
        if x.base >= log2:
            return Swizzle(x.bits, x.base - log2, x.shift)
        return Swizzle(max(x.bits + x.base - log2, 0), 0, x.shift)
    if isinstance(x, Layout):
        return cast(x, n)
    if not _is_composed(x):
        raise LayoutError(f"{cast.__name__}: expected a Layout or ComposedLayout, got {x!r}")
    if cast is upcast and x.offset % n:
        raise LayoutError(f"upcast({x}, {n}): the offset {x.offset} is not a multiple of {n}")
    offset = x.offset // n if cast is upcast else x.offset * n
    # no identity-swizzle collapse here: C++'s scaled offset is a C<0>, not the Int<0> that
    # the collapsing overload takes (upcast<8>(Sw<2,1,3> o 0 o L) prints Sw<0,0,3> o 0 o ...)
    return ComposedLayout(_cast_part(x.outer, n, cast), offset, _cast_part(x.inner, n, cast))


def downcast(layout: Layout, n: int) -> Layout:
    """The layout in units ``n`` times smaller: unit-stride modes grow, others scale their stride.

    CuTe requires a stride-1 mode ("Downcast requires adjacent elements").

    >>> str(downcast(Layout((2, 4), (1, 2)), 4))
    '(8,4):(1,8)'
    """
    layout = ck.layout_arg(layout, "downcast", composed=True)
    n = ck.int_arg(n, "downcast", "n", 1, layout)  # a whole number >= 1, else a LayoutError
    if not isinstance(layout, Layout):
        return _cast_function(layout, n, downcast)
    if 1 not in layout.flat()[1]:
        raise LayoutError(
            f"downcast({layout}, {n}): the layout has no stride-1 mode to widen (CuTe: "
            "'Downcast requires adjacent elements')"
        )
    return _scale_leaves(layout, lambda s, d: (s * n, d) if d in (1, -1) else (s, d * n))
