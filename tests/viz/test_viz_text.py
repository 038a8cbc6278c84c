"""Terminal grids (CuTe's print_layout style) and the CLI picture helpers."""

from __future__ import annotations

import argparse
import re

import pytest
from viz_parse import svg_panels
from viz_reference import mma_layouts, owners, panel_dims

from cutemma.cli.show_viz import (
    add_picture_args,
    parse_atom_layout,
    parse_tile,
    terminal_text,
    write_from_args,
    write_pictures,
)
from cutemma.errors import LayoutError
from cutemma.layout import Layout
from cutemma.viz import to_text


def grids(text: str) -> list[list[list[str]]]:
    """Every grid in the text: rows of cell strings."""
    out, cur = [], None
    for line in text.splitlines():
        if re.match(r"^\s*\d+\s+\|", line):
            cur.append([c.strip() for c in line.split("|")[1:-1]])
        elif line.strip().startswith("+"):
            cur = []
            out.append(cur)
    return out


@pytest.mark.parametrize("which", ["atom", "2x2"])
def test_text_grids_show_thread_and_value_per_cell(seeds, which):
    obj = seeds[which]
    mnk, _, _ = mma_layouts(obj)
    want = owners(obj)
    got = grids(to_text(obj))
    assert len(got) == 3
    for name, grid in zip("ABC", got):
        rows, cols = panel_dims(name, mnk)
        assert len(grid) == rows and all(len(r) == cols for r in grid)
        for r in range(rows):
            for c in range(cols):
                t, v = want[name][(r, c)][0]
                assert grid[r][c] == f"T{t}V{v}"


def test_layout_text_grid_holds_offsets():
    L = Layout(((2, 2), 3), ((1, 6), 2))
    (grid,) = grids(terminal_text(L))
    assert [[int(x) for x in row] for row in grid] == [
        [L(r + 4 * c) for c in range(3)] for r in range(4)
    ]


def test_write_pictures_writes_what_is_asked(seeds, tmp_path):
    paths = write_pictures(
        seeds["atom"], svg=str(tmp_path / "a.svg"), latex=str(tmp_path / "a.tex")
    )
    assert paths == [str(tmp_path / "a.svg"), str(tmp_path / "a.tex")]
    assert not (tmp_path / "a.html").exists()
    assert len(svg_panels((tmp_path / "a.svg").read_text())["C"]["rects"]) == 64
    assert (tmp_path / "a.tex").read_text().count("\\node[cell") == 128


def test_picture_args_round_trip(seeds, tmp_path, capsys):
    p = argparse.ArgumentParser()
    add_picture_args(p)
    args = p.parse_args(["--html", str(tmp_path / "x.html")])
    assert write_from_args(seeds["atom"], args) is True
    assert "wrote" in capsys.readouterr().out
    assert (tmp_path / "x.html").read_text().startswith("<!DOCTYPE html>")


def test_tile_and_atom_layout_options():
    assert parse_tile("32,32,4") == (32, 32, 4)
    assert parse_tile("(4,4,2):(1,8,4), 32, 4")[0] == Layout((4, 4, 2), (1, 8, 4))
    assert parse_atom_layout("(2,2):(2,1)") == Layout((2, 2), (2, 1))
    with pytest.raises(LayoutError, match="1 to 3 comma-separated"):
        parse_tile("1,2,3,4")
    with pytest.raises(LayoutError, match="--atom-layout"):
        parse_atom_layout("two")


def test_cannot_draw_a_non_layout():
    # a wrong type is a DrawError (a TypeError), not a LayoutError (issue 22)
    from cutemma.errors import DrawError

    with pytest.raises(DrawError, match="cannot draw int: expected a Layout, ComposedLayout") as e:
        to_text(42)
    assert isinstance(e.value, TypeError) and not isinstance(e.value, LayoutError)
