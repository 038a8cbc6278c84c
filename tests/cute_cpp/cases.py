"""A seeded generator of random layout-algebra cases, each a cutemma call and a C++ call.

``random_cases(seed)`` gives the same cases on every run: random layouts (nested shapes,
permuted compact strides with gaps, broadcast and negative strides, arbitrary strides),
tilers, cotargets, orders and swizzles, fed to every function of the algebra. Each case is
written once as Python values; ``cpp_text.cpp`` turns them into C++ with static ints.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import cutemma.layout as cl
from cute_cpp.cpp_text import Shape, cpp, text
from cutemma.layout import ComposedLayout, Layout, Swizzle

SEED = 20261124
# functions whose C++ spelling takes the int as a template argument: f<N>(layout)
_TEMPLATE_INT = {"upcast", "downcast"}


@dataclass(frozen=True)
class Case:
    """``fn(*args)`` in cutemma and in CuTe; ``group`` names the test that checks it."""

    key: str
    group: str
    fn: str
    args: tuple

    def call(self):
        return getattr(cl, self.fn)(*self.args)

    def cpp_expr(self) -> str:
        if self.fn in _TEMPLATE_INT:
            return f"{self.fn}<{self.args[1]}>({cpp(self.args[0])})"
        return f"{self.fn}(" + ", ".join(cpp(a) for a in self.args) + ")"

    def __str__(self) -> str:
        return f"{self.fn}(" + ", ".join(text(a) for a in self.args) + ")"


EXTENTS = (1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 8, 8, 16)


def _extents(rng: random.Random, n: int, max_size: int) -> list[int]:
    out, total = [], 1
    for _ in range(n):
        e = rng.choice(EXTENTS)
        while total * e > max_size and e > 1:
            e = rng.choice((1, 2)) if total * 2 <= max_size else 1
        out.append(e)
        total *= e
    return out


def _nest(rng: random.Random, items: list, max_rank: int, depth: int = 2):
    """Group a flat list into a nested tuple of ``<= max_rank`` modes (an item if alone).

    Now and then a mode is wrapped alone, ``(4,8) -> ((4,8))``: CuTe keeps such rank-1 tuples.
    """
    if len(items) == 1:
        return (items[0],) if depth > 0 and rng.random() < 0.04 else items[0]
    if depth > 0 and rng.random() < 0.06:
        return (_nest(rng, items, max_rank, depth - 1),)
    r = rng.randint(min(2, max_rank), min(len(items), max_rank))
    cuts = sorted(rng.sample(range(1, len(items)), r - 1)) if r > 1 else []
    bounds = [0, *cuts, len(items)]
    groups = [items[a:b] for a, b in zip(bounds, bounds[1:])]
    if r == 1:
        return tuple(groups[0])
    if depth <= 1:
        return tuple(g[0] if len(g) == 1 else tuple(g) for g in groups)
    return tuple(_nest(rng, g, 3, depth - 1) for g in groups)


def _unzip(t):
    """A nest of ``[extent, stride]`` leaves as (shape, stride)."""
    if isinstance(t, list):  # a leaf pair
        return t[0], t[1]
    parts = [_unzip(x) for x in t]
    return tuple(p[0] for p in parts), tuple(p[1] for p in parts)


def _strides(rng: random.Random, ext: list[int], kind: str) -> list[int]:
    n = len(ext)
    if kind == "random":
        return [rng.choice((0, 1, 1, 2, 3, 4, 6, 8, 12, 16, 32)) for _ in range(n)]
    order = list(range(n))
    if kind != "colmajor":
        rng.shuffle(order)
    out, cur = [0] * n, rng.choice((1, 1, 1, 2, 3, 4))
    for i in order:
        out[i] = cur
        cur *= ext[i]
        if kind == "gaps" and rng.random() < 0.4:
            cur *= rng.choice((2, 3, 4))
    if kind == "zeros":
        out[rng.randrange(n)] = 0
    return out


def rand_layout(
    rng: random.Random,
    max_leaves: int = 4,
    max_size: int = 128,
    max_rank: int = 3,
    kind: str | None = None,
    negative: float = 0.03,
) -> Layout:
    n = rng.randint(1, max_leaves)
    ext = _extents(rng, n, max_size)
    kind = kind or rng.choice(("colmajor", "perm", "perm", "gaps", "gaps", "zeros", "random"))
    strides = _strides(rng, ext, kind)
    if rng.random() < negative:
        i = rng.randrange(n)
        strides[i] = -strides[i]
    nested = _nest(rng, [[e, d] for e, d in zip(ext, strides)], max_rank)
    return Layout(*_unzip(nested))


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def rand_tile(rng: random.Random, n: int, kind: str | None = None) -> Layout:
    """A layout meant as a tile/right operand over ``n`` elements: mostly admissible."""
    if rng.random() < 0.25:
        return rand_layout(rng, max_size=max(n, 2), kind=kind or "random")
    size = rng.choice(_divisors(n)) if rng.random() < 0.8 else rng.randint(1, n)
    leaves = []
    rest = size
    for _ in range(rng.randint(1, 3)):
        d = rng.choice(_divisors(rest))
        leaves.append(d)
        rest //= d
    leaves[-1] *= rest
    leaves = [x for x in leaves if x > 1] or [size]
    strides = _strides(rng, leaves, kind or rng.choice(("colmajor", "perm", "gaps")))
    if rng.random() < 0.5:
        strides = [d * rng.choice(_divisors(n)) for d in strides]
    nested = _nest(rng, [[e, d] for e, d in zip(leaves, strides)], 2, 1)
    return Layout(*_unzip(nested))


def _modes(L: Layout) -> list[Layout]:
    return [L[i] for i in range(len(L))] if isinstance(L.shape, tuple) else [L]


def rand_tiler(rng: random.Random, A: Layout):
    """A tuple tiler of rank 1..rank(A): per mode an int, a Layout or ``_`` (None)."""
    modes = _modes(A)
    r = rng.randint(1, len(modes))
    out = []
    for m in modes[:r]:
        n = cl.size(m)
        x = rng.random()
        if x < 0.1:
            out.append(None)
        elif x < 0.5:
            out.append(rng.choice(_divisors(n)) if rng.random() < 0.85 else rng.randint(1, 2 * n))
        else:
            out.append(rand_tile(rng, n))
    return tuple(out)


def rand_profile(rng: random.Random, L: Layout) -> Shape:
    modes = _modes(L)
    r = rng.randint(1, len(modes))
    prof = []
    for m in modes[:r]:
        if isinstance(m.shape, tuple) and rng.random() < 0.4:
            prof.append(tuple(1 for _ in m.shape))
        else:
            prof.append(1)
    return Shape(prof)


def rand_shape(rng: random.Random, max_leaves: int = 3, max_size: int = 64) -> Shape:
    ext = _extents(rng, rng.randint(1, max_leaves), max_size)
    s = _nest(rng, ext, 3, 1)
    return Shape(s if isinstance(s, tuple) else (s,))


def rand_swizzle(rng: random.Random) -> Swizzle:
    b = rng.randint(1, 2)
    m = rng.randint(0, 2)
    s = rng.choice((b, b + 1)) * (1 if rng.random() < 0.85 else -1)
    return Swizzle(b, m, s)


def rand_swizzled(rng: random.Random) -> ComposedLayout:
    sw = rand_swizzle(rng)
    span = sw.size()
    inner = rand_layout(rng, max_size=span * rng.choice((1, 1, 2)), kind="perm", negative=0)
    if cl.size(inner) < span // 2:
        inner = Layout((span // 8, 8), (8, 1)) if rng.random() < 0.5 else Layout(span)
    return ComposedLayout(sw, 0, inner)


def _same_size_pair(rng: random.Random) -> tuple[Layout, Layout]:
    a = rand_layout(rng, kind=rng.choice(("colmajor", "perm", "gaps", "zeros")))
    ext = list(cl.flatten(a.shape))
    rng.shuffle(ext)
    strides = _strides(rng, ext, rng.choice(("colmajor", "perm", "perm", "gaps")))
    nested = _nest(rng, [[e, d] for e, d in zip(ext, strides)], 3)
    return a, Layout(*_unzip(nested))


def _tile_to_shape_args(rng: random.Random, with_order: bool) -> tuple:
    block = rand_layout(rng, max_size=16, max_rank=3)
    r = len(_modes(block)) + rng.randint(0, 1)
    target = []
    for m in _modes(block) + [Layout(1)] * (r - len(_modes(block))):
        k = rng.choice((1, 2, 3, 4)) if rng.random() < 0.9 else rng.randint(1, 5) + 0.5
        t = int(cl.size(m) * k)
        if rng.random() < 0.15 and t % 2 == 0 and t > 2:
            target.append((2, t // 2))
        else:
            target.append(t)
    args = (block, Shape(target))
    if with_order:
        order = list(range(r))
        rng.shuffle(order)
        args = (*args, Shape(order))
    return args


def _gen(rng: random.Random, fn: str):  # noqa: C901 - one branch per function, read as a table
    """Arguments for one random call of ``fn`` (a generator name, see GROUPS)."""
    if fn in ("coalesce", "filter", "nullspace", "right_inverse", "left_inverse"):
        kind = "zeros" if fn == "nullspace" and rng.random() < 0.6 else None
        return (rand_layout(rng, kind=kind),)
    if fn == "coalesce_profile":
        L = rand_layout(rng)
        return (L, rand_profile(rng, L))
    if fn == "composition_layout":
        A = rand_layout(rng)
        return (A, rand_tile(rng, cl.size(A)))
    if fn in ("composition_tiler", "divide_tiler", "product_tiler"):
        A = rand_layout(rng, max_size=64 if fn == "product_tiler" else 128)
        if fn == "product_tiler":
            modes = _modes(A)
            r = rng.randint(1, len(modes))
            return (A, tuple(rand_tile(rng, rng.choice((2, 3, 4, 6))) for _ in range(r)))
        return (A, rand_tiler(rng, A))
    if fn == "complement":
        return (rand_layout(rng, kind=rng.choice(("perm", "gaps", "gaps", "zeros", "random"))),)
    if fn == "complement_int":
        L = rand_layout(rng, kind=rng.choice(("perm", "gaps", "gaps", "zeros", "random")))
        c = cl.cosize(L) if min(cl.flatten(L.stride)) >= 0 else 8
        return (L, max(1, c * rng.choice((1, 1, 2, 3)) + rng.choice((0, 0, 0, -1, 1))))
    if fn == "complement_shape":
        L = rand_layout(rng, max_size=32, kind=rng.choice(("perm", "gaps", "colmajor")))
        return (L, rand_shape(rng, max_size=128))
    if fn == "divide_layout":
        A = rand_layout(rng)
        return (A, rand_tile(rng, cl.size(A)))
    if fn == "product_layout":
        A = rand_layout(rng, max_size=32)
        return (A, rand_tile(rng, rng.choice((2, 3, 4, 6, 8))))
    if fn == "blocked":
        return (rand_layout(rng, max_size=16), rand_layout(rng, max_size=12, kind="colmajor"))
    if fn == "max_common":
        return _same_size_pair(rng)
    if fn == "tile_to_shape":
        return _tile_to_shape_args(rng, False)
    if fn == "tile_to_shape_order":
        return _tile_to_shape_args(rng, True)
    if fn == "upcast":
        L = rand_layout(rng, kind=rng.choice(("perm", "gaps", "zeros", "random")))
        return (L, rng.choice((1, 2, 2, 4, 4, 8, 3)))
    if fn == "downcast":
        L = rand_layout(rng, max_size=32, kind=rng.choice(("perm", "gaps", "random")))
        return (L, rng.choice((2, 2, 4, 3)))
    if fn == "swz_composition":
        C = rand_swizzled(rng)
        t = rand_tile(rng, C.size()) if rng.random() < 0.6 else rand_tiler(rng, C.inner)
        return (C, t)
    if fn == "layout_swz":
        C = rand_swizzled(rng)
        A = rand_layout(rng, max_size=256, kind=rng.choice(("colmajor", "perm", "gaps")))
        if cl.size(A) < C.cosize():
            A = Layout(C.cosize(), rng.choice((1, 2, 3, 4)))
        return (A, C)
    if fn == "swz_nested":
        C = rand_swizzled(rng)
        N = ComposedLayout(C, 0, rand_tile(rng, C.size(), kind="perm"))
        return (N, rand_tile(rng, N.size()))
    if fn == "swz_divide":
        C = rand_swizzled(rng)
        t = rand_tile(rng, C.size()) if rng.random() < 0.5 else rand_tiler(rng, C.inner)
        return (C, t)
    if fn == "swz_product":
        return (rand_swizzled(rng), rand_tile(rng, rng.choice((2, 3, 4))))
    if fn == "swz_unary":
        return (rand_swizzled(rng),)
    if fn == "swz_common":
        C = rand_swizzled(rng)
        other = Layout(C.size()) if rng.random() < 0.5 else C.inner
        return (C, other) if rng.random() < 0.6 else (other, C)
    if fn == "swz_cast":
        return (rand_swizzled(rng), rng.choice((2, 4)))
    raise ValueError(fn)


# group -> (generator, [cutemma functions called with its arguments], cases per function)
GROUPS: dict[str, tuple[str, tuple[str, ...], int]] = {
    "coalesce": ("coalesce", ("coalesce",), 200),
    "coalesce_profile": ("coalesce_profile", ("coalesce",), 200),
    "filter": ("filter", ("filter",), 150),
    "composition_layout": ("composition_layout", ("composition",), 700),
    "composition_tiler": ("composition_tiler", ("composition",), 500),
    "complement": ("complement", ("complement",), 100),
    "complement_int": ("complement_int", ("complement",), 250),
    "complement_shape": ("complement_shape", ("complement",), 150),
    "divide_layout": (
        "divide_layout",
        ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide"),
        100,
    ),
    "divide_tiler": (
        "divide_tiler",
        ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide"),
        100,
    ),
    "product_layout": (
        "product_layout",
        ("logical_product", "zipped_product", "tiled_product", "flat_product"),
        70,
    ),
    "product_tiler": (
        "product_tiler",
        ("logical_product", "zipped_product", "tiled_product", "flat_product"),
        70,
    ),
    "blocked_raked": ("blocked", ("blocked_product", "raked_product"), 150),
    "inverse": ("right_inverse", ("right_inverse", "left_inverse"), 150),
    "max_common": ("max_common", ("max_common_vector", "max_common_layout"), 150),
    "tile_to_shape": ("tile_to_shape", ("tile_to_shape",), 150),
    "tile_to_shape_order": ("tile_to_shape_order", ("tile_to_shape",), 150),
    "upcast": ("upcast", ("upcast",), 120),
    "downcast": ("downcast", ("downcast",), 100),
    "nullspace": ("nullspace", ("nullspace",), 100),
    "swizzled_composition": ("swz_composition", ("composition",), 150),
    "swizzled_right_operand": ("layout_swz", ("composition",), 100),
    "swizzled_nested": ("swz_nested", ("composition",), 40),
    "swizzled_divide": (
        "swz_divide",
        ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide"),
        30,
    ),
    "swizzled_product": (
        "swz_product",
        ("logical_product", "blocked_product", "raked_product"),
        40,
    ),
    "swizzled_inverse": ("swz_unary", ("right_inverse", "left_inverse"), 60),
    "swizzled_common": ("swz_common", ("max_common_vector", "max_common_layout"), 50),
    "swizzled_cast": ("swz_cast", ("upcast", "downcast"), 40),
}


def random_cases(seed: int = SEED) -> list[Case]:
    """Every random case, the same list for the same seed (duplicates dropped)."""
    out: list[Case] = []
    seen: set[str] = set()
    for group, (gen, fns, count) in GROUPS.items():
        rng = random.Random(f"{seed}/{group}")
        n = 0
        tries = 0
        while n < count and tries < 20 * count:
            tries += 1
            try:
                args = _gen(rng, gen)
            except Exception:  # noqa: BLE001 - an unlucky draw (e.g. a bad Layout): draw again
                continue
            for fn in fns:
                case = Case(f"{group}/{fn}/{n:04d}", group, fn, args)
                expr = case.cpp_expr()
                if expr in seen:
                    break
                seen.add(expr)
                out.append(case)
            else:
                n += 1
    return out
