"""make_tmem_copy / make_cotiled_copy equal CuTe C++: layouts, tilers and thread partitions.

C++ builds ``make_tmem_copy(Op{}, tmem)`` for a float tensor-memory tensor with lanes along
mode 0 (stride ``TMEM::DP<float>``) and prints the TiledCopy's TV layout, tiler, source and
destination TV layouts, and for a few threads the layouts of ``partition_S(tmem)`` and
``partition_D`` of a register/global (M, N) tensor.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from cpp_copy import assert_same_layout, cute_text, run

from cutemma.copy import make_copy_atom
from cutemma.layout import Layout
from cutemma.tensor import Tensor
from cutemma.tiled.tiled_copy import make_cotiled_copy, make_tmem_copy

LANE = 1 << 16  # one data-path lane in float units (TMEM::DP<float>)
OPS = [
    "SM100_TMEM_LOAD_32dp32b1x",
    "SM100_TMEM_LOAD_32dp32b8x",
    "SM100_TMEM_LOAD_32dp32b32x",
    "SM100_TMEM_LOAD_32dp32b8x_16b",
    "SM100_TMEM_LOAD_16dp256b1x",
    "SM100_TMEM_LOAD_16dp256b2x_16b",
    "SM100_TMEM_LOAD_16dp128b2x",
    "SM100_TMEM_LOAD_16dp64b4x",
    "SM100_TMEM_LOAD_16dp32b2x",
    "SM100_TMEM_STORE_32dp32b4x",
    "SM100_TMEM_STORE_16dp128b1x",
]
COLS = (64, 128)
THREADS = (0, 37, 100)


def _key(op, cols):
    return f"{op}/{cols}"


def _case(op, cols) -> str:
    k = _key(op, cols)
    thr = " ".join(
        f'CASE("{k}", tc.get_slice({t}).partition_S(tm).layout()); '
        f'CASE("{k}", tc.get_slice({t}).partition_D(g).layout());'
        for t in THREADS
    )
    return (
        f"auto tm = make_tensor(make_tmem_ptr<float>(0), make_layout(make_shape(_128{{}}, "
        f"Int<{cols}>{{}}), make_stride(TMEM::DP<float>{{}}, _1{{}}))); "
        f"auto g = make_tensor((float*)nullptr, make_shape(_128{{}}, Int<{cols}>{{}})); "
        f"auto tc = make_tmem_copy({op}{{}}, tm); "
        f'CASE("{k}", typename decltype(tc)::TiledLayout_TV{{}}); '
        f'CASE("{k}", typename decltype(tc)::Tiler_MN{{}}); '
        f'CASE("{k}", tc.get_layoutS_TV()); CASE("{k}", tc.get_layoutD_TV()); {thr}'
    )


@cache
def _cpp() -> dict[str, str]:
    cases = {_key(op, c): _case(op, c) for op in OPS for c in COLS}
    cases["cotiled"] = (
        "auto tc = make_cotiled_copy(Copy_Atom<UniversalCopy<uint32_t>, float>{}, "
        "Layout<Shape<_32,_2>,Stride<_2,_1>>{}, Layout<Shape<_8,_8>,Stride<_8,_1>>{}); "
        'CASE("cotiled", typename decltype(tc)::TiledLayout_TV{}); '
        'CASE("cotiled", typename decltype(tc)::Tiler_MN{});'
    )
    return run(cases, per_program=12)


def cpp_prefetch() -> None:
    """The C++ this file's tests compile, for tests/cute_cpp/prefetch.py (same calls, cached)."""
    _cpp()


def _tiler_text(tiler) -> str:
    return "(" + ",".join(str(t) for t in tiler) + ")"


@pytest.mark.parametrize("cols", COLS)
@pytest.mark.parametrize("op", OPS)
def test_tmem_copy_equals_cute(op, cols):
    tmem = Tensor(np.zeros(1), Layout((128, cols), (LANE, 1)))
    g = Tensor(np.zeros(128 * cols), Layout((128, cols)))
    tc = make_tmem_copy(make_copy_atom(op, "f32"), tmem.layout)
    mine = [
        str(tc.layout_tv_tiled),
        _tiler_text(tc.tiler_mn),
        str(tc.layout_src_tv_tiled),
        str(tc.layout_dst_tv_tiled),
    ]
    for t in THREADS:
        s = tc.get_slice(t)
        mine += [str(s.partition_S(tmem).layout), str(s.partition_D(g).layout)]
    got = [cute_text(x) for x in _cpp()[_key(op, cols)].split("\n")]
    assert len(mine) == len(got) and mine[1] == got[1]
    for m, g in zip(mine, got):
        if ":" in m:
            assert_same_layout(m, g)


def test_cotiled_copy_equals_cute():
    tc = make_cotiled_copy(
        make_copy_atom("UniversalCopy<uint32_t>", "f32"),
        Layout((32, 2), (2, 1)),
        Layout((8, 8), (8, 1)),
    )
    got = _cpp()["cotiled"].split("\n")
    assert [str(tc.layout_tv_tiled), _tiler_text(tc.tiler_mn)] == [cute_text(x) for x in got]
