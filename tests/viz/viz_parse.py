"""Read the renderers' output back: SVG panels, LaTeX nodes, the HTML page's embedded data."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def svg_panels(svg: str) -> dict[str, dict]:
    """panel -> {rows, cols, rects: [attrib], labels: [text] or None} from an SVG document."""
    root = ET.fromstring(svg)
    out = {}
    for g in root.iter(f"{NS}g"):
        name = g.get("data-panel")
        if g.get("class") == "cells":
            out[name] = {
                "rows": int(g.get("data-rows")),
                "cols": int(g.get("data-cols")),
                "layout": g.get("data-layout"),
                "rects": [r.attrib for r in g.findall(f"{NS}rect")],
                "labels": None,
            }
    for g in root.iter(f"{NS}g"):
        if g.get("class") == "labels":
            out[g.get("data-panel")]["labels"] = ["".join(t.itertext()) for t in g]
    return out


def svg_size(svg: str) -> tuple[float, float]:
    root = ET.fromstring(svg)
    return float(root.get("width")), float(root.get("height"))


_NODE = re.compile(r"\\node\[cell,fill=(\w+)\] at \(([\d.]+),([\d.]+)\) \{(.*)\};")


def latex_cells(tex: str) -> dict[tuple[float, float], tuple[str, str]]:
    """(x, y) centre -> (fill colour name, label) of every cell node."""
    return {
        (float(m[2]), float(m[3])): (m[1], m[4].replace("\\\\", " ")) for m in _NODE.finditer(tex)
    }


def html_data(page: str) -> dict:
    m = re.search(r'<script id="cutemma-data" type="application/json">(.*?)</script>', page, re.S)
    return json.loads(m[1].replace("<\\/", "</"))


def html_svg(page: str) -> str:
    m = re.search(r'<div class="pic" id="pic">(<svg.*?</svg>)</div>', page, re.S)
    return m[1]
