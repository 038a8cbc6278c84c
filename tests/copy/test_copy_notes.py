"""The walkthrough in notes/COPY.md runs and prints what it shows."""

import doctest
from pathlib import Path


def test_copy_notes_walkthrough():
    path = Path(__file__).resolve().parents[2] / "notes" / "COPY.md"
    result = doctest.testfile(str(path), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 10 and result.failed == 0
