"""A griffe extension for the API reference: docstring examples (``>>>`` lines and their
output) become ``pycon`` code blocks, so Markdown shows them as code, not as quotes.

>>> print(fence_doctests("Text.\\n\\n>>> 1 + 1\\n2\\n\\nMore."))
Text.
<BLANKLINE>
```pycon
>>> 1 + 1
2
```
<BLANKLINE>
More.
"""

from __future__ import annotations

import griffe


def fence_doctests(text: str) -> str:
    """Wrap every run of lines that starts with ``>>>`` (up to the next blank line) in a fence."""
    out: list[str] = []
    inside = False
    indent = ""
    for line in text.splitlines():
        stripped = line.lstrip()
        if not inside and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            inside = True
        elif inside and not stripped:
            out.append(f"{indent}```")
            inside = False
        out.append(line)
    if inside:
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fence the doctests of every object's docstring."""

    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
