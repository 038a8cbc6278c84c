"""Pictures of copy atoms and TiledCopies, and ``cutemma show`` for copy names."""

from __future__ import annotations

from cutemma.cli import main
from cutemma.copy import make_copy_atom
from cutemma.layout import Layout, Swizzle
from cutemma.layout.swizzle import make_swizzled
from cutemma.tiled import make_tiled_copy_A, make_tiled_mma
from cutemma.viz.copy import copy_figure, copy_svg, copy_text


def test_ldsm_trans_picture_cells():
    fig = copy_figure(make_copy_atom("SM75_U16x2_LDSM_T", "f16"))
    s, d = fig.panels
    # source: lane r addresses row r (8 rows of 8 f16)
    assert [int(s.thread[r, 0]) for r in range(8)] == list(range(8))
    # .trans (PTX ISA): lane t holds column t/4, rows 2(t%4) and 2(t%4)+1
    for t in range(32):
        for h in range(2):
            assert (
                int(d.thread[2 * (t % 4) + h, t // 4]),
                int(d.value[2 * (t % 4) + h, t // 4]),
            ) == (t, h)


def test_tiled_copy_svg_with_banks():
    tc = make_tiled_copy_A(
        make_copy_atom("SM75_U32x4_LDSM_N", "f16"),
        make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", (2, 2)),
    )
    svg = copy_svg(tc, smem=make_swizzled(Swizzle(3, 3, 3), Layout((32, 16), (16, 1))))
    assert svg.count("<rect ") == 3 * 32 * 16
    assert "conflict-free" in svg and "banks: Sw&lt;3,3,3&gt;" in svg
    bad = copy_figure(tc, smem=Layout((32, 64), (64, 1)))
    assert "8-way worst" in bad.title


def test_copy_text_grid():
    text = copy_text(make_copy_atom("SM50_Shuffle_U32_2x2Trans_XOR1", "uint32_t"))
    assert text.splitlines()[0] == "Copy_Atom SM50_Shuffle_U32_2x2Trans_XOR1 (uint32_t), 32 threads"
    assert "D: ((2,16),(1,2)):((1,4),(1,2))" in text


def test_cli_show_copy(capsys, tmp_path):
    assert main(["show", "SM75_U32x4_LDSM_N", "--no-grid"]) == 0
    out = capsys.readouterr().out
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in out and "Atom (f16)" in out
    path = tmp_path / "c.svg"
    assert main(["show", "SM90_U16x8_STSM_T", "--svg", str(path)]) == 0
    assert path.read_text().startswith("<svg")
    args = [
        "show",
        "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>",
        "-p",
        "dtype=bf16",
        "-p",
        "thr=(16,8):(8,1)",
        "-p",
        "val=(1,8)",
        "-p",
        "smem=(16,64):(64,1)",
    ]
    assert main(args) == 0
    assert "conflict-free" in capsys.readouterr().out
    assert main(["show", "SM75_U32x4_LDSM_N", "-p", "a_major=K"]) == 2
    assert "a copy atom takes -p dtype" in capsys.readouterr().err


def test_cli_show_copy_html(tmp_path):
    path = tmp_path / "c.html"
    assert main(["show", "SM90_U32x2_STSM_N", "--html", str(path)]) == 0
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "mouseenter" in page
    assert page.count('data-t="31"') >= 2  # thread 31 appears in the source and destination
