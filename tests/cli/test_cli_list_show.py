"""``cutemma list`` and ``cutemma show`` through the real argument parser."""

import pytest

from cutemma.cli import build_parser
from cutemma.cli.list_show import show_text
from cutemma.errors import AtomError, CliError
from cutemma.mma import make_mma_atom


def run(*argv):
    args = build_parser().parse_args(list(argv))
    return args.run(args)


def grid(text: str, which: str) -> list[list[str]]:
    """The cells of panel ``which`` in show/print_text output: one list per row."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"{which}  (T,V)"))
    rows = []
    for ln in lines[start + 3 :]:
        if "|" not in ln:
            break
        rows.append([c.strip() for c in ln.split("|")[1:-1]])
    return rows


def test_list_one_arch_prints_rows_and_counts(capsys):
    assert run("list", "--arch", "sm80", "--family", "b1") == 0
    out = capsys.readouterr().out
    assert "SM80_16x8x256_S32U1U1S32_TN_ANDPOPC" in out
    assert "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc" in out
    assert out.rstrip().endswith("6 operations: sm80.b1 6")


def test_list_counts_per_family(capsys):
    run("list", "--arch", "89")
    assert "8 operations: sm89.fp8 8" in capsys.readouterr().out


def test_list_unknown_family_is_an_atom_error():
    with pytest.raises(AtomError, match="no family 'xyz'"):
        run("list", "--family", "xyz")


def test_show_prints_operation_traits_and_grids(capsys):
    assert run("show", "SM70_8x8x4_F32F16F16F32_NT") == 0
    out = capsys.readouterr().out
    assert "mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32" in out
    assert "D float[8]  A uint32_t[2]  B uint32_t[2]  C float[8]" in out
    assert "thr_id     (4,2):(1,16)" in out
    assert "C layout   ((2,2,2),(2,2,2)):((1,16,4),(8,2,32))" in out
    assert len(grid(out, "A")) == 8 and len(grid(out, "C")) == 8


def test_grid_shows_who_holds_each_element(capsys):
    # seed 004: (m,n) = (0,2) is held by T2 V0 and (2,1) by T0 V3 in the SM70 f32 accumulator
    run("show", "SM70_8x8x4_F32F16F16F32_NT")
    c = grid(capsys.readouterr().out, "C")
    assert c[0][2] == "T2V0" and c[2][1] == "T0V3"


def test_show_draws_b_k_by_n_like_cute_print_latex(capsys):
    # CuTe's print_latex (cute/util/print_latex.hpp) places B's (n, k) at row k, column n,
    # above C: K rows, N columns. SM80 m16n8k16: B is 16 (k) rows of 8 (n) columns, and
    # the ISA's B fragment gives thread 0 (n=0, k=0) and (n=0, k=1) as values 0 and 1.
    run("show", "SM80_16x8x16_F32F16F16F32_TN")
    b = grid(capsys.readouterr().out, "B")
    assert (len(b), len(b[0])) == (16, 8)
    assert b[0][0] == "T0V0" and b[1][0] == "T0V1" and b[0][1] == "T4V0"


def test_show_atom_layout_draws_b_the_same_way_and_honours_no_grid(capsys):
    run("show", "SM80_16x8x16_F32F16F16F32_TN", "--atom-layout", "2,1")
    b = grid(capsys.readouterr().out, "B")
    assert (len(b), len(b[0])) == (16, 8)
    run("show", "SM80_16x8x16_F32F16F16F32_TN", "--atom-layout", "(2,2):(2,1)", "--no-grid")
    out = capsys.readouterr().out
    assert "T0V0" not in out and "TiledMMA" in out


def test_show_without_grids_and_bad_params(capsys):
    run("show", "SM61_DP4A", "--no-grid")
    assert "T0V0" not in capsys.readouterr().out
    with pytest.raises(AtomError, match="key=value"):
        run("show", "SM61_DP4A", "-p", "oops")
    with pytest.raises(CliError, match="no atoms for sm999"):
        run("list", "--arch", "sm999")
    assert "note       complex<double>" in show_text(make_mma_atom("SM80_8x8x4_C64C64C64C64_TN"))
