"""The HTML explorer in a real headless Chromium, driven over the DevTools protocol
(acceptance 3): a simulated hover over a C cell lights exactly that thread's cells in A, B
and C; the colour control recolours by value; a swizzled layout shows banks."""

from __future__ import annotations

import json

import pytest
from viz_cdp import Chromium, find_chromium
from viz_reference import cell_of, mma_layouts, owners, thread_cells

from cutemma.layout import ComposedLayout, Layout, Swizzle
from cutemma.viz import to_html
from cutemma.viz.grid import hex_of

pytestmark = pytest.mark.browser

LIT = """JSON.stringify(Array.from(document.querySelectorAll('rect.hl')).map(function(r){
  const g = r.parentNode, rs = Array.from(g.querySelectorAll('rect'));
  return [g.dataset.panel, rs.indexOf(r), +g.dataset.cols]; }))"""


def centre_of(browser: Chromium, panel: str, index: int) -> tuple[float, float]:
    js = f"""(function(){{
      const r = document.querySelectorAll('g.cells[data-panel="{panel}"] rect')[{index}];
      r.scrollIntoView({{block: 'center', inline: 'center'}});
      const b = r.getBoundingClientRect();
      return [b.x + b.width / 2, b.y + b.height / 2]; }})()"""
    return tuple(browser.evaluate(js))


def lit_cells(browser: Chromium) -> dict[str, set[tuple[int, int]]]:
    out: dict[str, set] = {"A": set(), "B": set(), "C": set()}
    for panel, i, cols in json.loads(browser.evaluate(LIT)):
        out[panel].add(divmod(i, cols))
    return out


@pytest.fixture
def browser(tmp_path):
    with Chromium(find_chromium(), tmp_path / "profile") as b:
        yield b


@pytest.mark.parametrize("which,cell", [("2x2", (5, 9)), ("32Mx32x4", (21, 30)), ("atom", (6, 3))])
def test_hover_lights_exactly_the_threads_cells(seeds, browser, tmp_path, which, cell):
    obj = seeds[which]
    page = tmp_path / f"{which}.html"
    page.write_text(to_html(obj))
    browser.open(page)
    mnk, lays, _ = mma_layouts(obj)
    cols = mnk[1]
    thread, value = owners(obj)["C"][cell][0]
    browser.hover(*centre_of(browser, "C", cell[0] * cols + cell[1]))
    got = lit_cells(browser)
    want = thread_cells(obj, thread)
    assert got == want
    assert len(got["C"]) < mnk[0] * mnk[1]  # not everything lit
    info = browser.evaluate("document.getElementById('info').textContent")
    assert f"thread {thread}  value {value}  C (m,n) = ({cell[0]},{cell[1]})" in info
    assert str(lays["C"]) in info
    shot = browser.screenshot(tmp_path / f"hover_{which}.png")
    assert shot[:8] == b"\x89PNG\r\n\x1a\n"


def test_moving_to_another_thread_moves_the_highlight(seeds, browser, tmp_path):
    obj = seeds["2x2"]
    page = tmp_path / "p.html"
    page.write_text(to_html(obj))
    browser.open(page)
    own = owners(obj)
    for cell in [(0, 0), (12, 15)]:
        t = own["C"][cell][0][0]
        browser.hover(*centre_of(browser, "C", cell[0] * 16 + cell[1]))
        assert lit_cells(browser) == thread_cells(obj, t)


def test_colour_by_value(seeds, browser, tmp_path):
    obj = seeds["atom"]
    page = tmp_path / "v.html"
    page.write_text(to_html(obj))
    browser.open(page)
    browser.evaluate(
        "const s = document.getElementById('colour-by'); s.value = 'value';"
        "s.dispatchEvent(new Event('change')); 0"
    )
    fills = browser.evaluate(
        "Array.from(document.querySelectorAll('g.cells[data-panel=\"C\"] rect'))"
        ".map(function(r){ return [r.getAttribute('fill'), +r.dataset.v]; })"
    )
    assert len(fills) == 64
    assert all(f == hex_of(v) for f, v in fills)
    _, lays, _ = mma_layouts(obj)
    # by value: T0V5 and T3V5 look alike now
    c = lays["C"]
    idx = [cell_of("C", c(t, 5), (8, 8, 4)) for t in (0, 3)]
    assert fills[idx[0][0] * 8 + idx[0][1]][0] == fills[idx[1][0] * 8 + idx[1][1]][0]


def test_swizzle_bank_view(browser, tmp_path):
    L = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
    page = tmp_path / "sw.html"
    page.write_text(to_html(L))
    browser.open(page)
    browser.evaluate(
        "const s = document.getElementById('colour-by'); s.value = 'bank';"
        "s.dispatchEvent(new Event('change')); 0"
    )
    fills = browser.evaluate(
        "Array.from(document.querySelectorAll('g.cells rect')).map(r => r.getAttribute('fill'))"
    )
    banks = [(L(r + 8 * c) * 2 // 4) % 32 for r in range(8) for c in range(64)]
    assert fills == [hex_of(b) for b in banks]
    browser.hover(*centre_of(browser, "L", 64 + 5))  # row 1, col 5
    lit = json.loads(browser.evaluate(LIT))
    bank = banks[64 + 5]
    assert sorted(i for _, i, _ in lit) == [i for i, b in enumerate(banks) if b == bank]
    browser.screenshot(tmp_path / "banks.png")


def test_two_explorers_in_one_document_stay_apart(seeds, browser, tmp_path):
    # as in a notebook, where each _repr_html_ output lands in the same document
    page = tmp_path / "two.html"
    page.write_text(to_html(seeds["atom"]) + to_html(seeds["2x2"]))
    browser.open(page)
    assert browser.evaluate("document.querySelectorAll('div.cutemma').length") == 2
    xy = browser.evaluate(
        """(function(){ const r = document.querySelectorAll('div.cutemma')[1]
          .querySelectorAll('g.cells[data-panel="C"] rect')[9 * 16 + 4];
          r.scrollIntoView({block: 'center'}); const b = r.getBoundingClientRect();
          return [b.x + b.width / 2, b.y + b.height / 2]; })()"""
    )
    browser.hover(*xy)
    counts = browser.evaluate(
        "Array.from(document.querySelectorAll('div.cutemma')).map(d => d.querySelectorAll('rect.hl').length)"
    )
    t = owners(seeds["2x2"])["C"][(9, 4)][0][0]
    want = thread_cells(seeds["2x2"], t)
    assert counts == [0, sum(len(c) for c in want.values())]
