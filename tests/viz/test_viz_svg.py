"""SVG pictures, read back cell by cell and compared with the layouts (acceptance 1, 2)."""

from __future__ import annotations

import pytest
from viz_checks import check_mma_svg
from viz_parse import svg_panels, svg_size

from cutemma.layout import ComposedLayout, Layout, Swizzle
from cutemma.viz import to_svg
from cutemma.viz.grid import hex_of

SEEDS = ["atom", "2x2", "32x32x4", "32Mx32x4", "sm90_64x8"]


@pytest.mark.parametrize("which", SEEDS)
def test_seed_figures_cell_by_cell(seeds, which):
    obj = seeds[which]
    small = not which.startswith("sm90")
    check_mma_svg(obj, to_svg(obj), labelled=small)


def test_panels_in_cute_arrangement(seeds):
    # C at the origin, A to its left sharing C's rows, B above it sharing C's columns
    panels = svg_panels(to_svg(seeds["atom"], cell=40))
    first = {n: (float(p["rects"][0]["x"]), float(p["rects"][0]["y"])) for n, p in panels.items()}
    assert first["A"][0] < first["C"][0] and first["A"][1] == first["C"][1]
    assert first["B"][1] < first["C"][1] and first["B"][0] == first["C"][0]
    last_a = panels["A"]["rects"][-1]
    assert float(last_a["x"]) + 40 < first["C"][0]  # a gap between A and C


def test_seed_2x2_shows_new_threads_and_32x32_new_values(seeds):
    c2 = svg_panels(to_svg(seeds["2x2"]))["C"]
    threads = {int(r["data-t"]) for r in c2["rects"]}
    assert {4, 8, 12} <= threads  # seed: "T4 and T8 and T12 ... not used before"
    c32 = svg_panels(to_svg(seeds["32x32x4"]))["C"]
    tv = {(int(r["data-t"]), int(r["data-v"])) for r in c32["rects"]}
    assert {(0, 8), (16, 8), (8, 8)} <= tv


def test_m_permutation_makes_thread0_contiguous_in_a(seeds):
    # seed: the (4,4,2):(1,8,4) M-permutation brings T0's A reads to m = 0..7
    a = svg_panels(to_svg(seeds["32Mx32x4"]))["A"]
    cols = a["cols"]
    rows_t0 = [i // cols for i, r in enumerate(a["rects"]) if r["data-t"] == "0"]
    assert sorted(rows_t0) == list(range(8))
    plain = svg_panels(to_svg(seeds["32x32x4"]))["A"]
    rows_plain = [i // cols for i, r in enumerate(plain["rects"]) if r["data-t"] == "0"]
    assert sorted(rows_plain) == [0, 1, 2, 3, 16, 17, 18, 19]


def test_sm90_accumulator_matches_the_seed_walkthrough(seeds):
    c = svg_panels(to_svg(seeds["sm90_64x128"]))["C"]
    at = {
        (int(r["data-t"]), int(r["data-v"])): divmod(i, c["cols"]) for i, r in enumerate(c["rects"])
    }
    # seed 004, Hopper: pairs of values along N, four threads along N, 8 rows, then V2 at m=8
    assert at[(0, 0)] == (0, 0) and at[(0, 1)] == (0, 1) and at[(1, 0)] == (0, 2)
    assert at[(4, 0)] == (1, 0) and at[(0, 2)] == (8, 0) and at[(32, 0)] == (16, 0)
    assert at[(0, 4)] == (0, 8)  # the 64x8 pattern repeats along N


@pytest.mark.parametrize(
    "layout",
    [
        Layout((4, 6), (6, 1)),
        Layout(((2, 2), (2, 3)), ((1, 8), (2, 4))),
        Layout(8, 3),
        ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1))),
    ],
    ids=str,
)
def test_layout_cells_hold_their_offsets(layout):
    (p,) = svg_panels(to_svg(layout)).values()
    assert p["rows"] * p["cols"] == layout.size()
    for i, rect in enumerate(p["rects"]):
        r, c = divmod(i, p["cols"])
        assert int(rect["data-o"]) == layout(r + p["rows"] * c)
        assert rect["fill"] == hex_of(layout(r + p["rows"] * c))


def test_distinct_threads_get_distinct_colours(seeds):
    c = svg_panels(to_svg(seeds["sm90_64x128"]))["C"]
    colour_of = {}
    for r in c["rects"]:
        colour_of.setdefault(r["fill"], set()).add(r["data-t"])
    assert all(len(ts) == 1 for ts in colour_of.values())
    assert len(colour_of) == 128


def test_tv_layout_over_a_tile():
    tv = Layout(((4, 8), (2, 2)), ((32, 1), (16, 8)))  # SM80 16x8 accumulator
    (p,) = svg_panels(to_svg(tv, tile=(16, 8))).values()
    assert len(p["rects"]) == 128
    for t in range(32):
        for v in range(4):
            o = tv(t, v)
            rect = p["rects"][(o % 16) * 8 + o // 16]
            assert (rect["data-t"], rect["data-v"]) == (str(t), str(v))


def test_text_shrinks_then_drops_but_size_stays_linear():
    small, big = to_svg(Layout((16, 16))), to_svg(Layout((256, 256)))
    assert svg_panels(small)["L"]["labels"] is not None
    assert "<tspan" not in big  # 7 px cells: colour only, no labels
    w, h = svg_size(big)
    assert w < 2100 and h < 2100
    mid = to_svg(Layout((128, 128)), cell=7)
    assert 3.6 < len(big) / len(mid) < 4.4  # bytes per cell constant


def test_errors_name_the_inputs():
    from cutemma.errors import LayoutError

    tv = Layout((4, 2), (1, 4))
    with pytest.raises(LayoutError, match=r"reaches offset 7; the 2x2 C tile"):
        to_svg(tv, tile=(2, 2))
    with pytest.raises(LayoutError, match=r"\(M, N\) tile; got tile=\(4,\)"):
        to_svg(tv, tile=(4,))
    with pytest.raises(LayoutError, match="rank 2 \\(thread, value\\); 8:1 has rank 1"):
        to_svg(Layout(8), tile=(4, 2))
    with pytest.raises(LayoutError, match="needs a plain TV Layout"):
        to_svg(ComposedLayout(Swizzle(1, 0, 1), 0, Layout((2, 2))), tile=(2, 2))
