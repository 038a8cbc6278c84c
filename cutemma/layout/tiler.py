"""Tilers, and the shapes of the results they give.

A *tiler* is a Layout, an int ``n`` (the layout ``n:1``), or a tuple of those applied mode by
mode (``None`` leaves a mode as it is). The divides and products share how a tuple tiler is
applied (:func:`_by_mode`) and how a ``(tile, rest)`` result is gathered into CuTe's zipped,
tiled and flat forms (:func:`gathered`).

>>> from cutemma.layout import logical_divide
>>> str(gathered(Layout((4, 6)), (2, 3), "tiled_divide", logical_divide, "tiled"))
'((2,3),2,2):((1,4),2,12)'
"""

from __future__ import annotations

from cutemma.errors import LayoutError
from cutemma.layout import checks as ck
from cutemma.layout.int_tuple import is_tuple
from cutemma.layout.layout import (
    Layout,
    _modes,
)


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


def gathered(a, tiler, name: str, logical, form: str) -> Layout:
    """``logical(a, tiler)`` with its (tile, rest) pairs gathered into ``((tiles), (rests))``,
    in CuTe's ``form``: ``'zipped'`` as it is, ``'tiled'`` with the rests unpacked,
    ``'flat'`` with both unpacked. The body of the zipped, tiled and flat divides
    (``logical``: logical_divide) and products (logical_product).

    >>> from cutemma.layout import logical_product
    >>> str(gathered(Layout((2, 2)), (Layout(3), Layout(2)), "flat_product", logical_product, "flat"))
    '(2,2,3,2):(1,2,2,1)'
    """
    a, tiler = ck.layout_arg(a, name, composed=True), ck.tiler_arg(tiler, name, a)
    if _is_composed(a):
        return a.with_inner(gathered(a.inner, tiler, name, logical, form))
    z = _tile_unzip(logical(a, tiler), tiler)
    if form == "zipped":
        return z
    if form == "tiled":
        return _rebuild([z[0], *_unpacked(z[1])])
    return _rebuild([*_unpacked(z[0]), *_unpacked(z[1])])
