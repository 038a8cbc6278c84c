"""One thread limit, where CuTe has it: a kernel (issue 34, "Thread limits disagree").

CuTe's TiledMMA and TiledCopy are layouts: ``make_tiled_copy_A`` of a TiledMMA of (256,256,1)
SM80 atoms, 2,097,152 threads, builds in CuTe as any other. A block of more than 1,024
threads is what the hardware refuses, so only a kernel (a GemmDesign's check, a family's
config) is held to it, and the figure is read from one table, :mod:`cutemma.hardware`.
Pictures and analyses of big objects stay bounded by the work they take, refused naming
their size (tests/test_bounded_work.py, the bad-input tables).
"""

from __future__ import annotations

import pytest

from cutemma import Layout, make_tiled_mma
from cutemma.cli import main
from cutemma.copy import make_copy_atom
from cutemma.errors import CopyError, DesignError, LayoutError, TiledMmaError
from cutemma.hardware import limits
from cutemma.tiled import make_tiled_copy, make_tiled_copy_A

ATOM = "SM80_16x8x16_F32F16F16F32_TN"  # 32 threads; A is 16 x 16


def _mk(index: int, rows: int) -> tuple[int, int]:
    """(m, k) of a column-major index into a tile of ``rows`` rows (CuTe's tile order)."""
    return index % rows, index // rows


def test_make_tiled_copy_A_of_256x256_atoms_is_built_as_in_cute():
    tm = make_tiled_mma(ATOM, (256, 256, 1))
    tc = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), tm)
    # 256 * 256 atoms of one warp each; A's tile is 256 atoms of 16 rows by the atom's 16 k
    assert tc.size == 256 * 256 * 32 == tm.size
    assert tc.tiler_mn == (256 * 16, 16)
    # the first atom's threads copy what the one-atom TiledMMA's copy has them copy: the
    # same (m, k) for every value (thread t < 32 sits in atom (0, 0) in both)
    one = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), make_tiled_mma(ATOM))
    big_src, one_src = tc.layout_src_tv_tiled, one.layout_src_tv_tiled
    for t in range(32):
        for v in range(one.num_values):
            assert _mk(big_src(t, v), 256 * 16) == _mk(one_src(t, v), 16), (t, v)
    # the last thread's values lie in the last atom's rows (m 4080..4095)
    last = {_mk(big_src(tc.size - 1, v), 4096)[0] for v in range(tc.num_values)}
    assert min(last) >= 4096 - 16


def test_a_tiled_copy_takes_any_thread_count():
    uni = make_copy_atom("UniversalCopy<uint32_t>", "f16")
    assert make_tiled_copy(uni, Layout(2**19), Layout(2)).size == 2**19
    assert make_tiled_copy(uni, 2**40, Layout((1, 2))).size == 2**40


def test_tiled_mma_and_tiled_copy_agree_on_big_thread_counts():
    # the issue: make_tiled_mma took 33M threads while the copy of 2M was refused
    tm = make_tiled_mma(ATOM, (1024, 1024, 1))
    assert tm.size == 1024 * 1024 * 32
    tc = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), tm)
    assert tc.size == tm.size


def test_show_draws_a_16x16_atom_layout(tmp_path, capsys):
    out = tmp_path / "t.svg"
    assert main(["show", ATOM, "--atom-layout", "16,16,1", "--svg", str(out)]) == 0
    svg = out.read_text()
    assert svg.startswith("<svg") or "<svg" in svg[:200]
    assert f"{16 * 16 * 32} threads" in svg  # the title names the TiledMMA's threads


def test_pictures_and_analyses_of_big_copies_are_refused_naming_the_size():
    from cutemma import print_latex
    from cutemma.tiled.copy_analysis import bank_conflicts

    uni = make_copy_atom("UniversalCopy<uint32_t>", "f16")
    with pytest.raises(LayoutError, match=str(2**40)):
        print_latex(make_tiled_copy(uni, 2**40, Layout((1, 2))))
    with pytest.raises(CopyError, match="65536 threads"):
        bank_conflicts(make_tiled_copy(uni, Layout(2**16), Layout(2)), Layout((256, 256)), "S")


def test_a_design_past_the_block_limit_is_refused_naming_the_hardware_limit():
    from cutemma.kernels.design import GemmDesign, check

    lim = limits("sm_80").threads_per_block  # the table's figure, whatever it is
    warps = (8, 8)  # 64 warps of 32 threads
    assert 64 * 32 > lim
    design = GemmDesign(make_tiled_mma(ATOM, (*warps, 1)), (16 * 8 * 2, 8 * 8 * 2, 32))
    with pytest.raises(
        DesignError, match=f"{64 * 32} threads per block \\(the sm_80 limit is {lim}\\)"
    ):
        check(design, "sm_80")


def test_the_sm80_config_reads_the_block_limit_from_the_hardware_table():
    from cutemma.hardware import LIMITS, MAX_THREADS_PER_BLOCK
    from cutemma.kernels.sm80.config import GemmConfig

    assert MAX_THREADS_PER_BLOCK == min(lim.threads_per_block for lim in LIMITS.values())
    with pytest.raises(TiledMmaError, match=f"{MAX_THREADS_PER_BLOCK} threads a block"):
        GemmConfig(block_m=512, block_n=512, warps=(8, 8))
