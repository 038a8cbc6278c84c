"""Argument checks at the layout algebra's public entry points, and the checked int-tuple API.

The algebra's functions call :func:`layout_arg`, :func:`int_arg`, :func:`tiler_arg` and
:func:`int_tuple_arg` on their arguments first, so that a bad argument is a
:class:`~cutemma.errors.LayoutError` naming the function, the argument and what it accepts,
never an AttributeError from deep inside. Integers are anything with ``__index__``
(``numpy.int64`` too) except ``bool``; they come back as plain ints.

The int-tuple functions exported from :mod:`cutemma.layout` (``product``, ``crd2idx`` ...) are
the checked versions below; the algebra itself calls the unchecked ones in
:mod:`cutemma.layout.int_tuple`, so checking costs the algebra nothing.

>>> int_arg(__import__("numpy").int64(4), "upcast", "n")
4
>>> layout_arg("x", "complement")
Traceback (most recent call last):
...
cutemma.errors.LayoutError: complement: expected a Layout as the first argument, got 'x' (a str); \
build one with Layout(shape, stride) or Layout.parse('(4,2):(1,4)')
"""

from __future__ import annotations

import operator

from cutemma.errors import LayoutError
from cutemma.layout import int_tuple as it
from cutemma.layout.int_tuple import IntTuple


class _NotLoaded:
    """Stands for a class whose module has not loaded yet: no object is an instance of it."""


# The classes the checks accept as a Layout, a ComposedLayout and a Swizzle. Their modules
# (layout.py, swizzle.py) sit above this one and import it, so they register their classes
# here as they load (:func:`register_classes`); this module imports neither.
_Layout: type = _NotLoaded
_ComposedLayout: type = _NotLoaded
_Swizzle: type = _NotLoaded


def register_classes(
    *, layout: type | None = None, composed: type | None = None, swizzle: type | None = None
) -> None:
    """Tell the argument checks which class is the Layout, the ComposedLayout and the Swizzle.

    Called by the modules that define them, as they load; an object of one of them can only
    exist once its module has loaded, so a check never sees a class it was not told of.

    >>> from cutemma.layout import Layout
    >>> register_classes(layout=Layout)  # what layout.py does (again: nothing changes)
    >>> layout_arg(Layout(4), "coalesce")
    4:1
    """
    global _Layout, _ComposedLayout, _Swizzle
    _Layout = layout or _Layout
    _ComposedLayout = composed or _ComposedLayout
    _Swizzle = swizzle or _Swizzle


def _shown(x: object) -> str:
    text = repr(x)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} (a {type(x).__name__})"


def as_int(x: object) -> int | None:
    """``x`` as a plain int if it is an integer (``__index__``, not bool), else None.

    >>> as_int(3), as_int(True), as_int(2.0)
    (3, None, None)
    """
    if isinstance(x, bool):
        return None
    if type(x) is int:
        return x
    try:
        return operator.index(x)
    except TypeError:
        return None


def has_foreign_ints(x) -> bool:
    """Whether ``x`` has an integer leaf that is not a plain int (a numpy int, say).

    >>> import numpy as np
    >>> has_foreign_ints((4, (2, np.int64(2)))), has_foreign_ints((4, 2.0))
    (True, False)
    """
    if isinstance(x, tuple | list):
        return any(has_foreign_ints(v) for v in x)
    return type(x) is not int and not isinstance(x, bool) and as_int(x) is not None


def ints_of(x):
    """``x`` with every integer leaf (numpy ints too) a plain int; anything else unchanged.

    >>> import numpy as np
    >>> ints_of((np.int64(4), (2, "a")))
    (4, (2, 'a'))
    """
    if type(x) is int or isinstance(x, bool | str | float) or x is None:
        return x
    if isinstance(x, tuple):
        return tuple(ints_of(v) for v in x)
    if isinstance(x, list):
        return [ints_of(v) for v in x]
    n = as_int(x)
    return x if n is None else n


def _where(func: str, of) -> str:
    """``func`` or, when the call's main operand is known, ``func(operand, ...)``."""
    return func if of is None else f"{func}({of}, ...)"


def int_arg(x: object, func: str, name: str, minimum: int | None = None, of=None) -> int:
    """``x`` as a plain int, else a LayoutError; ``minimum`` is the least value accepted.

    >>> int_arg(2, "upcast", "n", 1)
    2
    """
    if type(x) is int and (minimum is None or x >= minimum):  # the common case, fast
        return x
    n = as_int(x)
    if n is None:
        raise LayoutError(
            f"{_where(func, of)}: {name}={x!r} must be a whole number (an int), got {_shown(x)}"
        )
    if minimum is not None and n < minimum:
        raise LayoutError(f"{_where(func, of)}: {name}={n} must be >= {minimum}")
    return n


def layout_arg(x: object, func: str, composed: bool = False, which: str = "the first argument"):
    """``x`` if it is a Layout (or, with ``composed``, a swizzled ComposedLayout), else a
    LayoutError naming ``func`` and how to build a layout.

    >>> from cutemma.layout import Layout
    >>> print(layout_arg(Layout(4), "coalesce"))
    4:1
    """
    if type(x) is _Layout:  # the common case, fast
        return x
    if isinstance(x, _Layout) or (composed and isinstance(x, _ComposedLayout)):
        return x
    what = "a Layout or ComposedLayout" if composed else "a Layout"
    raise LayoutError(
        f"{func}: expected {what} as {which}, got {_shown(x)}; build one with "
        "Layout(shape, stride) or Layout.parse('(4,2):(1,4)')"
    )


def _plain_ints(t: tuple, minimum: int, level: int = 1) -> bool:
    """Every leaf a plain int >= ``minimum`` (-1: any int), nested at most ``MAX_DEPTH``."""
    for x in t:
        if type(x) is int:
            if minimum >= 0 and x < minimum:
                return False
        elif type(x) is not tuple or level >= it.MAX_DEPTH:
            return False
        elif not _plain_ints(x, minimum, level + 1):
            return False
    return True


def int_tuple_arg(t: object, func: str, name: str, minimum: int | None = None, of=None) -> IntTuple:
    """``t`` as an int-tuple (ints, nested tuples of ints; numpy ints become ints), else a
    LayoutError; ``minimum`` bounds every leaf.

    >>> int_tuple_arg((4, (2, 2)), "make_identity_tensor", "shape", 1)
    (4, (2, 2))
    """
    if type(t) is int and (minimum is None or t >= minimum):  # fast common case
        return t
    if type(t) is tuple and _plain_ints(t, -1 if minimum is None else minimum):
        return t  # already plain ints in range: nothing to rebuild

    def go(x, level=0):
        if isinstance(x, tuple):
            if level >= it.MAX_DEPTH:
                raise LayoutError(
                    f"{_where(func, of)}: {name} is nested more than {it.MAX_DEPTH} levels deep; "
                    "use a shallower hierarchy"
                )
            return tuple(go(v, level + 1) for v in x)
        n = as_int(x)
        if n is None:
            raise LayoutError(
                f"{_where(func, of)}: {name} {t!r} has {x!r}, which is not an int; {name} must "
                "be an int or a nested tuple of ints"
            )
        if minimum is not None and n < minimum:
            raise LayoutError(
                f"{_where(func, of)}: {name} {t!r} has {n}; every entry must be >= {minimum}"
            )
        return n

    return go(t)


def _plain_tiler(t: tuple) -> bool:
    Layout = _Layout
    for x in t:
        if type(x) is Layout or x is None or (type(x) is int and x >= 1):
            continue
        if type(x) is not tuple or not _plain_tiler(x):
            return False
    return True


def tiler_arg(t: object, func: str, of=None):
    """A tiler: a Layout, a positive int, or a tuple of tilers (``None`` keeps a mode).

    >>> from cutemma.layout import Layout
    >>> [str(t) for t in tiler_arg((2, None, Layout(4)), "logical_divide")]
    ['2', 'None', '4:1']
    """
    if type(t) is int and t >= 1 or type(t) is _Layout:  # fast common cases
        return t
    if type(t) is tuple and _plain_tiler(t):  # a tuple of plain entries: nothing to rebuild
        return t

    def go(x, top: bool):
        # a Swizzle is a function too: composition(L, Swizzle) is defined
        if isinstance(x, _Layout | _ComposedLayout | _Swizzle):
            return x
        if isinstance(x, tuple):
            return tuple(go(v, False) for v in x)
        if x is None and not top:
            return None
        n = as_int(x)
        if n is None or n < 1:
            raise LayoutError(
                f"{_where(func, of)}: tiler {t!r} has {x!r}; a tiler is a Layout, a whole number >= 1, or a "
                "tuple of them (None keeps a mode), e.g. 4, (4, 2) or Layout(4, 2)"
            )
        return n

    return go(t, True)


def _int_tuple(t: object, func: str, name: str) -> IntTuple:
    return int_tuple_arg(t, func, name)


# --- the checked int-tuple API (exported from cutemma.layout) -------------------------------


def product(t: IntTuple) -> int:
    """Product of all leaves of an int-tuple.

    >>> product(((2, 3), 4))
    24
    """
    return it.product(_int_tuple(t, "product", "t"))


def flatten(t: IntTuple) -> tuple:
    """All leaves of an int-tuple in order, as a flat tuple (an int becomes a 1-tuple).

    >>> flatten(((2, 3), (4, (5,))))
    (2, 3, 4, 5)
    """
    return it.flatten(_int_tuple(t, "flatten", "t"))


def tuple_depth(t: IntTuple) -> int:
    """Nesting depth of an int-tuple; an int has depth 0.

    >>> tuple_depth(((4, 2), 2))
    2
    """
    return it.depth(_int_tuple(t, "tuple_depth", "t"))


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """Whether two int-tuples have the same hierarchy (profile).

    >>> congruent((1, (2, 3)), (4, (5, 6))), congruent((1, 2), (1, (2, 3)))
    (True, False)
    """
    return it.congruent(_int_tuple(a, "congruent", "a"), _int_tuple(b, "congruent", "b"))


def weakly_congruent(a: IntTuple, b: IntTuple) -> bool:
    """Whether ``a``'s hierarchy is a coarsening of ``b``'s.

    >>> weakly_congruent((1, 2), (1, (2, 3))), weakly_congruent((1, (2, 3)), (1, 2))
    (True, False)
    """
    a = _int_tuple(a, "weakly_congruent", "a")
    return it.weakly_congruent(a, _int_tuple(b, "weakly_congruent", "b"))


def prefix_product(t: IntTuple, init: int = 1) -> IntTuple:
    """Exclusive prefix product over the leaves (compact column-major strides).

    >>> prefix_product(((2, 3), 4))
    ((1, 2), 6)
    """
    t = _int_tuple(t, "prefix_product", "t")
    return it.prefix_product(t, int_arg(init, "prefix_product", "init"))


def shape_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """CuTe's shape division ``a / b``, where one of each pair of extents divides the other.

    >>> shape_div((4, 6), 8)
    (1, 3)
    """
    a = int_tuple_arg(a, "shape_div", "a", 1)
    b = int_tuple_arg(b, "shape_div", "b", 1)
    return it.shape_div(a, b)


def _check_coord(crd: IntTuple, shape: IntTuple, func: str, whole) -> None:
    """Every leaf of ``crd`` inside its mode of ``shape``; an int into a tuple mode indexes
    the mode's size."""
    if isinstance(crd, tuple):
        if not isinstance(shape, tuple) or len(crd) != len(shape):
            n = len(shape) if isinstance(shape, tuple) else 1
            raise LayoutError(
                f"{func}: coordinate {whole} does not match shape {shape}: the mode has rank "
                f"{n}, the coordinate {len(crd)}"
            )
        for c, s in zip(crd, shape):
            _check_coord(c, s, func, whole)
        return
    n = it.product(shape)
    if not 0 <= crd < n:
        raise LayoutError(
            f"{func}: coordinate {whole} is out of range for shape {shape}: {crd} is not in "
            f"[0, {n})"
        )


def crd2idx(crd: IntTuple, shape: IntTuple, stride: IntTuple | None = None) -> int:
    """Inner product of a coordinate with strides (column-major strides when omitted).

    >>> crd2idx((1, 2), (2, 3)), crd2idx(5, (2, 3), (3, 1))
    (5, 5)
    """
    crd = int_tuple_arg(crd, "crd2idx", "coordinate")
    shape = int_tuple_arg(shape, "crd2idx", "shape", 1)
    if stride is not None:
        stride = _int_tuple(stride, "crd2idx", "stride")
        if not it.congruent(shape, stride):
            raise LayoutError(
                f"crd2idx: shape {shape} and stride {stride} are not congruent (same nesting)"
            )
    _check_coord(crd, shape, "crd2idx", crd)
    return it.crd2idx(crd, shape, stride)


def idx2crd(idx: IntTuple, shape: IntTuple) -> IntTuple:
    """The natural coordinate of a linear index in ``shape`` (colexicographic).

    >>> idx2crd(7, (2, (2, 3)))
    (1, (1, 1))
    """
    idx = int_tuple_arg(idx, "idx2crd", "index")
    shape = int_tuple_arg(shape, "idx2crd", "shape", 1)
    _check_coord(idx, shape, "idx2crd", idx)
    return it.idx2crd(idx, shape)


def crd2crd(crd: IntTuple, src_shape: IntTuple, dst_shape: IntTuple) -> IntTuple:
    """Re-express a coordinate of ``src_shape`` as one of ``dst_shape`` (the same size).

    >>> crd2crd((1, 1), (2, 3), ((2, 3),))
    ((1, 1),)
    """
    crd = int_tuple_arg(crd, "crd2crd", "coordinate")
    src = int_tuple_arg(src_shape, "crd2crd", "src_shape", 1)
    dst = int_tuple_arg(dst_shape, "crd2crd", "dst_shape", 1)
    if it.product(src) != it.product(dst):
        raise LayoutError(
            f"crd2crd: shapes {src} and {dst} differ in size ({it.product(src)} and "
            f"{it.product(dst)}); they must have the same size"
        )
    _check_coord(crd, src, "crd2crd", crd)
    return it.crd2crd(crd, src, dst)
