"""Issue 22, "the second hour": the rough edges a new user hit, each held by a test.

Basis layouts on the command line and in pictures, drawing one thread, the copy catalog in
``cutemma list``, ``gemm --sass`` for both kernel families, rank-1 tables, ``--svg`` without
the table.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import cutemma as cm
from cutemma.cli import main
from cutemma.errors import CliError, DrawError, LayoutError


def out_of(capsys, *argv) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def cells(table: str) -> list[list[str]]:
    """The cells of a text grid, one list per body row."""
    return [[c.strip() for c in ln.split("|")[1:-1]] for ln in table.splitlines() if "|" in ln]


# --- basis layouts ---------------------------------------------------------------------
# CuTe C++ (4.2 headers, through tests/cute_cpp/harness.py) printed: cosize of the 64x64
# identity layout _4096; coshape of make_identity_layout((4,(2,3))) (_4,(_2,_3)); the layout
# (4,2):(2@0,1@0) has coshape (_8) and cosize _8.
def test_basis_layout_cosize_and_coshape_as_cpp():
    assert cm.cosize(cm.parse_layout("(_64,_64):(_1@0,_1@1)")) == 4096
    assert cm.make_identity_layout((4, (2, 3))).coshape() == (4, (2, 3))
    L = cm.parse_layout("(4,2):(2@0,1@0)")
    assert (L.coshape(), cm.cosize(L)) == ((8,), 8)


def test_cli_layout_of_basis_strides(capsys):
    out = out_of(capsys, "layout", "(_64,_64):(_1@0,_1@1)")
    assert "size 4096  coshape (64,64)  cosize 4096" in out
    grid = cells(out)
    assert grid[3][5] == "(3,5)" and grid[63][63] == "(63,63)" and len(grid) == 64


def test_basis_layout_pictures_show_coordinates():
    L = cm.make_identity_layout((4, 3))
    text = cm.to_text(L)
    assert cells(text)[2][1] == "(2,1)"
    svg = cm.to_svg(L)
    for r in range(4):
        for c in range(3):
            assert f">({r},{c})<" in svg
    assert "(3,2)" in cm.to_html(L) and "(3,2)" in cm.to_latex(L)
    assert "image/svg+xml" in L._repr_mimebundle_()  # notebooks show a picture


# --- drawing one thread -------------------------------------------------------------------
TILED = cm.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN")


def test_to_svg_of_a_thrmma_draws_that_thread_only():
    thr = TILED.get_slice(5)
    svg = cm.to_svg(thr)
    assert "ThrMMA thread 5" in svg
    labels = set(re.findall(r">T(\d+)<", svg))
    assert labels == {"5"}
    # C: thread 5 holds (m, n) = (1, 2), (1, 3), (9, 2), (9, 3) (PTX ISA m16n8 C fragment:
    # groupID = 5 // 4 = 1, columns 2 * (5 % 4) + {0, 1}, rows groupID and groupID + 8)
    text = cm.to_text(thr)
    c_rows = text.split("C  (T,V)")[1]
    held = [(r, c) for r, row in enumerate(cells(c_rows)) for c, x in enumerate(row) if x]
    assert held == [(1, 2), (1, 3), (9, 2), (9, 3)]


def test_to_svg_of_a_partitioned_tensor():
    t = TILED.get_slice(5).partition_C(cm.make_identity_tensor((16, 8)))
    svg = cm.to_svg(t)
    assert [f"({m},{n})" for m, n in [(1, 2), (1, 3), (9, 2), (9, 3)]] == re.findall(
        r">(\(\d+,\d+\))<", svg
    )
    data = cm.make_tensor(np.arange(8.0), cm.Layout((2, 4), (4, 1)))
    assert cells(cm.to_text(data))[1] == ["4", "5", "6", "7"]


@pytest.mark.parametrize("bad", ["x", 42, None, object()])
def test_drawing_a_wrong_type_is_a_draw_error(bad):
    with pytest.raises(DrawError, match="cannot draw") as e:
        cm.to_svg(bad)
    assert isinstance(e.value, TypeError) and not isinstance(e.value, LayoutError)


def test_show_thread(capsys, tmp_path):
    out = out_of(capsys, "show", "SM80_16x8x16_F32F16F16F32_TN", "--thread", "5")
    assert "ThrMMA thread 5" in out
    assert set(re.findall(r"T(\d+)V\d+", out)) == {"5"}
    svg = tmp_path / "t.svg"
    out_of(capsys, "show", "SM80_16x8x16_F32F16F16F32_TN", "--thread", "3", "--svg", str(svg))
    assert set(re.findall(r">T(\d+)<", svg.read_text())) == {"3"}
    assert main(["show", "SM80_16x8x16_F32F16F16F32_TN", "--thread", "32"]) == 2
    assert "0..31" in capsys.readouterr().err
    assert main(["show", "SM80_16x8x16_F32F16F16F32_TN", "--thread", "-1"]) == 2


# --- the copy catalog on the command line ------------------------------------------------
def test_list_copy_atoms(capsys):
    out = out_of(capsys, "list", "--family", "copy")
    names = [ln.split()[0] for ln in out.splitlines()[2:] if ln and not ln[0].isdigit()]
    assert names == [op.name for op in cm.copy_ops()]
    assert out.rstrip().splitlines()[-1].startswith(f"{len(names)} copy atoms: ")
    out = out_of(capsys, "list", "--family", "ldsm")
    assert "SM75_U32x4_LDSM_N" in out and out.rstrip().endswith("6 copy atoms: sm75.ldsm 6")
    out = out_of(capsys, "list", "--family", "copy", "--arch", "sm90")
    rows = [ln.split() for ln in out.splitlines()[2:] if ln.startswith("SM")]
    assert rows and all(r[1] == "sm90" for r in rows)
    assert main(["list", "--family", "nope"]) == 2


def test_show_help_names_copy_atoms(capsys):
    assert main(["show", "--help"]) == 0
    text = capsys.readouterr().out
    assert "MMA or copy atom" in text and "--family copy" in text and "--thread" in text


# --- small: tables, --svg, gemm --sass ------------------------------------------------------
def test_rank1_table_is_aligned(capsys):
    out = out_of(capsys, "layout", "8:2")
    head, sep, body = out.splitlines()[2:5]
    assert [i for i, ch in enumerate(sep) if ch == "+"] == [
        i for i, ch in enumerate(body) if ch == "|"
    ]
    # each column number ends where its cell ends
    ends = [m.end() - 1 for m in re.finditer(r"\d+", head)]
    assert ends == [i - 1 for i, ch in enumerate(body) if ch == "|"][1:]
    assert cells(out) == [[str(2 * i) for i in range(8)]]


def test_layout_svg_writes_instead_of_printing_the_table(capsys, tmp_path):
    path = tmp_path / "l.svg"
    out = out_of(capsys, "layout", "(8,8):(8,1)", "--svg", str(path))
    assert "|" not in out and f"wrote {path}" in out and path.read_text().startswith("<svg")


def test_gemm_family_follows_cutemma_gemm():
    from cutemma.cli.gemm import gemm_family

    assert gemm_family("auto", None, "bf16") == "sm80"
    assert gemm_family("auto", "sm_90a", "bf16") == "sm90"
    assert gemm_family("auto", "90", "e4m3") == "sm90"
    assert gemm_family("auto", "sm90a", "s8") == "sm80"  # cutemma.gemm runs int8 on sm80 there
    with pytest.raises(CliError, match="s8"):
        gemm_family("sm90", "sm90a", "s8")
    with pytest.raises(CliError, match="sm_90a only"):
        gemm_family("sm90", "sm80", "bf16")


def _nvrtc():
    from cutemma.cuda.compile import unavailable_reason

    return unavailable_reason()


@pytest.mark.skipif(_nvrtc() is not None, reason=str(_nvrtc()))
def test_gemm_sass_compiles_the_family_cutemma_gemm_runs(capsys):
    out = out_of(capsys, "gemm", "--sass", "--arch", "sm_90a")
    assert out.startswith("sm_90a: HGMMA ") and "HGMMA 0" not in out
    # the pick may be the 128x320 kernel, which keeps one 4-byte value on the stack outside
    # its k loop (tests/kernels/test_gemm_sm90_compile.py::test_wide_16_spills_one_...)
    spills = (
        "local memory: none" in out
        or "local memory: 1 loads, 1 stores, 8 B stack, 0 B local" in out
    )
    assert "LocalMemoryUse(" not in out and spills, out
    out = out_of(capsys, "gemm", "--sass")
    assert out.startswith("sm_80: HMMA ") and "HMMA 0" not in out
    assert "LocalMemoryUse(" not in out


def test_verify_says_up_front_what_it_does_and_how_long():
    from cutemma.cli.verify import PROBE_SECONDS, plan_line

    line = plan_line(3144, compile=True, hardware=True)
    assert "3144 atoms" in line and "run each on the GPU" in line
    assert f"about {3144 * PROBE_SECONDS / 60:.0f} min" in line and "--family" in line
