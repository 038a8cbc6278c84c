"""The CuTe ``Layout``: a function from coordinates to offsets given by a shape and a stride.

>>> L = Layout((4, 2), (2, 1))
>>> str(L), L(5), L(1, 1), size(L), cosize(L)
('(4,2):(2,1)', 3, 3, 8, 8)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from cutemma.display import RichDisplay
from cutemma.errors import LayoutError
from cutemma.layout import checks as ck
from cutemma.layout import int_tuple as it
from cutemma.layout.int_tuple import IntTuple, is_int, is_tuple

# Layout.parse reads CuTe notation with cutemma.layout.notation, which sits above this module
# (the text may name swizzles and basis strides): notation registers its reader as it loads,
# and importing any module of cutemma.layout runs the package, which imports notation.
_PARSER: list[Callable[[str], object]] = []


def register_parser(read: Callable[[str], object]) -> None:
    """Make ``Layout.parse(text)`` return ``read(text)`` (notation.py registers its reader).

    >>> from cutemma.layout.notation import parse_layout
    >>> register_parser(parse_layout)  # what notation.py does as it loads
    >>> Layout.parse("(4,2):(2,1)")
    (4,2):(2,1)
    """
    _PARSER[:] = [read]


def _check_shape(shape: IntTuple, whole: IntTuple) -> None:
    if is_tuple(shape):
        for s in shape:
            _check_shape(s, whole)
    elif not is_int(shape):
        raise LayoutError(f"shape {whole!r} has {shape!r}, which is not an int")
    elif shape < 0:
        # CuTe allows extent 0 (an empty layout, make_layout(0, 1)); a negative one is nonsense
        raise LayoutError(f"shape {whole!r} has extent {shape}; every extent must be >= 0")


def _fmt(t: IntTuple) -> str:
    if is_tuple(t):
        return "(" + ",".join(_fmt(x) for x in t) + ")"
    return str(t)


class Layout(RichDisplay):
    """A CuTe layout ``shape:stride``; immutable and hashable, equal by shape and stride.

    ``stride`` defaults to compact column-major. ``str`` prints CuTe's form without the
    underscores of static ints, e.g. ``((4,8),(2,2)):((32,1),(16,8))``; ``Layout.parse`` reads
    that form, ``_4`` static ints, and C++ ``Layout<Shape<...>,Stride<...>>`` spelling.

    Call it with a linear index (``L(i)``), one coordinate per mode (``L(c0, c1)``, each an int
    into a possibly hierarchical mode), or a hierarchical coordinate (``L((c0, (c1, c2)))``).
    ``None`` in a coordinate slices (CuTe's ``_``) and returns the sub-layout.

    As in CuTe C++ (``crd2idx``) and pycute, an index past a mode's size is evaluated by
    extending that mode's last sub-mode: ``L(i)`` for ``i >= size(L)`` continues the last
    mode's stride (compositions and tilers rely on it). Pass ``strict=True`` to refuse any
    coordinate outside the shape instead (``L(i, strict=True)``); negative coordinates are
    always refused.

    >>> L = Layout(((2, 2), 2), ((1, 4), 2))
    >>> L(3), L((1, 1), 0), str(L(None, 1))
    (5, 5, '((2,2)):((1,4))')
    >>> Layout((4, 2), (1, 4))(9)   # (1, 2): the last mode extended
    9
    """

    __slots__ = ("_shape", "_stride", "_hash", "_flat")

    def __init__(self, shape: IntTuple, stride: IntTuple | None = None):
        try:
            try:
                self._init(shape, stride)
            except LayoutError:  # numpy ints are ints: convert them (only then) and retry
                if not (ck.has_foreign_ints(shape) or ck.has_foreign_ints(stride)):
                    raise
                self._init(ck.ints_of(shape), ck.ints_of(stride))
        except RecursionError:
            raise LayoutError(
                "layout shape/stride is nested too deeply to process (Python recursion limit); "
                "use a shallower hierarchy"
            ) from None

    def _init(self, shape, stride) -> None:
        if isinstance(shape, list):
            shape = _to_tuple(shape)
        if isinstance(stride, list):
            stride = _to_tuple(stride)
        _check_shape(shape, shape)
        if stride is None:
            # CuTe's compact_major<LayoutLeft>: an extent-1 mode gets stride 0 (static ints)
            stride = it.compact_col_major(shape)
        else:
            it.check_int_tuple(stride, "stride")
            if not it.congruent(shape, stride):
                raise LayoutError(
                    f"shape {_fmt(shape)} and stride {_fmt(stride)} are not congruent: "
                    "the stride must have the same nesting as the shape"
                )
        self._shape = shape
        self._stride = stride
        self._hash = None
        self._flat = None

    @classmethod
    def _raw(cls, shape: IntTuple, stride: IntTuple) -> Layout:
        """Build without validation: for the algebra's own, already valid results."""
        obj = object.__new__(cls)
        obj._shape = shape
        obj._stride = stride
        obj._hash = None
        obj._flat = None
        return obj

    @classmethod
    def parse(cls, text: str):
        """Read CuTe notation: ``(4,2):(1,4)``, ``(_4,_2):(_1,_4)`` or C++ ``Layout<Shape<..>,Stride<..>>``.

        Swizzled text (``Sw<3,4,3> o 0 o (8,64):(64,1)``) gives a ComposedLayout.

        >>> Layout.parse("Layout<Shape<_4,_2>, Stride<_1,_4>>")
        (4,2):(1,4)
        """
        return _PARSER[0](text)

    def flat(self) -> tuple[tuple, tuple]:
        """The leaves of shape and stride as two flat tuples (cached: layouts are immutable).

        >>> Layout(((2, 2), 3)).flat()
        ((2, 2, 3), (1, 2, 4))
        """
        if self._flat is None:
            self._flat = (_leaves(self._shape), _leaves(self._stride))
        return self._flat

    @property
    def shape(self) -> IntTuple:
        """The shape, an int or nested tuple of ints."""
        return self._shape

    @property
    def stride(self) -> IntTuple:
        """The stride, congruent to the shape."""
        return self._stride

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Layout)
            and self._shape == other._shape
            and self._stride == other._stride
        )

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self._shape, self._stride))
        return self._hash

    def __str__(self) -> str:
        return f"{_fmt(self._shape)}:{_fmt(self._stride)}"

    def __repr__(self) -> str:
        # CuTe's notation at the REPL too (issue 13); Layout.parse(repr(L)) == L
        return self.__str__()

    def __len__(self) -> int:
        return it.rank(self._shape)

    def __iter__(self) -> Iterator[Layout]:
        for i in range(len(self)):
            yield self[i]

    def __getitem__(self, i: int) -> Layout:
        if type(i) is not int:
            i = ck.int_arg(i, f"layout {self}", "mode")
        if isinstance(self._shape, tuple):
            n = len(self._shape)
            if not -n <= i < n:
                raise LayoutError(f"layout {self} has modes 0..{n - 1}; mode {i} does not exist")
            return Layout._raw(self._shape[i], self._stride[i])
        if i not in (0, -1):
            raise LayoutError(f"layout {self} has rank 1; mode {i} does not exist")
        return self

    def __call__(self, *crd, strict: bool = False):
        if len(crd) == 1:
            crd = crd[0]
        elif len(crd) == 0:
            raise LayoutError(f"layout {self} called with no coordinate")
        if strict is not False and strict is not True:
            raise LayoutError(f"layout {self}: strict={strict!r:.40} must be True or False")
        if type(crd) is not int and ck.has_foreign_ints(crd):  # numpy ints are ints
            crd = ck.ints_of(crd)
        if _has_none(crd):
            sub, _ = slice_and_offset(crd, self)
            return sub
        _check_crd(crd, self._shape, self, strict)
        return it.crd2idx(crd, self._shape, self._stride)

    def size(self) -> int:
        """Number of coordinates in the domain."""
        return it.product(self._shape)

    def cosize(self) -> int:
        """One past the largest offset: the size of the codomain."""
        return cosize(self)


def _leaves(t) -> tuple:
    if not isinstance(t, tuple):
        return (t,)
    if all(not isinstance(x, tuple) for x in t):
        return t
    out: list = []
    stack = [iter(t)]
    while stack:
        for x in stack[-1]:
            if isinstance(x, tuple):
                stack.append(iter(x))
                break
            out.append(x)
        else:
            stack.pop()
    return tuple(out)


def _to_tuple(x):
    return tuple(_to_tuple(v) for v in x) if isinstance(x, (list, tuple)) else x


def _has_none(crd) -> bool:
    if crd is None:
        return True
    return is_tuple(crd) and any(_has_none(c) for c in crd)


def _check_crd(crd, shape, layout, strict: bool = True) -> None:
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise LayoutError(
                f"coordinate {crd} does not match layout {layout}: expected "
                f"{it.rank(shape) if is_tuple(shape) else 1} mode(s) shaped like {_fmt(shape)}"
            )
        for c, s in zip(crd, shape):
            _check_crd(c, s, layout, strict)
    elif not is_int(crd):
        raise LayoutError(f"coordinate {crd!r} for layout {layout} is not an int or tuple")
    elif crd < 0:
        raise LayoutError(
            f"coordinate {crd} is out of range for mode of shape {_fmt(shape)} in layout "
            f"{layout}: coordinates are >= 0"
        )
    elif strict and crd >= it.product(shape):
        raise LayoutError(
            f"coordinate {crd} is out of range for mode of shape {_fmt(shape)} in layout "
            f"{layout}: expected 0 <= c < {it.product(shape)} (a strict call; a plain "
            "Layout call extends the last mode past the size, as CuTe's does)"
        )


def slice_and_offset(crd: IntTuple, layout: Layout) -> tuple[Layout, int]:
    """Split a coordinate with ``None`` entries into the sub-layout it keeps and the offset it fixes.

    A ComposedLayout keeps the fixed part inside, as CuTe's generic ``slice_and_offset`` of a
    composed layout does (layout_composed.hpp): ``(outer o (offset + off) o slice, 0)``, so
    ``sub(j) + 0 == layout(crd with j)``. (C++'s swizzle overload may instead decay the result
    to a plain layout plus an offset; the function is the same, the spelling differs.)

    >>> slice_and_offset((None, 1), Layout((4, 2), (1, 4)))
    ((4):(1), 4)
    >>> from cutemma.layout import ComposedLayout, Swizzle
    >>> slice_and_offset((None, None), ComposedLayout(Swizzle(2, 0, 2), 0, Layout((4, 4), (4, 1))))
    (Sw<2,0,2> o 0 o (4,4):(4,1), 0)
    """
    if type(layout) is not Layout and hasattr(layout, "outer"):  # a ComposedLayout
        layout = ck.layout_arg(
            layout, "slice_and_offset", composed=True, which="the second argument"
        )
        if not hasattr(layout.inner, "shape"):  # a bare Swizzle has no modes to slice
            raise LayoutError(
                f"slice_and_offset: {layout} has a Swizzle as its inner function, which has no "
                f"modes to slice with {crd!r}; slice a ComposedLayout whose inner is a Layout"
            )
        sub, off = slice_and_offset(crd, layout.inner)
        if sub is layout.inner and off == 0:
            return layout, 0
        return type(layout)(layout.outer, layout.offset + off, sub, layout.pinned), 0
    layout = ck.layout_arg(layout, "slice_and_offset", which="the second argument")
    crd = ck.ints_of(crd)
    if crd is None:
        return layout, 0

    def go(c, s, d):
        if c is None:
            return [(s, d)], 0
        if is_tuple(c):
            if not is_tuple(s) or len(c) != len(s):
                fix = (
                    f"{len(c)} coordinates for a shape {s} of {len(s)} modes; give {len(s)} "
                    "(an int or None each)"
                    if is_tuple(s)
                    else f"its shape {s} is one mode: give an int or None, not a tuple"
                )
                raise LayoutError(f"slice {c} does not match layout {layout}: {fix}")
            kept, off = [], 0
            for ci, si, di in zip(c, s, d):
                k, o = go(ci, si, di)
                kept.extend(k)
                off += o
            return kept, off
        _check_crd(c, s, layout)
        return [], it.crd2idx(c, s, d)

    kept, off = go(crd, layout.shape, layout.stride)
    if not kept:
        return Layout._raw(1, 0), off
    # CuTe's slice concatenates the kept modes: (_, (_, 0, _)) on (A, (B, C, D)) keeps (A, B, D)
    return Layout._raw(tuple(k[0] for k in kept), tuple(k[1] for k in kept)), off


def as_layout(x) -> Layout:
    """A Layout from a Layout, an int ``n`` (``n:1``) or a shape tuple (compact column-major).

    >>> as_layout(4), as_layout((2, 3))
    (4:1, (2,3):(1,2))
    """
    if isinstance(x, Layout):
        return x
    if is_int(x) or is_tuple(x):
        return Layout(x)
    raise LayoutError(f"expected a Layout, an int or a shape tuple, got {x!r}")


def make_layout(*layouts: Layout) -> Layout:
    """Concatenate layouts as the modes of one layout (CuTe's ``make_layout(L0, L1, ...)``).

    One Layout gives a rank-1 layout wrapping it, as in CuTe; one shape (not a Layout)
    builds the compact column-major layout, and a (shape, stride) pair that layout.

    >>> str(make_layout(Layout(4, 1), Layout(2, 4))), str(make_layout(Layout(3, 1)))
    ('(4,2):(1,4)', '(3):(1)')
    """
    n = len(layouts)
    if n == 1 and not isinstance(layouts[0], Layout):
        return as_layout(layouts[0])
    if n == 2 and not isinstance(layouts[0], Layout) and not isinstance(layouts[1], Layout):
        return Layout(layouts[0], layouts[1])
    shapes = []
    strides = []
    for x in layouts:
        if not isinstance(x, Layout):
            x = as_layout(x)
        shapes.append(x._shape)
        strides.append(x._stride)
    return Layout._raw(tuple(shapes), tuple(strides))


def size(x, mode: int | None = None) -> int:
    """Size of a layout (or of one mode), of an int-tuple, or of anything with ``.size()``.

    >>> size(Layout((4, 2))), size((4, 2)), size(Layout((4, 2)), 1)
    (8, 8, 2)
    """
    if not (isinstance(x, Layout | tuple) or ck.as_int(x) is not None or hasattr(x, "size")):
        raise LayoutError(
            f"size: expected a Layout, a shape (an int or tuple of ints) or an object with "
            f".size(), got {x!r}"
        )
    x = ck.ints_of(x)
    if mode is not None:
        x = as_layout(x)[mode] if not hasattr(x, "layout") else x.layout[mode]
    if isinstance(x, Layout):
        return it.product(x.shape)
    if is_int(x) or is_tuple(x):
        return it.product(x)
    return x.size()


def cosize(layout) -> int:
    """One past the largest offset the layout reaches (CuTe's ``cosize``).

    >>> cosize(Layout((4, 2), (2, 1)))
    8
    """
    if not isinstance(layout, Layout):
        if not hasattr(layout, "cosize"):
            raise LayoutError(
                f"cosize: expected a Layout (or a ComposedLayout, Swizzle), got {layout!r}"
            )
        return layout.cosize()
    top = 1
    for s, d in zip(*layout.flat()):
        top += (s - 1) * (d if d >= 0 else -d)
    return top


def rank(x) -> int:
    """Number of top-level modes.

    >>> rank(Layout((4, (2, 2))))
    2
    """
    return it.rank(x.shape if hasattr(x, "shape") else ck.int_tuple_arg(x, "rank", "shape"))


def depth(x) -> int:
    """Nesting depth of the shape.

    >>> depth(Layout((4, (2, 2))))
    2
    """
    return it.depth(x.shape if hasattr(x, "shape") else ck.int_tuple_arg(x, "depth", "shape"))


def shape(x, mode: int | None = None) -> IntTuple:
    """The shape of a layout (or of one mode).

    >>> shape(Layout((4, (2, 2))), 1)
    (2, 2)
    """
    if not hasattr(x, "shape"):
        raise LayoutError(f"shape: expected a Layout (or anything with a shape), got {x!r}")
    s = x.shape
    return s if mode is None else as_layout(x)[mode].shape


def stride(x, mode: int | None = None) -> IntTuple:
    """The stride of a layout (or of one mode).

    >>> stride(Layout((4, 2)), 1)
    4
    """
    if not hasattr(x, "stride"):
        raise LayoutError(f"stride: expected a Layout, got {x!r}")
    return x.stride if mode is None else x[mode].stride


def flatten_layout(layout: Layout) -> Layout:
    """The same function with every mode at the top level.

    >>> flatten_layout(Layout(((2, 2), 2)))
    (2,2,2):(1,2,4)
    """
    layout = ck.layout_arg(layout, "flatten_layout", composed=True)
    if type(layout) is not Layout and hasattr(layout, "with_inner"):  # keeps its swizzle (CuTe)
        return layout.with_inner(flatten_layout(layout.inner))
    s, d = it.flatten(layout.shape), it.flatten(layout.stride)
    if len(s) == 1:
        return Layout._raw(s[0], d[0])
    return Layout._raw(s, d)


def _modes(layout: Layout) -> list[Layout]:
    if isinstance(layout._shape, tuple):
        return [Layout._raw(s, d) for s, d in zip(layout._shape, layout._stride)]
    return [layout]


def append(layout: Layout, x: Layout | None = None, n: int | None = None) -> Layout:
    """Add ``x`` (default ``1:0``) as a last mode; with ``n``, pad up to rank ``n``.

    >>> str(append(Layout(4), Layout(2, 4)))
    '(4,2):(1,4)'
    """
    return _extend(layout, x, n, "append")


def prepend(layout: Layout, x: Layout | None = None, n: int | None = None) -> Layout:
    """Add ``x`` (default ``1:0``) as a first mode; with ``n``, pad up to rank ``n``.

    >>> str(prepend(Layout(4), Layout(2, 4)))
    '(2,4):(4,1)'
    """
    return _extend(layout, x, n, "prepend")


def _extend(layout: Layout, x: Layout | None, n: int | None, name: str) -> Layout:
    """append / prepend: ``x`` added once, or repeated up to rank ``n``, at the end or front."""
    layout = ck.layout_arg(layout, name)
    x = Layout._raw(1, 0) if x is None else ck.layout_arg(x, name, which="x")
    n = None if n is None else ck.int_arg(n, name, "n", 1)
    modes = _modes(layout)
    if n is not None and n < len(modes) and is_tuple(layout.shape):
        raise LayoutError(f"{name}: layout {layout} already has rank > {n}")
    pad = [x] if n is None else [x] * (n - len(modes))
    modes = modes + pad if name == "append" else pad + modes
    return (
        make_layout(*modes)
        if len(modes) > 1
        else Layout._raw((modes[0].shape,), (modes[0].stride,))
    )


def group(layout: Layout, begin: int, end: int) -> Layout:
    """Gather modes ``begin..end-1`` into one mode.

    >>> str(group(Layout((2, 3, 4)), 1, 3))
    '(2,(3,4)):(1,(2,6))'
    """
    layout = ck.layout_arg(layout, "group")
    begin, end = ck.int_arg(begin, "group", "begin"), ck.int_arg(end, "group", "end")
    modes = _modes(layout)
    if not 0 <= begin <= end <= len(modes):
        raise LayoutError(
            f"group({layout}, {begin}, {end}): need 0 <= begin <= end <= {len(modes)}"
        )
    inner = make_layout(*modes[begin:end]) if end - begin > 1 else None
    if inner is None:
        return layout
    return make_layout(*modes[:begin], inner, *modes[end:])


def select(layout: Layout, *modes: int) -> Layout:
    """The layout made of the given modes, in the given order.

    >>> str(select(Layout((2, 3, 4)), 2, 0)), str(select(Layout((2, 3, 4)), 1))
    ('(4,2):(6,1)', '(3):(2)')
    """
    layout = ck.layout_arg(layout, "select")
    modes = tuple(ck.int_arg(m, "select", "mode") for m in modes)
    all_modes = _modes(layout)
    for m in modes:
        if not -len(all_modes) <= m < len(all_modes):
            raise LayoutError(f"select: layout {layout} has no mode {m}")
    picked = [all_modes[m] for m in modes]
    return make_layout(*picked)


def coalesce(layout: Layout, profile: IntTuple | None = None) -> Layout:
    """The shortest layout with the same function: size-1 modes dropped, contiguous modes merged.

    With a ``profile`` tuple, each mode is coalesced separately and the result keeps the
    profile's top-level modes (CuTe's by-mode coalesce).

    >>> str(coalesce(Layout((2, (1, 6)), (1, (6, 2)))))
    '12:1'
    >>> str(coalesce(Layout((2, (2, 3)), (1, (2, 4))), (1, 1)))
    '(2,6):(1,2)'
    """
    layout = ck.layout_arg(layout, "coalesce", composed=True)
    if profile is not None:
        profile = ck.int_tuple_arg(profile, "coalesce", "profile")
    if type(layout) is not Layout and hasattr(layout, "with_inner"):
        return layout.with_inner(coalesce(layout.inner, profile))  # swizzled: the inner one
    if profile is not None and is_tuple(profile):
        modes = _modes(layout)
        if len(profile) > len(modes):
            raise LayoutError(f"coalesce: profile {profile} has more modes than layout {layout}")
        out = [coalesce(m, p) for m, p in zip(modes, profile)] + modes[len(profile) :]
        return make_layout(*out) if len(out) > 1 else Layout._raw((out[0].shape,), (out[0].stride,))
    pairs = coalesced_pairs(layout)
    return _from_lists([s for s, _ in pairs], [d for _, d in pairs])


def coalesced_pairs(layout: Layout) -> list[tuple[int, int]]:
    """The flat ``(size, stride)`` modes of :func:`coalesce`: size-1 modes dropped, each mode
    merged into the one before it when it continues it (``[]`` for a layout of size 1).

    >>> coalesced_pairs(Layout((8, 2, 1, 2), (1, 8, 5, 64)))
    [(16, 1), (2, 64)]
    """
    out: list[tuple[int, int]] = []
    for s, d in zip(*layout.flat()):  # _push, inlined: this loop is the hot path
        if s == 1:
            continue
        if out and out[-1][0] * out[-1][1] == d:
            out[-1] = (out[-1][0] * s, out[-1][1])
        else:
            out.append((s, d))
    return out


def _push(shapes: list, strides: list, s: int, d: int) -> None:
    """Append mode s:d, merged into the previous one when contiguous; size-1 modes vanish."""
    if s == 1:
        return
    if shapes and strides[-1] * shapes[-1] == d:
        shapes[-1] *= s
    else:
        shapes.append(s)
        strides.append(d)


def _from_lists(shapes: list, strides: list) -> Layout:
    """The layout of the modes collected by ``_push`` (``1:0`` when there are none)."""
    if not shapes:
        return Layout._raw(1, 0)
    if len(shapes) == 1:
        return Layout._raw(shapes[0], strides[0])
    return Layout._raw(tuple(shapes), tuple(strides))


def filter_zeros(layout: Layout) -> Layout:
    """Replace every stride-0 mode by size 1 (keeps the hierarchy).

    >>> filter_zeros(Layout((4, 2), (0, 1)))
    (1,2):(0,1)
    """

    def go(s, d):
        if is_tuple(s):
            parts = [go(a, b) for a, b in zip(s, d)]
            return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
        return (1, d) if d == 0 else (s, d)

    return Layout._raw(*go(layout.shape, layout.stride))


def filter(layout: Layout) -> Layout:  # noqa: A001 - CuTe's name
    """Coalesce after dropping stride-0 (broadcast) modes: the layout of the distinct offsets.

    >>> str(filter(Layout((4, 2, 3), (0, 1, 2))))
    '6:1'
    """
    return coalesce(filter_zeros(ck.layout_arg(layout, "filter")))


ck.register_classes(layout=Layout)
