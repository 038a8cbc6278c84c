"""Identity tensors tiled by tiles that do not divide them, against CuTe C++.

CuTe's identity tensor has basis strides (``(M,N):(1@0,1@1)``), so a tile past the end of a
mode holds coordinates past its end, the ones a predicated kernel tests against the shape.
For each case C++ prints the view's shape, its header (``ArithTuple(..) o layout``) and every
coordinate, ``t(i)`` for i in 0..size-1; cutemma must give the same, element by element.
Every case has at least one coordinate past the end of the shape: a linear decode of the
offset (cutemma's identity tensors before) would wrap it into the next column instead.
"""

from __future__ import annotations

from functools import cache

import pytest

from cute_cpp import harness
from cutemma.copy import make_copy_atom
from cutemma.errors import LayoutError
from cutemma.layout import Layout
from cutemma.tensor import (
    composition_tensor,
    engine_text,
    layout_text,
    local_partition,
    local_tile,
    make_identity_tensor,
    zipped_divide_tensor,
)
from cutemma.tiled import make_tiled_copy, make_tiled_mma

pytestmark = pytest.mark.skipif(
    harness.unavailable_reason() is not None, reason=str(harness.unavailable_reason())
)

SM80 = "SM80_16x8x16_F32F16F16F32_TN"


def _ident(shape: str) -> str:
    return f"make_identity_tensor({shape})"


S10x8 = "make_shape(Int<10>{}, Int<8>{})"
S13x7 = "make_shape(13, 7)"  # run-time extents: the same coordinates
NESTED = "make_shape(Int<3>{}, make_shape(Int<2>{}, Int<3>{}))"
S5x3x4 = "make_shape(Int<5>{}, Int<3>{}, Int<4>{})"


def _cases() -> dict[str, tuple[tuple, str, object]]:
    """key -> (the shape the coordinates are tested against, C++ view, cutemma view)."""
    out: dict[str, tuple[tuple, str, object]] = {}
    for i in range(3):
        for j in range(2):
            out[f"tile_10x8_4x4_{i}{j}"] = (
                (10, 8),
                f"local_tile({_ident(S10x8)}, make_shape(Int<4>{{}}, Int<4>{{}}), "
                f"make_coord({i}, {j}))",
                lambda i=i, j=j: local_tile(make_identity_tensor((10, 8)), (4, 4), (i, j)),
            )
    for i in range(2):
        for j in range(2):
            out[f"tile_13x7_8x4_{i}{j}"] = (
                (13, 7),
                f"local_tile({_ident(S13x7)}, make_shape(Int<8>{{}}, Int<4>{{}}), "
                f"make_coord({i}, {j}))",
                lambda i=i, j=j: local_tile(make_identity_tensor((13, 7)), (8, 4), (i, j)),
            )
            out[f"tile_nested_{i}{j}"] = (
                (3, (2, 3)),
                f"local_tile({_ident(NESTED)}, make_shape(Int<2>{{}}, Int<4>{{}}), "
                f"make_coord({i}, {j}))",
                lambda i=i, j=j: local_tile(make_identity_tensor((3, (2, 3))), (2, 4), (i, j)),
            )
    out["tile_5x3x4_rank3"] = (
        (5, 3, 4),
        f"local_tile({_ident(S5x3x4)}, make_shape(Int<2>{{}}, Int<2>{{}}, Int<3>{{}}), "
        "make_coord(2, 1, 1))",
        lambda: local_tile(make_identity_tensor((5, 3, 4)), (2, 2, 3), (2, 1, 1)),
    )
    out["tile_row_slice"] = (
        (10, 8),
        f"local_tile({_ident(S10x8)}, make_shape(Int<4>{{}}, Int<4>{{}}), make_coord(2, 1))(3, _)",
        lambda: local_tile(make_identity_tensor((10, 8)), (4, 4), (2, 1))(3, None),
    )
    for t in range(8):
        out[f"part_10x7_4x2_{t}"] = (
            (10, 7),
            f"local_partition({_ident('make_shape(Int<10>{}, Int<7>{})')}, "
            f"Layout<Shape<_4, _2>>{{}}, {t})",
            lambda t=t: local_partition(make_identity_tensor((10, 7)), Layout((4, 2)), t),
        )
    for t in (0, 3, 6):
        out[f"part_13x7_rowmajor_{t}"] = (
            (13, 7),
            f"local_partition({_ident(S13x7)}, make_layout(make_shape(_4{{}}, _2{{}}), "
            f"LayoutRight{{}}), {t})",
            lambda t=t: local_partition(make_identity_tensor((13, 7)), Layout((4, 2), (2, 1)), t),
        )
    out["zipped_10x8_4x4"] = (
        (10, 8),
        f"zipped_divide({_ident(S10x8)}, make_tile(Int<4>{{}}, Int<4>{{}}))",
        lambda: zipped_divide_tensor(make_identity_tensor((10, 8)), (4, 4)),
    )
    out["compose_negative_stride"] = (
        (6, 4),
        f"composition({_ident('make_shape(Int<6>{}, Int<4>{})')}, "
        "make_tile(make_layout(Int<3>{}, Int<-2>{}), make_layout(Int<5>{})))",
        lambda: composition_tensor(make_identity_tensor((6, 4)), (Layout(3, -2), Layout(5))),
    )
    out.update(_tiled_cases())
    return out


def _tiled_cases() -> dict[str, tuple[tuple, str, object]]:
    out: dict[str, tuple[tuple, str, object]] = {}
    mma1 = make_tiled_mma(SM80)
    mma4 = make_tiled_mma(SM80, (2, 2))
    for t in (0, 5, 31):
        out[f"mma_C_20x12_{t}"] = (
            (20, 12),
            f"make_tiled_mma({SM80}{{}}).get_slice({t}).partition_C("
            f"{_ident('make_shape(Int<20>{}, Int<12>{})')})",
            lambda t=t: mma1.get_slice(t).partition_C(make_identity_tensor((20, 12))),
        )
    for t in (0, 37, 100):
        out[f"mma2x2_A_40x24_{t}"] = (
            (40, 24),
            f"make_tiled_mma({SM80}{{}}, Layout<Shape<_2, _2>>{{}}).get_slice({t}).partition_A("
            f"{_ident('make_shape(Int<40>{}, Int<24>{})')})",
            lambda t=t: mma4.get_slice(t).partition_A(make_identity_tensor((40, 24))),
        )
    tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "f32"), Layout((8, 4)),
                         Layout((1, 2)))  # fmt: skip
    cpp_tc = (
        "make_tiled_copy(Copy_Atom<UniversalCopy<uint32_t>, float>{}, "
        "Layout<Shape<_8, _4>>{}, Layout<Shape<_1, _2>>{})"
    )
    for t in (0, 9, 31):
        for side in "SD":
            out[f"copy_{side}_13x10_{t}"] = (
                (13, 10),
                f"{cpp_tc}.get_slice({t}).partition_{side}("
                f"{_ident('make_shape(Int<13>{}, Int<10>{})')})",
                lambda t=t, side=side: getattr(tc.get_slice(t), f"partition_{side}")(
                    make_identity_tensor((13, 10))
                ),
            )
    return out


CASES = _cases()


def _cpp_body(key: str, view: str) -> str:
    # shape, header and every coordinate of the view, each on a line of its own
    return (
        f"auto p = {view}; "
        f'CASE("{key}|shape", shape(p)); CASE("{key}|head", p); '
        f'printf("{key}|crds\\t"); '
        'for (int i = 0; i < size(p); ++i) { print(p(i)); printf(" "); } printf("\\n");'
    )


@cache
def _cpp_or_error():
    src = {k: _cpp_body(k, view) for k, (_, view, _) in CASES.items()}
    try:
        return harness.run_cases(src, per_program=64), None
    except harness.CompileFailed as e:
        return None, e.errors


def cpp_prefetch() -> None:
    """The C++ this file's tests compile, for tests/cute_cpp/prefetch.py (same calls, cached)."""
    _cpp_or_error()


def _cpp() -> dict[str, str]:
    got, err = _cpp_or_error()
    if err is not None:
        pytest.fail(f"the C++ cases did not compile:\n{err}")
    return got


def _text(c) -> str:
    if isinstance(c, tuple):
        return "(" + ",".join(_text(x) for x in c) + ")"
    return str(c)


def _strip(text: str) -> str:
    return text.replace("_", "").strip()


def _past_end(crd, shape) -> bool:
    if isinstance(crd, tuple):
        return any(_past_end(c, s) for c, s in zip(crd, shape))
    return not 0 <= crd < shape


@pytest.mark.parametrize("key", sorted(CASES))
def test_identity_view_coordinates_are_cutes(key):
    _, _, make = CASES[key]
    got = _cpp()
    view = make()
    crds = [view(i) for i in range(view.size())]
    assert _text(view.shape) == _strip(got[f"{key}|shape"])
    assert " ".join(_text(c) for c in crds) == _strip(got[f"{key}|crds"])
    assert f"{engine_text(view)} o {layout_text(view)}" == _strip(got[f"{key}|head"])


FAMILIES = sorted({k.rsplit("_", 1)[0] for k in CASES})


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_holds_coordinates_past_the_end(family):
    """What a linear decode of the offset got wrong (it wraps them into the next column):
    C++'s coordinates, which the test above matches, run past the end of the shape."""
    got = _cpp()
    keys = [k for k in CASES if k.rsplit("_", 1)[0] == family]
    past = [
        k
        for k in keys
        if any(_past_end(_parse(c), CASES[k][0]) for c in _strip(got[f"{k}|crds"]).split())
    ]
    assert past, family


def _parse(text: str):
    """A coordinate C++ printed, ``(8,(0,2))``, as nested tuples of ints."""
    return eval(text.replace(")", ",)"))  # (a trailing comma keeps a one-element tuple)


def test_a_tile_across_the_leaves_of_a_nested_mode_is_refused_as_cute_refuses_it():
    """Basis strides do not merge across the leaves of a nested mode, so 4 elements of a
    (3,4) mode are not a run CuTe can compose (its Shape Divisibility Condition); cutemma
    refuses them too, and names the strides as CuTe's basis elements."""

    def body(n: int) -> str:
        return (
            f"auto t = local_tile({_ident('make_shape(Int<8>{}, make_shape(Int<3>{}, Int<4>{}))')}"
            f", make_shape(Int<4>{{}}, Int<{n}>{{}}), make_coord(0, 1)); print(t);"
        )

    assert harness.compiles(body(6))  # 6 = 3 x 2: whole runs of the first leaf
    with pytest.raises(harness.CompileFailed, match="Shape Divisibility Condition"):
        harness.build(harness.program(body(4)))
    ident = make_identity_tensor((8, (3, 4)))
    with pytest.raises(LayoutError, match=r"runs of 3 in mode 0 of \(3,4\):\(1@0@1,1@1@1\)"):
        local_tile(ident, (4, 4), (0, 1))
    assert local_tile(ident, (4, 6), (0, 1))(0, 0) == (0, (0, 2))
