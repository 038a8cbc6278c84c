"""Picture options shared by ``cutemma show`` and ``cutemma layout``: --svg, --html, --latex.

A command adds the options with :func:`add_picture_args` and, after building its object,
calls :func:`write_pictures`; without any file option it prints :func:`terminal_text`.

>>> import argparse
>>> p = argparse.ArgumentParser()
>>> add_picture_args(p)
>>> p.parse_args(["--svg", "a.svg"]).svg
'a.svg'
"""

from __future__ import annotations

import argparse

from cutemma.errors import LayoutError
from cutemma.layout import Layout
from cutemma.layout.notation import parse_layout


def add_picture_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--svg F``, ``--html F`` and ``--latex F`` to a subcommand's parser.

    >>> p = argparse.ArgumentParser()
    >>> add_picture_args(p)
    >>> args = p.parse_args(["--html", "t.html"])
    >>> args.html, args.svg, args.latex
    ('t.html', None, None)
    """
    parser.add_argument("--svg", metavar="FILE", help="write an SVG picture to FILE")
    parser.add_argument(
        "--html", metavar="FILE", help="write an interactive, self-contained HTML page to FILE"
    )
    parser.add_argument(
        "--latex", metavar="FILE", help="write a standalone TikZ document to FILE (pdflatex)"
    )


def write_pictures(
    obj,
    svg: str | None = None,
    html: str | None = None,
    latex: str | None = None,
    tile: tuple[int, int] | None = None,
) -> list[str]:
    """Write the requested pictures of ``obj``; returns the paths written, in order.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> [os.path.basename(p) for p in write_pictures(Layout(4), svg=os.path.join(d, "l.svg"))]
    ['l.svg']
    """
    from cutemma.viz import to_html, to_latex, to_svg

    written = []
    for path, render in ((svg, to_svg), (html, to_html), (latex, to_latex)):
        if path:
            text = render(obj, tile=tile)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            written.append(path)
    return written


def write_from_args(obj, args: argparse.Namespace, tile: tuple[int, int] | None = None) -> bool:
    """Write what ``args`` (from :func:`add_picture_args`) asks for; False when it asks nothing.

    >>> write_from_args(Layout(2), argparse.Namespace(svg=None, html=None, latex=None))
    False
    """
    paths = write_pictures(
        obj,
        svg=getattr(args, "svg", None),
        html=getattr(args, "html", None),
        latex=getattr(args, "latex", None),
        tile=tile,
    )
    for p in paths:
        print(f"wrote {p}")
    return bool(paths)


def terminal_text(obj, tile: tuple[int, int] | None = None) -> str:
    """The text grids printed when no picture file is asked for (thread/value per cell).

    >>> print(terminal_text(Layout((2, 2), (1, 2)), tile=(2, 2)).splitlines()[-1])
     1  |T1V0|T1V1|
    """
    from cutemma.viz import to_text

    return to_text(obj, tile)


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def parse_tile(text: str) -> tuple:
    """Read ``--tile``: up to three comma-separated entries, each an int (a tile size), ``_``
    (none) or a layout (a permutation), e.g. ``"32,32,4"`` or ``"(4,4,2):(1,8,4),32,4"``.

    >>> parse_tile("(4,4,2):(1,8,4),32,_")
    ((4,4,2):(1,8,4), 32, None)
    """
    entries = [e.strip() for e in _split_top(text)]
    if not 1 <= len(entries) <= 3 or any(not e for e in entries):
        raise LayoutError(
            f"--tile {text!r}: expected 1 to 3 comma-separated entries (M, N, K), each an int, "
            "'_' or a layout like (4,4,2):(1,8,4)"
        )
    out = []
    for e in entries:
        if e == "_":
            out.append(None)
        elif e.isdigit():
            out.append(int(e))
        else:
            out.append(parse_layout(e))
    return tuple(out)


def parse_atom_layout(text: str) -> Layout:
    """Read ``--atom-layout``: a layout ``"(2,2):(2,1)"`` or a shape ``"2,2,1"``.

    >>> str(parse_atom_layout("2,2")), str(parse_atom_layout("(2,2):(2,1)"))
    ('(2,2):(1,2)', '(2,2):(2,1)')
    """
    text = text.strip()
    if ":" in text:
        return parse_layout(text)
    try:
        shape = tuple(int(x) for x in text.strip("()").split(","))
    except ValueError:
        raise LayoutError(
            f"--atom-layout {text!r}: expected a layout like (2,2):(2,1) or a shape like 2,2,1"
        ) from None
    return Layout(shape)
