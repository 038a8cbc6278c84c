"""Issue 34: the panel names (A, B, C; S, D) cover no cell and no index label."""

from __future__ import annotations

import re

import pytest

import cutemma as cm
from cutemma.viz import to_svg


def _objects():
    return {
        "atom": cm.make_mma_atom("SM80_16x8x8_F16F16F16F16_TN"),
        "tiled": cm.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1)),
        "sm90": cm.make_mma_atom("SM90_64x8x16_F16F16F16_SS"),
    }


def _floats(tag: str, *names: str) -> list[float]:
    return [float(re.search(rf'\b{n}="([-0-9.]+)"', tag).group(1)) for n in names]


@pytest.mark.parametrize("key", ["atom", "tiled", "sm90"])
def test_a_panel_name_sits_outside_every_cell_and_label(key):
    svg = to_svg(_objects()[key])
    names = re.findall(r'<text class="panel-name"[^>]*>', svg)
    assert len(names) >= 2
    cells = [_floats(t, "x", "y", "width", "height") for t in re.findall(r"<rect [^>]*>", svg)]
    index = re.search(r'<g class="index".*?</g>', svg, re.S).group(0)
    labels = [_floats(t, "x", "y") for t in re.findall(r"<text [^>]*>", index)]
    for tag in names:
        (cx, cy), (size,) = _floats(tag, "x", "y"), _floats(tag, "font-size")
        half = size / 2  # the letter's box, about one em square around its centre
        for x, y, w, h in cells:
            inside = x - half < cx < x + w + half and y - half < cy < y + h + half
            assert not inside, f"{tag} covers the cell at ({x}, {y})"
        for lx, ly in labels:
            assert abs(lx - cx) >= half or abs(ly - cy) >= half, f"{tag} covers a label"
