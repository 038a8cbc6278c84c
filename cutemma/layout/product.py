"""The products: ``logical_product`` and its zipped, tiled and flat forms, the rank-wise
``blocked_product`` and ``raked_product``, and what builds on them (``make_ordered_layout``,
``tile_to_shape``).

>>> str(logical_product(Layout((2, 2), (4, 1)), Layout(6, 1)))
'((2,2),(2,3)):((4,1),(2,8))'
>>> str(raked_product(Layout((2, 2)), Layout((2, 3))))
'((2,2),(3,2)):((4,1),(8,2))'
"""

from __future__ import annotations

from cutemma.errors import LayoutError
from cutemma.layout import checks as ck
from cutemma.layout import int_tuple as it
from cutemma.layout.compose import composition
from cutemma.layout.int_tuple import IntTuple, is_tuple
from cutemma.layout.inverse import complement
from cutemma.layout.layout import (
    Layout,
    as_layout,
    cosize,
    make_layout,
)
from cutemma.layout.tiler import _by_mode, _is_composed, _is_tiler_tuple, _tstr, gathered


def _product_1(a: Layout, b) -> Layout:
    if _is_tiler_tuple(b):
        return _by_mode(_product_1, a, b, "logical_product")
    if b is None:
        return a
    b = as_layout(b)
    if any(d < 0 and n > 1 for n, d in zip(it.flatten(b.shape), it.flatten(b.stride))):
        # b places copies of a at negative tile indices: complement(a, size(a)*cosize(b)) would
        # be evaluated below 0, where it is not defined (docs/cpp_defects.md #2)
        raise LayoutError(
            f"logical_product({a}, {b}) is not defined: {b} has a negative stride, so it asks "
            f"for copies of {a} before the first one (cosize({b}) = {cosize(b)}); the product's "
            "complement(a, size(a)*cosize(b)) exists only for strides >= 0 (CuTe C++ computes a "
            "value that is no product here). Reverse the tiler with positive strides"
        )
    try:
        return make_layout(a, composition(complement(a, it.product(a.shape) * cosize(b)), b))
    except LayoutError as e:
        raise LayoutError(f"logical_product({a}, {b}) is not defined: {e}") from None


def logical_product(a, tiler):
    """``(a, complement(a, size(a)*cosize(b)) o b)``: ``a`` repeated by the layout ``b``.

    >>> str(logical_product(Layout((2, 2), (4, 1)), Layout(6, 1)))
    '((2,2),(2,3)):((4,1),(2,8))'
    """
    a, tiler = (
        ck.layout_arg(a, "logical_product", composed=True),
        ck.tiler_arg(tiler, "logical_product", a),
    )
    if _is_composed(a):
        return a.with_inner(logical_product(a.inner, tiler))
    if _is_composed(tiler):
        return _product_swizzled_tiler(a, tiler)
    return _product_1(a, tiler)  # a tuple tiler goes mode by mode there


def _product_swizzled_tiler(a: Layout, tiler):
    """logical_product(a, Sw o 0 o T): the product with T, under the swizzle that acts on the
    product's strides as Sw acts on T's (CuTe's swizzle_layout.hpp: the swizzle's active Y and Z
    bits, found through a projection of T, are carried through T and the new layout)."""
    from cutemma.layout.swizzle import Swizzle, make_swizzle

    sw, t = tiler.outer, tiler.inner
    if not isinstance(sw, Swizzle) or not isinstance(t, Layout) or tiler.offset != 0:
        raise LayoutError(
            f"logical_product({a}, {tiler}): a composed tiler must be Swizzle o 0 o Layout "
            "(CuTe: 'Require Swizzle offset == 0.')"
        )
    new = _product_1(a, t)
    b, m, sh = sw.bits, sw.base, abs(sw.shift)
    # keeps only the index bits the swizzle reads (Y) and writes (Z)
    zy = Layout._raw((1 << m, 1 << b, 1 << (sh - b), 1 << b, 1), (0, 1 << m, 0, 1 << (m + sh), 0))
    only_zy = composition(zy, t)
    active = it.crd2idx(it.product(only_zy.shape) - 1, only_zy.shape, only_zy.stride)

    def carried(bits: int) -> int:  # new(0, t(bits)), t called past its domain as CuTe does
        return it.crd2idx((0, it.crd2idx(bits, t.shape, t.stride)), new.shape, new.stride)

    swz = make_swizzle(carried(active & sw.yyy_mask), carried(active & sw.zzz_mask))
    return _compose_swizzle(swz, new)


def _compose_swizzle(sw, layout: Layout):
    from cutemma.layout.swizzle import compose_functions

    return compose_functions(sw, 0, layout)


def zipped_product(a, tiler):
    """``((a modes), (repeat modes))`` of a by-mode product.

    >>> str(zipped_product(Layout((2, 2)), (Layout(3), Layout(2))))
    '((2,2),(3,2)):((1,2),(2,1))'
    """
    return gathered(a, tiler, "zipped_product", logical_product, "zipped")


def tiled_product(a, tiler):
    """``((a modes), repeat0, repeat1, ...)``.

    >>> str(tiled_product(Layout((2, 2)), (Layout(3), Layout(2))))
    '((2,2),3,2):((1,2),2,1)'
    """
    return gathered(a, tiler, "tiled_product", logical_product, "tiled")


def flat_product(a, tiler):
    """``(a0, a1, ..., repeat0, repeat1, ...)``.

    >>> str(flat_product(Layout((2, 2)), (Layout(3), Layout(2))))
    '(2,2,3,2):(1,2,2,1)'
    """
    return gathered(a, tiler, "flat_product", logical_product, "flat")


def _append_to(layout: Layout, r: int) -> Layout:
    """CuTe's ``append<r>``: pad with ``1:0`` modes up to rank ``r`` (rank 1 stays as it is)."""
    if not isinstance(layout.shape, tuple):
        if r == 1:
            return layout
        shapes, strides = (layout.shape,), (layout.stride,)
    else:
        shapes, strides = layout.shape, layout.stride
    pad = r - len(shapes)
    return Layout._raw(shapes + (1,) * pad, strides + (0,) * pad)


def _zip(x: Layout, y: Layout) -> Layout:
    """CuTe's ``zip`` of two layouts: mode i of the result is ``(x_i, y_i)``."""
    if not isinstance(x.shape, tuple):
        return Layout._raw(((x.shape, y.shape),), ((x.stride, y.stride),))
    if not isinstance(y.shape, tuple) or len(y.shape) != len(x.shape):
        raise LayoutError(f"zip({x}, {y}): the two layouts must have the same rank")
    return Layout._raw(tuple(zip(x.shape, y.shape)), tuple(zip(x.stride, y.stride)))


def _compact_size(shapes, strides) -> int:
    """n if these modes map their domain one-to-one onto [0, n), else 0."""
    current = 1
    for d, x in sorted((d, x) for x, d in zip(shapes, strides) if x != 1):
        if d != current:
            return 0
        current *= x
    return current


def _scaled(d, n):
    return tuple(_scaled(x, n) for x in d) if isinstance(d, tuple) else d * n


def _rank_product(block, tiler, block_first: bool, name: str) -> Layout:
    """logical_product of both padded to a common rank, zipped mode by mode (CuTe's layout.hpp)."""
    block, tiler = as_layout(block), as_layout(tiler)
    r = max(it.rank(block.shape), it.rank(tiler.shape))
    a, b = _append_to(block, r), _append_to(tiler, r)
    n = _compact_size(*a.flat())
    if n:
        # a is a bijection onto [0, n): its complement up to n * cosize(b) is cosize(b):n, and
        # that single mode composed with b scales b's strides by n (0 when cosize(b) is 1)
        rest = Layout._raw(b.shape, _scaled(b.stride, n if cosize(b) > 1 else 0))
    else:
        try:
            rest = composition(complement(a, it.product(a.shape) * cosize(b)), b)
        except LayoutError as e:
            raise LayoutError(f"{name}({block}, {tiler}) is not defined: {e}") from None
    return _zip(a, rest) if block_first else _zip(rest, a)


def blocked_product(block, tiler):
    """Mode by mode ``(block_i, repeat_i)``: copies of ``block`` arranged as ``tiler``.

    As in CuTe the modes are zipped, not coalesced.

    >>> str(blocked_product(Layout((3, 4), (4, 1)), Layout((2, 5), (1, 2))))
    '((3,2),(4,5)):((4,12),(1,24))'
    """
    tiler = ck.tiler_arg(tiler, "blocked_product", block)
    if _is_composed(block):
        return block.with_inner(blocked_product(block.inner, tiler))
    return _rank_product(block, tiler, True, "blocked_product")


def raked_product(block, tiler):
    """Mode by mode ``(repeat_i, block_i)``: ``block``'s elements interleaved across the copies.

    >>> str(raked_product(Layout((2, 2)), Layout((2, 3))))
    '((2,2),(3,2)):((4,1),(8,2))'
    """
    tiler = ck.tiler_arg(tiler, "raked_product", block)
    if _is_composed(block):
        return block.with_inner(raked_product(block.inner, tiler))
    return _rank_product(block, tiler, False, "raked_product")


def make_ordered_layout(shape: IntTuple, order: IntTuple | None = None) -> Layout:
    """Compact layout of ``shape`` whose modes get strides in increasing ``order`` rank.

    CuTe's ``make_ordered_layout``: ``order`` is weakly congruent to ``shape``; a mode of
    extent 1 gets stride 0.

    >>> str(make_ordered_layout((2, 3, 4), (1, 2, 0)))
    '(2,3,4):(4,8,1)'
    """
    shape = ck.int_tuple_arg(shape, "make_ordered_layout", "shape", 0)
    if order is not None:
        order = ck.int_tuple_arg(order, "make_ordered_layout", "order")
    if order is None:
        return Layout(shape)
    it.check_int_tuple(shape, "make_ordered_layout shape")
    it.check_int_tuple(order, "make_ordered_layout order")
    if not it.weakly_congruent(order, shape):
        raise LayoutError(
            f"make_ordered_layout: order {_tstr(order)} must have one entry per mode of shape "
            f"{_tstr(shape)} (or one int for a whole mode)"
        )
    flat_order = it.flatten(order)
    sizes: list[int] = []

    def sizes_at(s, o):
        if is_tuple(o):
            for x, y in zip(s, o):
                sizes_at(x, y)
        else:
            sizes.append(it.product(s))

    sizes_at(shape, order)

    def strides(s, o):
        if is_tuple(o):
            return tuple(strides(x, y) for x, y in zip(s, o))
        start = 1
        for n, k in zip(sizes, flat_order):
            if k < o:
                start *= n
        return it.compact_col_major(s, start)

    return Layout(shape, strides(shape, order))


def tile_to_shape(block, target: IntTuple, order: IntTuple | None = None):
    """Repeat ``block`` (blocked, in ``order``) until it has shape ``target``.

    Each mode of ``target`` must be a multiple of the matching mode of ``block``. As in CuTe
    the result is the blocked product, its modes zipped, not coalesced.

    >>> str(tile_to_shape(Layout((8, 8), (8, 1)), (16, 32)))
    '((8,2),(8,4)):((8,64),(1,128))'
    """
    target = ck.int_tuple_arg(target, "tile_to_shape", "target", 1, block)
    if _is_composed(block):
        return block.with_inner(tile_to_shape(block.inner, target, order))
    block = as_layout(block)
    it.check_int_tuple(target, "tile_to_shape target")
    r = it.rank(target)
    if len(block) > r:
        raise LayoutError(f"tile_to_shape: block {block} has more modes than target {target}")
    padded = _append_to(block, r)
    bshape = it.product_each(padded.shape)
    bshape = bshape if is_tuple(bshape) else (bshape,)
    tshape = it.product_each(target) if is_tuple(target) else (target,)
    for b, t in zip(bshape, tshape):
        if b == 0 or t % b != 0:
            raise LayoutError(
                f"tile_to_shape({block}, {target}): target extent {t} is not a multiple of the "
                f"block extent {b}"
            )
    reps = tuple(t // b for b, t in zip(bshape, tshape))
    return blocked_product(padded, make_ordered_layout(reps, order))
