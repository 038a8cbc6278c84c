"""Jupyter renderings, registered with :mod:`cutemma.display` (the lower layers never import viz).

Each object gets exactly one rich rendering besides its CuTe-style text, so a notebook stores
one picture per output:

- Layout, ComposedLayout, BasisLayout (its cells show coordinates), MmaAtom, TiledMma: SVG (``use("html")`` switches to the interactive
  explorer of :func:`cutemma.viz.to_html`, which embeds the same SVG plus a script);
- ThrMma: the TiledMMA's SVG with only this thread's cells coloured;
- Tensor: an HTML table of its elements, as CuTe's ``print_tensor`` lays them out;
- GmmaDescriptor, UmmaDescriptor, InstrDescriptor: an SVG of the bitfields.

Objects larger than ``MAX_CELLS`` cells (or tensors above ``MAX_ELEMENTS``) show their text only.

>>> from cutemma.layout import Layout
>>> sorted(Layout((2, 2))._repr_mimebundle_())
['image/svg+xml', 'text/plain']
"""

from __future__ import annotations

from html import escape

from cutemma.display import register
from cutemma.errors import CutemmaError
from cutemma.layout import ComposedLayout, Layout
from cutemma.layout.basis import BasisLayout
from cutemma.layout.int_tuple import product
from cutemma.mma.atom import MmaAtom
from cutemma.smem.descriptor import SmemDescriptor
from cutemma.smem.instr_desc import InstrDescriptor
from cutemma.tensor import Tensor, engine_text, format_tensor, layout_text
from cutemma.tiled.tiled_mma import ThrMma, TiledMma
from cutemma.viz.bitfield import descriptor_svg
from cutemma.viz.grid import figure_of, thread_figure
from cutemma.viz.html import to_html
from cutemma.viz.svg import to_svg

MAX_CELLS = 1 << 15  # cells in a picture (~2.5 MB of SVG); past this a notebook shows text only
MAX_BYTES = 200_000  # bytes of SVG a notebook stores per object (larger: drawn compact)
MAX_ELEMENTS = 4096  # tensor elements in an HTML table
_MODE = {"pictures": "svg"}


def use(kind: str) -> None:
    """Choose how layouts, atoms and TiledMMAs draw in Jupyter: ``"svg"`` (default, static,
    renders everywhere notebooks render) or ``"html"`` (the interactive explorer: hover a cell
    to see its thread's other cells; needs a trusted notebook to run its script).

    >>> use("html"); use("svg")
    """
    if kind not in ("svg", "html"):
        raise CutemmaError(f"use({kind!r}): expected 'svg' (static) or 'html' (interactive)")
    _MODE["pictures"] = kind


def _cells(obj) -> int:
    """How many cells a picture of ``obj`` has, computed from sizes alone (no drawing)."""
    if isinstance(obj, (Layout, ComposedLayout, BasisLayout)):
        return product(obj.shape)
    if isinstance(obj, ThrMma):
        obj = obj.tiled
    m, n, k = obj.tile_size_mnk if isinstance(obj, TiledMma) else obj.shape_mnk
    return m * n + m * k + n * k


def notebook_svg(fig_or_obj) -> str | None:
    """The SVG a notebook stores for an object: the full picture when it is at most
    ``MAX_BYTES``, else the compact drawing (an operand every thread shares drawn once, no
    element per cell), else the compact one without cell labels; None when even that is
    larger (the object then shows its text).

    >>> from cutemma.mma import make_mma_atom
    >>> len(notebook_svg(make_mma_atom("SM90_64x256x16_F32BF16BF16_SS"))) < MAX_BYTES
    True
    """
    fig = figure_of(fig_or_obj)
    for options in ({}, {"compact": True}, {"compact": True, "labels": False}):
        svg = to_svg(fig, **options)
        if len(svg) <= MAX_BYTES:
            return svg
    return None


def _picture(fig_or_obj) -> dict:
    if _MODE["pictures"] == "html":
        return {"text/html": to_html(fig_or_obj)}
    svg = notebook_svg(fig_or_obj)
    return {} if svg is None else {"image/svg+xml": svg}


def picture_bundle(obj) -> dict:
    """The one rich rendering of a Layout, ComposedLayout, MmaAtom or TiledMma ({} if huge).

    >>> from cutemma.layout import Layout
    >>> list(picture_bundle(Layout(4))), picture_bundle(Layout((1000, 1000)))
    (['image/svg+xml'], {})
    """
    if _cells(obj) > MAX_CELLS:
        return {}
    return _picture(obj)


def thread_bundle(thr: ThrMma) -> dict:
    """ThrMma's rendering: :func:`thread_figure` as SVG ({} when too large)."""
    if _cells(thr) > MAX_CELLS:
        return {}
    svg = notebook_svg(thread_figure(thr))
    return {} if svg is None else {"image/svg+xml": svg}


def tensor_html(tensor: Tensor) -> str:
    """An HTML table of a tensor's elements in ``print_tensor``'s arrangement: rows are mode 0,
    columns mode 1, one table per index of modes 2 and 3.

    >>> from cutemma.tensor import make_identity_tensor
    >>> html = tensor_html(make_identity_tensor((2, 3)))
    >>> html.count("<td"), "(1,2)" in html
    (6, True)
    """
    text = format_tensor(tensor).splitlines()
    head = f"{engine_text(tensor)} o {layout_text(tensor)}"
    tables, rows = [], []
    for line in text[1:]:
        if set(line) <= {"-", "="}:
            tables.append(rows)
            rows = []
            continue
        # print_tensor pads each element on its left: elements are the runs without spaces
        rows.append(line.split())
    tables.append(rows)
    out = [f'<div class="cutemma-tensor"><code>{escape(head)}</code>']
    for rows in tables:
        out.append('<table style="font-family:monospace;border-collapse:collapse;margin:4px 0">')
        for cells in rows:
            tds = "".join(
                f'<td style="border:1px solid #ccc;padding:1px 6px;text-align:right">'
                f"{escape(c)}</td>"
                for c in cells
            )
            out.append(f"<tr>{tds}</tr>")
        out.append("</table>")
    out.append("</div>")
    return "\n".join(out)


def tensor_bundle(tensor: Tensor) -> dict:
    """Tensor's rendering: :func:`tensor_html` ({} above ``MAX_ELEMENTS`` elements)."""
    if tensor.size() > MAX_ELEMENTS:
        return {}
    return {"text/html": tensor_html(tensor)}


def descriptor_bundle(desc) -> dict:
    """A descriptor's rendering: the bitfield SVG of :func:`cutemma.viz.bitfield.descriptor_svg`."""
    return {"image/svg+xml": descriptor_svg(desc)}


for _cls in (Layout, ComposedLayout, BasisLayout, MmaAtom, TiledMma):
    register(_cls, picture_bundle)
register(ThrMma, thread_bundle)
register(Tensor, tensor_bundle)
register(SmemDescriptor, descriptor_bundle)
register(InstrDescriptor, descriptor_bundle)

__all__ = [
    "MAX_BYTES",
    "MAX_CELLS",
    "MAX_ELEMENTS",
    "descriptor_bundle",
    "notebook_svg",
    "picture_bundle",
    "tensor_bundle",
    "tensor_html",
    "thread_bundle",
    "thread_figure",
    "use",
]
