"""The HTML explorer, read statically: self-contained, panels equal the SVG's, and the data
behind the hover gives each thread exactly its cells (acceptance 2)."""

from __future__ import annotations

import re

import pytest
from viz_checks import check_mma_svg
from viz_parse import html_data, html_svg
from viz_reference import mma_layouts, owners, panel_dims, thread_cells

from cutemma.layout import ComposedLayout, Layout, Swizzle
from cutemma.viz import to_html


def test_page_is_self_contained(seeds):
    page = to_html(seeds["2x2"])
    assert not re.search(r"\bsrc\s*=|<link|@import|\burl\(", page)
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}


@pytest.mark.parametrize("which", ["atom", "2x2", "32Mx32x4"])
def test_panels_match_the_layouts(seeds, which):
    check_mma_svg(seeds[which], html_svg(to_html(seeds[which])), labelled=True)


def _cells_from_data(panel: dict, thread: int) -> set[tuple[int, int]]:
    cells = set()
    for logical, shown in enumerate(panel["ids"]):
        if shown == thread:
            cells |= {divmod(i, panel["cols"]) for i in panel["cells"][panel["row_of"][logical]]}
    return cells


@pytest.mark.parametrize("which", ["atom", "2x2", "32Mx32x4", "sm90_64x8"])
def test_hover_data_gives_each_thread_its_cells(seeds, which):
    obj = seeds[which]
    data = html_data(to_html(obj))
    _, lays, thr = mma_layouts(obj)
    panels = {p["name"]: p for p in data["panels"]}
    threads = sorted({thr(t) for t in range(lays["C"][0].size())})
    own = owners(obj)
    for t in threads[:: max(1, len(threads) // 12)]:
        want = thread_cells(obj, t, own)
        for name in "ABC":
            assert _cells_from_data(panels[name], t) == want[name], (name, t)


def test_layout_strings_and_dims_are_shipped(seeds):
    obj = seeds["32x32x4"]
    data = html_data(to_html(obj))
    mnk, lays, _ = mma_layouts(obj)
    for p in data["panels"]:
        assert p["layout"] == str(lays[p["name"]])
        assert (p["rows"], p["cols"]) == panel_dims(p["name"], mnk)


def test_swizzled_layout_page_has_a_bank_view():
    L = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
    page = to_html(L)
    assert '<option value="bank">' in page and 'id="elem-bytes"' in page
    data = html_data(page)
    assert data["kind"] == "layout" and len(data["bank_colours"]) == 32
    svg_offsets = [int(o) for o in re.findall(r'data-o="(\d+)"', page)]
    assert svg_offsets == [L(r + 8 * c) for r in range(8) for c in range(64)]
