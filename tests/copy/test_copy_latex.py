"""print_latex of a TiledCopy against CuTe's (cute/util/print_latex.hpp, print_latex_copy):
the same (thread, value) label in every cell of the source and destination panels."""

from __future__ import annotations

import re

import pytest
from cpp_copy import HEADERS, need_cpp
from cute_cpp import harness

from cutemma.copy import make_copy_atom
from cutemma.layout import Layout
from cutemma.tiled import make_tiled_copy, make_tiled_copy_A, make_tiled_mma
from cutemma.viz.latex import to_latex

CASES = {
    "ldsm_A": (
        "auto mma = make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN{}, Layout<Shape<_2,_2,_1>>{}); "
        "auto tc = make_tiled_copy_A(Copy_Atom<SM75_U16x8_LDSM_T, half_t>{}, mma);",
        lambda: make_tiled_copy_A(
            make_copy_atom("SM75_U16x8_LDSM_T", "f16"),
            make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", (2, 2)),
        ),
    ),
    "cp_async": (
        "auto tc = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint64_t>, half_t>{}, "
        "Layout<Shape<_4,_8>,Stride<_8,_1>>{}, Layout<Shape<_1,_4>>{});",
        lambda: make_tiled_copy(
            make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint64_t>", "f16"),
            Layout((4, 8), (8, 1)),
            Layout((1, 4)),
        ),
    ),
}

_CPP_NODE = re.compile(
    r"\\node\[fill=[^\]]*\] at \((-?\d+),(-?\d+)\) \{\\shortstack\{T(\d+) \\\\ V(\d+)\}\};"
)
_MY_NODE = re.compile(r"\\node\[cell,fill=c\d+\] at \(([\d.]+),([\d.]+)\) \{T(\d+)\\\\V(\d+)\};")


def _cpp_cells(text: str, n: int) -> dict:
    cells = {}
    for m, col, t, v in _CPP_NODE.findall(text):
        m, col = int(m), int(col)
        side = "D" if col >= n + 3 else "S"
        cells[(side, m, col - (n + 3 if side == "D" else 0))] = (int(t), int(v))
    return cells


def _my_cells(text: str, n: int) -> dict:
    cells = {}
    for x, y, t, v in _MY_NODE.findall(text):
        c, r = int(float(x) - 1.5), int(float(y) - 1.5)  # S at column 1, D n + 2 further
        side = "D" if c >= n + 2 else "S"
        cells[(side, r, c - (n + 2 if side == "D" else 0))] = (int(t), int(v))
    return cells


@pytest.mark.parametrize("key", list(CASES))
def test_tiled_copy_latex_cells_equal_cute(key):
    need_cpp()
    body, mine = CASES[key]
    cpp = harness.run(
        f"using namespace cute; {body} print_latex(tc);",
        headers=(*HEADERS, "cute/util/print_latex.hpp"),
    )
    tc = mine()
    m, n = tc.tiler_mn
    want = _cpp_cells(cpp, n)
    got = _my_cells(to_latex(tc), n)
    assert len(want) == 2 * m * n and got == want
