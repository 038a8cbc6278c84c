"""cutemma's layout algebra against CuTe C++ on thousands of seeded random cases.

``cases.random_cases()`` draws the same cases every run; ``batch.verdicts`` compiles them into
a few programs (cached by source hash: a second run compiles nothing) and reads C++'s result
or refusal for each. One test per group of cases; a failure lists every differing case, C++
against cutemma. Run: ``pytest -q tests/cute_cpp``.
"""

from __future__ import annotations

import pytest

from cute_cpp import batch, cases, harness
from cute_cpp.compare import cutemma_outcome, judge, report
from cute_cpp.open_divergences import OPEN

REASON = harness.unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

CASES = cases.random_cases()
BY_GROUP: dict[str, list[cases.Case]] = {}
for _c in CASES:
    BY_GROUP.setdefault(_c.group, []).append(_c)


@pytest.fixture(scope="module")
def outcomes():
    return {c.key: cutemma_outcome(c) for c in CASES}


def _verdicts(outcomes) -> dict[str, batch.Verdict]:
    # cutemma's refusals only group likely C++ refusals into their own programs (a faster cold run)
    likely = {k for k, o in outcomes.items() if o.error is not None}
    return batch.verdicts({c.key: c.cpp_expr() for c in CASES}, predicted_refused=likely)


@pytest.fixture(scope="module")
def verdicts(outcomes) -> dict[str, batch.Verdict]:
    return _verdicts(outcomes)


def cpp_prefetch() -> None:
    """The C++ this file's tests compile, for tests/cute_cpp/prefetch.py (same calls, cached)."""
    _verdicts({c.key: cutemma_outcome(c) for c in CASES})


def test_enough_cases():
    # issue 11: at least 5,000 random algebra cases, every exported function covered
    assert len(CASES) >= 5000
    fns = {c.fn for c in CASES}
    assert fns >= {
        "coalesce", "filter", "composition", "complement", "logical_divide", "zipped_divide",
        "tiled_divide", "flat_divide", "logical_product", "zipped_product", "tiled_product",
        "flat_product", "blocked_product", "raked_product", "right_inverse", "left_inverse",
        "max_common_vector", "max_common_layout", "tile_to_shape", "upcast", "downcast",
        "nullspace",
    }  # fmt: skip


def test_cases_are_reproducible():
    again = cases.random_cases()
    assert [(c.key, c.cpp_expr()) for c in again] == [(c.key, c.cpp_expr()) for c in CASES]


@pytest.mark.parametrize("group", sorted(BY_GROUP))
def test_agrees_with_cpp(group, verdicts, outcomes):
    mismatches, open_ones = [], []
    for case in BY_GROUP[group]:
        why = judge(case, verdicts[case.key], outcomes[case.key])
        if why is None:
            continue
        (open_ones if case.key in OPEN else mismatches).append((case, why))
    assert not mismatches, report(mismatches)
    if open_ones:
        notes = sorted({OPEN[c.key] for c, _ in open_ones})
        pytest.xfail(
            f"{len(open_ones)} open divergence(s), see {', '.join(notes)}:\n" + report(open_ones)
        )
