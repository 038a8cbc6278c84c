"""Checks shared by the SVG and HTML tests."""

from __future__ import annotations

from viz_parse import svg_panels
from viz_reference import mma_layouts, owners, panel_dims

from cutemma.viz.grid import hex_of


def check_mma_svg(obj, svg: str, labelled: bool) -> None:
    panels = svg_panels(svg)
    mnk, lays, _ = mma_layouts(obj)
    want = owners(obj)
    assert sorted(panels) == ["A", "B", "C"]
    for name, p in panels.items():
        rows, cols = panel_dims(name, mnk)
        assert (p["rows"], p["cols"]) == (rows, cols)
        assert len(p["rects"]) == rows * cols  # one cell per tile element
        assert p["layout"] == str(lays[name])
        for i, rect in enumerate(p["rects"]):
            cell = divmod(i, cols)
            t, v = want[name].get(cell, [(-1, -1)])[0]
            assert (int(rect["data-t"]), int(rect["data-v"])) == (t, v), (name, cell)
            assert rect["fill"] == hex_of(t)
            if labelled:
                assert p["labels"][i] == (f"T{t}V{v}" if t >= 0 else "")
