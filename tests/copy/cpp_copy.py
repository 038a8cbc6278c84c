"""Helpers for comparing copy atoms with CuTe C++ (through tests/cute_cpp/harness.py)."""

from __future__ import annotations

import pytest
from cute_cpp import harness

from cutemma.emit.cpp_atoms import copy_op_cpp
from cutemma.layout import Layout
from cutemma.layout.algebra import composition
from cutemma.layout.layout import _modes, size

HEADERS = (
    "cute/atom/copy_traits_sm50.hpp",
    "cute/atom/copy_traits_sm75.hpp",
    "cute/atom/copy_traits_sm80.hpp",
    "cute/atom/copy_traits_sm90.hpp",
    "cute/atom/copy_traits_sm100.hpp",
    "cute/atom/copy_traits_sm90_tma.hpp",
)


def need_cpp() -> None:
    reason = harness.unavailable_reason()
    if reason:
        pytest.skip(reason)


def cpp_name(name: str) -> str:
    """The C++ Copy_Traits arguments of a catalog name (the product's spelling, to_cpp's)."""
    return copy_op_cpp(name)


def cute_text(text: str) -> str:
    """CuTe's printed layout without the underscores of static integers."""
    return text.replace("_", "")


_FAILED: dict[int, Exception] = {}


def run(cases: dict[str, str], per_program: int = 120) -> dict[str, str]:
    """Run C++ cases; a compile failure is remembered, so that callers caching the result
    with functools.cache do not recompile it for every test."""
    need_cpp()
    key = hash(tuple(sorted(cases.items())))
    if key in _FAILED:
        raise _FAILED[key]
    try:
        return harness.run_cases(cases, headers=HEADERS, per_program=per_program)
    except Exception as err:
        _FAILED[key] = err
        raise


# CuTe's composition coalesces its left operand first (cute/layout.hpp, detail::coalesce_x);
# where cutemma's algebra does not yet (the algebra branch does), layouts can differ in
# nesting while equal as functions. Then the check is: same top-level mode sizes, same offsets.
_ALGEBRA_LIKE_CUTE = (
    str(composition(Layout(((2, 2, 2), 1, 1), ((1, 2, 4), 0, 0)), Layout((8, 1), (1, 0))))
    == "(8,1):(1,0)"
)


def assert_same_layout(mine: str, cpp: str) -> None:
    if _ALGEBRA_LIKE_CUTE or mine == cpp:
        assert mine == cpp
        return
    a, b = Layout.parse(mine), Layout.parse(cpp)
    assert [size(m) for m in _modes(a)] == [size(m) for m in _modes(b)], (mine, cpp)
    assert [a(i) for i in range(size(a))] == [b(i) for i in range(size(b))], (mine, cpp)
