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
from cutemma.layout.compose_impl import _cmod, compose_layouts
from cutemma.layout.int_tuple import IntTuple, is_int, is_tuple
from cutemma.layout.layout import (
    Layout,
    _from_lists,
    _modes,
    _push,
    as_layout,
    coalesce,
    cosize,
    make_layout,
)

Tiler = "Layout | int | tuple"


def _is_composed(x) -> bool:
    return hasattr(x, "outer") and hasattr(x, "inner")


def _rebuild(modes: list[Layout]) -> Layout:
    """CuTe's make_layout of these modes: a tuple of them, rank 0 and 1 included."""
    return Layout._raw(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


def _by_mode(fn, a: Layout, tiler: tuple, name: str, keep_rest: bool = True) -> Layout:
    """Apply ``fn(mode_i, tiler_i)`` to the first ``len(tiler)`` modes; keep the others
    (divides, products) or drop them (composition: CuTe drops the modes a tiler misses)."""
    modes = _modes(a)
    if len(tiler) > len(modes):
        raise LayoutError(
            f"{name}: tiler {_tstr(tiler)} has {len(tiler)} modes but layout {a} has only "
            f"{len(modes)}; give at most one tiler entry per mode"
        )
    try:
        out = [m if t is None else fn(m, t) for m, t in zip(modes, tiler)]
        if keep_rest:
            out += modes[len(tiler) :]
    except LayoutError as e:
        if str(a) in str(e):
            raise
        raise LayoutError(f"{name}({a}, {_tstr(tiler)}) by mode: {e}") from None
    return _rebuild(out)


def _tstr(t) -> str:
    if is_tuple(t):
        return "(" + ",".join(_tstr(x) for x in t) + ")"
    return str(t)


def composition(a, b):
    """``a o b``: the layout ``i -> a(b(i))`` on ``b``'s domain.

    ``b`` may be a Layout, an int ``n`` (the first ``n`` offsets of ``a``), a ComposedLayout,
    or a tuple tiler applied mode by mode (modes of ``a`` the tiler does not reach are
    dropped, as in CuTe). A Swizzle or ComposedLayout ``a`` gives a ComposedLayout; a Tensor
    ``a`` gives the tensor over the composed layout.

    >>> str(composition(Layout((10, 2), (16, 4)), Layout((5, 4), (1, 5))))
    '(5,(2,2)):(16,(80,4))'
    """
    if type(a) is Layout and type(b) is Layout:  # the common case first
        return _compose_checked(a, b)
    b = b if b is None else ck.tiler_arg(b, "composition", a)
    if _is_composed(a):
        return a.compose_inner(b)
    if hasattr(a, "layout") and hasattr(a, "data"):  # a Tensor: compose its layout
        return type(a)(a.data, composition(a.layout, b), a.offset)
    if not isinstance(a, Layout):
        from cutemma.layout.swizzle import Swizzle, compose_functions

        if isinstance(a, Swizzle):
            return compose_functions(a, 0, as_layout(b))
        raise LayoutError(f"composition: left operand {a!r} is not a Layout or Swizzle")
    if b is None:
        return a
    if is_tuple(b) and not isinstance(b, Layout):
        return _by_mode(composition, a, b, "composition", keep_rest=False)
    if is_int(b):
        b = Layout._raw(b, 1)
    if not isinstance(b, Layout):
        from cutemma.layout.swizzle import Swizzle, layout_after_swizzled

        if _is_composed(b) or isinstance(b, Swizzle):
            return layout_after_swizzled(a, b)
        raise LayoutError(f"composition({a}, {b!r}): right operand must be a Layout, int or tuple")
    return _compose_checked(a, b)


def _compose_checked(a: Layout, b: Layout) -> Layout:
    try:
        return compose_layouts(a, b)
    except LayoutError as e:
        if str(b) in str(e):
            raise
        raise LayoutError(f"composition({a}, {b}) is not defined: {e}") from None


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


def right_inverse(layout: Layout) -> Layout:
    """A layout ``R`` with ``layout(R(i)) == i`` for ``i`` in the largest contiguous range reached.

    Follows CuTe: walk the coalesced modes by increasing stride and keep each whose stride is
    the span reached so far.

    >>> str(right_inverse(Layout((4, 2), (2, 1)))), str(right_inverse(Layout((3, 1, 2), (1, 0, 1))))
    ('(2,4):(4,1)', '3:1')
    """
    layout = ck.layout_arg(layout, "right_inverse", composed=True)
    if _is_composed(layout):
        return layout.right_inverse()
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
    """
    layout = ck.layout_arg(layout, "left_inverse", composed=True)
    if _is_composed(layout):
        return layout.left_inverse()
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


def _coalesced_shape(a: Layout) -> IntTuple:
    """``coalesce(a).shape`` without building the layout."""
    shapes: list[int] = []
    strides: list[int] = []
    for s, d in zip(*a.flat()):
        _push(shapes, strides, s, d)
    if len(shapes) > 1:
        return tuple(shapes)
    return shapes[0] if shapes else 1


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
    if is_tuple(tiler) and not isinstance(tiler, Layout):
        return _by_mode(_divide_1, a, tiler, "logical_divide")
    return _divide_1(a, tiler)


def _is_tiler_tuple(t) -> bool:
    return isinstance(t, tuple) and not isinstance(t, Layout)


def _zip2_by(t, guide):
    """CuTe's ``zip2_by``: gather the (tile, rest) pairs at the guide's leaves into
    ``((tiles...), (rests..., untouched modes...))``, on a shape or a stride tuple."""
    if _is_tiler_tuple(guide):
        if not isinstance(t, tuple) or len(t) < len(guide):
            raise LayoutError(f"tiler {_tstr(guide)} has more modes than {_tstr(t)}")
        split = [_zip2_by(x, g) for x, g in zip(t, guide)]
        return tuple(p[0] for p in split), tuple(p[1] for p in split) + t[len(guide) :]
    if not isinstance(t, tuple) or len(t) != 2:
        raise LayoutError(f"{_tstr(t)} is not a (tile, rest) pair")
    return t


def _tile_unzip(result: Layout, tiler) -> Layout:
    return Layout._raw(_zip2_by(result.shape, tiler), _zip2_by(result.stride, tiler))


def _unpacked(part: Layout) -> list[Layout]:
    """The modes a slice with ``repeat<rank>(_)`` splices in: CuTe's ``repeat<1>(_)`` is a bare
    ``_``, so a rank-1 part stays one (wrapped) mode."""
    if isinstance(part.shape, tuple) and len(part.shape) > 1:
        return _modes(part)
    return [part]


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
    return _tile_unzip(logical_divide(a, tiler), tiler)


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
    return _rebuild([z[0], *_unpacked(z[1])])


def flat_divide(a, tiler):
    """``(tile0, tile1, ..., rest0, rest1, ...)``.

    >>> str(flat_divide(Layout((4, 6)), (2, 3)))
    '(2,3,2,2):(1,4,2,12)'
    """
    a, tiler = ck.layout_arg(a, "flat_divide", composed=True), ck.tiler_arg(tiler, "flat_divide", a)
    if _is_composed(a):
        return a.with_inner(flat_divide(a.inner, tiler))
    z = zipped_divide(a, tiler)
    return _rebuild([*_unpacked(z[0]), *_unpacked(z[1])])


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
    if is_tuple(tiler) and not isinstance(tiler, Layout):
        return _by_mode(_product_1, a, tiler, "logical_product")
    if _is_composed(tiler):
        return _product_swizzled_tiler(a, tiler)
    return _product_1(a, tiler)


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
    a, tiler = (
        ck.layout_arg(a, "zipped_product", composed=True),
        ck.tiler_arg(tiler, "zipped_product", a),
    )
    if _is_composed(a):
        return a.with_inner(zipped_product(a.inner, tiler))
    return _tile_unzip(logical_product(a, tiler), tiler)


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
    return _rebuild([z[0], *_unpacked(z[1])])


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
    return _rebuild([*_unpacked(z[0]), *_unpacked(z[1])])


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
    n = ck.int_arg(n, "upcast", "n", 1, layout)
    if not is_int(n) or n < 1:
        raise LayoutError(f"upcast({layout}, {n!r}): the factor must be an int >= 1")
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
    n = ck.int_arg(n, "downcast", "n", 1, layout)
    if not is_int(n) or n < 1:
        raise LayoutError(f"downcast({layout}, {n!r}): the factor must be an int >= 1")
    if not isinstance(layout, Layout):
        return _cast_function(layout, n, downcast)
    if 1 not in layout.flat()[1]:
        raise LayoutError(
            f"downcast({layout}, {n}): the layout has no stride-1 mode to widen (CuTe: "
            "'Downcast requires adjacent elements')"
        )
    return _scale_leaves(layout, lambda s, d: (s * n, d) if d in (1, -1) else (s, d * n))


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
