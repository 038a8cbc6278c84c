"""Random cases where cutemma still differs from C++, each with the notes entry that tracks it.

``{case key: "notes/divergences.md#<entry>"}`` (the shared notes, /work/wt/notes/divergences.md, section
"[algebra] from cpp-suite"). test_algebra_random marks a group expected-fail while its only
mismatches are listed here; anything else that differs fails the test.
"""

OPEN: dict[str, str] = {
    "divide_tiler/zipped_divide/0068": "notes/divergences.md#cpp-suite-zipped-divide-underscore",
}
