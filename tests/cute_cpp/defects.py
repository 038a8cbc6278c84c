"""Deciding, by evaluating functions, whether a C++ result is a correct answer.

A layout's function is evaluated here directly from its definition (CuTe's 1-D index: every
leaf but the last takes ``i % extent``, the last takes the rest, with C++'s truncating ``/``), not through cutemma, so a C++
result can be checked against what the operation means: ``(A o B)(i) == A(B(i))`` for
composition (by mode for tuple tilers, with a Swizzle or ComposedLayout on either side), and
the tile mode of a divide is ``A o tile``. docs/cpp_defects.md lists the defects this finds.
"""

from __future__ import annotations

import re
from collections import Counter

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
            if k == len(shapes) - 1 or s == 0:
                off += x * d
            else:  # C++'s / and % (truncating), as CuTe computes a negative index
                q = abs(x) // s * (1 if x >= 0 else -1)
                off += (x - q * s) * d
                x = q
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


def _by_mode(a: Layout, tiler: tuple, result: Layout, skip_kept: bool = False) -> str | None:
    a_modes, r_modes = _modes(a), _modes(result)
    for j, t in enumerate(tiler):
        if j >= len(r_modes):
            return None
        if t is None and skip_kept:
            continue
        b = a_modes[j] if t is None else _as_layout(t)
        sub = r_modes[j]
        vals = tuple(evaluate(sub, i) for i in range(sub.size()))
        why = _not_composition(a_modes[j] if t is not None else Layout(a_modes[j].size()), b, vals)
        if why:
            return f"mode {j}: {why}"
    return None


def _negative_extent(text: str) -> str | None:
    shape = text.rsplit(" o ", 1)[-1].split(":")[0]
    if re.search(r"(^|[(,])-\d", shape):
        return f"its shape {shape} has a negative extent, which no layout has"
    return None


def _not_divide(a: Layout, b: Layout, values) -> str | None:
    """A 1-D divide by a Layout is ``a o (b, complement(b, size(a)))`` (CuTe's definition)."""
    from cutemma.layout import complement, make_layout

    try:
        m = make_layout(b, complement(b, a.size()))
    except Exception:  # noqa: BLE001 - no complement to compare with: not decided here
        return None
    why = _not_composition(a, m, values)
    return f"not A o (B, complement(B, size(A))): {why}" if why else None


def cpp_defect(case, text: str, values) -> str | None:
    """Why C++'s ``text``/``values`` for ``case`` is not a correct answer, or None."""
    fn, args = case.fn, case.args
    why = _negative_extent(text)
    if why:
        return why
    if fn.endswith("_divide") and isinstance(args[0], Layout) and isinstance(args[1], Layout):
        why = _not_divide(args[0], args[1], values)
        if why:
            return why
    why = _not_product_values(case, values) or _undefined_product(case)
    if why:
        return why
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
    if fn in ("tiled_divide", "flat_divide") and isinstance(args[0], Layout):
        # both unpack zipped_divide's result: its tile modes come first, as they are (tiled) or
        # spliced one mode per tiler entry (flat; a single entry stays one wrapped mode)
        a, t = args
        if not isinstance(t, tuple):
            return None
        try:
            result = Layout.parse(text)
        except Exception:  # noqa: BLE001
            return None
        from cutemma.layout import make_layout

        modes = _modes(result)
        if fn == "tiled_divide" or len(t) == 1:
            tiles = modes[0]
        else:
            tiles = make_layout(*modes[: len(t)])
        why = _by_mode(a, t, tiles, skip_kept=True)
        return f"its tile modes: {why}" if why else None
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
        # A `_` mode is not divided, and zip2_by takes it as an existing (tile, rest) pair
        # (its sub-modes 0 and 1): CuTe relies on that, e.g. TiledMMA's thrfrg zips a (ThrV, FrgV)
        # mode under `_` (mma_atom.hpp). So the tile-mode identity is checked only where the
        # tiler divides.
        why = _by_mode(a, t, tiles, skip_kept=fn == "zipped_divide")
        return f"its tile modes: {why}" if why else None
    return None


def _tile_modes(result: Layout, tiler: tuple) -> Layout:
    from cutemma.layout import make_layout

    modes = _modes(result)
    parts = [modes[j] if t is None else modes[j][0] for j, t in enumerate(tiler) if j < len(modes)]
    return make_layout(*parts)


# --- products, tile_to_shape and divides by a tiler: the multiset of values -------------------
#
# logical_product(A, B) = (A, complement(A, size(A)*cosize(B)) o B) and
# logical_divide(A, B) = A o (B, complement(B, size(A))) (CuTe's definitions), by mode for a tuple
# tiler. zipped/tiled/flat_* and blocked_product/tile_to_shape only rearrange those modes, which
# permutes the coordinates: whatever the arrangement, a correct result takes each value as many
# times as the definition does. So C++'s values, as a multiset, must equal the definition's,
# evaluated here index by index with a correct composition (A(B(i)), never CuTe's by-mode walk).

_PRODUCTS = ("logical_product", "zipped_product", "tiled_product", "flat_product")
_DIVIDES = ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide")


def _vals(f, n: int | None = None) -> list[int]:
    return [evaluate(f, i) for i in range(f.size() if n is None else n)]


def _negative(L: Layout) -> bool:
    """A negative stride on a mode that moves (extent > 1; an extent-1 mode's stride is never used)."""
    s, e = flatten(L.stride), flatten(L.shape)
    s, e = (s, e) if isinstance(s, tuple) else ((s,), (e,))
    return any(d < 0 and n > 1 for d, n in zip(s, e))


def _product_mode(a: Layout, b: Layout) -> list[int] | None:
    """Values of logical_product(a, b) (a 1-D b), or None where the definition does not apply."""
    from cutemma.layout import complement

    if _negative(a) or _negative(b):
        return None  # complement of a negative stride / a negative cosize: no definition to check
    try:
        c = complement(a, a.size() * b.cosize())
    except Exception:  # noqa: BLE001 - no complement to compare with: not decided here
        return None
    return _sum(_vals(a), [evaluate(c, evaluate(b, i)) for i in range(b.size())])


def _divide_mode(a: Layout, b: Layout) -> list[int] | None:
    from cutemma.layout import complement, make_layout

    if _negative(b):
        return None
    try:
        m = make_layout(b, complement(b, a.size()))
    except Exception:  # noqa: BLE001
        return None
    return [evaluate(a, evaluate(m, i)) for i in range(m.size())]


def _sum(xs: list[int], ys: list[int]) -> list[int]:
    return [x + y for y in ys for x in xs]


def _expected_values(case) -> list[int] | None:
    fn, args = case.fn, case.args
    if fn == "tile_to_shape":
        block, target = args[0], args[1]
        if not isinstance(block, Layout) or _negative(block):
            return None
        modes = _modes(block)
        tmodes = list(target) if isinstance(target, tuple) else [target]
        if len(modes) > len(tmodes):
            return None
        reps = 1
        for j, t in enumerate(tmodes):
            b = modes[j].size() if j < len(modes) else 1
            t = _prod(t)
            if b == 0 or t % b:
                return None
            reps *= t // b
        # blocked_product(block, ordered layout of the repeats): any compact ordered layout
        # takes the values 0..reps-1 once each, so the multiset does not depend on the order
        return _product_mode(block, Layout(reps, 1))
    if fn not in _PRODUCTS and fn not in _DIVIDES:
        return None
    a, t = args
    if not isinstance(a, Layout):
        return None
    one = _product_mode if fn in _PRODUCTS else _divide_mode
    if isinstance(t, Layout):
        return one(a, t)
    if not isinstance(t, tuple):
        return None
    modes = _modes(a)
    if len(t) > len(modes):
        return None
    out = [0]
    for j, m in enumerate(modes):
        tj = t[j] if j < len(t) else None
        if tj is None:
            got = _vals(m)
        else:
            if not isinstance(tj, (Layout, int)):
                return None
            got = one(m, _as_layout(tj))
        if got is None:
            return None
        out = _sum(out, got)
    return out


def _prod(t) -> int:
    if isinstance(t, tuple):
        r = 1
        for x in t:
            r *= _prod(x)
        return r
    return int(t)


def _not_product_values(case, values) -> str | None:
    """Why C++'s values are not those of the product/divide's definition (as a multiset)."""
    if values is None:
        return None
    want = _expected_values(case)
    if want is None:
        return None
    what = "divide" if case.fn in _DIVIDES else "product"
    if len(values) != len(want):
        return (
            f"it has {len(values)} elements but the {what}'s definition has {len(want)} "
            "(A o (B, complement(B, size(A))) by mode)"
            if what == "divide"
            else f"it has {len(values)} elements but the product's definition has {len(want)}"
        )
    extra = Counter(values) - Counter(want)
    if extra:
        v = min(extra)
        i = values.index(v)
        return (
            f"not the {what}'s values: at i={i} it gives {v}, which the definition "
            f"({'A o (B, complement(B, size(A)))' if what == 'divide' else '(A, complement(A, size(A)*cosize(B)) o B)'}, "
            f"by mode, evaluated with A(B(i))) takes {Counter(want)[v]} time(s) but C++ takes "
            f"{Counter(values)[v]}"
        )
    return None


def _undefined_product(case) -> str | None:
    """A product whose definition needs ``complement(A, size(A)*cosize(B))`` where ``A`` has a
    negative stride or ``cosize(B) <= 0`` (``B`` has one): no such complement exists (CuTe's has
    negative extents, defect 2), so the product has no defined value, whatever C++ prints."""
    if case.fn not in _PRODUCTS:
        return None
    a, t = case.args
    if not isinstance(a, Layout):
        return None
    pairs = [(a, t)] if isinstance(t, Layout) else []
    if isinstance(t, tuple):
        modes = _modes(a)
        pairs = [
            (modes[j], _as_layout(x)) for j, x in enumerate(t) if j < len(modes) and x is not None
        ]
    for m, b in pairs:
        if not isinstance(b, Layout):
            continue
        if _negative(m):
            return (
                f"undefined: it needs complement({m}, {m.size() * b.cosize()}) of a layout with a "
                "negative stride, which has no complement (C++'s has negative extents, defect 2)"
            )
        if _negative(b):
            return (
                f"undefined: it needs complement({m}, size*cosize({b})) but cosize({b}) = "
                f"{b.cosize()} <= 0 (a negative stride), so there is no such complement"
            )
    return None
