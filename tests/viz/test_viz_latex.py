"""LaTeX/TikZ in CuTe's print_latex conventions: nodes checked against the layouts, and the
seed figures compiled with pdflatex where texlive is installed (acceptance 1)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from viz_parse import latex_cells
from viz_reference import mma_layouts, owners, panel_dims

from cutemma.layout import ComposedLayout, Layout, Swizzle
from cutemma.viz import print_latex, to_latex
from cutemma.viz.grid import rgb_of

SEEDS = ["atom", "2x2", "32x32x4", "32Mx32x4", "sm90_64x8"]


def _colour_defs(tex: str) -> dict[str, tuple[int, int, int]]:
    return {
        m[1]: (int(m[2]), int(m[3]), int(m[4]))
        for m in re.finditer(r"\\definecolor\{(\w+)\}\{RGB\}\{(\d+),(\d+),(\d+)\}", tex)
    }


@pytest.mark.parametrize("which", SEEDS)
def test_every_cell_is_a_node_labelled_with_its_thread_and_value(seeds, which):
    obj = seeds[which]
    tex = to_latex(obj)
    cells = latex_cells(tex)
    colours = _colour_defs(tex)
    mnk, _, _ = mma_layouts(obj)
    M, N, K = mnk
    want = owners(obj)
    # CuTe's arrangement in cell units: A at (1, K+2), B at (K+2, 1), C at (K+2, K+2)
    origin = {"A": (1, K + 2), "B": (K + 2, 1), "C": (K + 2, K + 2)}
    assert len(cells) == M * K + K * N + M * N
    for name, (x0, y0) in origin.items():
        rows, cols = panel_dims(name, mnk)
        for r in range(rows):
            for c in range(cols):
                fill, label = cells[(x0 + c + 0.5, y0 + r + 0.5)]
                t, v = want[name][(r, c)][0]
                assert label == f"T{t} V{v}"
                assert colours[fill] == rgb_of(t)


def test_layout_nodes_hold_offsets():
    L = ComposedLayout(Swizzle(2, 0, 2), 0, Layout((4, 4), (4, 1)))
    cells = latex_cells(to_latex(L))
    assert len(cells) == 16
    for r in range(4):
        for c in range(4):
            assert cells[(1 + c + 0.5, 1 + r + 0.5)][1] == str(L(r + 4 * c))


def test_print_latex_prints_the_document(capsys):
    print_latex(Layout((2, 2)))
    out = capsys.readouterr().out
    assert out == to_latex(Layout((2, 2)))
    assert out.rstrip().endswith("\\end{document}")


def test_special_characters_escaped_in_titles(seeds):
    tex = to_latex(seeds["atom"])
    assert "SM70\\_8x8x4\\_F32F16F16F32\\_NT" in tex
    assert "SM70_8x8x4" not in tex.replace("% ", "", 0).split("\\begin{document}")[1]


@pytest.mark.latex
@pytest.mark.parametrize("which", [*SEEDS, "sm90_64x128", "swizzle"])
def test_seed_figures_compile_with_pdflatex(seeds, which, tmp_path):
    obj = seeds.get(which) or ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
    (tmp_path / "fig.tex").write_text(to_latex(obj))
    run = subprocess.run(
        [shutil.which("pdflatex"), "-interaction=nonstopmode", "-halt-on-error", "fig.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "fig.pdf").read_bytes()[:5] == b"%PDF-"


_FILL = re.compile(r"\\fill\[(\w+)\] \((\d+),(\d+)\) rectangle \+\(1,1\);")


def test_big_tiles_become_coloured_squares(seeds):
    # 64x128 GMMA atom: 11,264 cells, past what TeX holds as labelled nodes
    obj = seeds["sm90_64x128"]
    tex = to_latex(obj)
    assert "\\node[cell" not in tex
    fills = {(int(m[2]), int(m[3])): m[1] for m in _FILL.finditer(tex)}
    colours = _colour_defs(tex)
    want = owners(obj)
    M, N, K = 64, 128, 16
    assert len(fills) == M * K + K * N + M * N
    for (r, c), tvs in want["C"].items():
        assert colours[fills[(K + 2 + c, K + 2 + r)]] == rgb_of(tvs[0][0])
