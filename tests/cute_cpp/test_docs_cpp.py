"""Every example of CuTe's layout, algebra and tensor docs, computed by CuTe C++ and by cutemma.

tests/layout/test_cute_docs.py checks cutemma against the values printed in the docs; this
checks the same examples against C++ itself (text with static-int underscores stripped, and
the 1-D function). Run: ``pytest -q tests/cute_cpp``.
"""

from __future__ import annotations

import pytest

from cute_cpp import batch, harness
from cute_cpp.compare import judge, report
from cute_cpp.doc_cases import TENSOR_PRELUDE, layout_cases, tensor_cases

REASON = harness.unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def _check(cases, prelude):
    got = batch.verdicts({c.key: c.cpp_expr() for c in cases}, prelude=prelude)
    mismatches = [(c, why) for c in cases if (why := judge(c, got[c.key])) is not None]
    assert not mismatches, report(mismatches)


def cpp_prefetch() -> None:
    """The C++ this file's tests compile, for tests/cute_cpp/prefetch.py (same calls, cached)."""
    for cases, prelude in (
        (layout_cases(), batch.LAYOUT_PRELUDE),
        (tensor_cases(), TENSOR_PRELUDE),
    ):
        batch.verdicts({c.key: c.cpp_expr() for c in cases}, prelude=prelude)


def test_layout_and_algebra_docs_agree_with_cpp():
    cases = layout_cases()
    assert len(cases) > 100
    _check(cases, batch.LAYOUT_PRELUDE)


def test_tensor_docs_agree_with_cpp():
    _check(tensor_cases(), TENSOR_PRELUDE)
