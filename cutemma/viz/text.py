"""Text grids for the terminal: each cell shows ``T#V#`` (or a layout's offset), like
CuTe's ``print_layout``, with row and column indices along the edges.

>>> from cutemma.layout import Layout
>>> print(to_text(Layout((2, 2), (1, 2)), tile=(2, 2)))
TV layout (2,2):(1,2) over 2x2
C  (T,V) -> (m,n)  (2,2):(1,2)
        0    1
    +----+----+
 0  |T0V0|T0V1|
 1  |T1V0|T1V1|
"""

from __future__ import annotations

from cutemma.viz.grid import Panel, figure_of


def _cell_text(p: Panel, r: int, c: int) -> str:
    if p.labels is not None:
        return p.labels[r, c]
    if p.offset is not None:
        return str(int(p.offset[r, c]))
    t = int(p.thread[r, c])
    return "" if t < 0 else f"T{t}V{int(p.value[r, c])}"


def panel_text(p: Panel) -> str:
    """One panel as a grid: rows down, columns across, every cell the same width.

    >>> from cutemma.layout import Layout
    >>> from cutemma.viz.grid import layout_figure
    >>> print(panel_text(layout_figure(Layout((2, 3), (3, 1))).panels[0]))
         0 1 2
        +-+-+-+
     0  |0|1|2|
     1  |3|4|5|
    """
    cells = [[_cell_text(p, r, c) for c in range(p.cols)] for r in range(p.rows)]
    w = max(len(str(p.cols - 1)), max(len(x) for row in cells for x in row))
    hw = len(str(p.rows - 1)) + 1
    head = " " * (hw + 3) + " ".join(f"{c:>{w}}" for c in range(p.cols))
    sep = " " * (hw + 2) + "+" + "+".join("-" * w for _ in range(p.cols)) + "+"
    body = [
        f"{r:>{hw}}  |" + "|".join(f"{x:>{w}}" for x in row) + "|" for r, row in enumerate(cells)
    ]
    return "\n".join([head, sep, *body])


def to_text(obj, tile: tuple[int, int] | None = None) -> str:
    """The A, B, C grids of an MmaAtom or TiledMma (B is printed K x N, as drawn above C),
    or the grid of a Layout / TV layout.

    >>> from cutemma.mma import make_mma_atom
    >>> text = to_text(make_mma_atom('SM70_8x8x4_F32F16F16F32_NT'))
    >>> text.splitlines()[2]
    '         0     1     2     3'
    """
    fig = figure_of(obj, tile)
    out = [fig.title]
    for p in fig.panels:
        if fig.kind != "layout":
            axes = f"({p.row_axis},{p.col_axis})" if p.name != "B" else "(n,k), drawn k x n"
            out.append(f"{p.name}  (T,V) -> {axes}  {p.layout}")
        out.append(panel_text(p))
    out += list(fig.notes)
    return "\n".join(out)


def print_text(obj, tile: tuple[int, int] | None = None) -> None:
    """Print :func:`to_text` (the terminal view of ``cutemma show``).

    >>> from cutemma.layout import Layout
    >>> print_text(Layout(2))
    Layout 2:1
         0 1
        +-+-+
     0  |0|1|
    """
    print(to_text(obj, tile))
