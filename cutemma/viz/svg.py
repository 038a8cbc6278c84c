"""SVG pictures, written directly: one ``<rect>`` per cell, coloured by thread.

Cells are drawn in row-major order inside ``<g class="cells" data-panel=NAME data-rows
data-cols>``, each with ``data-t`` (thread) and ``data-v`` (value) or ``data-o`` (offset),
so a reader (a test, the HTML explorer) recovers the model without re-measuring. Pictures
grow linearly with the tile; labels shrink and then disappear as cells get small, while
the colour still tells the thread.

>>> from cutemma.layout import Layout
>>> svg = to_svg(Layout((2, 2), (1, 2)))
>>> svg.startswith('<svg') and svg.count('<rect ') == 4
True
"""

from __future__ import annotations

from html import escape

from cutemma.errors import LayoutError
from cutemma.viz.grid import Figure, Panel, figure_of, hex_table, index_labels, placements

TITLE_H = 22  # px above the drawing for the title
LINE_H = 16  # px per layout-string line below the drawing


def cell_size(fig: Figure) -> int:
    """Default cell edge in px: 40 for small figures, shrinking so a drawing stays ~2000 px.

    >>> from cutemma.layout import Layout
    >>> cell_size(figure_of(Layout((256, 256)))), cell_size(figure_of(Layout((8, 8))))
    (7, 40)
    """
    _, w, h = placements(fig)
    return max(4, min(40, 1900 // max(w, h)))


def label_font(s: int, chars: int, lines: int) -> float:
    """Font size for a cell label of ``chars`` characters on ``lines`` lines; 0 means drop it.

    >>> label_font(40, 3, 2), label_font(8, 3, 2)
    (12.0, 0)
    """
    f = min(12.0, 0.9 * s / lines, 1.6 * s / max(chars, 1))
    f = round(f * 2) / 2
    return f if f >= 4.5 else 0


def _stroke(s: int) -> float:
    return 1 if s >= 16 else 0.5 if s >= 8 else 0.25


def _cells(p: Panel) -> tuple[list[int], list[str], list[list[str]], int]:
    """Per cell, row-major: colour key, data attributes, label lines; and lines per label."""
    if p.offset is not None:
        keys = p.offset.reshape(-1).tolist()
        text = p.labels.reshape(-1).tolist() if p.labels is not None else map(str, keys)
        return keys, [f'data-o="{k}"' for k in keys], [[t] for t in text], 1
    keys = p.thread.reshape(-1).tolist()
    vals = p.value.reshape(-1).tolist()
    data = [f'data-t="{t}" data-v="{v}"' for t, v in zip(keys, vals)]
    labels = [[] if t < 0 else [f"T{t}", f"V{v}"] for t, v in zip(keys, vals)]
    return keys, data, labels, 2


def panel_svg(p: Panel, x0: int, y0: int, s: int) -> list[str]:
    """The cells and cell labels of one panel, top-left at pixel (x0, y0), cell edge s.

    >>> from cutemma.layout import Layout
    >>> from cutemma.viz.grid import layout_figure
    >>> panel_svg(layout_figure(Layout(1)).panels[0], 0, 0, 40)[1]
    '<rect x="0" y="0" width="40" height="40" fill="#ff9999" data-o="0"/>'
    """
    out = [
        f'<g class="cells" data-panel="{p.name}" data-rows="{p.rows}" data-cols="{p.cols}" '
        f'data-layout="{escape(p.layout)}" stroke="#000" stroke-width="{_stroke(s):g}">'
    ]
    keys, data, labels, nlines = _cells(p)
    xs = [x0 + c * s for c in range(p.cols)]
    ys = [y0 + r * s for r in range(p.rows)]
    fills = hex_table(keys)
    i = 0
    for y in ys:
        for x in xs:
            out.append(
                f'<rect x="{x}" y="{y}" width="{s}" height="{s}" fill="{fills[i]}" {data[i]}/>'
            )
            i += 1
    out.append("</g>")
    font = label_font(s, max((len(t) for ln in labels for t in ln), default=0), nlines)
    if font:
        out.append(f'<g class="labels" data-panel="{p.name}" font-size="{font:g}">')
        i = 0
        for y in ys:
            for x in xs:
                out.append(_text_lines(x + s / 2, y + s / 2, labels[i], font))
                i += 1
        out.append("</g>")
    return out


def _broadcast(p: Panel) -> bool:
    """Every thread holds every cell the same way (a shared-memory operand of wgmma/tcgen05)."""
    return p.tv is not None and p.tv.shape[0] > 1 and bool((p.tv == p.tv[0]).all())


def panel_svg_compact(p: Panel, x0: int, y0: int, s: int, labels: bool = True) -> list[str]:
    """One panel drawn small, for notebooks: cells in cell units (one ``<path>`` per colour,
    each run of equal cells along a row one rectangle), one-line labels grouped per row, and
    a panel every thread shares (GMMA's shared-memory A/B) drawn once with a caption.

    >>> from cutemma.mma import make_mma_atom
    >>> from cutemma.viz.grid import figure_of
    >>> a = figure_of(make_mma_atom("SM90_64x64x16_F16F16F16_SS")).panel("A")
    >>> [e.split(" ")[0] for e in panel_svg_compact(a, 0, 0, 10)][:3]
    ['<g', '<rect', '<path']
    """
    keys, _, text, _ = _cells(p)
    fills = hex_table(keys)
    out = [
        f'<g class="cells compact" data-panel="{p.name}" data-rows="{p.rows}" '
        f'data-cols="{p.cols}" data-layout="{escape(p.layout)}" '
        f'transform="translate({x0},{y0}) scale({s})" stroke="#000" '
        f'stroke-width="{_stroke(s) / s:.3g}">'
    ]
    if _broadcast(p):
        grid = "".join(f"M0 {r}H{p.cols}" for r in range(1, p.rows)) + "".join(
            f"M{c} 0V{p.rows}" for c in range(1, p.cols)
        )
        out.append(f'<rect width="{p.cols}" height="{p.rows}" fill="{fills[0]}"/>')
        out.append(f'<path d="{grid}" stroke-opacity="0.25"/>')
        out.append("</g>")
        n = p.tv.shape[0]
        lines = ["shared by all", f"{n} threads"]
        font = min(14.0, p.cols * s / 9, p.rows * s / 3)
        if font >= 5:
            cx, cy = x0 + p.cols * s / 2, y0 + p.rows * s / 2
            out.append(_text_lines(cx, cy, lines, font).replace("<text>", '<text class="shared">'))
        return out
    runs: dict[str, list[str]] = {}
    i = 0
    for r in range(p.rows):
        c = 0
        while c < p.cols:
            n = 1
            while (
                c + n < p.cols
                and keys[i + n] == keys[i]
                and (not labels or text[i + n] == text[i] == [])
            ):
                n += 1  # equal cells with no label drawn merge into one rectangle
            runs.setdefault(fills[i], []).append(f"M{c} {r}h{n}v1h-{n}z")
            c += n
            i += n
    out += [f'<path fill="{f}" d="{"".join(d)}"/>' for f, d in runs.items()]
    out.append("</g>")
    flat = ["".join(t) for t in text]
    font = label_font(s, max((len(t) for t in flat), default=0), 1) if labels else 0
    if font:
        out.append(f'<g class="labels" data-panel="{p.name}" font-size="{font:g}">')
        for r in range(p.rows):
            cy = y0 + r * s + s / 2
            row = flat[r * p.cols : (r + 1) * p.cols]
            spans = "".join(
                f'<tspan x="{x0 + c * s + s / 2:g}">{escape(t)}</tspan>'
                for c, t in enumerate(row)
                if t
            )
            if spans:
                out.append(f'<text y="{cy:g}">{spans}</text>')
        out.append("</g>")
    return out


def _panel_names(fig: Figure, s: int, ox: int, oy: int) -> list[str]:
    """Each panel's name (A, B, C; S, D) in the free corner cell above-left of it, so a reader
    knows which operand a grid is. The corner never holds an index label (those run along
    the panel's left column and top row) nor a cell, so the name covers no label.

    >>> from cutemma.mma import make_mma_atom
    >>> from cutemma.viz.grid import figure_of
    >>> _panel_names(figure_of(make_mma_atom("SM70_8x8x4_F32F16F16F32_NT")), 20, 0, 0)[1]
    '<text class="panel-name" x="10" y="110" font-size="16">A</text>'
    """
    if len(fig.panels) < 2:
        return []
    at, _, _ = placements(fig)
    font = max(6.0, min(24.0, 0.8 * s))
    out = ['<g class="panel-names" font-weight="bold" fill="#444" text-anchor="middle" '
           'dominant-baseline="central" pointer-events="none">']  # fmt: skip
    for p in fig.panels:
        x, y = at[p.name]
        cx, cy = ox + (x - 1) * s + s / 2, oy + (y - 1) * s + s / 2
        out.append(f'<text class="panel-name" x="{cx:g}" y="{cy:g}" font-size="{font:g}">'
                   f"{escape(p.name)}</text>")  # fmt: skip
    out.append("</g>")
    return out


def _text_lines(cx: float, cy: float, lines: list[str], font: float) -> str:
    if not lines:
        return "<text/>"  # keeps labels aligned one-to-one with cells
    top = cy - (len(lines) - 1) * font * 0.55
    spans = "".join(
        f'<tspan x="{cx:g}" y="{top + i * font * 1.1:g}">{escape(t)}</tspan>'
        for i, t in enumerate(lines)
    )
    return f"<text>{spans}</text>"


def _edge_labels(fig: Figure, s: int, ox: int, oy: int) -> list[str]:
    step = 1
    while step * s < 16:  # keep index labels at least 16 px apart
        step *= 2
    font = min(12.0, max(7.0, s * 0.45))
    out = [f'<g class="index" font-size="{font:g}" fill="#333">']
    for text, x, y, side in index_labels(fig):
        if int(text) % step:
            continue
        cy = oy + y * s + s / 2
        if side == "row":  # right-aligned against the panel, so long numbers grow leftwards
            out.append(
                f'<text x="{ox + x * s + s - 2:g}" y="{cy:g}" text-anchor="end">{text}</text>'
            )
        else:
            out.append(f'<text x="{ox + x * s + s / 2:g}" y="{cy:g}">{text}</text>')
    out.append("</g>")
    return out


def layout_lines(fig: Figure) -> list[str]:
    """One line per panel naming its layout, e.g. ``C: (T8,V8) -> (m,n)  ((2,2,2),...)``.

    >>> from cutemma.layout import Layout
    >>> layout_lines(figure_of(Layout((2, 2), (1, 2))))
    ['(2,2):(1,2)']
    """
    if fig.kind == "layout":
        return [fig.panels[0].layout]
    return [
        f"{p.name}: (T,V) -> ({p.row_axis},{p.col_axis})  {p.layout}"
        if p.name != "B"
        else f"B: (T,V) -> (n,k)  {p.layout}"
        for p in fig.panels
    ] + list(fig.notes)


def svg_parts(
    fig: Figure, s: int, compact: bool = False, labels: bool = True
) -> tuple[list[str], int, int]:
    """The body elements of a figure's SVG and its pixel width and height (``to_svg`` wraps
    them in ``<svg>``; the HTML explorer embeds them). ``compact`` draws the panels with
    :func:`panel_svg_compact` (no per-cell elements; notebooks), ``labels=False`` leaves the
    cell labels out.

    >>> from cutemma.layout import Layout
    >>> body, w, h = svg_parts(figure_of(Layout((2, 2))), 40)
    >>> (w, h), sum(e.startswith('<rect') for e in body)
    ((142, 174), 4)
    """
    at, w, h = placements(fig)
    pad = max(0, 28 - s)  # room for index labels when cells are narrower than "255"
    ox, oy = pad, pad + TITLE_H
    lines = layout_lines(fig)
    text_w = max(len(t) for t in [fig.title, *lines]) * 7
    width = max(ox + w * s + 8, text_w + 16)
    height = oy + h * s + 16 + LINE_H * len(lines)
    body = [
        f'<text x="8" y="16" font-size="14" font-weight="bold" text-anchor="start">'
        f"{escape(fig.title)}</text>"
    ]
    for p in fig.panels:
        x, y = at[p.name]
        if compact:
            body += panel_svg_compact(p, ox + x * s, oy + y * s, s, labels)
        else:
            body += panel_svg(p, ox + x * s, oy + y * s, s)
    body += _panel_names(fig, s, ox, oy)
    body += _edge_labels(fig, s, ox, oy)
    body.append('<g class="legend" font-size="12" text-anchor="start">')
    for i, t in enumerate(lines):
        body.append(f'<text x="8" y="{oy + h * s + 8 + LINE_H * (i + 1) - 4}">{escape(t)}</text>')
    body.append("</g>")
    return body, width, height


def check_cell(cell) -> int:
    """A cell edge in px: a whole number from 1 to 1000.

    >>> check_cell(12)
    12
    """
    from cutemma.layout.checks import as_int

    if as_int(cell) is None or not 1 <= as_int(cell) <= 1000:
        raise LayoutError(
            f"cell={cell!r}: the cell edge must be a whole number of px from 1 to 1000"
        )
    return as_int(cell)


def to_svg(
    obj,
    tile: tuple[int, int] | None = None,
    cell: int | None = None,
    compact: bool = False,
    labels: bool = True,
) -> str:
    """An SVG picture of a Layout, swizzled ComposedLayout, basis layout, Tensor, TV layout
    (``tile=(M, N)``), MmaAtom, TiledMma or ThrMma.

    ``cell`` is the cell edge in px (default: 40, smaller for big tiles). ``compact=True``
    draws the same picture in a fraction of the bytes (no element per cell; an operand every
    thread shares drawn once): what notebooks show. ``labels=False`` leaves cell labels out.

    >>> from cutemma.mma import make_mma_atom
    >>> svg = to_svg(make_mma_atom('SM70_8x8x4_F32F16F16F32_NT'))
    >>> svg.count('<rect '), 'T16' in svg
    (128, True)
    """
    fig = figure_of(obj, tile)
    s = cell_size(fig) if cell is None else check_cell(cell)
    body, width, height = svg_parts(fig, s, compact, labels)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" '
        f'text-anchor="middle" dominant-baseline="central">'
    )
    return "\n".join([head, f"<title>{escape(fig.title)}</title>", *body, "</svg>"]) + "\n"
