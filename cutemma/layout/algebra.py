"""CuTe's layout algebra: composition, complement, inverses, divides and products.

Each function follows its definition in CuTe's layout-algebra documentation
(``media/docs/cpp/cute/02_layout_algebra.md``) and ``include/cute/layout.hpp``.
A *tiler* is a Layout, an int ``n`` (the layout ``n:1``), or a tuple of those applied
mode by mode.

>>> str(composition(Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1))))
'((2,2),3):((24,2),8)'
>>> str(logical_divide(Layout(16), 4))
'(4,4):(1,4)'
"""

from __future__ import annotations

from cutemma.errors import LayoutError
from cutemma.layout import checks as ck
from cutemma.layout import int_tuple as it
from cutemma.layout.int_tuple import IntTuple, is_int, is_tuple
from cutemma.layout.layout import (
    Layout,
    _from_lists,
    _leaves,
    _modes,
    _push,
    as_layout,
    coalesce,
    cosize,
    flatten_layout,
    make_layout,
)

Tiler = "Layout | int | tuple"


def _is_composed(x) -> bool:
    return hasattr(x, "outer") and hasattr(x, "inner")


def _rebuild(modes: list[Layout]) -> Layout:
    return (
        make_layout(*modes)
        if len(modes) > 1
        else Layout._raw((modes[0].shape,), (modes[0].stride,))
    )


def _by_mode(fn, a: Layout, tiler: tuple, name: str) -> Layout:
    """Apply ``fn(mode_i, tiler_i)`` to the first ``len(tiler)`` modes, keep the others."""
    modes = _modes(a)
    if len(tiler) > len(modes):
        raise LayoutError(
            f"{name}: tiler {_tstr(tiler)} has {len(tiler)} modes but layout {a} has only "
            f"{len(modes)}; give at most one tiler entry per mode"
        )
    try:
        out = [m if t is None else fn(m, t) for m, t in zip(modes, tiler)] + modes[len(tiler) :]
    except LayoutError as e:
        if str(a) in str(e):
            raise
        raise LayoutError(f"{name}({a}, {_tstr(tiler)}) by mode: {e}") from None
    return _rebuild(out)


def _tstr(t) -> str:
    if is_tuple(t):
        return "(" + ",".join(_tstr(x) for x in t) + ")"
    return str(t)


def _composition_1d(a: Layout, shapes: tuple, strides: tuple, s: int, d: int):
    """``a`` (flattened to ``shapes``/``strides``, size-1 modes dropped) composed with ``s:d``.

    CuTe's conditions are checked on the flattened, not coalesced, ``a``: the stride ``d`` and
    each mode extent it steps over must divide one another, and so must the elements still
    to place and the extent left in each mode it lands in. They are what makes composition
    distribute over the modes of a multi-mode right operand.
    """
    if d == 0:
        return s, 0
    if not shapes:
        return s, 0
    out_s: list[int] = []
    out_d: list[int] = []
    rest_s, rest_d = s, d
    last = len(shapes) - 1
    for i in range(last):
        if rest_s == 1:
            break
        sa = shapes[i]
        if rest_d % sa != 0 and sa % rest_d != 0:
            raise LayoutError(
                f"composition({a}, {s}:{d}) is not defined: stride {rest_d} and mode extent {sa} "
                f"of {a} must divide one another (CuTe's stride divisibility condition)"
            )
        curr = -(-sa // rest_d)
        if curr > 1:
            if rest_s % curr != 0 and curr % rest_s != 0:
                raise LayoutError(
                    f"composition({a}, {s}:{d}) is not defined: {rest_s} elements do not split "
                    f"evenly against the {curr} left in a mode of {a} (shape divisibility)"
                )
            new_s = curr if curr < rest_s else rest_s
            out_s.append(new_s)
            out_d.append(rest_d * strides[i])
            rest_s //= new_s
        rest_d = -(-rest_d // sa)
    if rest_s != 1 or not out_s:
        out_s.append(rest_s)
        out_d.append(rest_d * strides[last])
    if len(out_s) == 1:
        return out_s[0], out_d[0]
    return tuple(out_s), tuple(out_d)


def _compose_layouts(a: Layout, b: Layout) -> Layout:
    pairs = [(x, y) for x, y in zip(it.flatten(a.shape), it.flatten(a.stride)) if x != 1]
    shapes = tuple(p[0] for p in pairs)
    strides = tuple(p[1] for p in pairs)

    def go(s, d):
        if isinstance(s, tuple):
            parts = [go(x, y) for x, y in zip(s, d)]
            return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
        return _composition_1d(a, shapes, strides, s, d)

    return Layout._raw(*go(b.shape, b.stride))


def composition(a, b):
    """``a o b``: the layout ``i -> a(b(i))`` on ``b``'s domain.

    ``b`` may be a Layout, an int, or a tuple tiler (applied mode by mode). A Swizzle or
    ComposedLayout ``a`` gives a ComposedLayout; a Tensor ``a`` gives the tensor over the
    composed layout.

    >>> str(composition(Layout((10, 2), (16, 4)), Layout((5, 4), (1, 5))))
    '(5,(2,2)):(16,(80,4))'
    """
    b = b if b is None else ck.tiler_arg(b, "composition", a)
    if _is_composed(a):
        return a.compose_inner(b)
    if hasattr(a, "layout") and hasattr(a, "data"):  # a Tensor: compose its layout
        return type(a)(a.data, composition(a.layout, b), a.offset)
    if not isinstance(a, Layout):
        from cutemma.layout.swizzle import ComposedLayout, Swizzle

        if isinstance(a, Swizzle):
            return ComposedLayout(a, 0, as_layout(b))
        raise LayoutError(f"composition: left operand {a!r} is not a Layout or Swizzle")
    if b is None:
        return a
    if is_tuple(b) and not isinstance(b, Layout):
        return _by_mode(composition, a, b, "composition")
    if is_int(b):
        b = Layout._raw(b, 1)
    if _is_composed(b):
        raise LayoutError(f"composition({a}, {b}): a swizzled right operand is not supported")
    if not isinstance(b, Layout):
        raise LayoutError(f"composition({a}, {b!r}): right operand must be a Layout, int or tuple")
    try:
        return _compose_layouts(a, b)
    except LayoutError as e:
        if str(b) in str(e):
            raise
        raise LayoutError(f"composition({a}, {b}) is not defined: {e}") from None


def complement(layout: Layout, cotarget: IntTuple | None = None) -> Layout:
    """The layout of the offsets ``layout`` does not reach, ordered after it, up to ``cotarget``.

    ``cotarget`` (an int or a shape, default ``cosize(layout)``) is the size of the codomain
    to fill.

    >>> str(complement(Layout(4, 2), 24))
    '(2,3):(1,8)'
    """
    layout = ck.layout_arg(layout, "complement")
    if cotarget is not None:
        cotarget = ck.int_tuple_arg(cotarget, "complement", "cotarget", 1, layout)
    if cotarget is None:
        cotarget = cosize(layout)
    target = cotarget if isinstance(cotarget, int) else it.product(cotarget)
    if target < 1:
        raise LayoutError(f"complement({layout}, {cotarget}): the cotarget must be >= 1")
    # the reached modes, by increasing stride; broadcast (stride 0) and size-1 modes reach nothing
    pairs = sorted((d, s) for s, d in zip(*layout.flat()) if s != 1 and d != 0)
    shapes: list[int] = []
    strides: list[int] = []
    current = 1
    for d, s in pairs:
        if d < 0:
            raise LayoutError(
                f"complement({layout}, {cotarget}): negative stride {d} is not supported"
            )
        if d % current != 0:
            raise LayoutError(
                f"complement({layout}, {cotarget}) is not defined: the layout is not injective "
                f"or its strides do not nest (stride {d} is not a multiple of {current})"
            )
        if d != current:
            _push(shapes, strides, d // current, current)
        current = s * d
    _push(shapes, strides, -(-target // current), current)
    return _from_lists(shapes, strides)


def right_inverse(layout: Layout) -> Layout:
    """A layout ``R`` with ``layout(R(i)) == i`` for ``i`` in the largest contiguous range reached.

    >>> str(right_inverse(Layout((4, 2), (2, 1))))
    '(2,4):(4,1)'
    """
    layout = ck.layout_arg(layout, "right_inverse", composed=True)
    shapes, strides = coalesce(layout).flat()
    index_strides = []
    n = 1
    for x in shapes:
        index_strides.append(n)
        n *= x
    order = sorted(range(len(shapes)), key=lambda i: (strides[i], shapes[i]))
    out_s: list[int] = []
    out_d: list[int] = []
    current = 1
    for i in order:
        if strides[i] == 0:
            continue
        if strides[i] != current:
            break
        _push(out_s, out_d, shapes[i], index_strides[i])
        current *= shapes[i]
    return _from_lists(out_s, out_d)


def left_inverse(layout: Layout) -> Layout:
    """A layout ``L`` with ``L(layout(i)) == i`` for every ``i`` of an injective ``layout``.

    >>> str(left_inverse(Layout((4, 2), (2, 1))))
    '(2,4):(4,1)'
    """
    layout = ck.layout_arg(layout, "left_inverse", composed=True)
    return right_inverse(make_layout(layout, complement(layout)))


def _divide_1(a: Layout, b) -> Layout:
    if _is_tiler_tuple(b):
        return _by_mode(_divide_1, a, b, "logical_divide")
    b = as_layout(b)
    n = it.product(a.shape)
    try:
        comp = complement(b, n)
        if it.product(b.shape) * it.product(comp.shape) != n:
            raise LayoutError(
                f"the tile {b} does not divide {n} elements into whole tiles "
                f"(tile and its complement cover {it.product(b.shape) * it.product(comp.shape)})"
            )
        return composition(a, make_layout(b, comp))
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
    if is_tuple(tiler) and not isinstance(tiler, Layout):
        return _by_mode(_divide_1, a, tiler, "logical_divide")
    return _divide_1(a, tiler)


def _is_tiler_tuple(t) -> bool:
    return is_tuple(t) and not isinstance(t, Layout)


def _unzip(mode: Layout, t) -> tuple[Layout, Layout]:
    """Split a divided/multiplied mode into its (tile, rest) parts, following the tiler's nesting."""
    if _is_tiler_tuple(t):
        subs = _modes(mode)
        parts = [_unzip(m, x) for m, x in zip(subs, t)]
        firsts = [p[0] for p in parts]
        seconds = [p[1] for p in parts] + subs[len(t) :]
        return _pack(firsts), _pack(seconds)
    return mode[0], mode[1]


def _zip_split(result: Layout, tiler) -> tuple[list[Layout], list[Layout]]:
    """For a by-mode divide/product result, the list of tile parts and of rest parts."""
    modes = _modes(result)
    parts = [_unzip(m, t) for m, t in zip(modes, tiler)]
    return [p[0] for p in parts], [p[1] for p in parts] + modes[len(tiler) :]


def _pack(modes: list[Layout]) -> Layout:
    # CuTe: the tile and rest parts are make_layout(...) of their modes, rank-1 included
    return make_layout(*modes)


def _flat_modes(modes: list[Layout]) -> list[Layout]:
    out = []
    for m in modes:
        out.extend(_modes(m) if is_tuple(m.shape) else [m])
    return out


def zipped_divide(a, tiler):
    """``((tile modes), (rest modes))``: the tile gathered in mode 0.

    >>> str(zipped_divide(Layout((4, 6)), (2, 3)))
    '((2,3),(2,2)):((1,4),(2,12))'
    """
    a, tiler = (
        ck.layout_arg(a, "zipped_divide", composed=True),
        ck.tiler_arg(tiler, "zipped_divide", a),
    )
    if _is_composed(a):
        return a.with_inner(zipped_divide(a.inner, tiler))
    d = logical_divide(a, tiler)
    if not (is_tuple(tiler) and not isinstance(tiler, Layout)):
        return d
    firsts, seconds = _zip_split(d, tiler)
    return make_layout(_pack(firsts), _pack(seconds))


def tiled_divide(a, tiler):
    """``((tile modes), rest0, rest1, ...)``.

    >>> str(tiled_divide(Layout((4, 6)), (2, 3)))
    '((2,3),2,2):((1,4),2,12)'
    """
    a, tiler = (
        ck.layout_arg(a, "tiled_divide", composed=True),
        ck.tiler_arg(tiler, "tiled_divide", a),
    )
    if _is_composed(a):
        return a.with_inner(tiled_divide(a.inner, tiler))
    z = zipped_divide(a, tiler)
    return make_layout(z[0], *_modes(z[1]))


def flat_divide(a, tiler):
    """``(tile0, tile1, ..., rest0, rest1, ...)``.

    >>> str(flat_divide(Layout((4, 6)), (2, 3)))
    '(2,3,2,2):(1,4,2,12)'
    """
    a, tiler = ck.layout_arg(a, "flat_divide", composed=True), ck.tiler_arg(tiler, "flat_divide", a)
    if _is_composed(a):
        return a.with_inner(flat_divide(a.inner, tiler))
    z = zipped_divide(a, tiler)
    return make_layout(*_modes(z[0]), *_modes(z[1]))


def _product_1(a: Layout, b) -> Layout:
    if _is_tiler_tuple(b):
        return _by_mode(_product_1, a, b, "logical_product")
    b = as_layout(b)
    n = it.product(a.shape) * cosize(b)
    try:
        return make_layout(a, composition(complement(a, n), b))
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
    if is_tuple(tiler) and not isinstance(tiler, Layout):
        return _by_mode(_product_1, a, tiler, "logical_product")
    return _product_1(a, tiler)


def zipped_product(a, tiler):
    """``((a modes), (repeat modes))`` of a by-mode product.

    >>> str(zipped_product(Layout((2, 2)), (Layout(3), Layout(2))))
    '((2,2),(3,2)):((1,2),(2,1))'
    """
    a, tiler = (
        ck.layout_arg(a, "zipped_product", composed=True),
        ck.tiler_arg(tiler, "zipped_product", a),
    )
    if _is_composed(a):
        return a.with_inner(zipped_product(a.inner, tiler))
    p = logical_product(a, tiler)
    if not (is_tuple(tiler) and not isinstance(tiler, Layout)):
        return p
    firsts, seconds = _zip_split(p, tiler)
    return make_layout(_pack(firsts), _pack(seconds))


def tiled_product(a, tiler):
    """``((a modes), repeat0, repeat1, ...)``.

    >>> str(tiled_product(Layout((2, 2)), (Layout(3), Layout(2))))
    '((2,2),3,2):((1,2),2,1)'
    """
    a, tiler = (
        ck.layout_arg(a, "tiled_product", composed=True),
        ck.tiler_arg(tiler, "tiled_product", a),
    )
    if _is_composed(a):
        return a.with_inner(tiled_product(a.inner, tiler))
    z = zipped_product(a, tiler)
    return make_layout(z[0], *_modes(z[1]))


def flat_product(a, tiler):
    """``(a0, a1, ..., repeat0, repeat1, ...)``.

    >>> str(flat_product(Layout((2, 2)), (Layout(3), Layout(2))))
    '(2,2,3,2):(1,2,2,1)'
    """
    a, tiler = (
        ck.layout_arg(a, "flat_product", composed=True),
        ck.tiler_arg(tiler, "flat_product", a),
    )
    if _is_composed(a):
        return a.with_inner(flat_product(a.inner, tiler))
    z = zipped_product(a, tiler)
    return make_layout(*_modes(z[0]), *_modes(z[1]))


def _pad(layout: Layout, r: int) -> list[Layout]:
    modes = _modes(layout) if is_tuple(layout.shape) else [layout]
    return modes + [Layout._raw(1, 0)] * (r - len(modes))


def _mode_pairs(layout: Layout, r: int) -> list[tuple]:
    """Top-level (shape, stride) modes, padded with 1:0 up to rank ``r``."""
    if isinstance(layout.shape, tuple):
        pairs = list(zip(layout.shape, layout.stride))
    else:
        pairs = [(layout.shape, layout.stride)]
    return pairs + [(1, 0)] * (r - len(pairs))


def _coalesced_pair(s, d) -> tuple:
    shapes: list[int] = []
    strides: list[int] = []
    for x, y in zip(_leaves(s), _leaves(d)):
        _push(shapes, strides, x, y)
    if not shapes:
        return 1, 0
    if len(shapes) == 1:
        return shapes[0], strides[0]
    return tuple(shapes), tuple(strides)


def _compact_size(layout: Layout) -> int:
    """size(layout) if it maps its domain one-to-one onto [0, size), else 0."""
    current = 1
    for d, x in sorted((d, x) for x, d in zip(*layout.flat()) if x != 1):
        if d != current:
            return 0
        current *= x
    return current


def _scale(d, n):
    return tuple(_scale(x, n) for x in d) if isinstance(d, tuple) else d * n


def _interleave(block, tiler, block_first: bool) -> Layout:
    """Mode i of the result is (block_i, repeat_i) or (repeat_i, block_i), each coalesced."""
    block, tiler = as_layout(block), as_layout(tiler)
    r = max(it.rank(block.shape), it.rank(tiler.shape))
    bp, tp = _mode_pairs(block, r), _mode_pairs(tiler, r)
    a = Layout._raw(tuple(p[0] for p in bp), tuple(p[1] for p in bp))
    b = Layout._raw(tuple(p[0] for p in tp), tuple(p[1] for p in tp))
    n = _compact_size(a)
    if n:
        # a is a bijection onto [0, n): its complement is cosize(b):n, so the repeats are b * n
        rest_pairs = [(ys, _scale(yd, n)) for ys, yd in tp]
    else:
        try:
            rest = composition(complement(a, it.product(a.shape) * cosize(b)), b)
        except LayoutError as e:
            raise LayoutError(f"product of {block} by {tiler} is not defined: {e}") from None
        rest_pairs = _mode_pairs(rest, r)
    modes = []
    for (xs, xd), (ys, yd) in zip(bp, rest_pairs):
        pair = ((xs, ys), (xd, yd)) if block_first else ((ys, xs), (yd, xd))
        modes.append(_coalesced_pair(*pair))
    return Layout._raw(tuple(m[0] for m in modes), tuple(m[1] for m in modes))


def blocked_product(block, tiler):
    """Mode by mode ``(block_i, repeat_i)``: copies of ``block`` arranged as ``tiler``.

    >>> str(blocked_product(Layout((2, 2)), Layout((2, 3))))
    '((2,2),(2,3)):((1,4),(2,8))'
    """
    tiler = ck.tiler_arg(tiler, "blocked_product", block)
    if _is_composed(block):
        return block.with_inner(blocked_product(block.inner, tiler))
    return _interleave(block, tiler, True)


def raked_product(block, tiler):
    """Mode by mode ``(repeat_i, block_i)``: ``block``'s elements interleaved across the copies.

    >>> str(raked_product(Layout((2, 2)), Layout((2, 3))))
    '((2,2),(3,2)):((4,1),(8,2))'
    """
    tiler = ck.tiler_arg(tiler, "raked_product", block)
    if _is_composed(block):
        return block.with_inner(raked_product(block.inner, tiler))
    return _interleave(block, tiler, False)


def make_ordered_layout(shape: IntTuple, order: IntTuple | None = None) -> Layout:
    """Compact layout of ``shape`` whose modes get strides in increasing ``order`` rank.

    >>> str(make_ordered_layout((2, 3, 4), (1, 2, 0)))
    '(2,3,4):(4,8,1)'
    """
    shape = ck.int_tuple_arg(shape, "make_ordered_layout", "shape", 1)
    if order is not None:
        order = ck.int_tuple_arg(order, "make_ordered_layout", "order")
    if order is None:
        return Layout(shape)
    if it.rank(order) != it.rank(shape):
        raise LayoutError(f"order {order} must have one entry per mode of shape {shape}")
    shapes = list(shape) if is_tuple(shape) else [shape]
    ords = list(order) if is_tuple(order) else [order]
    strides = [None] * len(shapes)
    current = 1
    for i in sorted(range(len(shapes)), key=lambda i: ords[i]):
        strides[i] = it.prefix_product(shapes[i], current)
        current *= it.product(shapes[i])
    if not is_tuple(shape):
        return Layout(shape, strides[0])
    return Layout(shape, tuple(strides))


def tile_to_shape(block, target: IntTuple, order: IntTuple | None = None):
    """Repeat ``block`` (blocked, in ``order``) until it has shape ``target``.

    Each mode of ``target`` must be a multiple of the matching mode of ``block``.

    >>> str(tile_to_shape(Layout((2, 2), (2, 1)), (4, 6)))
    '(4,(2,3)):(2,(1,8))'
    """
    target = ck.int_tuple_arg(target, "tile_to_shape", "target", 1, block)
    if _is_composed(block):
        return block.with_inner(tile_to_shape(block.inner, target, order))
    block = as_layout(block)
    r = it.rank(target)
    if len(block) > r:
        raise LayoutError(f"tile_to_shape: block {block} has more modes than target {target}")
    padded = _rebuild(_pad(block, r))
    bshape = it.product_each(padded.shape)
    tshape = it.product_each(target) if is_tuple(target) else (target,)
    bshape = bshape if is_tuple(bshape) else (bshape,)
    for b, t in zip(bshape, tshape):
        if t % b != 0:
            raise LayoutError(
                f"tile_to_shape({block}, {target}): target extent {t} is not a multiple of the "
                f"block extent {b}"
            )
    reps = tuple(t // b for b, t in zip(bshape, tshape))
    result = blocked_product(padded, make_ordered_layout(reps, order))
    return coalesce(result, reps)


def max_common_layout(a: Layout, b: Layout) -> Layout:
    """The largest layout ``R`` such that ``a o R`` and ``b o R`` are both contiguous (stride 1).

    >>> str(max_common_layout(Layout((4, 8)), Layout((4, 8), (1, 8))))
    '4:1'
    """
    a = ck.layout_arg(a, "max_common_layout", composed=True)
    b = ck.layout_arg(b, "max_common_layout", composed=True, which="the second argument")
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    first = common[0] if is_tuple(common.shape) else common
    if first.stride == 1 and is_int(first.shape):
        return composition(inv_b, Layout._raw(first.shape, 1))
    return Layout._raw(1, 0)


def max_common_vector(a: Layout, b: Layout) -> int:
    """Number of elements contiguous in both ``a`` and ``b`` from offset 0 (vector width).

    >>> max_common_vector(Layout((4, 8)), Layout((4, 8), (1, 8)))
    4
    """
    a = ck.layout_arg(a, "max_common_vector", composed=True)
    b = ck.layout_arg(b, "max_common_vector", composed=True, which="the second argument")
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

    >>> str(upcast(Layout((8, 4), (1, 8)), 8))
    '(1,4):(1,1)'
    """
    layout = ck.layout_arg(layout, "upcast")
    n = ck.int_arg(n, "upcast", "n", 1, layout)
    if n < 1:
        raise LayoutError(f"upcast({layout}, {n}): the factor must be >= 1")

    def leaf(s, d):
        if d == 0:
            return s, 0
        if abs(d) % n == 0:
            return s, d // n
        if n % abs(d) != 0:
            raise LayoutError(
                f"upcast({layout}, {n}): stride {d} and {n} do not divide one another"
            )
        return it.shape_div(s, n // abs(d)), (1 if d > 0 else -1)

    try:
        return _scale_leaves(layout, leaf)
    except LayoutError as e:
        raise LayoutError(f"upcast({layout}, {n}) is not defined: {e}") from None


def downcast(layout: Layout, n: int) -> Layout:
    """The layout in units ``n`` times smaller: unit-stride modes grow, others scale their stride.

    >>> str(downcast(Layout((2, 4), (1, 2)), 4))
    '(8,4):(1,8)'
    """
    layout = ck.layout_arg(layout, "downcast")
    n = ck.int_arg(n, "downcast", "n", 1, layout)
    if n < 1:
        raise LayoutError(f"downcast({layout}, {n}): the factor must be >= 1")
    return _scale_leaves(layout, lambda s, d: (s * n, 1) if d == 1 else (s, d * n))


def nullspace(layout: Layout) -> Layout:
    """The layout of the indices that ``layout`` maps to offset 0 (its stride-0 modes).

    >>> str(nullspace(Layout((2, 4, 3), (1, 0, 2))))
    '4:2'
    """
    flat = flatten_layout(ck.layout_arg(layout, "nullspace"))
    shapes, strides = it.flatten(flat.shape), it.flatten(flat.stride)
    idx = it.flatten(it.prefix_product(flat.shape))
    keep = [(s, i) for s, d, i in zip(shapes, strides, idx) if d == 0 and s != 1]
    if not keep:
        return Layout._raw(1, 0)
    return coalesce(Layout._raw(tuple(s for s, _ in keep), tuple(i for _, i in keep)))
