"""The TiledMMAs and TiledCopies of the C++ suites (tests/cute_cpp/test_tiled_vs_cpp.py,
tests/copy/test_tiled_copy_vs_cpp.py) emitted by ``to_cute_dsl``, built by CuTe DSL and read
back: thr_layout_vmnk, the tiled TV layouts of A/B/C and the tile size of each TiledMMA; the
tiled TV layout, src/dst TV layouts and tiler of each TiledCopy."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path

import pytest

from cutemma.emit.dsl import dsl_arch, to_cute_dsl
from cutemma.errors import EmitError
from cutemma.layout import Layout
from cutemma.mma import catalog
from cutemma.tiled import make_tiled_mma
from emit_dsl import dsl_run
from emit_dsl.compare import int_tuple, same_function

REASON = dsl_run.unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

TESTS = Path(__file__).resolve().parent.parent
MMA_FIELDS = (
    "x.thr_layout_vmnk",
    "x.tv_layout_A_tiled",
    "x.tv_layout_B_tiled",
    "x.tv_layout_C_tiled",
    "(x.get_tile_size(0), x.get_tile_size(1), x.get_tile_size(2))",
)
COPY_FIELDS = ("x.layout_tv_tiled", "x.layout_src_tv_tiled", "x.layout_dst_tv_tiled")


def _module(rel: str):
    folder = str((TESTS / rel).parent)
    if folder not in sys.path:  # the suite imports its siblings (tests/copy/cpp_copy.py)
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(rel.replace("/", "_")[:-3], TESTS / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@cache
def tiled_mmas() -> dict:
    """key -> (TiledMma, DslCase or EmitError), over the C++ suite's cases."""
    cpp = _module("cute_cpp/test_tiled_vs_cpp.py")
    out = {}
    for key, (name, am, bm, _cfg, layout, perms) in cpp.all_cases().items():
        params = {} if am is None else {"a_major": am, "b_major": bm}
        tm = make_tiled_mma(catalog.make_mma_atom(name, **params), layout, perms)
        try:
            out[key] = (tm, dsl_run.DslCase(f"tm/{key}", to_cute_dsl(tm), MMA_FIELDS, dsl_arch(tm)))
        except EmitError as e:
            out[key] = (tm, e)
    return out


@cache
def tiled_copies() -> dict:
    cpp = _module("copy/test_tiled_copy_vs_cpp.py")
    out = {}
    for case in cpp.MMA_CASES:
        tm, tc = cpp._mine_mma(case)
        out[case[0]] = (tc, tm)
    for case in cpp.TV_CASES:
        out[case[0]] = (cpp._mine_tv(case), None)
    cases = {}
    for key, (tc, tm) in out.items():
        try:
            cases[key] = (
                tc,
                dsl_run.DslCase(f"tc/{key}", to_cute_dsl(tc, mma=tm), COPY_FIELDS, dsl_arch(tc)),
            )
        except EmitError as e:
            cases[key] = (tc, e)
    return cases


def _all_cases() -> list:
    cases = [c for _, c in list(tiled_mmas().values()) + list(tiled_copies().values())]
    return [c for c in cases if isinstance(c, dsl_run.DslCase)]


def cpp_prefetch() -> None:
    """The DSL runs of this file, for tests/cute_cpp/prefetch.py (same cases, same cache)."""
    if REASON is None:
        dsl_run.run(_all_cases())


@pytest.fixture(scope="module")
def printed():
    return dsl_run.run(_all_cases())


def test_tiled_mmas_of_the_cpp_suite_round_trip(printed):
    bad, done = [], 0
    for key, (tm, case) in tiled_mmas().items():
        if isinstance(case, EmitError):
            assert "nearest" in str(case), f"{key}: {case}"
            continue
        got = printed[case.key]
        if "error" in got:
            bad.append(f"{key}: DSL refused {case.expr}: {got['error'][:200]}")
            continue
        done += 1
        if int_tuple(got[MMA_FIELDS[4]]) != tuple(tm.tile_size_mnk):
            bad.append(f"{key}: tile DSL {got[MMA_FIELDS[4]]}, cutemma {tm.tile_size_mnk}")
        for field, mine in zip(
            MMA_FIELDS,
            (tm.thr_layout_vmnk, tm.tv_layout_A_tiled, tm.tv_layout_B_tiled, tm.tv_layout_C_tiled),
        ):
            diff = same_function(got[field], mine)
            if diff:
                bad.append(f"{key} {field}: {diff}")
    assert not bad, f"{len(bad)} differences:\n" + "\n".join(bad[:40])
    assert done >= 20


def test_tiled_copies_of_the_cpp_suite_round_trip(printed):
    bad, done = [], 0
    for key, (tc, case) in tiled_copies().items():
        if isinstance(case, EmitError):
            assert "nearest" in str(case), f"{key}: {case}"
            continue
        got = printed[case.key]
        if "error" in got:
            bad.append(f"{key}: DSL refused {case.expr}: {got['error'][:200]}")
            continue
        done += 1
        for field, mine in zip(
            COPY_FIELDS, (tc.layout_tv_tiled, tc.layout_src_tv_tiled, tc.layout_dst_tv_tiled)
        ):
            diff = same_function(got[field], mine)
            if diff:
                bad.append(f"{key} {field}: {diff}")
    assert not bad, f"{len(bad)} differences:\n" + "\n".join(bad[:40])
    assert done >= 10


def test_tiled_copy_A_is_emitted_as_make_tiled_copy_A():
    key = "A_ldsm4_2x2"
    tc, case = tiled_copies()[key]
    assert case.expr.startswith("cute.make_tiled_copy_A(")
    assert Layout((2, 2, 1), (1, 2, 0))  # the suite's 2x2 atom layout is m-major
