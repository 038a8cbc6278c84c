"""Deciding, by evaluating functions, whether a C++ result is a correct answer.

A layout's function is evaluated here directly from its definition (CuTe's 1-D index: every
leaf but the last takes ``i % extent``, the last takes the rest), not through cutemma, so a C++
result can be checked against what the operation means: ``(A o B)(i) == A(B(i))`` for
composition (by mode for tuple tilers, with a Swizzle or ComposedLayout on either side), and
the tile mode of a divide is ``A o tile``. docs/cpp_defects.md lists the defects this finds.
"""

from __future__ import annotations

from cutemma.layout import ComposedLayout, Layout, Swizzle
from cutemma.layout.int_tuple import flatten


def evaluate(f, x: int) -> int:
    """``f(x)`` for a Layout, Swizzle or ComposedLayout, from the definitions."""
    if isinstance(f, Layout):
        shapes, strides = flatten(f.shape), flatten(f.stride)
        shapes = shapes if isinstance(shapes, tuple) else (shapes,)
        strides = strides if isinstance(strides, tuple) else (strides,)
        off = 0
        for k, (s, d) in enumerate(zip(shapes, strides)):
            if k == len(shapes) - 1:
                off += x * d
            else:
                off += (x % s) * d
                x //= s
        return off
    if isinstance(f, Swizzle):
        mask = ((1 << f.bits) - 1) << (f.base + max(0, f.shift))
        return x ^ ((x & mask) >> f.shift if f.shift >= 0 else (x & mask) << -f.shift)
    if isinstance(f, ComposedLayout):
        return evaluate(f.outer, f.offset + evaluate(f.inner, x))
    raise TypeError(f"cannot evaluate {f!r}")


def _size(f) -> int:
    return f.size() if hasattr(f, "size") else 1


def _as_layout(t):
    return Layout(t, 1) if isinstance(t, int) else t


def _modes(L):
    return [L[i] for i in range(len(L))] if isinstance(L.shape, tuple) else [L]


def _not_composition(a, b, values) -> str | None:
    """Why ``values`` (C++'s result, evaluated) is not ``a o b``, or None when it is."""
    n = _size(b)
    if values is None or len(values) != n:
        return f"its size is not size(B) = {n}"
    for i in range(n):
        want = evaluate(a, evaluate(b, i))
        if values[i] != want:
            return f"not A o B: at i={i} it gives {values[i]} but A(B({i})) = {want}"
    return None


def _by_mode(a: Layout, tiler: tuple, result: Layout) -> str | None:
    a_modes, r_modes = _modes(a), _modes(result)
    for j, t in enumerate(tiler):
        if j >= len(r_modes):
            return None
        b = a_modes[j] if t is None else _as_layout(t)
        sub = r_modes[j]
        vals = tuple(evaluate(sub, i) for i in range(sub.size()))
        why = _not_composition(a_modes[j] if t is not None else Layout(a_modes[j].size()), b, vals)
        if why:
            return f"mode {j}: {why}"
    return None


def cpp_defect(case, text: str, values) -> str | None:
    """Why C++'s ``text``/``values`` for ``case`` is not a correct answer, or None."""
    fn, args = case.fn, case.args
    if fn == "composition":
        a, b = args
        if isinstance(b, tuple):
            if not isinstance(a, Layout):
                return None
            try:
                result = Layout.parse(text)
            except Exception:  # noqa: BLE001 - a print we cannot read back is not a defect here
                return None
            return _by_mode(a, b, result)
        return _not_composition(a, _as_layout(b), values)
    if fn in ("logical_divide", "zipped_divide") and isinstance(args[0], Layout):
        a, t = args
        try:
            result = Layout.parse(text)
        except Exception:  # noqa: BLE001
            return None
        if not isinstance(t, tuple):
            tile = result[0]
            vals = tuple(evaluate(tile, i) for i in range(tile.size()))
            why = _not_composition(a, _as_layout(t), vals)
            return f"its tile mode is {why}" if why else None
        if fn == "zipped_divide":
            tiles = result[0]
        else:
            tiles = _tile_modes(result, t)
        why = _by_mode(a, t, tiles)
        return f"its tile modes: {why}" if why else None
    return None


def _tile_modes(result: Layout, tiler: tuple) -> Layout:
    from cutemma.layout import make_layout

    modes = _modes(result)
    parts = [modes[j] if t is None else modes[j][0] for j, t in enumerate(tiler) if j < len(modes)]
    return make_layout(*parts)
