"""``cutemma list`` and ``cutemma show`` through the real argument parser."""

import argparse

import pytest

from cutemma.cli.list_show import register, show_text, tv_grid
from cutemma.errors import AtomError
from cutemma.mma import make_mma_atom


def run(*argv):
    parser = argparse.ArgumentParser(prog="cutemma")
    register(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    return args.run(args)


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
    assert "A (M=8 x K=4)" in out and "C (M=8 x N=8)" in out


def test_grid_shows_who_holds_each_element():
    # seed 004: (m,n) = (0,2) is held by T2 V0 and (2,1) by T0 V3 in the SM70 f32 accumulator
    lines = tv_grid(make_mma_atom("SM70_8x8x4_F32F16F16F32_NT"), "C").splitlines()
    row0, row2 = lines[2].split(), lines[4].split()
    assert row0[0] == "0" and row0[1 + 2] == "T2V0"
    assert row2[0] == "2" and row2[1 + 1] == "T0V3"


def test_show_without_grids_and_bad_params(capsys):
    run("show", "SM61_DP4A", "--no-grid")
    assert "T0V0" not in capsys.readouterr().out
    with pytest.raises(AtomError, match="key=value"):
        run("show", "SM61_DP4A", "-p", "oops")
    assert "note       complex<double>" in show_text(make_mma_atom("SM80_8x8x4_C64C64C64C64_TN"))
