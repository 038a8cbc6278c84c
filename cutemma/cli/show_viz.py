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
import os

from cutemma.errors import CliError, LayoutError
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
    wanted = [(o, p, r) for o, p, r in (("--svg", svg, "to_svg"), ("--html", html, "to_html"),
                                        ("--latex", latex, "to_latex")) if p]  # fmt: skip
    if not wanted:  # nothing to draw: the pictures' modules stay unloaded (start-up time)
        return []
    import cutemma.viz as viz

    for option, path, _ in wanted:  # every path checked before anything is drawn
        _check_writable(option, path)
    if wanted:
        check_cells(obj, "a picture", tile)
    written = []
    for option, path, render in wanted:
        text = getattr(viz, render)(obj, tile=tile)
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise CliError(f"{option} {path}: cannot write it ({e.strerror})") from None
        written.append(path)
    return written


# Above this many cells a text grid is no longer readable: it is left out, with a note.
# Pictures are refused above cutemma.viz.grid.MAX_CELLS.
MAX_CELLS = 1 << 16


def cells_of(obj, tile: tuple[int, int] | None = None) -> int:
    """How many cells a picture or text grid of ``obj`` has (A, B and C for an atom).

    >>> cells_of(Layout((8, 8))), cells_of(__import__("cutemma").make_mma_atom("SM61_DP4A"))
    (64, 9)
    """
    mnk = getattr(obj, "tile_size_mnk", None) or getattr(obj, "shape_mnk", None)
    if mnk is not None:
        m, n, k = mnk
        return m * k + n * k + m * n
    if tile is not None:
        return tile[0] * tile[1]
    return obj.size() if hasattr(obj, "size") else 0


def check_cells(obj, what: str, tile: tuple[int, int] | None = None) -> None:
    """Refuse a picture of more than ``cutemma.viz.grid.MAX_CELLS`` cells, naming both.

    >>> check_cells(Layout((10000, 1000)), "a picture")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cutemma.errors.CliError: a picture of 10000000 cells is too large to draw (at most 1048576)...
    """
    from cutemma.viz.grid import MAX_CELLS as limit

    n = cells_of(obj, tile)
    if n > limit:
        raise CliError(
            f"{what} of {n} cells is too large to draw (at most {limit}); draw a smaller "
            "tile of it, e.g. with cutemma.composition or a slice"
        )


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, an --svg/--html/--latex path whose folder does not exist.

    >>> check_outputs(argparse.Namespace(svg="/nonexistent/x.svg", html=None, latex=None))
    Traceback (most recent call last):
    ...
    cutemma.errors.CliError: --svg /nonexistent/x.svg: the folder /nonexistent does not exist; create it first or write to an existing folder
    """
    seen: dict[str, str] = {}
    for option in ("svg", "html", "latex"):
        path = getattr(args, option, None)
        if path is None:
            continue
        if not path.strip():
            raise CliError(
                f"--{option} {path!r}: give a file name, e.g. --{option} picture.{option}"
            )
        _check_writable(f"--{option}", path)
        same = os.path.realpath(path)
        if same in seen:
            raise CliError(
                f"--{seen[same]} and --{option} both write {path}: give each picture its own file"
            )
        seen[same] = option


def _check_writable(option: str, path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CliError(f"{option} {path}: is a folder; give a file name, e.g. {path}/picture")
    if not os.path.isdir(folder):
        raise CliError(
            f"{option} {path}: the folder {folder} does not exist; create it first or "
            "write to an existing folder"
        )


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

    >>> [str(t) for t in parse_tile("(4,4,2):(1,8,4),32,_")]
    ['(4,4,2):(1,8,4)', '32', 'None']
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
        elif e.lstrip("+-").isdigit():  # any script's digits: refused below unless ASCII
            if not _digits(e) or int(e) < 1 or len(e) > 9:
                raise LayoutError(
                    f"--tile {text!r}: the tile size {e} must be a whole number from 1 to "
                    "999999999, e.g. --tile 32,32,16"
                )
            out.append(int(e))
        else:
            try:
                out.append(parse_layout(e))
            except LayoutError as err:
                raise LayoutError(
                    f"--tile {text!r}: {e!r} is neither a tile size, '_' nor a layout ({err}); "
                    "e.g. --tile 32,32,16 or --tile (4,4,2):(1,8,4),32,4"
                ) from None
    return tuple(out)


def _digits(text: str) -> bool:
    """ASCII digits only: str.isdigit() also takes '٤' and '²', which int() reads as 4 or refuses.

    >>> _digits("42"), _digits("٤"), _digits("²")
    (True, False, False)
    """
    return text.isascii() and text.isdigit()


def parse_atom_layout(text: str) -> Layout:
    """Read ``--atom-layout``: a layout ``"(2,2):(2,1)"`` or a shape ``"2,2,1"``.

    >>> str(parse_atom_layout("2,2")), str(parse_atom_layout("(2,2):(2,1)"))
    ('(2,2):(1,2)', '(2,2):(2,1)')
    """
    text = text.strip()
    if ":" in text:
        return parse_layout(text)
    inner = text[1:-1] if text.startswith("(") and text.endswith(")") else text
    parts = inner.split(",")
    if not all(_digits(p.strip()) and 1 <= int(p) and len(p.strip()) <= 9 for p in parts):
        raise LayoutError(
            f"--atom-layout {text!r}: expected a layout like (2,2):(2,1) or a shape of whole "
            "numbers >= 1 like 2,2,1 or (2,2,1)"
        )
    return Layout(tuple(int(p) for p in parts))
