"""``SM100_TMEM_LOAD_STAT_32dp32b{32,128}x``: tcgen05.ld.red with .max.f32 (issue 22).

Witness: the PTX ISA 8.8 text of tcgen05.ld — the 32x32b shape gives lane t of the warp row t
of the 32 data-path lanes and one 32-bit column per repetition; Table 49 gives .num registers
for .32x32b; ``.red`` reduces the values "loaded across columns in each lane" into ``redVal``,
and needs .num of at least .x2.
"""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.copy import copy_op, copy_ops, copy_traits, make_copy_atom
from cutemma.emulate.tmem import tmem_load, tmem_load_red
from cutemma.errors import CopyError

REPS = (32, 128)


@pytest.mark.parametrize("r", REPS)
def test_instruction_is_the_isa_form(r):
    op = copy_op(f"SM100_TMEM_LOAD_STAT_32dp32b{r}x")
    parts = op.ptx.split(".")
    assert parts[:5] == ["tcgen05", "ld", "red", "sync", "aligned"]
    assert parts[5] == "32x32b" and parts[6] == f"x{r}" and r >= 2
    assert parts[7:] == ["max", "f32"]
    assert op.ptx_isa == (8, 8)
    assert op.src.space == "tmem" and op.dst.space == "reg" and op.dst.count == r  # Table 49


@pytest.mark.parametrize("r", REPS)
def test_registers_follow_the_32x32b_formula(r):
    atom = make_copy_atom(f"SM100_TMEM_LOAD_STAT_32dp32b{r}x", "f32")
    rng = np.random.default_rng(r)
    tmem = rng.integers(0, 2**32, size=(128, 512), dtype=np.uint64).astype(np.uint32)
    lane0, col0 = 64, 512 - r
    regs, _ = tmem_load_red(atom, tmem, lane0, col0)
    # ISA: thread t, register j <- lane lane0 + t, column col0 + j
    want = np.array([[tmem[lane0 + t, col0 + j] for j in range(r)] for t in range(32)])
    assert (regs == want).all()
    # the same layouts as the plain load of that shape
    plain = copy_traits(f"SM100_TMEM_LOAD_32dp32b{r}x")
    stat = copy_traits(f"SM100_TMEM_LOAD_STAT_32dp32b{r}x")
    assert (stat.src_layout, stat.dst_layout, stat.val_id) == (
        plain.src_layout,
        plain.dst_layout,
        plain.val_id,
    )
    assert (tmem_load(atom, tmem, lane0, col0) == regs).all()


@pytest.mark.parametrize("r", REPS)
def test_row_max_is_the_maximum_across_each_lanes_columns(r):
    atom = make_copy_atom(f"SM100_TMEM_LOAD_STAT_32dp32b{r}x", "f32")
    rng = np.random.default_rng(7)
    words = rng.standard_normal((128, 512)).astype(np.float32)
    words[3, 10] = np.nan  # a NaN is not the maximum without .NaN
    words[96 + 5, :] = -np.inf
    for lane0, col0 in [(0, 0), (96, 128)]:
        _, red = tmem_load_red(atom, words.view(np.uint32), lane0, col0)
        for t in range(32):
            row = words[lane0 + t, col0 : col0 + r]
            assert red[t] == np.nanmax(row), (lane0, t)


def test_catalog_lists_them_and_plain_loads_have_no_reduction():
    names = {o.name for o in copy_ops("sm100", "tmem_load_stat")}
    assert names == {"SM100_TMEM_LOAD_STAT_32dp32b32x", "SM100_TMEM_LOAD_STAT_32dp32b128x"}
    with pytest.raises(CopyError, match="without a reduction"):
        tmem_load_red(
            make_copy_atom("SM100_TMEM_LOAD_32dp32b32x", "f32"),
            np.zeros((128, 512), np.uint32),
            0,
            0,
        )
    with pytest.raises(CopyError):
        copy_op("SM100_TMEM_LOAD_STAT_32dp32b64x")  # CuTe has the 32x and 128x only


# Copy_Traits<SM100_TMEM_LOAD_STAT_32dp32b{32,128}x> in CUTLASS main's
# include/cute/atom/copy_traits_sm100.hpp (newer than the 4.2 wheel the C++ witness compiles):
# ThrID 32, ValID (32*R, 32):(1, DP_b), SrcLayout (32, 1024*R):(0, 1), DstLayout
# (32, 32*R):(32*R, 1), RefLayout = SrcLayout; DP_b = 2**16 columns * 32 bits.
@pytest.mark.parametrize("r", REPS)
def test_traits_equal_newer_cutlass(r):
    t = copy_traits(f"SM100_TMEM_LOAD_STAT_32dp32b{r}x")
    bits = 32 * r
    assert str(t.thr_id) == "32:1"
    assert str(t.val_id) == f"({bits},32):(1,{2**16 * 32})"
    assert str(t.src_layout) == f"(32,{bits * 32}):(0,1)" == str(t.ref_layout)
    assert str(t.dst_layout) == f"(32,{bits}):({bits},1)"
