"""Seed 004 ("TiledMMAs"): the SM70 quadpair atom tiled over threads, values and a permutation."""

import pytest

from cutemma import Layout, size
from cutemma.mma import make_mma_atom
from cutemma.tiled import make_tiled_mma

NAME = "SM70_8x8x4_F32F16F16F32_NT"


def c_owners(tiled):
    """(m, n) -> physical 'T#V#' label, from the tiled C TV layout."""
    M = tiled.tile_size_mnk[0]
    L = tiled.tv_layout_C_tiled
    out = {}
    for t in range(size(L[0])):
        for v in range(size(L[1])):
            off = L(t, v)
            out[(off % M, off // M)] = (tiled.thr_id(t), v)
    return out


def test_atom_alone_equals_tiled_with_trivial_layout_and_natural_tile():
    atom = make_mma_atom(NAME)
    tiled = make_tiled_mma(atom, Layout((1, 1, 1)), (8, 8, 4))
    assert tiled.tile_size_mnk == (8, 8, 4) == atom.shape_mnk
    assert make_tiled_mma(atom).tile_size_mnk == (8, 8, 4)
    # CuTe's TiledMMA TV layouts are indexed by thread index (0..31 here: the quadpair's
    # ThrID (4,2):(1,16) is inverted): the row of thread ThrID(l) is the atom's row l
    assert tiled.thread_count == 32
    for which in "ABC":
        a = getattr(atom, f"tv_layout_{which}")
        t = getattr(tiled, f"tv_layout_{which}_tiled")
        for logical in range(8):
            thr = atom.thr_id(logical)
            for v in range(size(a[1])):
                assert t(thr, v) == a(logical, v)


def test_2x2_n_major_atom_layout_is_16x16x4_with_new_threads():
    tiled = make_tiled_mma(NAME, Layout((2, 2), (2, 1)))
    assert tiled.tile_size_mnk == (16, 16, 4)
    assert tiled.size == 32
    owners = c_owners(tiled)
    assert len(owners) == 256
    threads = {t for t, _ in owners.values()}
    assert {4, 8, 12} <= threads and threads == set(range(32))
    # n-major (2,2):(2,1): the atom at (m=0, n=1) is the second quadpair (threads 4..7)
    assert owners[(0, 0)] == (0, 0)
    assert owners[(0, 8)] == (4, 0)
    assert owners[(8, 0)] == (8, 0)
    assert owners[(8, 8)] == (12, 0)


def test_32x32x4_tile_replicates_across_values():
    tiled = make_tiled_mma(NAME, Layout((2, 2), (2, 1)), (32, 32, 4))
    assert tiled.tile_size_mnk == (32, 32, 4)
    labels = set(c_owners(tiled).values())
    assert {(0, 8), (16, 8), (8, 8)} <= labels
    assert len(labels) == 32 * 32


def _t0_a_reads(tiled):
    L = tiled.tv_layout_A_tiled
    M = tiled.tile_size_mnk[0]
    reads = [divmod(L(0, v), M)[::-1] for v in range(size(L[1]))]
    return [m for m, k in reads if k == 0]


def test_t0_a_reads_before_and_after_the_m_permutation():
    plain = make_tiled_mma(NAME, Layout((2, 2), (2, 1)), (32, 32, 4))
    assert _t0_a_reads(plain) == [0, 1, 2, 3, 16, 17, 18, 19]
    perm = Layout((4, 4, 2), (1, 8, 4))
    permuted = make_tiled_mma(NAME, Layout((2, 2), (2, 1)), (perm, 32, 4))
    assert sorted(_t0_a_reads(permuted)) == list(range(8))


def test_m_permutation_table_of_the_seed():
    old_to_new = [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27,
                  4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31]  # fmt: skip
    perm = Layout((4, 4, 2), (1, 8, 4))
    assert [perm(i) for i in range(32)] == old_to_new
    plain = make_tiled_mma(NAME, Layout((2, 2), (2, 1)), (32, 32, 4))
    permuted = make_tiled_mma(NAME, Layout((2, 2), (2, 1)), (perm, 32, 4))
    # the permuted picture puts the element plain had at m at the scattered m = perm(m)
    a0, a1 = plain.tv_layout_A_tiled, permuted.tv_layout_A_tiled
    for t in range(32):
        for v in range(size(a0[1])):
            m0, k0 = a0(t, v) % 32, a0(t, v) // 32
            m1, k1 = a1(t, v) % 32, a1(t, v) // 32
            assert (m1, k1) == (old_to_new[m0], k0)


@pytest.mark.parametrize("name", [NAME, "SM70_8x8x4_F16F16F16F16_TN"])
def test_thread_count_and_tile(name):
    tiled = make_tiled_mma(name, (2, 2, 1))
    assert tiled.size == 32 and tiled.tile_size_mnk == (16, 16, 4)
