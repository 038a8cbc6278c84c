"""Issue 34: a missing compiler skips with its reason; a failing one fails naming itself."""

from __future__ import annotations

import pytest

from cute_cpp import harness


@pytest.fixture
def cxx(monkeypatch, tmp_path):
    """Set CXX for one test; the harness's cached answers are dropped before and after."""
    caches = (harness.compiler, harness._compiler_id, harness.compile_flags)

    def use(value: str) -> None:
        monkeypatch.setenv("CXX", value)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # no shared cache entry is used
        for c in caches:
            c.cache_clear()

    yield use
    for c in caches:
        c.cache_clear()


def test_a_missing_compiler_is_a_reason_to_skip(cxx):
    try:
        harness.include_dirs()  # checked first: without CuTe's headers that is the reason
    except harness.CppUnavailable as e:
        pytest.skip(str(e))
    cxx("/nonexistent/g++")  # was accepted, then a bare FileNotFoundError at the first build
    assert "CXX=/nonexistent/g++" in (harness.unavailable_reason() or "")


def test_a_compiler_that_fails_silently_is_named_with_its_status(cxx):
    cxx("/bin/false")  # exits 1, prints nothing: the old message was empty and passed `if err:`
    if harness.unavailable_reason():
        pytest.skip(harness.unavailable_reason())
    with pytest.raises(harness.CompileFailed) as info:
        harness.build(harness.program('printf("x");'))
    assert info.value.errors == "/bin/false exited 1 with no output"
