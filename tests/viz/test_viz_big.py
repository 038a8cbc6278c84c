"""A 128x256 GMMA TiledMMA (two SM90 64x256x16 warpgroups along M, 256 threads) renders to
SVG and HTML in seconds, the pictures hold the right cells, and Chromium opens and drives
the page (acceptance 4)."""

from __future__ import annotations

import json
import random
import time

import pytest
from viz_cdp import Chromium, find_chromium
from viz_parse import html_svg, svg_panels
from viz_reference import cell_of

from cutemma.tiled import make_tiled_mma
from cutemma.viz import to_html, to_svg

ATOM = "SM90_64x256x16_F32F16F16_SS"


@pytest.fixture(scope="module")
def big():
    tiled = make_tiled_mma(ATOM, (2, 1, 1))
    assert tiled.tile_size_mnk == (128, 256, 16) and tiled.size == 256
    start = time.perf_counter()
    svg = to_svg(tiled)
    page = to_html(tiled)
    seconds = time.perf_counter() - start
    return tiled, svg, page, seconds


def test_renders_in_seconds(big):
    *_, seconds = big
    assert seconds < 15, f"SVG + HTML of a 128x256 TiledMMA took {seconds:.1f} s"


@pytest.mark.parametrize("which", ["svg", "html"])
def test_every_cell_drawn_and_sampled_cells_right(big, which):
    tiled, svg, page, _ = big
    panels = svg_panels(svg if which == "svg" else html_svg(page))
    area = {"A": 128 * 16, "B": 16 * 256, "C": 128 * 256}
    assert {n: len(p["rects"]) for n, p in panels.items()} == area
    c = tiled.tv_layout_C_tiled  # C is a bijection: every (t, v) owns exactly its cell
    rng = random.Random(5)
    for _ in range(300):
        t, v = rng.randrange(256), rng.randrange(c[1].size())
        r, col = cell_of("C", c(t, v), (128, 256, 16))
        rect = panels["C"]["rects"][r * 256 + col]
        assert (int(rect["data-t"]), int(rect["data-v"])) == (t, v)
    # GMMA reads A from shared memory: each warpgroup's 128 threads see its whole 64x16 half
    a = panels["A"]["rects"]
    assert {int(x["data-t"]) for x in a[: 64 * 16]} == {0}
    assert {int(x["data-t"]) for x in a[64 * 16 :]} == {128}


@pytest.mark.browser
def test_opens_in_chromium_and_hover_works(big, tmp_path):
    tiled, svg, page, _ = big
    (tmp_path / "big.svg").write_text(svg)
    (tmp_path / "big.html").write_text(page)
    with Chromium(find_chromium(), tmp_path / "profile") as b:
        b.open(tmp_path / "big.svg")
        assert (
            b.evaluate("document.querySelectorAll('rect').length")
            == 128 * 16 + 16 * 256 + 128 * 256
        )
        b.open(tmp_path / "big.html")
        assert (
            b.evaluate("document.querySelectorAll('g.cells rect').length")
            == 128 * 16 + 16 * 256 + 128 * 256
        )
        xy = b.evaluate(
            """(function(){ const r = document.querySelectorAll('g.cells[data-panel="C"] rect')[70 * 256 + 3];
            r.scrollIntoView({block: 'center', inline: 'center'});
            const q = r.getBoundingClientRect(); return [q.x + q.width / 2, q.y + q.height / 2]; })()"""
        )
        b.hover(*xy)
        lit = json.loads(
            b.evaluate(
                "JSON.stringify(['A','B','C'].map(p => document.querySelectorAll("
                "'g.cells[data-panel=\"' + p + '\"] rect.hl').length))"
            )
        )
        t = int(
            b.evaluate(
                "document.querySelectorAll('g.cells[data-panel=\"C\"] rect')[70 * 256 + 3].dataset.t"
            )
        )
        assert t >= 128  # row 70 belongs to the second warpgroup
        c = tiled.tv_layout_C_tiled
        # thread t lights its 128 accumulators, its warpgroup's half of A and all of B
        assert lit == [64 * 16, 16 * 256, c[1].size()]
        b.screenshot(tmp_path / "big_hover.png")
