"""``cutemma emit {cpp,dsl}`` (issue 19): what it prints is ``to_cpp`` of the object the options
describe, compiles with g++ against CuTe's headers, and the docs page's commands print what the
page shows."""

from __future__ import annotations

import contextlib
import io
import shlex
from pathlib import Path

import pytest

import cutemma as cm
from cutemma.cli import main
from cutemma.layout import Layout

DOCS = Path(__file__).resolve().parents[2] / "docs" / "to-your-kernel.md"


def emit(argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["emit", *shlex.split(argv)]) == 0
    return out.getvalue().strip()


def _tc():
    atom = cm.make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f16")
    return cm.make_tiled_copy(atom, Layout((16, 8), (8, 1)), Layout((1, 8)))


# argv -> the object it names (built through the Python API)
CASES = {
    "cpp '((2,4),8):((1,16),2)'": lambda: Layout(((2, 4), 8), ((1, 16), 2)),
    "cpp 'Sw<2,1,3> o 4 o (8,4):(4,1)'": lambda: Layout.parse("Sw<2,1,3> o 4 o (8,4):(4,1)"),
    "cpp SM90_64x128x16_F32BF16BF16_SS -p a_major=MN": lambda: cm.make_mma_atom(
        "SM90_64x128x16_F32BF16BF16_SS", a_major="MN"
    ),
    "cpp SM80_16x8x16_F32BF16BF16F32_TN --atom-layout '(2,2):(2,1)' --tile '32,(4,4):(4,1),_'": (
        lambda: cm.make_tiled_mma(
            "SM80_16x8x16_F32BF16BF16F32_TN",
            Layout((2, 2), (2, 1)),
            (32, Layout((4, 4), (4, 1)), None),
        )
    ),
    "cpp SM75_U32x4_LDSM_N -p dtype=bf16": lambda: cm.make_copy_atom("SM75_U32x4_LDSM_N", "bf16"),
    "cpp 'SM80_CP_ASYNC_CACHEALWAYS<uint128_t>' -p dtype=f16 -p thr='(16,8):(8,1)' -p val='(1,8)'": (
        _tc
    ),
}


@pytest.mark.parametrize("argv", sorted(CASES))
def test_emit_cpp_is_to_cpp_of_the_object(argv):
    assert emit(argv) == cm.to_cpp(CASES[argv]())


def test_emit_cpp_type():
    assert emit("cpp '(4,2):(2,1)' --type") == "Layout<Shape<Int<4>,Int<2>>,Stride<Int<2>,Int<1>>>"


def test_what_emit_prints_compiles():
    # every printed expression in one program (static_asserts: the --type output is the
    # expression's type)
    from cute_cpp import harness

    if harness.unavailable_reason():
        pytest.skip(harness.unavailable_reason())
    from cutemma.emit.cpp import HEADERS

    body = "\n".join(f"  {{ auto x = {emit(a)}; (void)x; }}" for a in sorted(CASES))
    body += f"\n  static_assert(is_same_v<decltype({emit('cpp 8:2')}), {emit('cpp 8:2 --type')}>);"
    extra = tuple(h for h in HEADERS if h != "cute/tensor.hpp")
    assert harness.compiles(body, extra)


def test_docs_page_commands_print_what_the_page_shows():
    text = DOCS.read_text()
    lines = [ln for ln in text.splitlines()]
    starts = [i for i, ln in enumerate(lines) if ln.startswith("$ cutemma emit ")]
    assert len(starts) >= 2
    for i in starts:
        argv = lines[i].removeprefix("$ cutemma emit ")
        assert emit(argv) == lines[i + 1], argv


def test_emit_dsl_is_to_cute_dsl_of_the_object():
    dsl = pytest.importorskip("cutemma.emit.dsl")
    for argv in ("dsl '(4,8):(8,1)'", "dsl SM80_16x8x16_F32BF16BF16F32_TN --atom-layout 2,2"):
        obj = (
            Layout((4, 8), (8, 1))
            if "(4,8)" in argv
            else cm.make_tiled_mma("SM80_16x8x16_F32BF16BF16F32_TN", (2, 2))
        )
        assert emit(argv) == dsl.to_cute_dsl(obj)
