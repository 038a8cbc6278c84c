"""Bank-conflict, coalescing and vector-width analysis of TiledCopies, checked by hand arithmetic.

Expected values are worked out from the bank rules (32 banks x 4 bytes; ldmatrix serves each
8-row matrix in one phase; 128-bit accesses in phases of 8 threads), not from the code.
"""

from __future__ import annotations

import pytest

from cutemma.copy import make_copy_atom
from cutemma.copy.banks import lanes_per_phase, sectors, wavefronts
from cutemma.errors import CopyError
from cutemma.layout import Layout, Swizzle
from cutemma.layout.swizzle import make_swizzled
from cutemma.tiled import make_tiled_copy, make_tiled_copy_A, make_tiled_mma
from cutemma.tiled.copy_analysis import bank_conflicts, coalescing, explain, vector_bits


def _ldsm_a(op="SM75_U32x4_LDSM_N", atoms=(2, 2)):
    tm = make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", atoms)
    return make_tiled_copy_A(make_copy_atom(op, "f16"), tm)


@pytest.mark.parametrize(
    "smem, worst, why",
    [
        # rows of 64 f16 = 128 bytes: all 8 rows of a matrix start in 16-byte group 0
        (Layout((32, 64), (64, 1)), 8, "8-way"),
        # rows of 32 f16 = 64 bytes: row r starts in group 4r % 8 -> two groups, 4 rows each
        (Layout((32, 32), (32, 1)), 4, "4-way"),
        # rows of 16 f16 = 32 bytes: group 2r % 8 -> four groups, 2 rows each
        (Layout((32, 16), (16, 1)), 2, "2-way"),
        # Sw<3,3,3> XORs the 16-byte chunk with the row's low 3 bits: 8 rows, 8 groups
        (make_swizzled(Swizzle(3, 3, 3), Layout((32, 64), (64, 1))), 1, "free"),
        # Sw<2,3,3> on 64-byte rows: group = 4*(r&1) + (chunk ^ (r>>1 & 3)): all distinct
        (make_swizzled(Swizzle(2, 3, 3), Layout((32, 32), (32, 1))), 1, "free"),
    ],
)
def test_ldmatrix_bank_conflicts(smem, worst, why):
    r = bank_conflicts(_ldsm_a(), smem)
    assert r.worst == worst, why
    # x4: 4 phases per instruction, each costing `worst` wavefronts
    assert all(c.phases == 4 and c.wavefronts == 4 * worst for c in r.instructions)
    assert r.bank_conflicts == r.ideal * (worst - 1)
    assert r.side == "S"


def test_cp_async_128bit_quarter_warp_phases():
    atom = make_copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "f16")
    k_major = make_tiled_copy(atom, Layout((16, 8), (8, 1)), Layout((1, 8)))
    m_major = make_tiled_copy(atom, Layout((16, 8), (1, 16)), Layout((1, 8)))
    smem = Layout((16, 64), (64, 1))  # 128-byte rows
    # 8 consecutive threads write one whole 128-byte row: one wavefront per phase
    r = bank_conflicts(k_major, smem)
    assert r.conflict_free and all(c.phases == 4 for c in r.instructions)
    # 8 consecutive threads write the first 16 bytes of 8 different rows: 8-way
    r = bank_conflicts(m_major, smem)
    assert r.worst == 8 and r.side == "D"


def test_coalescing_and_vector_width():
    atom = make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f16")
    tc = make_tiled_copy(atom, Layout((16, 8), (8, 1)), Layout((1, 8)))
    r = coalescing(tc, Layout((16, 64), (64, 1)))
    # 4 warps x 1 instruction, each 32 x 16 bytes = 512 bytes = 16 sectors
    assert (r.requests, r.sectors, r.ideal, r.efficiency) == (4, 64, 64, 1.0)
    # a row pitch of 72 f16 (144 bytes): each row's 128 bytes cross one extra sector
    r = coalescing(tc, Layout((16, 64), (72, 1)))
    assert r.ideal == 64 and r.sectors > 64
    assert vector_bits(tc, Layout((16, 64), (64, 1))) == 128
    u16 = make_tiled_copy(
        make_copy_atom("UniversalCopy<uint16_t>", "f16"), Layout((16, 8), (8, 1)), Layout((1, 8))
    )
    # 8 values of a thread along K, K contiguous: a 128-bit vector; M contiguous: 16 bits
    assert vector_bits(u16, Layout((16, 64), (64, 1))) == 128
    assert vector_bits(u16, Layout((16, 64), (1, 16))) == 16


def test_not_vectorizable_is_named():
    atom = make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f16")
    tc = make_tiled_copy(atom, Layout((16, 8), (8, 1)), Layout((1, 8)))
    with pytest.raises(CopyError, match="does not vectorize into 16-byte accesses"):
        coalescing(tc, Layout((16, 64), (1, 16)))


def test_side_needed_for_register_copies():
    tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "f32"), Layout(32))
    with pytest.raises(CopyError, match="say which side"):
        bank_conflicts(tc, Layout(32))
    assert bank_conflicts(tc, Layout(32), side="S").conflict_free  # 32 words, 32 banks


def test_bank_primitives():
    assert lanes_per_phase(16) == 8 and lanes_per_phase(8) == 16 and lanes_per_phase(1) == 32
    assert wavefronts([[(4 * t, 4)] for t in range(32)]) == 1
    assert wavefronts([[(8 * t, 4)] for t in range(32)]) == 2  # stride 2 words: 2-way
    assert wavefronts([[(4 * 33 * t, 4)] for t in range(32)]) == 1  # padded pitch
    assert sectors([(0, 16), (16, 16), (32, 4)]) == 2


def test_explain_words():
    text = explain(
        _ldsm_a(),
        smem=make_swizzled(Swizzle(3, 3, 3), Layout((32, 64), (64, 1))),
    )
    assert "SM75_U32x4_LDSM_N" in text and "conflict-free" in text and "8x8 matrix" in text
    tc = make_tiled_copy(
        make_copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "f16"),
        Layout((16, 8), (8, 1)),
        Layout((1, 8)),
    )
    text = explain(tc, smem=Layout((16, 64), (64, 1)), gmem=Layout((16, 64), (64, 1)))
    assert "100% efficient" in text and "widest vector per thread 128 bits" in text
