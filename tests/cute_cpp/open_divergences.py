"""Random cases where cutemma still differs from C++, each with a pointer to why.

``{case key: "docs/cpp_defects.md#<section>" or another tracking pointer}``. test_algebra_random
marks a group expected-fail while its only mismatches are listed here; anything else that
differs fails the test. Empty: every random case agrees with C++ or is a C++ defect that
tests/cute_cpp/defects.py proves and docs/cpp_defects.md documents.
"""

OPEN: dict[str, str] = {}
