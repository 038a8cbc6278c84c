"""Pictures of layouts, MMA atoms and TiledMMAs: LaTeX/TikZ, SVG, interactive HTML, text.

All renderers draw one model (:mod:`cutemma.viz.grid`): which (thread, value) or offset sits
in which cell of A, B and C, computed from the layouts with numpy.

>>> from cutemma.mma import make_mma_atom
>>> atom = make_mma_atom('SM70_8x8x4_F32F16F16F32_NT')
>>> to_svg(atom).count('<rect '), to_latex(atom).count('\\\\node[cell')
(128, 128)
"""

from cutemma.viz import copy as _copy  # noqa: F401  (registers copy atoms' pictures)
from cutemma.viz import jupyter  # registers the Jupyter renderings (cutemma.display)
from cutemma.viz.grid import Figure, Panel, figure_of
from cutemma.viz.html import to_html
from cutemma.viz.latex import print_latex, to_latex
from cutemma.viz.svg import to_svg
from cutemma.viz.text import print_text, to_text

__all__ = [
    "Figure",
    "Panel",
    "figure_of",
    "jupyter",
    "print_latex",
    "print_text",
    "to_html",
    "to_latex",
    "to_svg",
    "to_text",
]
