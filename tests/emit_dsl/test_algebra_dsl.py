"""CuTe DSL as a third algebra witness: a quarter of the seeded random algebra cases
(tests/cute_cpp/cases.py, ~1,450 cases) and every doc example with a DSL spelling
(tests/cute_cpp/doc_cases.py) run through the DSL, judged by tests/cute_cpp/compare.judge as
C++'s answers are. Every disagreement must be of a kind tests/emit_dsl/divergences.py names
(with which answer is the definition; docs/dsl_defects.md)."""

from __future__ import annotations

import dataclasses
from functools import cache

import pytest
from cute_cpp import cases, doc_cases
from cute_cpp.compare import cutemma_outcome, judge

from emit_dsl import algebra, divergences, dsl_run

REASON = dsl_run.unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

STEP = 4  # every 4th random case with a DSL spelling: ~1,450 cases, ~25 s of DSL tracing


@cache
def random_cases() -> list:
    out = [(c, algebra.dsl_case(c)) for c in cases.random_cases()]
    return [(c, _batched(c, d)) for c, d in [p for p in out if p[1] is not None][::STEP]]


def _batched(case, d):
    """Inputs cutemma refuses run in a batch of their own: the DSL dies (SIGFPE) on some of
    them, and each death restarts the rest of its batch (docs/dsl_defects.md, 3)."""
    if cutemma_outcome(case).error is None:
        return d
    return dataclasses.replace(d, batch="refused")


@cache
def doc_cpp_examples() -> list:
    """Doc examples written as C++ text the DSL has a call for (idx2crd, crd2idx,
    slice_and_offset)."""
    out = [(c, algebra.doc_dsl_case(c)) for c in doc_cases.layout_cases() if c.fn == "doc"]
    return [(c, d) for c, d in out if d is not None]


@cache
def doc_examples() -> list:
    out = []
    for c in doc_cases.layout_cases():
        if c.fn != "doc" and c.args:
            d = algebra.dsl_case(c)
            if d is not None:
                out.append((c, d))
    return out


def cpp_prefetch() -> None:
    """The DSL runs of this file, for tests/cute_cpp/prefetch.py (same cases, same cache)."""
    if REASON is None:
        dsl_run.run([d for _, d in random_cases() + doc_examples() + doc_cpp_examples()])


@pytest.fixture(scope="module")
def printed():
    return dsl_run.run([d for _, d in random_cases() + doc_examples() + doc_cpp_examples()])


def _mismatches(pairs, printed):
    unexplained, kinds = [], {}
    for c, d in pairs:
        got = cutemma_outcome(c)
        why = judge(c, algebra.verdict(printed[d.key]), got)
        if why is None:
            continue
        k = divergences.kind(c, printed[d.key], got)
        if k is None:
            unexplained.append(f"[{c.key}] {c}\n      DSL: {why}")
        kinds[k] = kinds.get(k, 0) + 1
    return unexplained, kinds


def test_at_least_1000_random_cases_run_through_the_dsl():
    assert len(random_cases()) >= 1000


def test_random_algebra_cases_agree_or_diverge_as_documented(printed):
    unexplained, kinds = _mismatches(random_cases(), printed)
    assert not unexplained, f"{len(unexplained)} unexplained:\n" + "\n".join(unexplained[:30])
    assert set(kinds) <= set(divergences.KINDS)


def test_doc_examples_agree_or_diverge_as_documented(printed):
    assert len(doc_examples()) >= 20
    unexplained, _ = _mismatches(doc_examples(), printed)
    assert not unexplained, f"{len(unexplained)} unexplained:\n" + "\n".join(unexplained[:30])


def test_doc_coordinate_examples_agree(printed):
    assert len(doc_cpp_examples()) >= 40
    bad = []
    for c, d in doc_cpp_examples():
        got = printed[d.key]
        want = c.call()
        want = want if isinstance(want, str) else str(want)
        text = got.get("x", f"refused: {got.get('error')}").replace(" ", "")
        if text != want:
            bad.append(f"[{c.key}] {c.expr}: DSL {text}, cutemma {want}")
    assert not bad, "\n".join(bad)
