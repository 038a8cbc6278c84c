"""The doc examples' layouts and 1,200 seeded random layouts (plain, swizzled and nested composed, from tests/cute_cpp/cases.py's
generator) emitted by ``to_cute_dsl``, built by CuTe DSL, printed, and read back by
``Layout.parse`` to exactly the same layout (same text: shape, stride, swizzle, offset)."""

from __future__ import annotations

import random
from functools import cache

import pytest
from cute_cpp import cases, doc_cases

from cutemma.emit.dsl import to_cute_dsl
from cutemma.errors import EmitError
from cutemma.layout import ComposedLayout, Layout, flatten, size, tile_to_shape
from cutemma.layout.basis import make_identity_layout
from cutemma.smem import gmma_layout_atom
from emit_dsl import dsl_run
from emit_dsl.compare import same_text

REASON = dsl_run.unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

SEED = 20261126


@cache
def random_layouts() -> dict[str, object]:
    rng = random.Random(SEED)
    out: dict[str, object] = {}
    for i in range(1000):
        out[f"layout/{i:04d}"] = cases.rand_layout(rng)
    for i in range(150):
        sw = cases.rand_swizzled(rng)
        if i % 5 == 0:
            sw = ComposedLayout(sw.outer, rng.randrange(0, 16), sw.inner)  # an offset too
        out[f"swizzled/{i:04d}"] = sw
    for i in range(50):
        sw = cases.rand_swizzled(rng)
        out[f"nested/{i:04d}"] = ComposedLayout(sw, 0, cases.rand_tile(rng, sw.size(), kind="perm"))
    for shape in ((4, 8), (2, (3, 4)), ((2, 2), 8)):
        out[f"basis/{shape}"] = make_identity_layout(shape)
    out["one"], out["empty"] = Layout(1), Layout(())
    out.update(smem_layouts())
    out.update(doc_layouts())
    return out


def doc_layouts() -> dict[str, object]:
    """The doc examples (tests/cute_cpp/doc_cases.py) whose value is a layout (the algebra calls
    among them run through the DSL in test_algebra_dsl.py)."""
    out = {}
    for c in doc_cases.layout_cases():
        if c.fn == "doc":
            value = c.call()
            if isinstance(value, Layout | ComposedLayout):
                out[f"doc/{c.key}"] = value
    return out


def smem_layouts() -> dict[str, object]:
    """GMMA shared-memory atoms (element-unit swizzles) and tiles of them (tile_to_shape)."""
    out = {}
    for major in ("K", "MN"):
        for mode in ("INTER", "SW32", "SW64", "SW128"):
            for dtype in ("f16", "f32", "e4m3"):
                atom = gmma_layout_atom(major, mode, dtype)
                m, k = (size(atom.shape[0]), size(atom.shape[1]))
                out[f"smem/{major}/{mode}/{dtype}"] = atom
                out[f"smem/{major}/{mode}/{dtype}/tile"] = tile_to_shape(atom, (2 * m, 4 * k))
    return out


def _empty(L) -> bool:
    inner = L
    while hasattr(inner, "inner"):
        inner = inner.inner if hasattr(inner.inner, "shape") else inner.outer
    return 0 in flatten(inner.shape)


def cpp_prefetch() -> None:
    """The DSL runs of this file, for tests/cute_cpp/prefetch.py (same cases, same cache)."""
    if REASON is None:
        dsl_run.run(
            [
                dsl_run.DslCase(k, to_cute_dsl(v))
                for k, v in random_layouts().items()
                if not _empty(v)
            ]
        )


@pytest.fixture(scope="module")
def printed():
    return dsl_run.run(
        [dsl_run.DslCase(k, to_cute_dsl(v)) for k, v in random_layouts().items() if not _empty(v)]
    )


def test_layouts_with_an_empty_mode_are_refused():
    empty = [v for v in random_layouts().values() if _empty(v)]
    assert empty, "the generator draws extent 0 now and then"
    for L in empty:
        with pytest.raises(EmitError, match="strictly positive"):
            to_cute_dsl(L)


def test_random_layouts_round_trip_exactly(printed):
    layouts = random_layouts()
    assert sum(k.startswith(("layout/", "swizzled/", "nested/")) for k in layouts) >= 1000
    assert sum(k.startswith("doc/") for k in layouts) >= 40
    bad = []
    for key, mine in layouts.items():
        if _empty(mine):
            continue
        got = printed[key]
        if "error" in got:
            bad.append(f"{key}: DSL refused {to_cute_dsl(mine)}: {got['error'][:200]}")
            continue
        diff = same_text(got["x"], mine)
        if diff:
            bad.append(f"{key}: {diff}")
    assert not bad, f"{len(bad)} differences:\n" + "\n".join(bad[:40])
