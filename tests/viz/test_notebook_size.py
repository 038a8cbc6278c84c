"""Notebook pictures stay small (issue 22): a GMMA atom's SVG was 1.75 MB, mostly cells of
the shared-memory operands every thread holds. Now an operand every thread shares is drawn
once, large pictures are drawn compact, and every object's stored output is under ~200 KB.
Panels carry their names (A, B, C)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

import cutemma as cm
from cutemma.viz import to_html, to_svg
from cutemma.viz.jupyter import MAX_BYTES

NS = "{http://www.w3.org/2000/svg}"

OBJECTS = {
    "gmma_ss_64x256": lambda: cm.make_mma_atom("SM90_64x256x16_F32BF16BF16_SS"),
    "gmma_ss_64x128_mn": lambda: cm.make_mma_atom(
        "SM90_64x128x16_F32BF16BF16_SS", a_major="K", b_major="MN"
    ),
    "gmma_rs_64x256": lambda: cm.make_mma_atom("SM90_64x256x16_F32BF16BF16_RS", b_major="K"),
    "gmma_fp8_64x256": lambda: cm.make_mma_atom("SM90_64x256x32_F32E4M3E4M3_SS_TN"),
    "tiled_64x64": lambda: cm.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2), (64, 64, 16)),
    "layout_64x64": lambda: cm.Layout((64, 64)),
    "thread": lambda: cm.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2)).get_slice(7),
}


@pytest.mark.parametrize("key", sorted(OBJECTS))
def test_notebook_output_under_200_kb(key):
    obj = OBJECTS[key]()
    bundle = obj._repr_mimebundle_()
    assert "image/svg+xml" in bundle  # still a picture
    assert sum(len(v) for v in bundle.values()) < 200_000 == MAX_BYTES
    ET.fromstring(bundle["image/svg+xml"])  # well-formed


def _panel(svg: str, name: str):
    root = ET.fromstring(svg)
    return next(g for g in root.iter(f"{NS}g") if g.get("data-panel") == name and
                "cells" in g.get("class", ""))  # fmt: skip


def test_a_shared_operand_is_drawn_once():
    atom = OBJECTS["gmma_ss_64x128_mn"]()
    svg = to_svg(atom, compact=True)
    for name in ("A", "B"):
        g = _panel(svg, name)
        assert len(g.findall(f"{NS}rect")) == 1  # one rectangle, not 64x16 or 16x128 cells
    assert svg.count("shared by all") == 2 and "128 threads" in svg
    # the full picture has one cell per element, every one owned by all 128 threads
    full = _panel(to_svg(atom), "A")
    assert len(full.findall(f"{NS}rect")) == 64 * 16


def test_compact_keeps_the_thread_colours():
    atom = cm.make_mma_atom("SM90_64x64x16_F16F16F16_RS")
    full, small = to_svg(atom), to_svg(atom, compact=True)
    fills_full = {r.get("fill") for r in _panel(full, "C").iter(f"{NS}rect")}
    fills_small = {p.get("fill") for p in _panel(small, "C").iter(f"{NS}path")}
    assert fills_full == fills_small and len(fills_full) == 128
    # every cell is covered exactly once: the run lengths of each row add up to N
    runs = re.findall(r"M(\d+) (\d+)h(\d+)v1h-\d+z", "".join(
        p.get("d") for p in _panel(small, "C").iter(f"{NS}path")))  # fmt: skip
    per_row: dict[int, int] = {}
    for _, r, n in runs:
        per_row[int(r)] = per_row.get(int(r), 0) + int(n)
    assert per_row == dict.fromkeys(range(64), 64)


@pytest.mark.parametrize("render", [to_svg, to_html])
def test_panels_are_named(render):
    text = render(cm.make_mma_atom("SM80_16x8x16_F32F16F16F32_TN"))
    names = re.findall(r'<text class="panel-name"[^>]*>([A-Z])</text>', text)
    assert names == ["A", "B", "C"]
    layout = render(cm.Layout((4, 4)))
    assert "panel-name" not in layout  # one panel: nothing to tell apart
