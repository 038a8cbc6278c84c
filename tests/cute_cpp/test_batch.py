"""The batch runner: refusals are pinned on the right cases, good cases print, the cache works."""

from __future__ import annotations

import pytest

from cute_cpp import batch, harness

REASON = harness.unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

GOOD = "composition(Layout<Int<8>,Int<1>>{}, Layout<Int<{n}>,Int<2>>{})"
# downcast static_asserts "Downcast requires adjacent elements" without a stride-1 mode
BAD = "downcast<2>(Layout<Int<4>,Int<{n}>>{})"


def test_refusals_pinned_on_their_cases(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    batch._pch.cache_clear()
    cases = {}
    for n in range(1, 9):  # good and bad cases interleaved in one program
        cases[f"k{n}"] = (GOOD if n % 2 else BAD).replace("{n}", str(n if n % 2 else n + 1))
    got = batch.verdicts(cases, per_program=len(cases))
    for n in range(1, 9):
        v = got[f"k{n}"]
        if n % 2:  # 8:1 o n:2 is n:2: values 0, 2, 4, ...
            assert v.refused is None and v.text == f"_{n}:_2", (n, v)
            assert v.values == tuple(range(0, 2 * n, 2))
        else:
            assert v.refused and "adjacent" in v.refused, (n, v)
    # a second run reads the cache: nothing is compiled
    monkeypatch.setattr(batch, "_gcc", lambda *a: pytest.fail("compiled again"))
    assert batch.verdicts(cases, per_program=len(cases)) == got
    batch._pch.cache_clear()
