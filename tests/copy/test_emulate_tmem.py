"""tcgen05.ld/st on the CPU (cutemma.emulate.tmem) against the PTX ISA's fragment text
(tcgen05 "Matrix fragments": 32x32b lane t holds lane t's columns; 16x32bx2 lanes 0-15 hold
the first half, lanes 16-31 the half immHalfSplitoff columns on) and round trips for every atom."""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.copy import copy_ops, make_copy_atom
from cutemma.emulate.tmem import tmem_load, tmem_store
from cutemma.errors import CopyError

TMEM = np.arange(128 * 512, dtype=np.uint32).reshape(128, 512) * 7 + 3


@pytest.mark.parametrize("r", [1, 4, 32])
def test_32x32b_lane_t_reads_its_lane(r):
    regs = tmem_load(make_copy_atom(f"SM100_TMEM_LOAD_32dp32b{r}x", 32), TMEM, 64, 16)
    for t in (0, 7, 31):
        assert regs[t].tolist() == TMEM[64 + t, 16 : 16 + r].tolist()


@pytest.mark.parametrize("r", [1, 2, 8])
def test_16x32bx2_upper_lanes_read_the_second_half(r):
    regs = tmem_load(make_copy_atom(f"SM100_TMEM_LOAD_16dp32b{r}x", 32), TMEM, 32, 0)
    for t in (0, 5, 15):
        assert regs[t].tolist() == TMEM[32 + t, 0:r].tolist()
        assert regs[16 + t].tolist() == TMEM[32 + t, r : 2 * r].tolist()  # immHalfSplitoff = R


def _tmem_names():
    return [op.name for op in copy_ops(family="sm100.tmem_store")]


def test_every_store_then_load_round_trips():
    for name in _tmem_names():
        pack = name.endswith("_16b")
        bits = 16 if pack else 32
        st = make_copy_atom(name, bits)
        ld = make_copy_atom(name.replace("STORE", "LOAD"), bits)
        regs = np.arange(1, 1 + st.num_val_src * 32, dtype=np.uint32).reshape(32, -1) % 60000
        tmem = np.zeros((128, 512), dtype=np.uint32)
        tmem_store(st, regs, tmem, 0, 0)
        # every value in its own column word; the instruction covers dp lanes x (B*R/32) columns
        assert np.count_nonzero(tmem) == regs.size
        assert np.array_equal(tmem_load(ld, tmem, 0, 0), regs.astype(ld_type(bits)))


def ld_type(bits):
    return np.uint16 if bits == 16 else np.uint32


def test_bad_tmem_inputs():
    ld = make_copy_atom("SM100_TMEM_LOAD_32dp32b128x", 32)
    with pytest.raises(CopyError, match="run past 512"):
        tmem_load(ld, TMEM, 0, 400)
    with pytest.raises(CopyError, match="multiple of 16"):
        tmem_load(ld, TMEM, 3, 0)
    with pytest.raises(CopyError, match="not a tensor-memory"):
        tmem_load(make_copy_atom("SM75_U32x1_LDSM_N", 32), TMEM, 0, 0)
