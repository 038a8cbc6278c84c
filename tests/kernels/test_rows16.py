"""Rows half a 32-byte sector off (issue 33): the call record says which operands' rows sit
an odd multiple of 16 bytes apart, the cost model charges such rows ``half_sector`` times
their bytes and halves the rows a cluster multicasts, and the space offers its clusters of
2 only to such calls (bench/results/raw/align-probe-h200.json measured all three)."""

from __future__ import annotations

import pytest

from cutemma.errors import TiledMmaError
from cutemma.kernels.call import rows16
from cutemma.kernels.cost import device, loaded_rows, pairs, predict
from cutemma.kernels.pick import builtin_sm90_config
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.space import (
    PAIR_MIN_M,
    candidates,
    cluster_kernels,
    hinted_kernels,
    kernel_reads,
    kernels_of,
    swapped_kernels,
)


class _T:
    """A strided matrix as torch shows one: shape, stride(i), element_size()."""

    def __init__(self, shape, strides, size):
        self.shape, self._strides, self._size = shape, strides, size

    def stride(self, i):
        return self._strides[i]

    def element_size(self):
        return self._size


class _Call:
    def __init__(self, A, B, a_major, b_major):
        self.A, self.B, self.a_major, self.b_major = A, B, a_major, b_major


def _row_major(rows, cols, size=2):
    return _T((rows, cols), (cols, 1), size)


def _col_major(rows, cols, size=2):
    return _T((rows, cols), (1, rows), size)


@pytest.mark.parametrize(
    "k, size, off",
    [(8192, 2, False), (8200, 2, True), (8208, 2, False), (8208, 1, True), (8224, 1, False)],
)
def test_k_major_rows_are_off_where_k_bytes_are_an_odd_multiple_of_16(k, size, off):
    call = _Call(_row_major(64, k, size), _col_major(k, 64, size), "K", "K")
    assert rows16(call) == (off, off)


def test_each_operand_by_the_mode_the_kernel_reads_contiguously():
    # A M-major: its rows run along K at a pitch of its M; B N-major: at a pitch of its N
    A, B = _col_major(4104, 64), _row_major(64, 4112)
    assert rows16(_Call(A, B, "M", "N")) == (True, False)
    # a padded pitch counts, not the extent: K = 8200 stored 8256 apart is aligned
    padded = _T((64, 8200), (8256, 1), 2)
    assert rows16(_Call(padded, _col_major(8200, 64), "K", "K")) == (False, True)


def test_a_single_row_is_never_off_and_a_copy_has_the_copys_pitch():
    assert rows16(_Call(_row_major(1, 8200), _col_major(8200, 1), "K", "K")) == (False, False)
    # an 8-bit A laid out M-major is read from a K-major copy: K bytes apart
    A = _col_major(64, 8208, 1)
    assert rows16(_Call(A, _col_major(8208, 64, 1), "K", "K")) == (True, True)


def test_off_rows_cost_half_sector_times_and_a_cluster_halves_what_it_shares():
    dev = device("h200")
    assert dev.half_sector > 1 and 0 < dev.cluster_eff <= 1
    one = Sm90Config(128, 256)
    aligned = loaded_rows(one, (False, False), dev)
    assert aligned == 128 + 256
    assert loaded_rows(one, (True, False), dev) == pytest.approx(128 * dev.half_sector + 256)
    pair_b = Sm90Config(128, 256, cluster=2)
    pair_a = Sm90Config(128, 256, cluster=2, multicast="A")
    assert loaded_rows(pair_b, (True, True), dev) == pytest.approx(
        (128 + 256 / 2) * dev.half_sector
    )
    assert loaded_rows(pair_a, (False, False), dev) == 128 / 2 + 256
    assert pairs(one) == (1, 1) and pairs(pair_b) == (2, 1) and pairs(pair_a) == (1, 2)


def test_off_rows_cost_a_load_bound_kernel_time_and_clusters_buy_it_back():
    # e4m3 128x192 reads 320 rows of 128 bytes per k tile: near one SM's load bandwidth
    m, n, k = 4096, 8192, 8208
    whole = Sm90Config(128, 192, promote="split")
    pair = Sm90Config(128, 192, cluster=2)
    t_whole = predict(whole, m, n, k, "e4m3", kind="h200")
    t_off = predict(whole, m, n, k, "e4m3", kind="h200", rows16=(True, True))
    assert t_off > 1.2 * t_whole
    p_off = predict(pair, m, n, k, "e4m3", kind="h200", rows16=(True, True))
    assert p_off < t_off
    picked = builtin_sm90_config(m, n, k, "e4m3", kind="h200", swap=True, rows16=(True, True))
    assert picked.cluster == 2


def test_a_cluster_runs_whole_pairs_of_tiles():
    # 3 M tiles take the CTAs of 4 in pairs along M: priced as 4 M tiles' worth of waves
    pair = Sm90Config(128, 256, cluster=2)
    n, k = 256 * 132, 4096
    three = predict(pair, 3 * 128, n, k, "bf16", kind="h200")
    four = predict(pair, 4 * 128, n, k, "bf16", kind="h200")
    assert three == pytest.approx(four, rel=0.02)


def test_clusters_join_the_space_only_for_off_rows():
    assert not any(c.cluster > 1 for c in candidates(4096, 8192, 8192, "bf16"))
    off = hinted_kernels(4096, 8192, 8200, "bf16", 1, (True, False))
    assert set(cluster_kernels("bf16")) <= set(off)
    assert cluster_kernels("tf32") == ()  # never timed: not offered
    # the aligned pick is what it was without the new axis
    for m, n, k in [(8192, 8192, 8192), (512, 8192, 28672), (16, 8192, 8192)]:
        assert builtin_sm90_config(m, n, k, kind="h200", swap=True).cluster == 1


def test_pairs_join_only_calls_of_pair_min_m_rows_or_more():
    """space.PAIR_MIN_M: below it a pair pads one tile row to two or shares an A of a few
    rows; the space, the pick's groups and the pick itself agree on the floor."""
    off = (True, True)
    for m in (1, PAIR_MIN_M - 1, PAIR_MIN_M, 4 * PAIR_MIN_M):
        want = m >= PAIR_MIN_M
        found = candidates(m, 8192, 8208, "e4m3", 1, 132, True, off)
        assert any(c.cluster == 2 for c in found) == want
        reads = kernel_reads(m, 8192, 8208, "e4m3", 1, 132, True, "K")
        grouped = kernels_of(reads, m, 8192, 8208, "e4m3", 1, 132, off, "K")
        assert any(c.cluster == 2 for g in grouped for c in g) == want
        if not want:
            assert builtin_sm90_config(m, 8192, 8208, "e4m3", kind="h200", rows16=off).cluster == 1


def test_builtin_sm90_config_names_a_bad_rows16():
    with pytest.raises(TiledMmaError, match="rows16"):
        builtin_sm90_config(64, 64, 64, rows16=(1, 0))


def test_an_n_major_b_swaps_without_unaligned_shares():
    # stream-K shares at unrelated k read an N-major B's rows apart (SWAP_SPLITS); over a K
    # of at least N_MAJOR_SHARED_MIN_K, few tokens run whole tiles only (_n_major_whole)
    k_major = swapped_kernels(4, 5072, 2000, "bf16")
    n_major = swapped_kernels(4, 5072, 2000, "bf16", b_major="N")
    assert any(c.stream_k and c.split is None for c in k_major)
    assert any(c.stream_k for c in n_major)
    assert not any(c.stream_k and c.split is None for c in n_major)
    assert set(n_major) < set(k_major)
    long_k = swapped_kernels(4, 5072, 25696, "bf16", b_major="N")
    assert long_k and not any(c.stream_k for c in long_k)
    picked = builtin_sm90_config(1, 5072, 25696, kind="h200", swap=True, b_major="N")
    assert not picked.stream_k
    with pytest.raises(TiledMmaError, match="b_major"):
        builtin_sm90_config(1, 64, 64, b_major="M")
