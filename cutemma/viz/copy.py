"""Pictures of copy atoms and TiledCopies: source and destination side by side.

A TiledCopy is drawn over its tile (M x N, the tiler): the source panel ``S`` labels each
cell with the thread and value that reads it (``layout_src_tv_tiled``), the destination
panel ``D`` with the thread and value that writes it (``layout_dst_tv_tiled``), cells
coloured by thread as the MMA pictures are. A lone CopyAtom is drawn over its index space in
rows of 128 bits (an ldmatrix row). Given the shared-memory layout of the tile, a third
panel ``banks`` colours each element by its shared-memory bank and the title carries the
bank-conflict count of :func:`cutemma.tiled.copy_analysis.bank_conflicts`.

>>> from cutemma.copy import make_copy_atom
>>> fig = copy_figure(make_copy_atom("SM75_U32x1_LDSM_N", "f16"))
>>> [(p.name, p.rows, p.cols) for p in fig.panels]
[('S', 8, 8), ('D', 8, 8)]
>>> svg = copy_svg(make_copy_atom("SM75_U32x1_LDSM_N", "f16"))
>>> svg.count("<rect "), "T31" in svg
(128, True)
"""

from __future__ import annotations

from html import escape

import numpy as np

from cutemma.copy.banks import BANK_BYTES, BANKS
from cutemma.errors import CopyError
from cutemma.layout.layout import size
from cutemma.viz.grid import Figure, Panel, layout_table, tv_panel
from cutemma.viz.svg import TITLE_H, panel_svg
from cutemma.viz.text import panel_text


def _is_tiled(obj) -> bool:
    return hasattr(obj, "layout_src_tv_tiled")


def _tile_of(obj) -> tuple[int, int, bool]:
    """(rows, cols, column-major offsets) of the drawing's index space."""
    if _is_tiled(obj):
        shape = [t if isinstance(t, int) else size(t) for t in obj.tiler_mn]
        if len(shape) == 1:
            return shape[0], 1, True
        if len(shape) != 2:
            raise CopyError(f"a TiledCopy over a rank-{len(shape)} tile cannot be drawn flat")
        return shape[0], shape[1], True
    n = size(obj.layout_ref_tv[1]) * size(obj.layout_ref_tv[0])
    n = max(n, int(layout_table(obj.layout_ref_tv).max()) + 1)
    cols = max(1, 128 // obj.val_type.bits)
    if n % cols:
        cols = n
    return n // cols, cols, False


def _check_size(cells: int, threads: int) -> None:
    """Refuse a picture past grid.MAX_CELLS cells (or threads: one id each) before any
    array of that size is made. A TiledCopy may have any number of threads (as in CuTe);
    only its picture is bounded."""
    from cutemma.errors import LayoutError
    from cutemma.viz.grid import MAX_CELLS

    if max(cells, threads) > MAX_CELLS:
        raise LayoutError(
            f"a copy picture of {cells} cells and {threads} threads is too large to draw (at "
            f"most {MAX_CELLS} of each); draw a TiledCopy of fewer threads or a smaller tile"
        )


def copy_figure(obj, smem=None, side: str | None = None) -> Figure:
    """The S and D panels (and ``banks`` with ``smem``) of a CopyAtom or TiledCopy.

    ``side`` says which side of a register-to-register atom ``smem`` is ('S' or 'D').

    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.layout import Layout
    >>> from cutemma.tiled import make_tiled_copy
    >>> tc = make_tiled_copy(make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint64_t>", "f16"),
    ...                      Layout((8, 4), (4, 1)), Layout((1, 4)))
    >>> fig = copy_figure(tc, smem=Layout((8, 16), (16, 1)))
    >>> [p.name for p in fig.panels], fig.title.split(": ")[-1]
    (['S', 'D', 'banks'], 'smem 2 wavefronts for 2 phases, conflict-free')
    """
    rows, cols, col_major = _tile_of(obj)
    if _is_tiled(obj):
        src, dst, threads = obj.layout_src_tv_tiled, obj.layout_dst_tv_tiled, obj.size
        name = (
            f"TiledCopy {obj.atom.name} ({obj.atom.val_type.name}) {rows}x{cols}, {threads} threads"
        )
    else:
        src, dst, threads = obj.layout_src_tv, obj.layout_dst_tv, obj.traits.threads
        name = f"Copy_Atom {obj.name} ({obj.val_type.name}), {threads} threads"
    _check_size(2 * rows * cols, threads)
    ids = np.arange(threads, dtype=np.int64)
    axes = ("m", "n") if col_major else ("row", "col")
    panels = [
        tv_panel("S", src, rows, cols, *axes, ids, column_major_rows=col_major),
        tv_panel("D", dst, rows, cols, *axes, ids, column_major_rows=col_major),
    ]
    if smem is not None:
        if not _is_tiled(obj):
            raise CopyError("bank colouring needs a TiledCopy (its tile is what smem lays out)")
        from cutemma.tiled.copy_analysis import bank_conflicts

        eb = obj.atom.val_type.bits // 8
        offs = np.array([[int(smem(m, n)) for n in range(cols)] for m in range(rows)])
        bank = (offs * eb // BANK_BYTES) % BANKS
        panels.append(Panel("banks", rows, cols, *axes, str(smem), offset=bank))
        r = bank_conflicts(obj, smem, side)
        state = "conflict-free" if r.conflict_free else f"{r.worst}-way worst"
        name += f": smem {r.wavefronts} wavefronts for {r.ideal} phases, {state}"
    notes = tuple(
        f"{p.name}: cells held by up to {int(p.owners.max())} (thread, value) pairs; the first is labelled"
        for p in panels
        if p.owners is not None and p.owners.max() > 1
    )
    return Figure("copy", name, tuple(panels), notes=notes)


def copy_svg(obj, smem=None, cell: int | None = None, side: str | None = None) -> str:
    """An SVG of a CopyAtom or TiledCopy: S and D side by side (and the banks of ``smem``).

    >>> from cutemma.copy import make_copy_atom
    >>> "<svg" in copy_svg(make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f16"))
    True
    """
    fig = copy_figure(obj, smem, side)
    rows, cols = fig.panels[0].rows, fig.panels[0].cols
    s = cell or max(4, min(40, 1900 // max(rows, cols * len(fig.panels) + 2 * len(fig.panels))))
    gap = 2 * s
    body = [
        f'<text x="8" y="16" font-size="14" font-weight="bold" text-anchor="start">'
        f"{escape(fig.title)}</text>"
    ]
    y0 = TITLE_H + 20
    for i, p in enumerate(fig.panels):
        x0 = 8 + i * (cols * s + gap)
        body.append(
            f'<text x="{x0}" y="{y0 - 6}" font-size="12" text-anchor="start">'
            f"{escape(p.name)}: {escape(p.layout)}</text>"
        )
        body += panel_svg(p, x0, y0, s)
    width = 8 + len(fig.panels) * (cols * s + gap)
    width = max(width, 8 * len(fig.title) + 16)
    height = y0 + rows * s + 8 + 16 * len(fig.notes)
    for k, note in enumerate(fig.notes):
        body.append(
            f'<text x="8" y="{y0 + rows * s + 16 * (k + 1)}" font-size="11" '
            f'text-anchor="start">{escape(note)}</text>'
        )
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" '
        f'text-anchor="middle" dominant-baseline="central">'
    )
    return "\n".join([head, f"<title>{escape(fig.title)}</title>", *body, "</svg>"]) + "\n"


_HOVER_JS = """
const info = document.getElementById('info');
document.querySelectorAll('rect[data-t]').forEach(r => {
  r.addEventListener('mouseenter', () => {
    const t = r.dataset.t;
    document.querySelectorAll('rect[data-t]').forEach(o => {
      o.setAttribute('stroke-width', o.dataset.t === t ? 3 : 1);
      o.setAttribute('stroke', o.dataset.t === t ? '#d00' : '#000');
    });
    const g = r.parentNode;
    info.textContent = g.dataset.panel + ': thread ' + t + ', value ' + r.dataset.v +
      ' (every cell of thread ' + t + ' outlined in both panels)';
  });
});
"""


def copy_html(obj, smem=None, side: str | None = None) -> str:
    """A self-contained HTML page: the SVG, and hovering a cell outlines every cell of its thread
    in the source and destination panels.

    >>> from cutemma.copy import make_copy_atom
    >>> page = copy_html(make_copy_atom("SM75_U16x2_LDSM_T", "f16"))
    >>> page.startswith("<!DOCTYPE html>"), "mouseenter" in page, page.count("<rect ")
    (True, True, 128)
    """
    svg = copy_svg(obj, smem, side=side)
    title = escape(copy_figure(obj, smem, side).title)
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{title}</title></head>"
        f"<body style='font-family: Helvetica, Arial, sans-serif'>\n{svg}"
        "<p id='info'>hover a cell</p>\n"
        f"<script>{_HOVER_JS}</script>\n</body></html>\n"
    )


def copy_text(obj, smem=None) -> str:
    """The panels as text grids (what ``cutemma show`` prints for a copy atom).

    >>> from cutemma.copy import make_copy_atom
    >>> print(copy_text(make_copy_atom("UniversalCopy<uint64_t>", "f32")).splitlines()[0])
    Copy_Atom UniversalCopy<uint64_t> (f32), 1 threads
    """
    fig = copy_figure(obj, smem)
    parts = [fig.title]
    for p in fig.panels:
        parts += ["", f"{p.name}: {p.layout}", panel_text(p)]
    return "\n".join(parts)


__all__ = ["copy_figure", "copy_html", "copy_svg", "copy_text"]


def _copy_bundle(obj) -> dict:
    """Jupyter: a CopyAtom or TiledCopy draws as :func:`copy_svg` (cutemma.display)."""
    return {"image/svg+xml": copy_svg(obj)}


def _register() -> None:
    from cutemma.copy.atom import CopyAtom
    from cutemma.display import register
    from cutemma.tiled.tiled_copy import TiledCopy

    register(CopyAtom, _copy_bundle)
    register(TiledCopy, _copy_bundle)


_register()
