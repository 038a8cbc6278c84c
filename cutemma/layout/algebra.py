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
from cutemma.layout import int_tuple as it
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


def _cmod(a: int, b: int) -> int:
    """C++'s ``%`` (the sign of the dividend): CuTe's static checks are written with it."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _cdiv(a: int, b: int) -> int:
    """C++'s integer ``/`` (truncates toward zero)."""
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _coalesce_x(a: Layout) -> tuple[list, list]:
    """The flat modes of ``a`` merged where contiguous, keeping ``a``'s function past its domain.

    CuTe's ``detail::coalesce_x``: like coalesce, but a trailing extent-1 mode keeps its
    stride (as if it had extent 2), since composition extends ``a`` along its last mode.
    """
    shapes, strides = a.flat()
    out_s: list[int] = []
    out_d: list[int] = []
    last = len(shapes) - 1
    for i, (s, d) in enumerate(zip(shapes, strides)):
        _push(out_s, out_d, 2 if i == last and s == 1 else s, d)
    return out_s, out_d


class _Walk:
    """State of one composition ``a o b``: ``a``'s coalesced modes and what the leaves used.

    ``digits[i]`` sums, over the leaves of ``b``, the largest index step each places inside
    mode ``i`` of ``a``; when two leaves together overflow a mode, ``a`` is not additive over
    ``b``'s modes and CuTe's by-mode answer must be checked. ``exact`` turns False when a leaf
    crosses a mode boundary with a stride that does not divide the extent (CuTe's weak
    divisibility check lets that through).
    """

    __slots__ = ("shapes", "strides", "digits", "exact")

    def __init__(self, shapes, strides, track: bool):
        self.shapes = shapes
        self.strides = strides
        self.digits = [0] * len(shapes) if track else None
        self.exact = True

    def leaf(self, a: Layout, s: int, d: int):
        """CuTe's ``composition_impl`` for one integral mode ``s:d`` of the right operand."""
        shapes, strides = self.shapes, self.strides
        if d == 0:  # a broadcast mode stays a broadcast mode
            return s, 0
        if len(shapes) == 1:
            return s, d * strides[0]
        out_s: list[int] = []
        out_d: list[int] = []
        rest_s, rest_d = s, d
        for i in range(len(shapes) - 1):
            c = shapes[i]
            if c == 0:
                raise LayoutError(
                    f"composition({a}, {s}:{d}) is not defined: mode {i} of {a} has extent 0 "
                    "and cannot be stepped over"
                )
            # CuTe's weak stride divisibility: rest_d % c == 0 or rest_d < c (C++ %)
            if _cmod(rest_d, c) != 0 and not rest_d < c:
                raise LayoutError(
                    f"composition({a}, {s}:{d}) is not defined: stride {rest_d} and extent {c} "
                    f"of {a}: {c} must divide {rest_d} (CuTe's stride divisibility condition)"
                )
            step = abs(rest_d)
            next_s = -(-c // step)
            next_d = -(-step // c) * (1 if rest_d > 0 else -1)
            if rest_s != 1 and step % c and c % step and (step >= c or next_s < rest_s):
                self.exact = False  # steps off the end of mode i at a non-multiple of its extent
            if next_s == 1 or rest_s == 1:
                rest_d = next_d
                continue
            new_s = min(next_s, rest_s)
            if new_s == 0 or rest_s % new_s:
                raise LayoutError(
                    f"composition({a}, {s}:{d}) is not defined: {rest_s} elements do not split "
                    f"into whole runs of {new_s} in mode {i} of {a} (CuTe's shape divisibility "
                    "condition)"
                )
            out_s.append(new_s)
            out_d.append(rest_d * strides[i])
            if self.digits is not None:
                self.digits[i] += step * (new_s - 1)
            rest_s //= new_s
            rest_d = next_d
        if not out_s:
            return rest_s, rest_d * strides[-1]
        if rest_s != 1:
            out_s.append(rest_s)
            out_d.append(rest_d * strides[-1])
        if len(out_s) == 1:
            return out_s[0], out_d[0]
        return tuple(out_s), tuple(out_d)

    def overflows(self) -> bool:
        d, s = self.digits, self.shapes
        return d is not None and any(d[i] > s[i] - 1 for i in range(len(s) - 1))


def _extended(shapes, strides, x: int) -> int:
    """``a(x)`` for any integer: the last mode absorbs what is past ``a``'s domain; odd for x < 0."""
    if x < 0:
        return -_extended(shapes, strides, -x)
    total = 0
    for c, d in zip(shapes[:-1], strides[:-1]):
        total += (x % c) * d
        x //= c
    return total + x * strides[-1]


def _check_function(a: Layout, b: Layout, result: Layout, walk: _Walk) -> None:
    """Raise if CuTe's by-mode answer is not ``i -> a(b(i))`` (CuTe accepts a few such inputs)."""
    from cutemma.layout.offsets import offsets

    bs, rs = offsets(b), offsets(result)
    for i, (x, got) in enumerate(zip(bs.tolist(), rs.tolist())):
        want = _extended(walk.shapes, walk.strides, x)
        if got != want:
            why = (
                "a mode of the right operand steps over an extent of the left one that its "
                "stride does not divide"
                if not walk.exact
                else "the right operand's modes overlap inside one mode of the left one, so "
                "the left one is not additive over them"
            )
            raise LayoutError(
                f"composition({a}, {b}): CuTe's algorithm gives {result}, which is not {a} o {b}: "
                f"at index {i} it gives {got} but {a} at {b}({i}) = {x} is {want} ({why}; C++ "
                "accepts this input because its divisibility check is the weak one)"
            )


def _compose_layouts(a: Layout, b: Layout) -> Layout:
    shapes, strides = _coalesce_x(a)
    if not shapes:
        raise LayoutError(f"composition({a}, {b}): the left operand has no modes")
    walk = _Walk(shapes, strides, track=len(shapes) > 1)

    def go(s, d):
        if isinstance(s, tuple):
            parts = [go(x, y) for x, y in zip(s, d)]
            return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
        return walk.leaf(a, s, d)

    result = Layout._raw(*go(b.shape, b.stride))
    if not walk.exact or walk.overflows():
        _check_function(a, b, result, walk)
    return result


def composition(a, b):
    """``a o b``: the layout ``i -> a(b(i))`` on ``b``'s domain.

    ``b`` may be a Layout, an int ``n`` (the first ``n`` offsets of ``a``), a ComposedLayout,
    or a tuple tiler applied mode by mode (modes of ``a`` the tiler does not reach are
    dropped, as in CuTe). A Swizzle or ComposedLayout ``a`` gives a ComposedLayout; a Tensor
    ``a`` gives the tensor over the composed layout.

    >>> str(composition(Layout((10, 2), (16, 4)), Layout((5, 4), (1, 5))))
    '(5,(2,2)):(16,(80,4))'
    """
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
    try:
        return _compose_layouts(a, b)
    except LayoutError as e:
        if str(b) in str(e):
            raise
        raise LayoutError(f"composition({a}, {b}) is not defined: {e}") from None


def _filtered(layout: Layout) -> tuple[list, list]:
    """CuTe's ``filter``: the flat modes left after dropping broadcasts and merging."""
    shapes: list[int] = []
    strides: list[int] = []
    for s, d in zip(*layout.flat()):
        _push(shapes, strides, 1 if d == 0 else s, d)
    return shapes, strides


def _ceil_div_shape(target: IntTuple, n: int) -> int:
    """CuTe's ``coalesce(ceil_div(target, n))`` for static ints: ``n`` divides mode by mode."""
    if not is_tuple(target):
        return -(-target // n)
    total = 1
    for t in it.flatten(target):
        total *= -(-t // n)
        n = -(-n // t)
    return total


def complement(layout: Layout, cotarget: IntTuple | None = None) -> Layout:
    """The layout of the offsets ``layout`` does not reach, ordered after it, up to ``cotarget``.

    ``cotarget`` (an int or a shape, default ``cosize(layout)``) is the size of the codomain
    to fill; a shape is divided mode by mode. As in CuTe, a layout whose strides do not nest
    gets a partial complement (the gaps its strides divide evenly).

    >>> str(complement(Layout(4, 2), 24)), str(complement(Layout((4, 6), (1, 6))))
    ('(2,3):(1,8)', '1:0')
    """
    shapes, strides = _filtered(layout)
    if cotarget is None:
        cotarget = 1 + sum((s - 1) * abs(d) for s, d in zip(shapes, strides))
    else:
        it.check_int_tuple(cotarget, "complement cotarget")
        if any(t < 0 for t in it.flatten(cotarget)):
            raise LayoutError(f"complement({layout}, {cotarget}): the cotarget must be >= 0")
    if not shapes:  # nothing reached: the whole cotarget is the complement
        return Layout(it.product(cotarget))
    if any(d < 0 for d in strides):
        raise LayoutError(
            f"complement({layout}, {cotarget}) is not defined for negative strides (CuTe "
            "returns a layout with negative extents)"
        )
    if any(s == 0 for s in shapes):
        raise LayoutError(f"complement({layout}, {cotarget}): the layout has an extent-0 mode")
    # take the modes by increasing stride (the first of equal ones first, as CuTe's find)
    modes = sorted(zip(strides, range(len(strides)), shapes))
    out_s: list[int] = []
    out_d: list[int] = [1]
    for d, _, s in modes:
        gap = d // out_d[-1]
        if gap == 0:
            raise LayoutError(
                f"complement({layout}, {cotarget}) is not defined: the layout is not "
                f"injective (stride {d} lies inside the span {out_d[-1]} already covered; "
                "CuTe: 'Non-injective Layout detected in complement')"
            )
        out_s.append(gap)
        out_d.append(d * s)
    rest = _ceil_div_shape(cotarget, out_d[-1])
    out_s.append(rest)
    if rest == 1:
        out_d[-1] = 0
    res_s: list[int] = []
    res_d: list[int] = []
    for s, d in zip(out_s, out_d):
        _push(res_s, res_d, s, d)
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
    c = coalesce(layout)
    shapes, strides = c.flat()
    pre = [1]
    for s in shapes:
        pre.append(pre[-1] * s)
    return list(shapes), list(strides), pre


def right_inverse(layout: Layout) -> Layout:
    """A layout ``R`` with ``layout(R(i)) == i`` for ``i`` in the largest contiguous range reached.

    Follows CuTe: walk the coalesced modes by increasing stride and keep each whose stride is
    the span reached so far.

    >>> str(right_inverse(Layout((4, 2), (2, 1)))), str(right_inverse(Layout((3, 1, 2), (1, 0, 1))))
    ('(2,4):(4,1)', '3:1')
    """
    if _is_composed(layout):
        return layout.right_inverse()
    shapes, strides, pre = _wrapped_coalesce(layout)
    out_s: list[int] = []
    out_d: list[int] = []
    current = 1
    for i in _exchange_order(strides):
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
    if _is_composed(layout):
        return layout.left_inverse()
    shapes, strides, pre = _wrapped_coalesce(layout)
    if any(d < 0 for d in strides):
        raise LayoutError(
            f"left_inverse({layout}) is not defined for negative strides (CuTe returns a "
            "layout with a negative extent)"
        )
    order = _exchange_order(strides)
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


def _divide_1(a: Layout, b) -> Layout:
    if _is_tiler_tuple(b):
        return _by_mode(_divide_1, a, b, "logical_divide")
    if b is None:
        return a
    b = as_layout(b)
    try:
        # the complement fills coalesce(a)'s shape mode by mode; a tile that does not divide
        # size(a) gets a rest mode that runs past it (CuTe's padded divide)
        return composition(a, make_layout(b, complement(b, coalesce(a).shape)))
    except LayoutError as e:
        raise LayoutError(f"logical_divide({a}, {b}) is not defined: {e}") from None


def logical_divide(a, tiler):
    """Split ``a`` into (tile, rest): ``a o (tiler, complement(tiler, size(a)))``, by mode for tuples.

    >>> str(logical_divide(Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2)))
    '((2,2),(2,3)):((4,1),(2,8))'
    """
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
    if _is_composed(a):
        return a.with_inner(tiled_divide(a.inner, tiler))
    z = zipped_divide(a, tiler)
    return make_layout(z[0], *_modes(z[1]))


def flat_divide(a, tiler):
    """``(tile0, tile1, ..., rest0, rest1, ...)``.

    >>> str(flat_divide(Layout((4, 6)), (2, 3)))
    '(2,3,2,2):(1,4,2,12)'
    """
    if _is_composed(a):
        return a.with_inner(flat_divide(a.inner, tiler))
    z = zipped_divide(a, tiler)
    return make_layout(*_modes(z[0]), *_modes(z[1]))


def _product_1(a: Layout, b) -> Layout:
    if _is_tiler_tuple(b):
        return _by_mode(_product_1, a, b, "logical_product")
    if b is None:
        return a
    b = as_layout(b)
    try:
        return make_layout(a, composition(complement(a, it.product(a.shape) * cosize(b)), b))
    except LayoutError as e:
        raise LayoutError(f"logical_product({a}, {b}) is not defined: {e}") from None


def logical_product(a, tiler):
    """``(a, complement(a, size(a)*cosize(b)) o b)``: ``a`` repeated by the layout ``b``.

    >>> str(logical_product(Layout((2, 2), (4, 1)), Layout(6, 1)))
    '((2,2),(2,3)):((4,1),(2,8))'
    """
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
    if _is_composed(a):
        return a.with_inner(tiled_product(a.inner, tiler))
    z = zipped_product(a, tiler)
    return make_layout(z[0], *_modes(z[1]))


def flat_product(a, tiler):
    """``(a0, a1, ..., repeat0, repeat1, ...)``.

    >>> str(flat_product(Layout((2, 2)), (Layout(3), Layout(2))))
    '(2,2,3,2):(1,2,2,1)'
    """
    if _is_composed(a):
        return a.with_inner(flat_product(a.inner, tiler))
    z = zipped_product(a, tiler)
    return make_layout(*_modes(z[0]), *_modes(z[1]))


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


def _rank_product(block, tiler, block_first: bool, name: str) -> Layout:
    """logical_product of both padded to a common rank, zipped mode by mode (CuTe's layout.hpp)."""
    block, tiler = as_layout(block), as_layout(tiler)
    r = max(it.rank(block.shape), it.rank(tiler.shape))
    a, b = _append_to(block, r), _append_to(tiler, r)
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
    if _is_composed(block):
        return block.with_inner(blocked_product(block.inner, tiler))
    return _rank_product(block, tiler, True, "blocked_product")


def raked_product(block, tiler):
    """Mode by mode ``(repeat_i, block_i)``: ``block``'s elements interleaved across the copies.

    >>> str(raked_product(Layout((2, 2)), Layout((2, 3))))
    '((2,2),(3,2)):((4,1),(8,2))'
    """
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


def max_common_layout(a: Layout, b: Layout) -> Layout:
    """The largest layout ``R`` such that ``a o R`` and ``b o R`` are both contiguous (stride 1).

    >>> str(max_common_layout(Layout((4, 8)), Layout((4, 8), (1, 8))))
    '4:1'
    """
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
    if not is_int(n) or n < 1:
        raise LayoutError(f"upcast({layout}, {n!r}): the factor must be an int >= 1")

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


def downcast(layout: Layout, n: int) -> Layout:
    """The layout in units ``n`` times smaller: unit-stride modes grow, others scale their stride.

    CuTe requires a stride-1 mode ("Downcast requires adjacent elements").

    >>> str(downcast(Layout((2, 4), (1, 2)), 4))
    '(8,4):(1,8)'
    """
    if not is_int(n) or n < 1:
        raise LayoutError(f"downcast({layout}, {n!r}): the factor must be an int >= 1")
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
    shapes, strides = layout.flat()
    index = it.compact_col_major(tuple(shapes))
    keep = [(s, i) for s, d, i in zip(shapes, strides, index) if d == 0]
    if not keep:
        return Layout._raw(1, 0)
    if len(keep) == 1:
        return Layout._raw(*keep[0])
    return Layout._raw(tuple(s for s, _ in keep), tuple(i for _, i in keep))
