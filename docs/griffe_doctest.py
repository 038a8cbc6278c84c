"""Griffe extensions for the API reference: docstring examples (``>>>`` lines and their
output) become ``pycon`` code blocks, so Markdown shows them as code, not as quotes; and
Sphinx roles (``:class:`X` ``, ``:func:``, ``:mod:``, ``:data:``, ``:meth:``, ``:attr:``,
``:exc:``) become mkdocs-autorefs cross-references, so they render as links, never as raw
role text.

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

import re
from collections.abc import Callable

import griffe

# a Sphinx role in a docstring: :kind:`target` or :kind:`~dotted.target` (~: show the last part)
ROLE = re.compile(r":(class|func|mod|data|meth|attr|exc|obj):`(~?)([A-Za-z_][\w.]*)(\(\))?`")


def link_roles(text: str, resolve: Callable[[str], str] = lambda name: name) -> str:
    """Each Sphinx role becomes an optional autorefs cross-reference to the resolved dotted
    path (a link where the API reference documents it, the name in code otherwise).

    >>> link_roles("See :class:`~cutemma.errors.TmaError` and :func:`gemm`.")
    'See <autoref identifier="cutemma.errors.TmaError" optional><code>TmaError</code></autoref> and <autoref identifier="gemm" optional><code>gemm</code></autoref>.'
    """

    def one(m: re.Match) -> str:
        _, tilde, target, call = m.groups()
        title = (target.rsplit(".", 1)[-1] if tilde else target) + (call or "")
        return f'<autoref identifier="{resolve(target)}" optional><code>{title}</code></autoref>'

    return ROLE.sub(one, text)


def _resolver(obj) -> Callable[[str], str]:
    """A relative name (``CopyFamily``, ``Layout.parse``) as the dotted path griffe finds for
    it from ``obj``'s scope; a name it cannot resolve stays as written."""

    def resolve(name: str) -> str:
        head, _, rest = name.partition(".")
        for scope in (obj, getattr(obj, "parent", None)):
            if scope is None:
                continue
            try:
                path = scope.resolve(head)
            except Exception:  # griffe's NameResolutionError, or a scope without names
                continue
            return f"{path}.{rest}" if rest else path
        return name

    return resolve


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
    """Fence the doctests of every object's docstring and link its Sphinx roles."""

    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            text = fence_doctests(obj.docstring.value)
            obj.docstring.value = link_roles(text, _resolver(obj))
