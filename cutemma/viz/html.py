"""A self-contained interactive HTML explorer: the SVG panels plus a small inline script.

Hovering a cell highlights every cell of the same thread in A, B and C (the thread's cells
come from the thread-value layouts, shipped as JSON), and the info bar shows thread, value,
the cell's coordinates and the layouts. A control colours cells by thread or by value; a
layout figure can be coloured by shared-memory bank instead (for swizzled layouts: which
bank each element's address falls in). No network, no external script or font.

>>> from cutemma.mma import make_mma_atom
>>> page = to_html(make_mma_atom('SM70_8x8x4_F32F16F16F32_NT'))
>>> page.startswith('<!DOCTYPE html>') and 'http://' not in page.replace('http://www.w3.org', '')
True
"""

from __future__ import annotations

import json
from html import escape

import numpy as np

from cutemma.viz.grid import Figure, Panel, figure_of, hex_table
from cutemma.viz.svg import cell_size, check_cell, layout_lines, svg_parts

BANKS = 32  # shared-memory banks of 4 bytes on every NVIDIA GPU since Kepler


def panel_data(p: Panel) -> dict:
    """The JSON the script needs for one panel: thread -> its cells, row-major indices.

    Threads with identical cells (a broadcast, as GMMA's shared-memory A/B) share one row.

    >>> from cutemma.layout import Layout
    >>> from cutemma.viz.grid import tv_figure
    >>> d = panel_data(tv_figure(Layout((2, 2), (1, 2)), (2, 2)).panels[0])
    >>> d['cells'], d['row_of'], d['ids']
    ([[0, 1], [2, 3]], [0, 1], [0, 1])
    """
    d = {
        "name": p.name,
        "rows": p.rows,
        "cols": p.cols,
        "row_axis": p.row_axis,
        "col_axis": p.col_axis,
        "layout": p.layout,
    }
    if p.tv is not None:
        seen: dict[bytes, int] = {}
        rows, row_of = [], []
        for row in p.tv:
            key = row.tobytes()
            if key not in seen:
                seen[key] = len(rows)
                rows.append(row.tolist())
            row_of.append(seen[key])
        d.update(cells=rows, row_of=row_of, ids=p.thread_ids.tolist())
    return d


def figure_data(fig: Figure) -> dict:
    """Everything the page's script reads: panels, palettes, layout lines.

    >>> from cutemma.layout import Layout
    >>> sorted(figure_data(figure_of(Layout(4))).keys())
    ['bank_colours', 'kind', 'lines', 'panels', 'thread_colours', 'title', 'value_colours']
    """
    threads, values = set(), 0
    for p in fig.panels:
        if p.thread is not None:
            threads.update(int(t) for t in np.unique(p.thread) if t >= 0)
            values = max(values, int(p.value.max()) + 1)
    return {
        "kind": fig.kind,
        "title": fig.title,
        "panels": [panel_data(p) for p in fig.panels],
        "thread_colours": dict(zip(map(str, sorted(threads)), hex_table(sorted(threads)))),
        "value_colours": hex_table(range(values)),
        "bank_colours": hex_table(range(BANKS)),
        "lines": layout_lines(fig),
    }


# every rule is scoped to the explorer's own <div class="cutemma">, so the page can also be
# embedded (Jupyter's _repr_html_) without restyling its host
_CSS = """
.cutemma{font-family:Helvetica,Arial,sans-serif}
.cutemma .bar{position:sticky;top:0;background:#f7f7f7;border-bottom:1px solid #ccc;
 padding:6px 10px;font-size:13px;z-index:1}
.cutemma .info{font-family:monospace;white-space:pre;min-height:2.6em;margin-top:4px}
.cutemma .pic{padding:8px}
.cutemma svg g.labels,.cutemma svg g.index{pointer-events:none}
.cutemma svg.focus g.cells rect{opacity:.25}
.cutemma svg.focus g.cells rect.hl{opacity:1;stroke:#000;stroke-width:var(--hl)}
"""

_JS = r"""
(function(){
// everything is looked up inside this explorer, so several can share one document
const root = document.currentScript.parentNode;
const D = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
const svg = root.querySelector('.pic svg');
const info = root.querySelector('.info');
const P = {};
D.panels.forEach(function(d){ P[d.name] = d; });
svg.querySelectorAll('g.cells').forEach(function(g){
  const d = P[g.dataset.panel];
  d.rects = Array.prototype.slice.call(g.querySelectorAll('rect'));
  d.rects.forEach(function(r, i){ r.cutemmaIndex = i; r.cutemmaPanel = d; });
  d.fills = d.rects.map(function(r){ return r.getAttribute('fill'); });
  const lg = svg.querySelector('g.labels[data-panel="' + d.name + '"]');
  d.texts = lg ? Array.prototype.slice.call(lg.querySelectorAll('text')) : null;
  d.labels = d.texts ? d.texts.map(function(t){ return t.innerHTML; }) : null;
  d.byThread = null;
});
function cellsOf(d, t){
  // displayed thread id -> row-major cell indices, built once per panel on first use
  if (!d.cells) return [];
  if (!d.byThread){
    d.byThread = {};
    d.ids.forEach(function(id, i){
      const row = d.cells[d.row_of[i]];
      (d.byThread[id] = d.byThread[id] || []).push.apply(d.byThread[id], row);
    });
  }
  return d.byThread[t] || [];
}
let lit = [];
function clear(){
  lit.forEach(function(r){ r.classList.remove('hl'); });
  lit = [];
  svg.classList.remove('focus');
}
function light(d, cells){
  cells.forEach(function(c){ const r = d.rects[c]; r.classList.add('hl'); lit.push(r); });
}
function bytes(){ return +root.querySelector('.elem-bytes').value; }
function bankOf(o){ return Math.floor(o * bytes() / 4) % 32; }
function coords(d, i){
  const r = Math.floor(i / d.cols), c = i % d.cols;
  return '(' + d.row_axis + ',' + d.col_axis + ') = (' + r + ',' + c + ')';
}
function hover(ev){
  const r = ev.target;
  if (r.cutemmaPanel === undefined) return;
  clear();
  const d = r.cutemmaPanel, i = r.cutemmaIndex;
  svg.classList.add('focus');
  if (r.dataset.t !== undefined){
    const t = +r.dataset.t;
    if (t < 0){ info.textContent = d.name + ' ' + coords(d, i) + ': no thread'; return; }
    const counts = [];
    D.panels.forEach(function(q){
      const cs = cellsOf(q, t);
      light(q, cs);
      counts.push(q.name + ': ' + cs.length + ' cells');
    });
    info.textContent = 'thread ' + t + '  value ' + r.dataset.v + '  ' + d.name + ' ' +
      coords(d, i) + '   [' + counts.join(', ') + ']\n' + d.name + ' layout ' + d.layout;
  } else {
    const o = +r.dataset.o, byBank = mode() === 'bank';
    d.rects.forEach(function(q, j){
      const oq = +q.dataset.o;
      if (byBank ? bankOf(oq) === bankOf(o) : oq === o){ q.classList.add('hl'); lit.push(q); }
    });
    info.textContent = coords(d, i) + '  offset ' + o + '  byte address ' + o * bytes() +
      '  bank ' + bankOf(o) + (byBank ? '  (lit: same bank)' : '') + '\nlayout ' + d.layout;
  }
}
function mode(){ return root.querySelector('.colour-by').value; }
function recolour(){
  const m = mode();
  D.panels.forEach(function(d){
    d.rects.forEach(function(r, i){
      let f = d.fills[i];
      if (m === 'value' && r.dataset.v !== undefined && +r.dataset.v >= 0) f = D.value_colours[+r.dataset.v];
      if (m === 'bank') f = D.bank_colours[bankOf(+r.dataset.o)];
      r.setAttribute('fill', f);
      if (d.texts) d.texts[i].innerHTML = m === 'bank' ? '<tspan>b' + bankOf(+r.dataset.o) + '</tspan>' : d.labels[i];
    });
  });
}
svg.addEventListener('mouseover', hover);
svg.addEventListener('mouseleave', function(){ clear(); info.textContent = 'hover a cell'; });
root.querySelector('.colour-by').addEventListener('change', recolour);
root.querySelector('.elem-bytes').addEventListener('change', recolour);
})();
"""


def _controls(fig: Figure) -> str:
    if fig.kind == "layout":
        opts = '<option value="offset">offset</option><option value="bank">bank</option>'
    else:
        opts = '<option value="thread">thread</option><option value="value">value</option>'
    sizes = "".join(
        f'<option value="{b}"{" selected" if b == 2 else ""}>{b}</option>' for b in (1, 2, 4, 8, 16)
    )
    hidden = "" if fig.kind == "layout" else ' style="display:none"'
    return (
        f'<label>colour by <select id="colour-by" class="colour-by">{opts}</select></label> '
        f'<label{hidden}>element bytes <select id="elem-bytes" class="elem-bytes">{sizes}</select>'
        "</label>"
    )


def to_html(obj, tile: tuple[int, int] | None = None, cell: int | None = None) -> str:
    """One self-contained interactive HTML page of a Layout, swizzled layout, TV layout
    (``tile=(M, N)``), MmaAtom or TiledMma.

    >>> from cutemma.layout import Layout
    >>> page = to_html(Layout((4, 4), (4, 1)))
    >>> page.count('<rect '), 'id="cutemma-data"' in page
    (16, True)
    """
    fig = figure_of(obj, tile)
    s = cell_size(fig) if cell is None else check_cell(cell)
    body, width, height = svg_parts(fig, s)
    # '</' inside JSON would end the script element early
    data = json.dumps(figure_data(fig), separators=(",", ":")).replace("</", "<\\/")
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="Helvetica, Arial, sans-serif" text-anchor="middle" '
        f'dominant-baseline="central">\n' + "\n".join(body) + "\n</svg>"
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{escape(fig.title)}</title>",
            f"<style>{_CSS}</style></head><body>",
            # the highlight outline scales with the cells so small cells stay visible
            f'<div class="cutemma" style="--hl:{max(0.75, min(2.5, s / 14)):g}px">',
            f'<div class="bar"><b>{escape(fig.title)}</b> {_controls(fig)}',
            '<div class="info" id="info">hover a cell</div></div>',
            f'<div class="pic" id="pic">{svg}</div>',
            f'<script id="cutemma-data" type="application/json">{data}</script>',
            f"<script>{_JS}</script>",
            "</div>",
            "</body></html>",
            "",
        ]
    )
