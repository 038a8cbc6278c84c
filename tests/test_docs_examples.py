"""The docs cannot rot: every ```python block of docs/*.md runs, and prints what the page shows.

A page's blocks run in order in one namespace (a page reads like one session). A ```text block
right after a ```python block is that block's expected output, compared exactly (trailing
spaces aside). A block whose first line is ``# needs a GPU`` is shown but not run.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
SKIP_MARK = "# needs a GPU"


def blocks(text: str) -> list[tuple[str, str, str | None, int]]:
    """(language, code, expected output or None, line number) of each python block."""
    found = [(m.group(1), m.group(2), m.start(), m.end()) for m in FENCE.finditer(text)]
    out = []
    for i, (lang, code, start, end) in enumerate(found):
        if lang != "python":
            continue
        expected = None
        if i + 1 < len(found):
            nlang, ncode, nstart, _ = found[i + 1]
            if nlang == "text" and not text[end:nstart].strip():
                expected = ncode
        out.append((lang, code, expected, text.count("\n", 0, start) + 1))
    return out


def _pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "api" not in p.relative_to(DOCS).parts)


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def test_fences_are_found():
    page = "```python\nprint(1)\n```\n\n```text\n1\n```\n```python\nx = 2\n```\n"
    assert [(c, e) for _, c, e, _ in blocks(page)] == [("print(1)\n", "1\n"), ("x = 2\n", None)]


def test_every_page_has_checked_examples():
    pages = _pages()
    assert len(pages) >= 8
    checked = sum(1 for p in pages for *_, e, _ in blocks(p.read_text()) if e is not None)
    assert checked >= 40


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_page_examples_run_and_print_what_the_page_shows(page, tmp_path):
    namespace: dict = {"__name__": "__docs__"}
    here = os.getcwd()
    os.chdir(tmp_path)  # examples that write files write them here
    try:
        for _, code, expected, line in blocks(page.read_text()):
            if code.startswith(SKIP_MARK):
                continue
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
            if expected is not None:
                assert _norm(out.getvalue()) == _norm(expected), f"{page.name} line {line}"
    finally:
        os.chdir(here)
