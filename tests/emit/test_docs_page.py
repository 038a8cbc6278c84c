"""The objects docs/to-your-kernel.md designs, emitted as on the page, built by both witnesses.

The page's python blocks run (as tests/test_docs_examples.py runs them) and leave the TiledMMA,
the TiledCopies and the shared-memory layouts in a namespace; what ``to_cpp`` writes for them
is compiled by g++ and what ``to_cute_dsl`` writes is traced by CuTe DSL, and each prints the
TV layouts and tiles (layouts: the function) that cutemma has.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from cute_cpp import harness
from cute_cpp.compare import normalise

from cutemma.emit import to_cpp
from cutemma.emit.cpp import HEADERS
from cutemma.layout.notation import parse_layout

PAGE = Path(__file__).resolve().parents[2] / "docs" / "to-your-kernel.md"


@cache
def page_objects() -> dict:
    import contextlib
    import io

    from test_docs_examples import blocks

    ns: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for _, code, _, _ in blocks(PAGE.read_text()):
            exec(compile(code, str(PAGE), "exec"), ns)  # noqa: S102 - the page's own examples
    return {k: ns[k] for k in ("tm", "s2r", "g2s", "sA", "sB")}


def _values(layout) -> list:
    return [layout(i) for i in range(layout.size())]


def test_page_objects_compile_as_cute_cpp():
    reason = harness.unavailable_reason()
    if reason:
        pytest.skip(reason)
    o = page_objects()
    cases = {
        "tm": f'auto x = {to_cpp(o["tm"])}; CASE("tm", x.get_layoutA_TV()); '
        'CASE("tm", x.get_layoutC_TV());',
        "s2r": f'auto x = {to_cpp(o["s2r"])}; CASE("s2r", x.get_layoutS_TV());',
        "g2s": f'auto x = {to_cpp(o["g2s"])}; CASE("g2s", x.get_layoutD_TV());',
        "sA": f'auto x = {to_cpp(o["sA"])}; CASE("sA", x); printf("sA\\t"); '
        'for (int i = 0; i < int(size(x)); ++i) printf("%d,", int(x(i))); printf("\\n");',
    }
    extra = tuple(h for h in HEADERS if h != "cute/tensor.hpp")
    got = {k: v.split("\n") for k, v in harness.run_cases(cases, headers=extra).items()}
    tm, s2r, g2s, sA = o["tm"], o["s2r"], o["g2s"], o["sA"]
    assert [normalise(x) for x in got["tm"]] == [
        str(tm.tv_layout_A_tiled),
        str(tm.tv_layout_C_tiled),
    ]
    assert normalise(got["s2r"][0]) == str(s2r.layout_src_tv_tiled)
    assert normalise(got["g2s"][0]) == str(g2s.layout_dst_tv_tiled)
    assert normalise(got["sA"][0]) == str(sA)
    assert got["sA"][1] == "".join(f"{v}," for v in _values(sA))


def test_page_objects_run_in_cute_dsl():
    from emit_dsl import dsl_run
    from emit_dsl.compare import same_function

    reason = dsl_run.unavailable_reason()
    if reason:
        pytest.skip(reason)
    from cutemma.emit import to_cute_dsl

    o = page_objects()
    cases = [
        dsl_run.DslCase("tm", to_cute_dsl(o["tm"]), ("x.tv_layout_A_tiled",)),
        dsl_run.DslCase("s2r", to_cute_dsl(o["s2r"], mma=o["tm"]), ("x.layout_src_tv_tiled",)),
        dsl_run.DslCase("g2s", to_cute_dsl(o["g2s"]), ("x.layout_dst_tv_tiled",)),
        dsl_run.DslCase("sA", to_cute_dsl(o["sA"])),
    ]
    got = dsl_run.run(cases)
    want = {
        "tm": o["tm"].tv_layout_A_tiled,
        "s2r": o["s2r"].layout_src_tv_tiled,
        "g2s": o["g2s"].layout_dst_tv_tiled,
        "sA": o["sA"],
    }
    for c in cases:
        assert "error" not in got[c.key], (c.key, got[c.key])
        text = got[c.key][c.fields[0]]
        assert same_function(text, want[c.key]) is None, (c.key, text)
        assert _values(parse_layout(text)) == _values(want[c.key])
