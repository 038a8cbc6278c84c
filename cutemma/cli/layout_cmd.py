"""``cutemma layout L``: print a layout, its size and cosize, and its index table as a grid.

>>> print(grid_text(Layout((2, 3), (3, 1))))
       0  1  2
    +--+--+--+
 0  | 0| 1| 2|
 1  | 3| 4| 5|
"""

from __future__ import annotations

import argparse

from cutemma.layout.layout import Layout, cosize, size
from cutemma.layout.notation import parse_layout


def _as_2d(layout) -> tuple[int, int, callable]:
    """Rows are mode 0, columns the rest (CuTe's print_layout convention for rank 2)."""
    shape = layout.shape
    if isinstance(shape, tuple) and len(shape) >= 2:
        rows = size(Layout(shape[0]))
        return rows, layout.size() // rows, lambda r, c: layout(r + rows * c)
    return 1, layout.size(), lambda r, c: layout(c)


def grid_text(layout) -> str:
    """The index table of a layout (or swizzled or basis layout) as a text grid, rows = mode 0;
    a rank-1 layout is one row, drawn like any other.

    >>> print(grid_text(Layout(3, 2)))
          0  1  2
        +--+--+--+
     0  | 0| 2| 4|
    """
    if layout.size() == 0:  # a 0 in the shape: no cells to draw
        return "(no cells: the layout's size is 0)"
    rows, cols, f = _as_2d(layout)
    cells = [[_text(f(r, c)) for c in range(cols)] for r in range(rows)]
    w = max(2, len(str(cols - 1)), max(len(v) for row in cells for v in row))
    head_w = len(str(rows - 1)) + 1
    head = " " * (head_w + 3) + " ".join(f"{c:>{w}}" for c in range(cols))
    sep = " " * (head_w + 2) + "+" + "+".join("-" * w for _ in range(cols)) + "+"
    body = [
        f"{r:>{head_w}}  |" + "|".join(f"{v:>{w}}" for v in row) + "|"
        for r, row in enumerate(cells)
    ]
    return "\n".join([head, sep, *body])


def _text(v) -> str:
    """An offset, or a coordinate in CuTe's spelling: ``(0,1)``."""
    return "(" + ",".join(_text(x) for x in v) + ")" if isinstance(v, tuple) else str(v)


def _sizes(layout) -> str:
    if hasattr(layout, "coshape"):  # a basis layout maps indices to coordinates
        co = _text(layout.coshape())
        return f"size {size(layout)}  coshape {co}  cosize {layout.cosize()}"
    return f"size {size(layout)}  cosize {cosize(layout)}"


def run(args: argparse.Namespace) -> int:
    """Print the layout named on the command line: itself, size and cosize, its grid (or,
    when --svg/--html/--latex asks for a picture, write it instead of printing the grid).

    >>> run(argparse.Namespace(layout="(2,2):(1,2)"))
    (2,2):(1,2)
    size 4  cosize 4
          0  1
        +--+--+
     0  | 0| 2|
     1  | 1| 3|
    0
    """
    from cutemma.cli.show_viz import MAX_CELLS, check_outputs, write_from_args

    check_outputs(args)
    layout = parse_layout(args.layout)
    print(layout)
    print(_sizes(layout))
    if write_from_args(layout, args):
        return 0
    if size(layout) > MAX_CELLS:  # a 10^10-cell grid would never finish printing
        print(f"(index table of {size(layout)} cells not printed: more than {MAX_CELLS})")
    else:
        print(grid_text(layout))
    return 0


def register(sub) -> None:
    """Add the ``layout`` subcommand (a layout in CuTe notation, and the picture options).

    >>> sub = argparse.ArgumentParser(prog="cutemma").add_subparsers()
    >>> register(sub)
    >>> args = sub.choices["layout"].parse_args(["4:2", "--svg", "l.svg"])
    >>> args.layout, args.svg
    ('4:2', 'l.svg')
    """
    p = sub.add_parser(
        "layout",
        help="print a layout, its size/cosize and its index table",
        description="Print a layout (CuTe notation, C++ Layout<...>, or a swizzled "
        "Sw<B,M,S> o 0 o L): its size, cosize and the offset of every coordinate, or draw it "
        "with --svg/--html/--latex.",
    )
    p.add_argument("layout", help='CuTe notation, e.g. "((2,2,2),(2,2,2)):((1,16,4),(8,2,32))"')
    from cutemma.cli.show_viz import add_picture_args

    add_picture_args(p)
    p.set_defaults(run=run)
