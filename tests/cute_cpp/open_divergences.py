"""Random cases where cutemma still differs from C++, each with the notes entry that tracks it.

``{case key: "notes/divergences.md#<entry>"}``. test_algebra_random marks a group expected-fail
while its only mismatches are listed here; anything else that differs fails the test.
"""

OPEN: dict[str, str] = {}
