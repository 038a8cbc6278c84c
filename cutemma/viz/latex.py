"""LaTeX/TikZ pictures in CuTe's ``print_latex`` conventions, as a standalone document.

C sits at the origin, A to its left, B above it; every cell is a node labelled ``T# \\\\ V#``
(a layout's cells carry their offset) and filled with its thread's colour; index labels run
along the edges. The document compiles with plain ``pdflatex`` (standalone + tikz).

>>> from cutemma.layout import Layout
>>> tex = to_latex(Layout((2, 2), (1, 2)))
>>> tex.count('\\\\node[cell'), '\\\\begin{tikzpicture}' in tex
(4, True)
"""

from __future__ import annotations

from cutemma.viz.grid import Figure, figure_of, index_labels, placements, rgb_table
from cutemma.viz.svg import layout_lines

_SPECIAL = {c: "\\" + c for c in "_#%&{}$"}
_SPECIAL.update({"\\": r"\textbackslash{}", "^": r"\^{}", "~": r"\~{}"})


def tex_escape(text: str) -> str:
    """Escape LaTeX's special characters in plain text.

    >>> tex_escape('SM70_8x8x4 & 50%')
    'SM70\\\\_8x8x4 \\\\& 50\\\\%'
    """
    return "".join(_SPECIAL.get(ch, ch) for ch in text)


# TeX's main memory holds about 9,000 labelled TikZ nodes; past this many cells the picture
# is drawn as filled squares under one grid (colour still tells the thread), as the SVG does
LABELLED_CELLS = 4096


def _cell_nodes(fig: Figure) -> tuple[list[str], set[int]]:
    at, _, _ = placements(fig)
    labelled = sum(p.area for p in fig.panels) <= LABELLED_CELLS
    lines, used = [], set()
    for p in fig.panels:
        x0, y0 = at[p.name]
        lines.append(f"% {p.name}: {tex_escape(p.layout)}")
        keys = (p.offset if p.offset is not None else p.thread).tolist()
        values = p.value.tolist() if p.value is not None else None
        for r in range(p.rows):
            for c in range(p.cols):
                key = keys[r][c]
                used.add(key)
                colour = "white" if key < 0 else f"c{key}"
                if not labelled:
                    lines.append(f"\\fill[{colour}] ({x0 + c:g},{y0 + r:g}) rectangle +(1,1);")
                    continue
                if p.labels is not None:
                    text = p.labels[r, c]
                elif values is None:
                    text = str(key)
                else:
                    text = "" if key < 0 else f"T{key}\\\\V{values[r][c]}"
                lines.append(
                    f"\\node[cell,fill={colour}] at ({x0 + c + 0.5:g},{y0 + r + 0.5:g}) {{{text}}};"
                )
        if not labelled:
            lines.append(f"\\draw[very thin] ({x0},{y0}) grid ({x0 + p.cols},{y0 + p.rows});")
    return lines, used


def _preamble(w: int, h: int, lines: int, chars: int) -> list[str]:
    # standalone (CuTe's choice) crops the page; where texlive lacks it (latex-extra not
    # installed) an article page of the picture's size does the same job
    width = max(w, 0.2 * chars) + 1
    height = h + 1.5 + 0.5 * lines
    return [
        "\\IfFileExists{standalone.cls}{\\documentclass[border=4pt]{standalone}}{%",
        "\\documentclass{article}\\pagestyle{empty}",
        f"\\usepackage[paperwidth={width:g}cm,paperheight={height:g}cm,margin=0.3cm]{{geometry}}}}",
    ]


def to_latex(obj, tile: tuple[int, int] | None = None) -> str:
    """A standalone TikZ document of a Layout, swizzled layout, TV layout (``tile=(M, N)``),
    MmaAtom, TiledMma, CopyAtom or TiledCopy, in CuTe's print_latex conventions (a copy: its
    source panel S and destination panel D side by side, as CuTe's ``print_latex_copy``).

    >>> from cutemma.mma import make_mma_atom
    >>> tex = to_latex(make_mma_atom('SM70_8x8x4_F32F16F16F32_NT'))
    >>> tex.count('\\\\node[cell'), 'T16\\\\\\\\V0' in tex
    (128, True)
    """
    if hasattr(obj, "layout_src_tv") or hasattr(obj, "layout_src_tv_tiled"):
        from cutemma.viz.copy import copy_figure  # copies: the same S | D panels as the SVG

        fig = copy_figure(obj)
    else:
        fig = figure_of(obj, tile)
    nodes, used = _cell_nodes(fig)
    _, w, h = placements(fig)
    keys = sorted(k for k in used if k >= 0)
    colours = [
        "\\definecolor{c" + str(k) + "}{RGB}{" + ",".join(map(str, rgb)) + "}"
        for k, rgb in zip(keys, rgb_table(keys).tolist())
    ]
    edge = [f"\\node at ({x + 0.5:g},{y + 0.5:g}) {{{t}}};" for t, x, y, _ in index_labels(fig)]
    legend = [
        f"\\node[anchor=north west,font=\\ttfamily\\small] at (0,{h + 0.3 + 0.5 * i:g}) "
        f"{{{tex_escape(t)}}};"
        for i, t in enumerate(layout_lines(fig))
    ]
    return "\n".join(
        [
            f"% {tex_escape(fig.title)}, drawn by cutemma",
            *_preamble(w, h, len(legend), max(len(t) for t in layout_lines(fig))),
            "\\usepackage{tikz}",
            "\\begin{document}",
            *colours,
            # y grows downwards so rows read top to bottom like the matrix
            "\\begin{tikzpicture}[x=1cm,y=-1cm,every node/.style={inner sep=0pt,outer sep=0pt},"
            "cell/.style={draw,minimum size=1cm,align=center,font=\\scriptsize}]",
            f"\\node[anchor=south west,font=\\bfseries] at (0,-0.2) {{{tex_escape(fig.title)}}};",
            *nodes,
            "% index labels",
            *edge,
            *legend,
            "\\end{tikzpicture}",
            "\\end{document}",
            "",
        ]
    )


def print_latex(obj, tile: tuple[int, int] | None = None) -> None:
    """Print :func:`to_latex` of ``obj`` (CuTe's ``print_latex``).

    >>> from cutemma.layout import Layout
    >>> print_latex(Layout(1, 1))  # doctest: +ELLIPSIS
    % Layout 1:1, drawn by cutemma
    ...
    """
    print(to_latex(obj, tile), end="")
