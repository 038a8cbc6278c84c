"""The sm90 kernel space: every kernel the sm90 family builds for a call, as data.

A kernel is an :class:`~cutemma.kernels.sm90.config.Sm90Config`. The space is the product
of a few axes, each a table below, filtered by the family's own rules (a config that
``Sm90Config`` or :class:`~cutemma.kernels.sm90.plan.Sm90Plan` refuses is not in it):

- the tile: rows (64 with one consumer warpgroup, 128 or 256 with two) by columns
  (:data:`WIDTHS`, per element type; 16-bit 320 is a m64n256 and a m64n64 wgmma side by
  side), fp8 promoted as its width allows (:data:`FP8_PROMOTE`); for calls of at most
  :data:`FIT_MAX_N` columns whose B is K-major, 128-row tiles as wide as N's share in
  steps of 16 too (:func:`fitted_widths`: 288 columns as 2 x 144 rather than 3 x 128),
  and for one 16-bit problem of :data:`FIT_WAVE_MIN_M` rows or more the 128-row tile as
  wide as fills one wave of the SMs (:func:`fitted_wave_width`);
  for 16-bit calls of :data:`WAVE_MIN_M` rows or more whose B is K-major, 64-row tiles
  as wide as fills one wave of the SMs (:func:`wave_width`: 763 rows by 1040 as 12 x 11
  tiles of 64 x 96 rather than 12 x 9 of 64 x 128); for one problem of fewer 64x128
  tiles than SMs, 64-row tiles of :data:`NARROW_WIDTHS` columns (:func:`narrow_kernels`);
- whole tiles, or stream-K (a last partial wave's, or a small grid's, k iterations shared
  over every SM, or over at most :data:`SPLITS` CTAs per shared tile; fixed up in a fixed
  order: deterministic);
- swap-AB for calls of at most :data:`SWAP_MAX_M` rows, and for 16-bit calls of any rows
  (D^T = B^T A^T: B's N fills the wgmma's 64 rows, the call's tokens sit in wgmma's N; the
  swap is three views, nothing is copied). Up to :data:`SWAP_TOKENS` rows the tokens are one tile: 64-row tiles of one
  warpgroup shared by stream-K, or 128-row tiles of two run whole (:func:`swapped_kernel`),
  the ring as deep as keeps :data:`IN_FLIGHT_BYTES` of weights requested. Past it they are
  a few tiles each a multiple of 8 wide (:func:`token_tiles`), so that a call of 287 rows
  computes 288 rather than 384 (:func:`mid_swapped_kernel`: 128-row tiles of two, whole
  and stream-K); past :data:`SWAP_MAX_M` rows, the widths whose tiles fill whole waves
  best (:func:`wave_tokens`);
- B (or, swapped, B^T) read under an L2 evict-first hint where few tile rows stream a B
  that L2 cannot keep anyway (:func:`evict_first`);
- clusters of 2 (pairs of 128-row tiles along M sharing B, or along N sharing A, each CTA
  loading half of the shared tile) for calls whose rows sit half a sector apart
  (``rows16``, :func:`cutemma.kernels.call.rows16`): TMA reads such rows at about half
  speed, and a cluster halves one operand's reads per SM; elsewhere they cost about 4%
  and buy nothing (bench/results/raw/align-probe-h200.json); for such calls of
  :data:`QUAD_MIN_M` rows or more, clusters of 2 x 2 that halve both operands' reads
  (:func:`quad_kernels`); and for such swapped calls of several token tiles, the swapped
  kernels in pairs along the tokens sharing the weights (:func:`token_pairs`) and in 2 x 2
  clusters sharing both (:func:`token_quads`).

No fitted rule chooses between them: every candidate is priced by the cost model.

:mod:`cutemma.kernels.cost` predicts each candidate's time; the policy takes the fastest.

>>> names = [c.name for c in candidates(4096, 4096, 4096, "bf16")]
>>> "b128x256_c2_sauto" in names and "b128x192_c2_sauto_sk" in names
True
>>> any(c.swap_ab for c in candidates(32, 8192, 8192, "bf16"))
True
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import replace
from functools import cache, lru_cache

from cutemma.errors import TiledMmaError
from cutemma.hardware import WGMMA_N_MAX, WGMMA_N_STEP
from cutemma.kernels.cost import check_rows16, whole_number
from cutemma.kernels.sm90.config import (
    ATOMS_SM90,
    FP8,
    MAX_STAGES,
    NON_ACC_REGS,
    REGISTER_SPLIT,
    SPLIT_MIN_N,
    SWIZZLE_ROW_BYTES,
    WARPGROUP,
    Sm90Config,
)
from cutemma.kernels.sm90.index import launch_record
from cutemma.kernels.sm90.kcluster import KCLUSTERS, clusters
from cutemma.kernels.sm90.streamk import sk_shares

# tile rows -> consumer warpgroups (each warpgroup owns 64-row wgmma slices)
ROWS = {64: 1, 128: 2, 256: 2}
# tile columns by element bytes: what the family's register budget holds per row count
WIDTHS = {
    2: {64: (128, 256), 128: (64, 128, 192, 256, 320), 256: (128,)},
    4: {64: (128,), 128: (128, 256)},  # tf32: half the k per byte; its accumulators as 16-bit's
    1: {64: (128, 256), 128: (64, 128, 160, 192), 256: (128,)},
}
# promoted fp8 by width: 'split' issues the N halves as two batches (one in flight while
# the other's sums are added); 'overlap' keeps a batch in flight by alternating two sets,
# which needs the registers of 3 sets: only narrow tiles have them
FP8_PROMOTE = {64: "overlap", 128: "overlap", 160: "split", 192: "split", 256: "split"}
# width 320: a m64n256 and a m64n64 wgmma side by side (raw/wide-mixed-s12-run6.json)
WIDE_16 = Sm90Config(128, 320, block_k=32, epilogue="tma2", wgmma_n=(256, 64))
# stream-K's caps on the CTAs sharing one tile (Sm90Config.split; None: the whole grid,
# shares not aligned to tiles, listed last so that it loses the model's ties): with few
# tiles and a long K, aligned 16 ran up to 1.8x and 4-8 up to 3.5x faster than the grid's
# unaligned 16-33 (raw/sk-split-cap-run1.json)
SPLITS = (16, 8, 4, None)
# a swapped kernel's splits by the weights' (B's) major: unaligned shares read an N-major B
# (the swapped kernel's M-major A) at unrelated k rows, which ran 1.32x the K-major time
# where aligned ones ran 1.02-1.08x (bench/results/sweep-h200-953108650.json, M <= 256)
SWAP_SPLITS = {"K": SPLITS, "N": tuple(s for s in SPLITS if s is not None)}
# a token tile is one wgmma's N: a multiple of N_STEP up to SWAP_TOKENS
SWAP_TOKENS = WGMMA_N_MAX
N_STEP = WGMMA_N_STEP
# fp8 calls of at most this many rows may swap (16-bit ones of any rows, below), their
# tokens in several tiles past SWAP_TOKENS: 128-row tiles cover M in steps of 128, token
# tiles in steps of 8 (tile rows past M: the sweeps' rows whose tiles were under 80% full ran
# 0.77-0.79x cuBLAS against 0.90-0.94 for the rest, bench/results/sweep-h200-2634963452.json
# and -2503642630.json)
SWAP_MAX_M = 2048
# 16-bit calls of more rows than SWAP_MAX_M swap too (:func:`swaps_call`), their tokens in
# tiles fitted to whole waves of 128-row tiles (:func:`wave_tokens`: the WAVE_TOKEN_TILES
# widths that leave the fewest SM-tile slots empty). cuBLAS runs such calls swapped (nvjet
# 192x144, 128x288, 64x168 along N x M), and the model's choice among the timed kernels of 28
# calls of 1051-15251 rows by 272-992 columns ran 0.888 of cuBLAS against the pick's 0.788
# with B N-major (up to 0.708 -> 0.934 at (5010, 784, 57728)) and 0.899 against 0.883 with B
# K-major; fp8's swapped tiles ran slower than its plain ones there and the model never
# chose them (bench/results/raw/few-cols-fitted-h200.json). Built up by columns, each step
# held out on calls drawn at run time whose pick it moved (60 timed each; the named table's
# picks never moved): up to 1024 columns 0.848 -> 0.942 of cuBLAS, 55 faster (201 of 18,000
# drawn calls moved; raw/few-cols-ab-drawn-h200.json); 1025-2048 0.905 -> 0.971, 55 faster
# (raw/few-cols-2048-ab-drawn-h200.json); 2049-4096 0.953 -> 0.997, 48 faster, the slower ones
# of K 320-1280 (raw/few-cols-4096-ab-drawn-h200.json); 4097-8192 0.963 -> 0.999, 54 faster
# (raw/few-cols-8192-ab-drawn-h200.json); any more 0.966 -> 1.002, 50 faster (60 of 18,000
# moved; raw/swap-any-n-ab-drawn-h200.json)
WAVE_TOKEN_TILES = 3
# 16-bit calls of SWAP_TOKENS..SWAP_MAX_M rows get the first this many of those widths too,
# beside the fewest token tiles and one more (:func:`token_tiles`). cuBLAS's kernels on such
# calls are these tiles (nvjet 128x120, 128x136, 128x168 at (1187, 1584), (1337, 1600),
# (1158, 7168): wave_tokens' first width each time), and ours of those widths ran 0.95-0.99
# of cuBLAS where the unswapped picks ran 0.82-0.89 (bench/results/raw/k-ladder*-h200.json,
# K 256-8192). Held out on calls drawn at run time whose pick it moved (about 1.3% of all
# draws, every one 16-bit; 60 timed for each of two seeds): 0.913 -> 0.967 and 0.891 ->
# 0.961 of cuBLAS, 49 and 51 faster, the worst 0.89x (raw/midwave-ab{,2}-h200.json). Not
# fp8: its 60 moved calls (of 1224 moved in 54,000 drawn, mostly to token pairs and quads)
# ran 0.912 -> 0.905 (raw/fp8mid-ab-h200-rejected.json)
MID_WAVE_TOKEN_TILES = 3
# wave_tokens' narrowest tile: the probe's range, where 64-80 token tiles already ran slower
# than the plain picks on calls of 1-2 waves (raw/few-cols-fitted-h200.json)
WAVE_TOKENS_MIN = 64
# calls of at most this many columns also get 128-row tiles as wide as their N's share
# (fitted_widths), in steps of 16 (the staging tile's narrowest swizzled atom, SW32): the
# sweeps' worst rows were calls of 2400-8100 rows by 288-1300 columns (0.50-0.68x,
# bench/results/sweep-h200-3690315426.json)
FIT_MAX_N = 1536
FIT_ROWS = 128
# 16-bit calls of at least this many rows whose B is K-major (one problem) also get a
# 128-row tile as wide as gives each tile row its share of one wave of the SMs
# (fitted_wave_width): (1071, 1808, 2560) as 9 x 13 tiles of 128 x 144 rather than 17 x 15
# of 64 x 128 (cuBLAS runs such widths there: 128x80, 128x104, 144x128 in
# raw/peer-kernels-h200.json). On 60 drawn calls whose pick they moved, bf16 0.913 -> 0.956
# of cuBLAS (20 of 26 faster) and e4m3 0.948 -> 0.915 (12 of 34; its 128x80-112 tiles,
# priced by their neighbours' rates, ran 0.93-0.98 of the old picks):
# raw/wave128-ab-drawn-h200-fp8-rejected.json. With B N-major (widths in steps of 32, SW64
# stage rows) 0.872 -> 0.815 of cuBLAS, 15 of 50 faster: raw/wave128n-ab-drawn-h200-rejected.json
FIT_WAVE_MIN_M = FIT_ROWS + 1  # (two tile rows: one is the swapped kernels' call)
# the narrowest swizzle row of the space's configs (SW32: 32 bytes, smem.swizzle_atoms) in
# the staging tile's 16-bit elements
FIT_STEP = 16
# 16-bit calls of at least this many rows whose B is K-major also get 64-row tiles whose
# width gives one tile per SM (wave_width): cuBLAS runs such widths where it beats the pick
# at 250-800 rows (128x80, 128x104, 256x120: bench/results/raw/ncu-mid-times-h200.json),
# and on the sweep's worst 16-bit K-major rows of that band 64x96, 64x160 and 64x176 ran
# 0.99-1.07 of cuBLAS where the pick ran 0.75-0.86; with B N-major (a narrow swizzle for
# such a width) and in fp8 they ran slower than the pick (raw/wave-widths-h200.json). On
# calls drawn at run time whose pick they moved, calls of 129 rows or more ran 0.982 of
# cuBLAS against 0.923 (19 of 24 faster); of 65-128 rows, where the second tile row is
# mostly past M, two of six ran 7-26% slower (raw/pick-ab-wave-h200.json).
WAVE_MIN_M = 129
WAVE_ROWS = 64
# the narrowest: the space's own (WIDTHS); 64x48 tiles ran 0.23-0.71 of cuBLAS on the same
# calls (their operand bytes per flop half again 64x128's)
WAVE_WIDTH_MIN = 64
# 64-row tiles narrower than the space's own (one consumer warpgroup, whole tiles), for one
# problem whose 64x128 tiles number fewer than the SMs (narrow_kernels): on such calls
# cuBLAS runs tiles 32-72 wide (bench/results/raw/small-calls-h200.json), and 64x32 / 64x64
# ran 0.96-1.05 of cuBLAS where the pick ran 0.69-0.93 ((298, 320, 5520) e4m3 15.3 -> 10.9
# us, (134, 608, 768) bf16 7.3 -> 6.4), the model pricing them within 0.9-1.1 of their
# times; in clusters of 2-8 sharing an operand they ran slower still, and where the call has
# a wave of 64x128 tiles or more they ran 0.35-0.8 of cuBLAS (raw/narrow-clusters-h200.json);
# 96 wide too, the moved picks ran 0.928 of cuBLAS against 0.978 (on 40 drawn calls, 18
# faster: raw/narrow96-ab-drawn-h200-rejected.json)
NARROW_WIDTHS = (32, 64)
# their k tiles two swizzle rows deep (256 bytes: 128 16-bit or 256 fp8 values): a
# stage's fixed cost (the full barrier's wait, the wgmma fence and issue, the release)
# beside a 64x32 or 64x64 tile's short MMA sets their pace, whatever the ring's depth or
# cluster (raw/deep-rings-h200.json); 256-byte k tiles ran 64x32 1.061x and 64x64 1.032x
# as fast (geomean of 16 calls of 129-2048 rows; on the calls where a narrow tile is the
# pick or near it 1.00-1.24x), where 64x128 and 128x64 lost 3.5% (raw/wide-k-narrow-h200.json)
NARROW_K_BYTES = 2 * SWIZZLE_ROW_BYTES
# from two 64-row tile rows: offered from 17 rows, where the swapped kernels' token tiles
# hold the call, the moved picks ran 0.940 of cuBLAS against 1.000 on drawn calls and 1.007
# against 1.074 on the named and decode rows (raw/narrow17-ab-{drawn,named}-h200-rejected.json)
NARROW_MIN_M = WAVE_ROWS + 1
NARROW_BELOW = min(WIDTHS[2][WAVE_ROWS])  # (the space's own 64-row tiles: 128 wide)
SWAP_ROWS = 64  # a swapped tile's rows of B^T: one wgmma M (two warpgroups: 2 x this)
# one token tile's 128-row swapped kernel shared by stream-K, at this split, for token tiles
# wider than SWAP_WIDE_TOKENS: on calls of 129-256 rows with a long K it ran 0.57-0.74 ->
# 0.77-0.92 of cuBLAS where the weights fill many tiles; split 8 ran as 16, the grid's
# unaligned shares up to 8x slower (bench/results/raw/swap-sk128-h200.json). On calls of at
# most 128 rows the model took it for the 64-row tiles and it ran slower (drawn calls 1-16
# rows 0.995 -> 0.984 of cuBLAS, 17-128 0.987 -> 0.976; raw/swap-wide-ab-drawn-h200.json)
SWAP_WIDE_SPLIT = 16
SWAP_WIDE_TOKENS = 128
TOKENS_MIN = 16  # the narrowest token tile: 8 was no faster (raw/streamk-explore-run2.json)
FP8_BLOCK_K = 256  # swapped fp8: 256-byte K rows per TMA box row (raw/streamk-explore-run2.json)
# fp8 weights requested and not yet landed, all CTAs together: about DRAM bandwidth x
# latency (3 TB/s x ~2.5 us); deeper rings ran 2-7% slower at 1-64 tokens on an H100
# (raw/decode-stages-run6.json) and 0.6-2% slower in the H200's decode-step graphs. 16-bit
# swapped rings are as deep as fit (stream_stages None): twice as deep as this rule's ran the
# 8B decode step 2% faster and the 70B one 0.5-0.9% (raw/decode-step-variants-h200.json)
IN_FLIGHT_BYTES = 8 << 20
# the shallowest ring that rule gives: 2 stages of fp8 128-row swapped tiles over a full grid
# ran 1.011x slower than 3 flushed (40 of 50 calls drawn at run time, slower only at K <= 512:
# raw/fp8-floor3-ab-drawn-h200.json) and in the 70B decode-step graph (0.2-2.3%; the 8B one's
# 28672 x 4096 at 32-128 tokens 0.5-1.3% faster at 2: raw/decode-step-variants-floor3-h200.json)
RING_FLOOR = 3
# B under an L2 evict-first hint where at most this many tile rows stream at most this many
# bytes of it from a K this long: nothing dirty is written back ahead of it
# (raw/decode-evict-first-run10.json, raw/evict-first-b-mid-run14.json)
EVICT_FIRST_MAX_BYTES = 192 << 20
EVICT_FIRST_ROWS = 8
LONG_K = 4096  # a shorter K's B is re-read from L2 anyway (raw/evict-first-b-mid-run14.json)
# split-K in a cluster (Sm90Config.kcluster): its tiles, each with its largest size, for
# 16-bit calls of at least KCLUSTER_MIN_M rows whose 128x128 tiles number at most a wave of
# clusters of 4 (few tiles over a long K, where stream-K's fix-up through global memory
# costs most), whose tiles fill at most a wave of clusters, every CTA keeping at least
# KCLUSTER_MIN_K k tiles (bench/results/raw/kcluster-probe-h200.json: there its picks ran
# 0.64-0.89 of cuBLAS against 0.59-0.71 for stream-K's; at 96-128 rows, 64 tiles, or
# in fp8 the model's kcluster picks ran 0.57-0.95 of the kernels it took otherwise, so
# those stay out of the space: a config may still ask for one)
KCLUSTER_TILES = (
    (128, 128, 2),
    (128, 64, 2),
    (64, 128, 1),
    (128, 256, 2),
    (128, 192, 2),
    (64, 256, 1),
)
KCLUSTER_MIN_M = 129
KCLUSTER_MIN_K = 2
# 2 x 2 clusters sharing both operands (Sm90Config(cluster=4, multicast="AB"): each CTA
# loads half of each operand tile) for calls of at least QUAD_MIN_M rows whose rows sit
# half a sector apart (rows16: TMA reads such rows at about half speed, and pairs halve
# only one operand's reads), 128-row tiles of QUAD_WIDTHS columns: on fp8 calls whose K is
# an odd multiple of 16 they ran 0.84-1.01 of cuBLAS where the pick (pairs) ran 0.63-0.88
# ((1456, 912, 20592), (8470, 1024, 41776), (2048, 8192, 8208)); at 276-1024 rows, whose
# tile rows a cluster pads to an even count, they ran 0.39-0.82 against the pick's
# 0.55-0.85 (bench/results/raw/cluster4-h200.json). On 24 such calls drawn at run time the
# pick took them on 5 (4 faster) and ran 2.4% faster than without them, geomean of the 24
# (raw/quad-ab-h200.json); on calls whose rows are aligned (bf16 either B major, e4m3 with
# K an even multiple of 16) the best of them ran 0.88-0.91 of the pick
# (raw/quad-ab-{bf16_bK,bf16_bN,e4m3-aligned}-h200.json): not offered there. Clusters of 4
# fit 30 at once on 132 SMs (kcluster.clusters): a persistent grid of 120 CTAs
# (cost.cluster_grid).
QUAD_MIN_M = 1025
# pairs of CTAs (cluster_kernels) for calls of at least PAIR_MIN_M rows whose rows sit half a
# sector apart: at up to 64 rows (one wgmma slice of A) the model's cheapest kernel without a
# cluster ran 1.10-1.37 times as fast as the pair it took on 15 of 16 drawn e4m3 calls (0.93
# of cuBLAS against 0.81), the model pricing the pairs 2-10% cheaper: a pair along M pads one
# tile row to two, and fp8 prices A's whole tile rows (cost.CLAMPED) so that sharing A looked
# like halving them; from 90 rows on they ran 0.90-1.35 times as fast as without
# (bench/results/raw/cluster-floor-h200.json). Held out (seed 1140467736, 40 of the 172 of
# 18,000 drawn calls whose pick the floor moved): 0.80 -> 0.93 of cuBLAS, all 40 faster
# (raw/pair-floor-ab-h200.json)
PAIR_MIN_M = 65
QUAD_WIDTHS = (128, 192, 256)


def candidates(
    m: int,
    n: int,
    k: int,
    dtype: str,
    batch: int = 1,
    sms: int = 132,
    swap: bool = True,
    rows16: tuple[bool, bool] = (False, False),
    b_major: str = "K",
) -> tuple[Sm90Config, ...]:
    """The sm90 kernels that run an (m, n, k) call of ``dtype`` (``batch`` of them) on
    ``sms`` SMs: every tile of :data:`WIDTHS`, whole and (where it shares anything)
    stream-K, the clusters where ``rows16`` has a row half a sector off
    (:func:`hinted_kernels`), where B is K-major the widths fitted to N
    (:func:`fitted_kernels`) and to a wave (:func:`wave_kernels`), and the swapped kernels
    where ``swap`` allows (2-D calls without C or epilogue that :func:`swaps_call`; B's
    major ``b_major`` picks their splits, :data:`SWAP_SPLITS`, and an N-major B's whose
    shares would mostly span tiles run whole: :func:`swapped_groups`), in pairs along the
    tokens and in 2 x 2 clusters too where ``rows16`` has a row half a sector off
    (:func:`token_pairs`, :func:`token_quads`, listed last).

    >>> len(candidates(8192, 8192, 8192, "bf16")) >= 8
    True
    """
    _check_call(dtype, "kernel space: candidates", m=m, n=n, k=k, batch=batch, sms=sms)
    m, n, k, batch, sms = (int(v) for v in (m, n, k, batch, sms))  # (numpy's ints: plain)
    check_rows16(rows16, "kernel space: candidates")
    check_b_major(b_major, "kernel space: candidates")
    found = list(hinted_kernels(m, n, k, dtype, batch, rows16))
    if b_major == "K":
        found += fitted_kernels(m, n, k, dtype, batch, sms)
        found += _wave_kernels(m, n, k, dtype, batch, sms)
    found += _narrow_kernels(m, n, k, dtype, batch, sms)
    swaps = swap and batch == 1 and _swaps_call(m, dtype)
    for group in _swapped_groups(m, n, k, dtype, sms, b_major) if swaps else ():
        found += group
    off = swaps and rows16 != (False, False)  # (swapped clusters: where a row sits off)
    classes = _swap_classes(m, n, k, dtype, sms) if off else ()
    found += _token_pairs(classes, dtype, b_major) if off else ()
    found += _kcluster_kernels(m, n, k, dtype, batch, sms, swaps)
    found += _quad_kernels(m, dtype, batch, rows16)
    found += _token_quads(classes, dtype, b_major) if off else ()
    return tuple(found)


def quad_kernels(
    m: int, dtype: str, batch: int = 1, rows16: tuple[bool, bool] = (False, False)
) -> tuple[Sm90Config, ...]:
    """The 2 x 2 clusters sharing both operands (``Sm90Config(cluster=4, multicast="AB")``)
    of a 2-D call of ``m`` rows (:data:`QUAD_MIN_M` or more) whose A or B rows sit half a
    sector apart (``rows16``): 128-row tiles of :data:`QUAD_WIDTHS` columns whose
    accumulators fit and whose halves are whole swizzle atoms in either major (fp8
    promoted, one batch at a time or overlapped). The pick weighs them apart from the rest
    (:func:`~cutemma.kernels.cost.quad_best`: their persistent grid is not every SM's).

    >>> [c.name for c in quad_kernels(2048, "e4m3", 1, (True, True))]
    ['b128x128_c2_sauto_x4ab_ovl', 'b128x192_c2_sauto_x4ab']
    >>> quad_kernels(2048, "e4m3"), quad_kernels(512, "bf16", 1, (True, False))
    ((), ())
    """
    _check_call(dtype, "kernel space: quad_kernels", m=m, batch=batch)
    check_rows16(rows16, "kernel space: quad_kernels")
    return _quad_kernels(int(m), dtype, int(batch), rows16)


def _quad_kernels(
    m: int, dtype: str, batch: int, rows16: tuple[bool, bool]
) -> tuple[Sm90Config, ...]:
    """:func:`quad_kernels` of checked arguments (the pick's)."""
    if batch != 1 or m < QUAD_MIN_M or rows16 == (False, False):
        return ()
    return _quads(dtype)


@cache
def _quads(dtype: str) -> tuple[Sm90Config, ...]:
    return _clustered(dtype, QUAD_WIDTHS, (("AB", 4),))


def kcluster_kernels(
    m: int, n: int, k: int, dtype: str, batch: int = 1, sms: int = 132, swap: bool = False
) -> tuple[Sm90Config, ...]:
    """The split-K-in-a-cluster kernels (``Sm90Config.kcluster``) of an (m, n, k) call (a
    2-D one: none for batches or tf32), each tile with the largest cluster size whose
    clusters all run at once (:func:`~cutemma.kernels.sm90.kcluster.clusters`) and leave
    every CTA :data:`KCLUSTER_MIN_K` k tiles or more (:func:`_largest_kc`).
    ``swap`` (a call that may run swapped, of at most :data:`SWAP_TOKENS` rows): the swapped
    kernel's 64-row tiles of B^T (:func:`swapped_kernel`). Calls of at least
    :data:`KCLUSTER_MIN_M` rows of 16-bit types with few tiles: each tile of
    :data:`KCLUSTER_TILES`.

    >>> [c.name for c in kcluster_kernels(399, 448, 4160, "bf16")][:3]
    ['b128x128_c2_sauto_kc4', 'b128x64_c2_sauto_kc4', 'b64x128_c1_sauto_kc4']
    >>> kcluster_kernels(4096, 4096, 4096, "bf16"), kcluster_kernels(96, 448, 4160, "bf16")
    ((), ())
    >>> [c.name for c in kcluster_kernels(96, 448, 4160, "bf16", swap=True)]
    ['b64x96_c1_sauto_etmat_efa_swap_kc8']
    """
    _check_call(dtype, "kernel space: kcluster_kernels", m=m, n=n, k=k, batch=batch, sms=sms)
    m, n, k, batch, sms = (int(v) for v in (m, n, k, batch, sms))
    return _kcluster_kernels(m, n, k, dtype, batch, sms, bool(swap))


def _kcluster_kernels(
    m: int, n: int, k: int, dtype: str, batch: int, sms: int, swap: bool
) -> tuple[Sm90Config, ...]:
    """:func:`kcluster_kernels` of checked arguments (the pick's: the policy checked them)."""
    if batch != 1 or dtype == "tf32":
        return ()
    caps = _capacities(sms)  # (cluster size, clusters at once), the largest size first
    found = ()
    if swap and m <= SWAP_TOKENS and -(-n // SWAP_ROWS) <= caps[-1][1]:
        found = _swapped_kcluster(m, n, k, dtype, sms, caps)
    if m < KCLUSTER_MIN_M or dtype in FP8 or -(-m // 128) * -(-n // 128) > caps[-2][1]:
        return found  # (unswapped: 16-bit calls whose 128x128 tiles fit clusters of 4)
    k_tiles = -(-k // (SWIZZLE_ROW_BYTES // ATOMS_SM90[dtype][1]))
    for bm, bn, consumers in KCLUSTER_TILES:
        kc = _largest_kc(-(-m // bm) * -(-n // bn), k_tiles, caps)
        found += (_kcluster_config(bm, bn, consumers, kc),) if kc else ()
    return found


@cache
def _kcluster_config(bm: int, bn: int, consumers: int, kc: int) -> Sm90Config:
    return Sm90Config(bm, bn, consumers=consumers, kcluster=kc)


@lru_cache(maxsize=64)
def _capacities(sms: int) -> tuple[tuple[int, int], ...]:
    """(cluster size, clusters that run at once) on ``sms`` SMs, the largest size first."""
    return tuple((kc, clusters(kc, sms)) for kc in KCLUSTERS[:0:-1])


def _largest_kc(tiles: int, k_tiles: int, caps: tuple) -> int | None:
    """The largest cluster size of ``caps`` (:func:`_capacities`) whose clusters, one per
    tile, all run at once and leave each CTA KCLUSTER_MIN_K k tiles: on every call of the
    probes the fastest of the sizes that fit (bench/results/raw/kcluster-probe-h200.json,
    -probe-swapped-h200.json)."""
    for kc, fit in caps:
        if tiles <= fit and k_tiles >= KCLUSTER_MIN_K * kc:
            return kc
    return None


def _swapped_kcluster(
    m: int, n: int, k: int, dtype: str, sms: int, caps: tuple
) -> tuple[Sm90Config, ...]:
    """The swapped kernel of a call of at most SWAP_TOKENS rows (one token tile) as a kcluster
    kernel: 64-row tiles of B^T with the largest cluster size that fits
    (bench/results/raw/kcluster-probe-swapped-h200.json: on every call it ran within 10% of
    the best of the sizes and rows). Not the 128-row tiles: the model took them for 64-256
    tokens of 8192-wide weights, where they ran 0.74-0.96 of the kernels picked before
    (raw/named-h200-kcluster-128rows.json, raw/kcluster-ab2-h200.json). Kept per what
    swapped_kernel reads of the shape: the token tile, and whether the weights fit the
    evict-first bound."""
    eb = ATOMS_SM90[dtype][1]
    k_tiles = -(-k // (_swap_k_bytes(dtype in FP8) // eb))
    kc = _largest_kc(-(-n // SWAP_ROWS), k_tiles, caps)
    if kc is None:
        return ()
    key = (swap_tokens(m), _weights_fit(n, k, dtype), dtype, sms, kc)
    found = _SWAPPED_KC.get(key)
    if found is None:
        try:  # (a wide token tile's kernel may have no ring that fits)
            cfg = replace(swapped_kernel(m, n, k, dtype, sms, False),
                          stream_k=False, split=None, kcluster=kc)  # fmt: skip
            found = (cfg,) if fits(cfg, dtype) and builds(cfg, dtype) else ()
        except TiledMmaError:
            found = ()
        _SWAPPED_KC[key] = found
    return found


_SWAPPED_KC: dict[tuple, tuple[Sm90Config, ...]] = {}


# an fp8 kernel that runs a fused epilogue promotes with one batch of sums (promote=True):
# by N halves or with a batch in flight the ops' registers spill (64-56 bytes, 128x192 and
# 64x128, compiled here: tests/kernels/test_epilogue_compile.py); 192 wide spills either way
FUSED_FP8_MAX_N = 160


def fused_kernels(kernels: tuple[Sm90Config, ...], dtype: str) -> tuple[Sm90Config, ...]:
    """The unswapped ``kernels`` as they run a fused epilogue: fp8's promoted with one
    batch of sums, at most :data:`FUSED_FP8_MAX_N` wide (each first of its kind kept, in
    order); 16-bit's and tf32's as they are. One tuple per tuple of kernels (the cost
    model's table of it is built once).

    >>> [c.name for c in fused_kernels(tile_kernels("e4m3"), "e4m3")][:2]
    ['b64x128_c1_sauto', 'b64x128_c1_sauto_sk16']
    >>> fused_kernels(tile_kernels("bf16"), "bf16") == tile_kernels("bf16")
    True
    """
    if dtype not in ATOMS_SM90:
        raise TiledMmaError(
            f"kernel space: fused_kernels dtype {dtype!r}; the sm90 GEMM takes {sorted(ATOMS_SM90)}"
        )
    if not (isinstance(kernels, tuple) and all(isinstance(c, Sm90Config) for c in kernels)):
        raise TiledMmaError(
            f"kernel space: fused_kernels takes a tuple of Sm90Configs; got {type(kernels).__name__}"
        )
    return _fused_kernels(kernels, dtype in FP8)


# pingpong tiles a fused 16-bit call may take (each warpgroup its own tile, so one's
# epilogue runs under the other's mainloop): where the epilogue is a large share of the
# call (short K) they ran 1.04-1.21x the plain call against 1.19-1.52x for the cooperative
# pick; 64x192 and 128x64 never won (bench/results/raw/epilogue-schedules-h200.json)
PINGPONG_FUSED = ((64, 128), (64, 256), (128, 128))


def fused_pingpong(dtype: str) -> tuple[Sm90Config, ...]:
    """The pingpong tiles (:data:`PINGPONG_FUSED`) that a fused call of ``dtype`` may take,
    whole (16-bit types only: fp8's fused kernels promote their sums, whose pingpong rates
    were never measured).

    >>> [c.name for c in fused_pingpong("bf16")], fused_pingpong("e4m3")
    (['b64x128_c2_sauto_pp', 'b64x256_c2_sauto_pp', 'b128x128_c2_sauto_pp'], ())
    """
    _check_call(dtype, "kernel space: fused_pingpong")
    return _fused_pingpong(dtype)


@cache
def _fused_pingpong(dtype: str) -> tuple[Sm90Config, ...]:
    if ATOMS_SM90[dtype][1] != 2:
        return ()
    found = (Sm90Config(bm, bn, schedule="pingpong") for bm, bn in PINGPONG_FUSED)
    return tuple(c for c in found if fits(c, dtype) and builds(c, dtype))


@lru_cache(maxsize=256)
def _fused_kernels(kernels: tuple[Sm90Config, ...], fp8: bool) -> tuple[Sm90Config, ...]:
    if not fp8:
        return kernels
    found = (replace(c, promote=True) for c in kernels if c.block_n <= FUSED_FP8_MAX_N)
    return tuple(dict.fromkeys(found))


def tile_kernels(dtype: str, batch: int = 1) -> tuple[Sm90Config, ...]:
    """:func:`candidates`' unswapped kernels, in its order, without the evict-first hint
    (which the cost model does not price; :func:`hinted_kernels` adds it for a shape): each tile of
    :func:`_tiles` whole, then (one problem: ``batch`` 1) as stream-K with each split of
    :data:`SPLITS`.

    >>> [c.split for c in tile_kernels("bf16")[:5]], any(c.stream_k for c in tile_kernels("bf16", 2))
    ([None, 16, 8, 4, None], False)
    """
    _check_call(dtype, "kernel space: tile_kernels", batch=batch)
    return _tile_kernels(dtype, batch == 1)


@cache
def _tile_kernels(dtype: str, one: bool) -> tuple[Sm90Config, ...]:
    found = []
    for cfg in _tiles(dtype):
        found.append(_variant(cfg, False, False))
        # stream-K runs 2-D calls; 320 wide runs whole tiles (its stream-K kernel spills 24
        # bytes, compiled here). Where stream-K shares nothing its price is the whole
        # kernel's, and the whole kernel, listed first, wins the tie.
        if one and cfg.wgmma_n is None:
            found += [_variant(cfg, True, False, split) for split in SPLITS]
    return tuple(found)


def fitted_widths(n: int, dtype: str) -> tuple[int, ...]:
    """The widths of 128-row tiles fitted to a call of ``n`` columns (at most
    :data:`FIT_MAX_N`; not tf32's): for the fewest tiles that hold n and one more, the
    narrowest multiple of 16 that does (the staging tile's narrowest swizzle atom), those
    the space's own widths (:data:`WIDTHS`) leave out and whose kernel builds
    (:func:`builds`; the widest that :func:`fits` bounds the tiles).

    >>> fitted_widths(288, "bf16"), fitted_widths(544, "bf16"), fitted_widths(4096, "bf16")
    ((144, 96), (144,), ())
    """
    _check_counts(dtype, "kernel space: fitted_widths", n=n)
    return _fitted_widths(n, dtype) if n <= FIT_MAX_N else ()


@lru_cache(maxsize=4096)
def _fitted_widths(n: int, dtype: str) -> tuple[int, ...]:
    least = -(-n // _widest_fitted(dtype))
    shares = (-(-n // j) for j in (least, least + 1))  # each tile's columns, then in steps
    found = (-(-share // FIT_STEP) * FIT_STEP for share in shares)
    return tuple(t for t in dict.fromkeys(found) if _new_width(t, dtype))


@cache
def _widest_fitted(dtype: str) -> int:
    steps = range(FIT_STEP, SWAP_TOKENS + 1, FIT_STEP)  # (one wgmma's N at most)
    return max(t for t in steps if fits(_fitted(t, dtype), dtype))


@cache
def _new_width(width: int, dtype: str) -> bool:
    """Whether a fitted width is not one of the space's own and its kernel builds."""
    standard = WIDTHS[ATOMS_SM90[dtype][1]][FIT_ROWS]
    return width not in standard and builds(_fitted(width, dtype), dtype)


@cache
def _fitted(width: int, dtype: str) -> Sm90Config:
    return (
        Sm90Config(FIT_ROWS, width, promote=True) if dtype in FP8 else Sm90Config(FIT_ROWS, width)
    )


def fitted_wave_width(m: int, n: int, dtype: str, sms: int = 132) -> int:
    """The width of 128-row tiles that gives an (m, n) call of a 16-bit ``dtype`` one
    wave of ``sms`` SMs: the narrowest multiple of 16 holding n over as many tile columns
    as ``sms`` leaves each of its 128-row tile rows, where that is a width the space's own
    (:data:`WIDTHS`) leave out, at least :data:`WAVE_WIDTH_MIN`, and its kernel builds
    (:func:`fitted_widths`' rule); 0 where there is none (fewer than
    :data:`FIT_WAVE_MIN_M` rows, too few or too many columns, fp8 and tf32).

    >>> fitted_wave_width(1071, 1808, "bf16"), fitted_wave_width(1071, 1808, "e4m3")
    (144, 0)
    >>> fitted_wave_width(100, 1808, "bf16"), fitted_wave_width(1071, 1664, "bf16")  # 128: the space's
    (0, 0)
    """
    _check_counts(dtype, "kernel space: fitted_wave_width", m=m, n=n, sms=sms)
    return _fitted_wave_width(m, n, dtype, sms)


def _fitted_wave_width(m: int, n: int, dtype: str, sms: int) -> int:
    if m < FIT_WAVE_MIN_M or ATOMS_SM90[dtype][1] != 2:  # (most calls: before the cache)
        return 0
    return _fitted_wave_width_of(-(-m // FIT_ROWS), n, dtype, sms)


@lru_cache(maxsize=4096)
def _fitted_wave_width_of(rows: int, n: int, dtype: str, sms: int) -> int:
    width = _wave_share(rows, n, sms)
    fits_tile = WAVE_WIDTH_MIN <= width <= _widest_fitted(dtype)
    return width if fits_tile and _new_width(width, dtype) else 0


def _fit_widths(m: int, n: int, dtype: str, batch: int, sms: int) -> tuple[int, ...]:
    """A checked call's 128-row fitted widths (B K-major): :func:`fitted_widths` where it
    has at most :data:`FIT_MAX_N` columns, then (one problem) :func:`fitted_wave_width`
    where that is another."""
    found = _fitted_widths(n, dtype) if n <= FIT_MAX_N else ()
    wave = _fitted_wave_width(m, n, dtype, sms) if batch == 1 else 0
    return found + (wave,) if wave and wave not in found else found


def fitted_kernels(
    m: int, n: int, k: int, dtype: str, batch: int = 1, sms: int = 132
) -> tuple[Sm90Config, ...]:
    """:func:`candidates`' 128-row tiles of :func:`fitted_widths` and
    :func:`fitted_wave_width` on ``sms`` SMs (calls whose B is K-major: an N-major B's tile
    of such a width takes a narrow swizzle), each whole and (one problem) stream-K with each
    split of :data:`SPLITS`, B evict-first where :func:`evict_first` says so; fp8 promoted
    one batch of sums at a time.

    >>> [c.name for c in fitted_kernels(2802, 288, 12032, "bf16")][:2]
    ['b128x144_c2_sauto', 'b128x144_c2_sauto_sk16']
    >>> [c.name for c in fitted_kernels(1071, 1808, 2560, "bf16")][:2]
    ['b128x144_c2_sauto', 'b128x144_c2_sauto_sk16']
    """
    if dtype == "tf32":
        return ()
    _check_counts(dtype, "kernel space: fitted_kernels", m=m, n=n, k=k, batch=batch, sms=sms)
    return _fitted_kernels(m, n, k, dtype, batch, sms)


def _fitted_kernels(
    m: int, n: int, k: int, dtype: str, batch: int, sms: int
) -> tuple[Sm90Config, ...]:
    """:func:`fitted_kernels` of checked arguments (the pick's: the policy checked them)."""
    widths = _fit_widths(m, n, dtype, batch, sms) if dtype != "tf32" else ()
    if not widths:
        return ()
    hinted = _evict_first(m, n, k, dtype, batch, FIT_ROWS)
    return _fitted_group(widths, dtype, batch == 1, hinted)


@lru_cache(maxsize=4096)
def _fitted_group(
    widths: tuple[int, ...], dtype: str, one: bool, hinted: bool
) -> tuple[Sm90Config, ...]:
    """One tuple per set of widths and hints (the cost model's table of it is built once)."""
    found = []
    for width in widths:
        whole = _variant(_fitted(width, dtype), False, hinted)
        found += [whole] + (
            [_variant(whole, True, hinted, split) for split in SPLITS] if one else []
        )
    return tuple(found)


def wave_width(m: int, n: int, dtype: str, sms: int = 132) -> int:
    """The width of 64-row tiles (one consumer warpgroup) that gives an (m, n) call of a
    16-bit ``dtype`` one tile per SM: the narrowest multiple of 16 (the staging tile's
    narrowest swizzle atom) holding n over as many tile columns as ``sms`` leaves each tile
    row, where that is a width the space's own (:data:`WIDTHS`) leave out, at least
    :data:`WAVE_WIDTH_MIN` and one wgmma wide at most, and its kernel builds; 0 where there
    is none (fp8, fewer than :data:`WAVE_MIN_M` rows, too few or too many columns). tf32 is
    refused, as :func:`fitted_widths` refuses it.

    >>> wave_width(763, 1040, "bf16"), wave_width(788, 1600, "bf16"), wave_width(8192, 1040, "bf16")
    (96, 160, 0)
    """
    _check_counts(dtype, "kernel space: wave_width", m=m, n=n, sms=sms)
    return _wave_width(m, n, dtype, sms)


def _wave_width(m: int, n: int, dtype: str, sms: int) -> int:
    if ATOMS_SM90[dtype][1] != 2 or m < WAVE_MIN_M:  # (most calls: before the cache)
        return 0
    return _wave_width_of(m, n, dtype, sms)


@lru_cache(maxsize=4096)
def _wave_width_of(m: int, n: int, dtype: str, sms: int) -> int:
    width = _wave_share(-(-m // WAVE_ROWS), n, sms)
    return width if width and _new_wave_width(width, dtype) else 0


def _wave_share(tile_rows: int, n: int, sms: int) -> int:
    """The narrowest multiple of :data:`FIT_STEP` that holds ``n`` columns over the tile
    columns one wave of ``sms`` SMs leaves each of ``tile_rows`` tile rows; 0 where that
    leaves fewer than two (:func:`wave_width`'s and :func:`fitted_wave_width`'s rule)."""
    columns = sms // tile_rows
    if columns < 2:
        return 0
    share = -(-n // columns)
    return -(-share // FIT_STEP) * FIT_STEP


@cache
def _new_wave_width(width: int, dtype: str) -> bool:
    """Whether a wave-fitted width is in bounds, not one of the space's own 64-row widths,
    and its kernel builds."""
    standard = WIDTHS[ATOMS_SM90[dtype][1]][WAVE_ROWS]
    # (a width of NARROW_WIDTHS: narrow_kernels offer it wherever a wave is that narrow)
    if not WAVE_WIDTH_MIN <= width <= SWAP_TOKENS or width in standard + NARROW_WIDTHS:
        return False
    cfg = _wave_config(width)
    return fits(cfg, dtype) and builds(cfg, dtype)


@cache
def _wave_config(width: int) -> Sm90Config:
    return Sm90Config(WAVE_ROWS, width, consumers=ROWS[WAVE_ROWS])


def wave_kernels(
    m: int, n: int, k: int, dtype: str, batch: int = 1, sms: int = 132
) -> tuple[Sm90Config, ...]:
    """:func:`candidates`' 64-row tiles of :func:`wave_width` (one problem, B K-major):
    whole (one wave shares nothing), B evict-first where :func:`evict_first` says so.

    >>> [c.name for c in wave_kernels(763, 1040, 5280, "bf16")]
    ['b64x96_c1_sauto']
    >>> wave_kernels(763, 1040, 5280, "e4m3"), wave_kernels(763, 1040, 5280, "bf16", batch=2)
    ((), ())
    """
    _check_counts(dtype, "kernel space: wave_kernels", m=m, n=n, k=k, batch=batch, sms=sms)
    return _wave_kernels(m, n, k, dtype, batch, sms)


def _wave_kernels(
    m: int, n: int, k: int, dtype: str, batch: int, sms: int
) -> tuple[Sm90Config, ...]:
    """:func:`wave_kernels` of checked arguments (the pick's)."""
    width = _wave_width(m, n, dtype, sms) if batch == 1 and dtype != "tf32" else 0
    return _wave_group(width, _evict_first(m, n, k, dtype, batch, WAVE_ROWS)) if width else ()


@lru_cache(maxsize=1024)
def _wave_group(width: int, hinted: bool) -> tuple[Sm90Config, ...]:
    """One tuple per width and hint (the cost model's table of it is built once)."""
    return (_variant(_wave_config(width), False, hinted),)


def narrow_kernels(
    m: int, n: int, k: int, dtype: str, batch: int = 1, sms: int = 132
) -> tuple[Sm90Config, ...]:
    """:func:`candidates`' 64-row tiles of :data:`NARROW_WIDTHS` columns for one problem
    (16-bit or fp8, either B major) of at least :data:`NARROW_MIN_M` rows whose 64x128
    tiles number fewer than ``sms``: whole (more CTAs for a call of few tiles), on k tiles
    :data:`NARROW_K_BYTES` deep, B evict-first where :func:`evict_first` says so. tf32 is
    refused, as :func:`wave_kernels` refuses it.

    >>> [c.name for c in narrow_kernels(298, 320, 2048, "e4m3")]
    ['b64x32x256_c1_sauto_ovl', 'b64x64x256_c1_sauto_ovl']
    >>> narrow_kernels(4096, 4096, 4096, "bf16"), narrow_kernels(298, 320, 5520, "bf16", batch=2)
    ((), ())
    """
    _check_counts(dtype, "kernel space: narrow_kernels", m=m, n=n, k=k, batch=batch, sms=sms)
    return _narrow_kernels(m, n, k, dtype, batch, sms)


def _narrow_kernels(
    m: int, n: int, k: int, dtype: str, batch: int, sms: int
) -> tuple[Sm90Config, ...]:
    """:func:`narrow_kernels` of checked arguments (the pick's)."""
    if not _narrow(m, n, dtype, batch, sms):
        return ()
    return _narrow_group(dtype, _evict_first(m, n, k, dtype, batch, WAVE_ROWS))


def _narrow(m: int, n: int, dtype: str, batch: int, sms: int) -> bool:
    """Whether a call takes :func:`narrow_kernels` (one problem of at least
    :data:`NARROW_MIN_M` rows and fewer 64x128 tiles than ``sms``; not tf32, whose 64-row
    tiles the space keeps at 128 columns)."""
    if batch != 1 or dtype == "tf32" or m < NARROW_MIN_M:
        return False
    return -(-m // WAVE_ROWS) * -(-n // NARROW_BELOW) < sms


@lru_cache(maxsize=64)
def _narrow_group(dtype: str, hinted: bool) -> tuple[Sm90Config, ...]:
    """One tuple per dtype and hint (the cost model's table of it is built once)."""
    return tuple(_variant(cfg, False, hinted) for cfg in _narrow_configs(dtype))


@cache
def _narrow_configs(dtype: str) -> tuple[Sm90Config, ...]:
    kw = {"promote": FP8_PROMOTE[WAVE_ROWS]} if dtype in FP8 else {}
    bk = NARROW_K_BYTES // ATOMS_SM90[dtype][1]
    found = (
        Sm90Config(WAVE_ROWS, w, block_k=bk, consumers=ROWS[WAVE_ROWS], **kw) for w in NARROW_WIDTHS
    )
    return tuple(c for c in found if fits(c, dtype) and builds(c, dtype))


def hinted_kernels(
    m: int,
    n: int,
    k: int,
    dtype: str,
    batch: int = 1,
    rows16: tuple[bool, bool] = (False, False),
) -> tuple[Sm90Config, ...]:
    """:func:`candidates`' unswapped kernels for an (m, n, k) call: :func:`tile_kernels`, each
    with B evict-first where :func:`evict_first` says so for its rows, then, where a row
    of A or B sits half a sector off (``rows16``) and the call has :data:`PAIR_MIN_M` rows
    or more, :func:`cluster_kernels` (one tuple per set of hints, so the cost model's table
    of them is built once).

    >>> [c.evict_first for c in hinted_kernels(512, 8192, 8192, "bf16")][:2]
    ['B', 'B']
    >>> [any(c.cluster == 2 for c in hinted_kernels(m, 8192, 8200, "bf16", 1, (True, True)))
    ...  for m in (4096, 64)]
    [True, False]
    """
    _check_call(dtype, "kernel space: hinted_kernels", m=m, n=n, k=k, batch=batch)
    check_rows16(rows16, "kernel space: hinted_kernels")
    hints = _hints(m, n, k, dtype, batch)
    return _hinted_kernels(dtype, batch == 1, hints, _pairs(m, rows16))


def _pairs(m: int, rows16: tuple[bool, bool]) -> bool:
    """Whether a call of ``m`` rows takes :func:`cluster_kernels` (:data:`PAIR_MIN_M`)."""
    return rows16 != (False, False) and m >= PAIR_MIN_M


def _hints(m: int, n: int, k: int, dtype: str, batch: int) -> tuple[bool, ...]:
    """:func:`evict_first` per row count of :data:`ROWS` (-(-m // rows) <= EVICT_FIRST_ROWS:
    most calls stream no B, and the pick asks per call)."""
    return _HINTS[_hints_at(m, _streams_b(n, k, dtype, batch))]


def _hints_at(m: int, streams: bool) -> int:
    """:func:`_hints` of a call of ``m`` rows as their index in :data:`_HINTS` (``streams``:
    :func:`_streams_b`'s)."""
    return bisect_left(_BY_MOST, m) if streams else len(ROWS) + 1  # (the most rows m passes)


_MOST_ROWS = tuple(EVICT_FIRST_ROWS * rows for rows in ROWS)  # (a call's, per row count)
_BY_MOST = sorted(_MOST_ROWS)
# the hints of a call of more rows than the first i of _BY_MOST (m <= most: bisect_left's i
# at most the index of most there); then a call that streams no B
_HINTS = tuple(
    tuple(i <= _BY_MOST.index(most) for most in _MOST_ROWS) for i in range(len(ROWS) + 1)
)
_HINTS += ((False,) * len(ROWS),)


def kernel_reads(
    m: int, n: int, k: int, dtype: str, batch: int, sms: int, swaps: bool, b_major: str
) -> tuple:
    """What a checked call's kernels read of its shape (the pick's: the policy checked
    it), as one flat tuple: :func:`hinted_kernels`' hints (their index in :data:`_HINTS`);
    where B is K-major the fitted widths (:func:`fitted_kernels`) and their hint, and the
    wave's width (:func:`wave_kernels`, 0 for none) and its hint, whether the call has
    :data:`PAIR_MIN_M` rows (pairs where its rows sit half a sector off), whether it
    takes the narrow tiles (:func:`narrow_kernels`) and their hint; where ``swaps`` what
    the swapped kernels' classes read (:func:`swap_classes`): up to
    :data:`SWAP_TOKENS` rows, the token tile's eighths (:func:`swap_tokens`), the fewest
    CTAs whose ring is as deep as its whole tiles' and whether the weights fit
    :data:`EVICT_FIRST_MAX_BYTES` (:func:`_swap_class`); past it, the token tiles' classes
    (:func:`swap_classes`: each tile's width and whether B streams); an N-major B's, its
    classes and which of their kernels each runs (:func:`_n_major_whole`). Two calls of one
    dtype, ``batch == 1``, rows16, sms and b_major whose reads are equal get the same kernels
    (tests/kernels/test_pick_fast.py), so the pick keeps its price tables per reads: a new
    shape mostly meets reads seen before, and one look-up costs it less than the space's
    steps.

    >>> reads = kernel_reads(300, 1024, 8192, "bf16", 1, 132, True, "K")
    >>> reads[:PLAIN_READS]
    (0, (208,), True, 0, False, True, True, True)
    >>> reads[PLAIN_READS]  # (token_tiles' classes, then wave_tokens')
    ((152, 0, 1), (104, 0, 1), (64, 0, 1), (72, 0, 1), (80, 0, 1))
    >>> kernel_reads(9, 8192, 8192, "bf16", 1, 132, True, "K")
    (0, (), False, 0, False, False, False, False, 2, 1, True)
    """
    hinted = _weights_fit(n, k, dtype)  # (B's, or a swapped kernel's A's)
    streams = _streams_b(n, k, dtype, batch)
    hints = _hints_at(m, streams)
    fit, fit_hint, wave, wave_hint = (), False, 0, False
    if b_major == "K" and dtype != "tf32":
        fit = _fit_widths(m, n, dtype, batch, sms)
        if fit:
            fit_hint = streams and _few_rows(m, FIT_ROWS)
        if batch == 1:
            wave = _wave_width(m, n, dtype, sms)
            wave_hint = bool(wave) and streams and _few_rows(m, WAVE_ROWS)
    narrow = _narrow(m, n, dtype, batch, sms)
    narrow_hint = narrow and streams and _few_rows(m, WAVE_ROWS)
    plain = hints, fit, fit_hint, wave, wave_hint, m >= PAIR_MIN_M, narrow, narrow_hint
    if not swaps:
        return plain
    if b_major != "K":  # (the classes, and per class whether it runs its whole kernels only)
        classes = _swap_classes(m, n, k, dtype, sms)
        return *plain, classes, _n_major_whole(classes, m, n, k, dtype, sms)
    if m > SWAP_TOKENS:  # (its swapped groups read its token tiles' classes alone)
        return *plain, _swap_classes(m, n, k, dtype, sms)
    ctas = -(-n // (2 * SWAP_ROWS))  # (its 128-row whole tiles', at most sms)
    ctas = _fewest_ctas(ctas if ctas < sms else sms, dtype in FP8, sms)
    return *plain, -(-m // N_STEP), ctas, hinted


# kernel_reads' fields for the unswapped kernels (the hints, the fitted widths and their
# hint, the wave's width and its hint, whether pairs may run: PAIR_MIN_M, whether the
# narrow tiles run and their hint); the swapped kernels' follow
PLAIN_READS = 8


def unswapped_groups(reads: tuple) -> int:
    """How many of :func:`kernels_of`'s groups are unswapped tiles (the space's, then the
    fitted widths' and the wave's where the call has them).

    >>> unswapped_groups(kernel_reads(763, 1040, 5280, "bf16", 1, 132, True, "K"))
    4
    """
    return 1 + bool(reads[1]) + bool(reads[3]) + reads[6]


def kernels_of(
    reads: tuple,
    m: int,
    n: int,
    k: int,
    dtype: str,
    batch: int,
    sms: int,
    rows16: tuple[bool, bool],
    b_major: str,
) -> tuple[tuple[Sm90Config, ...], ...]:
    """A checked call's kernels from its :func:`kernel_reads` (``reads``), one tuple per
    group: :func:`hinted_kernels`', then the fitted tiles where it has any
    (:func:`fitted_kernels`), then the wave's (:func:`wave_kernels`), then the narrow
    tiles (:func:`narrow_kernels`), then the swapped groups (:func:`swapped_groups`) and,
    where a row sits half a sector off, their pairs (:func:`token_pairs`), each
    cached per what it reads (the swapped ones per their reads too: a new set of them is a
    few steps, and new shapes meet many). :func:`candidates` lists the same, then the
    kcluster kernels (:func:`kcluster_kernels`), which the pick weighs apart.

    >>> found = kernels_of(kernel_reads(300, 1024, 8192, "bf16", 1, 132, True, "K"),
    ...                    300, 1024, 8192, "bf16", 1, 132, (False, False), "K")
    >>> sum(found, ()) + kcluster_kernels(300, 1024, 8192, "bf16", swap=True) == candidates(300, 1024, 8192, "bf16")
    True
    """
    one = batch == 1
    pairs = reads[5] and rows16 != (False, False)  # (_pairs)
    groups = [_hinted_kernels(dtype, one, _HINTS[reads[0]], pairs)]
    if reads[1]:
        groups.append(_fitted_group(reads[1], dtype, one, reads[2]))
    if reads[3]:
        groups.append(_wave_group(reads[3], reads[4]))
    if reads[6]:
        groups.append(_narrow_group(dtype, reads[7]))
    if len(reads) == PLAIN_READS:  # (no swapped kernels)
        return tuple(groups)
    key = (reads[PLAIN_READS:], dtype, sms, b_major)
    found = _SWAPPED.get(key)
    if found is None:
        if len(_SWAPPED) >= _SWAPPED_MAX:
            _SWAPPED.clear()
        found = _SWAPPED[key] = [_swapped_groups(m, n, k, dtype, sms, b_major), None]
    if rows16 == (False, False):  # (token_pairs: only where a row sits off)
        return (*groups, *found[0])
    if found[1] is None:  # (built on first need: most calls' rows sit aligned)
        found[1] = _token_pairs(_swap_classes(m, n, k, dtype, sms), dtype, b_major)
    return (*groups, *found[0], found[1]) if found[1] else (*groups, *found[0])


# (a call's swapped groups and, once a call whose rows sit off asks, their token pairs, per
# their reads and B's major)
_SWAPPED: dict[tuple, list] = {}
_SWAPPED_MAX = 16384


@cache
def _hinted_kernels(
    dtype: str, one: bool, hints: tuple[bool, ...], clusters: bool
) -> tuple[Sm90Config, ...]:
    rows = dict(zip(ROWS, hints))
    found = tuple(
        _variant(c, c.stream_k, rows[c.block_m], c.split) for c in _tile_kernels(dtype, one)
    )
    return found + _cluster_kernels(dtype) if clusters else found


def cluster_kernels(dtype: str) -> tuple[Sm90Config, ...]:
    """The space's clusters of 2: each 128-row tile of :func:`_tiles` up to 256 columns, as
    pairs along M that share B and pairs along N that share A, whole tiles, where each
    CTA's half of the shared tile is whole swizzle atoms in either major; fp8 promoted one
    batch at a time (the family refuses 'split' in clusters: it spills).

    >>> [c.name for c in cluster_kernels("bf16")][:2]
    ['b128x64_c2_sauto_x2a', 'b128x128_c2_sauto_x2']
    """
    _check_call(dtype, "kernel space: cluster_kernels")
    return _cluster_kernels(dtype)


@cache
def _cluster_kernels(dtype: str) -> tuple[Sm90Config, ...]:
    return _clustered(dtype, None, (("B", 2), ("A", 2)))


def _clustered(
    dtype: str, widths: tuple[int, ...] | None, clusters: tuple[tuple[str, int], ...]
) -> tuple[Sm90Config, ...]:
    """Each 128-row tile of :func:`_tiles` (of ``widths`` columns; None: any) in each of
    ``clusters`` ((multicast, size) of :data:`~cutemma.kernels.sm90.config.MULTICASTS`),
    where its accumulators fit and each CTA's share of a shared operand is whole swizzle
    atoms; fp8 promoted one batch at a time (the family refuses 'split' in clusters: it
    spills)."""
    if dtype == "tf32":  # (its clusters were never timed)
        return ()
    found = []
    for cfg in _tiles(dtype):
        if (
            cfg.block_m != 128
            or cfg.wgmma_n is not None
            or cfg.block_n not in (widths or (cfg.block_n,))
        ):
            continue
        base = replace(cfg, promote=True) if cfg.promote == "split" else cfg
        for shared, size in clusters:
            clustered = replace(base, cluster=size, multicast=shared)
            if fits(clustered, dtype) and _whole_atoms(clustered, dtype):
                found.append(clustered)
    return tuple(found)


def _whole_atoms(cfg: Sm90Config, dtype: str) -> bool:
    """Whether each CTA's half of each operand its cluster shares is whole swizzle atoms in
    either major, as the plan needs: an MN-major stage's atom is a swizzled row's
    elements wide (16-bit only: 8- and 32-bit operands are read K-major)."""
    eb = ATOMS_SM90[dtype][1]
    cm, cn = cfg.cluster_mn  # A is shared by the CTAs along N, B by those along M
    halves = [cfg.block_m // cn] if cn > 1 else []
    halves += [cfg.block_n // cm] if cm > 1 else []
    return eb != 2 or all(h % (SWIZZLE_ROW_BYTES // eb) == 0 for h in halves)


def swaps_call(m: int, dtype: str) -> bool:
    """Whether a call of ``m`` rows and ``dtype`` may run swapped (no tf32): one of at most
    :data:`SWAP_MAX_M` rows, or a 16-bit one of any rows.

    >>> swaps_call(2048, "e4m3"), swaps_call(5000, "bf16"), swaps_call(5000, "e4m3")
    (True, True, False)
    """
    _check_call(dtype, "kernel space: swaps_call", m=m)
    return _swaps_call(m, dtype)


def _swaps_call(m: int, dtype: str) -> bool:
    """:func:`swaps_call` of checked arguments (the pick's and the policy's)."""
    if dtype == "tf32":
        return False
    return m <= SWAP_MAX_M or _sixteen_bit(dtype)


def _sixteen_bit(dtype: str) -> bool:
    return dtype in ATOMS_SM90 and ATOMS_SM90[dtype][1] == 2


def swapped_kernels(
    m: int, n: int, k: int, dtype: str, sms: int = 132, b_major: str = "K"
) -> tuple[Sm90Config, ...]:
    """:func:`candidates`' swapped kernels for an (m, n, k) call that :func:`swaps_call`
    whose B is ``b_major`` ('K' or 'N'), those the family's rules allow:
    :func:`swapped_groups`' kernels, in order.

    >>> [c.split for c in swapped_kernels(16, 8192, 8192, "bf16")]
    [16, 8, 4, None, None]
    >>> [c.split for c in swapped_kernels(16, 8192, 2000, "bf16", b_major="N")]
    [16, 8, 4, None]
    >>> [(c.block_m, c.stream_k) for c in swapped_kernels(16, 8192, 8192, "bf16", b_major="N")]
    [(128, False), (64, False)]
    >>> sorted({c.block_n for c in swapped_kernels(287, 8192, 8192, "bf16")})
    [72, 96, 144, 152]
    """
    return tuple(c for group in swapped_groups(m, n, k, dtype, sms, b_major) for c in group)


def swapped_groups(
    m: int, n: int, k: int, dtype: str, sms: int = 132, b_major: str = "K"
) -> tuple[tuple[Sm90Config, ...], ...]:
    """:func:`swapped_kernels` as one tuple per class of calls (:func:`swap_classes`: a
    token tile each), each built once (the cost model's table of it too). For an N-major B
    whose tokens are one tile, where stream-K would read the weights at unrelated k, the
    whole kernels only (:func:`_n_major_whole`).

    >>> [len(g) for g in swapped_groups(300, 8192, 8192, "bf16")]
    [5, 5, 5, 5]
    """
    check_b_major(b_major, "kernel space: swapped_kernels")
    _check_counts(dtype, "kernel space: swapped_kernels", m=m, n=n, k=k, sms=sms)
    if not _swaps_call(m, dtype):
        raise TiledMmaError(
            f"kernel space: swapped_kernels m={m}, dtype={dtype!r}; calls of at most "
            f"SWAP_MAX_M = {SWAP_MAX_M} rows run swapped, and 16-bit ones of any rows"
        )
    return _swapped_groups(m, n, k, dtype, sms, b_major)


def _swapped_groups(
    m: int, n: int, k: int, dtype: str, sms: int, b_major: str
) -> tuple[tuple[Sm90Config, ...], ...]:
    """:func:`swapped_groups` of checked arguments (the pick's: the policy checked them),
    one tuple per set of classes (:func:`swap_classes`) where B is K-major."""
    if b_major != "K":  # (the N-major rule reads n and k themselves)
        return _groups_of_classes(m, n, k, dtype, sms, b_major)
    return _groups_of(_swap_classes(m, n, k, dtype, sms), dtype, sms)


@lru_cache(maxsize=16384)
def _groups_of(classes: tuple[tuple, ...], dtype: str, sms: int) -> tuple[tuple, ...]:
    """A K-major B's swapped groups of ``classes``, each a class's kernels (cached there, so
    that the price tables kept per group serve every set of classes that holds it)."""
    groups = (_swapped_of_class(key, dtype, sms, "K") for key in classes)
    return tuple(group for group in groups if group)


def _groups_of_classes(
    m: int, n: int, k: int, dtype: str, sms: int, b_major: str
) -> tuple[tuple[Sm90Config, ...], ...]:
    classes = _swap_classes(m, n, k, dtype, sms)
    n_major = b_major == "N"
    runs = _n_major_whole(classes, m, n, k, dtype, sms) if n_major else None
    found = []
    for i, key in enumerate(classes):
        group = _swapped_of_class(key, dtype, sms, b_major)
        if runs is not None and runs[i] == WHOLE:
            group = _whole_only(group)
        elif runs is not None and runs[i] == WHOLE_64:
            group = _whole_with_rows(group, dtype, sms)
        if group:
            found.append(group)
    return tuple(found)


# _n_major_whole's answers per class: all the class's kernels, its whole kernels only, or
# those and 64-row whole tiles beside them
ALL_KERNELS, WHOLE, WHOLE_64 = 0, 1, 2


def _n_major_whole(
    classes: tuple[tuple, ...], m: int, n: int, k: int, dtype: str, sms: int
) -> tuple[int, ...]:
    """Per class of an N-major B's swapped call, which of its kernels it runs: for tokens
    of one tile up to :data:`SWAP_WIDE_TOKENS` over a K of at least
    :data:`N_MAJOR_SHARED_MIN_K`, whole kernels of 128 and 64 rows (stream-K would read the
    weights at unrelated k); of one wider tile, whole kernels where most of its 64-row
    tiles would be shared (:func:`_shares_mostly_unaligned`); else all. With the classes,
    all that its swapped groups read of the shape (:func:`kernel_reads`)."""
    if m <= SWAP_WIDE_TOKENS:
        only = WHOLE_64 if k >= N_MAJOR_SHARED_MIN_K else ALL_KERNELS
        return (only,) * len(classes)
    if m > SWAP_TOKENS:
        return (ALL_KERNELS,) * len(classes)
    return tuple(
        WHOLE
        if _shares_mostly_unaligned(_swapped_of_class(key, dtype, sms, "N"), n, k, dtype, sms)
        else ALL_KERNELS
        for key in classes
    )


# an N-major B's swapped stream-K reads the weights at unrelated k rows (each share a
# 128-byte piece of every k row it reads). Over a K of at least this: 12 decode calls of
# 1-23 tokens and 0.3-2 GB of weights ran 64-row whole tiles (the deepest ring) at 0.935 of
# cuBLAS, the same tiles' stream-K at 0.79, none more than 1% faster shared
# (bench/results/raw/nmajor-decode-h200.json; with B K-major the shares ran 0.98); on calls
# drawn at run time whose pick the whole tiles moved, over more 64-row tiles than SMs 1-32
# tokens ran 1.077x and 33-128 1.046x the stream-K picks, 129-256 (128-row stream-K tiles
# of 136-256 tokens among them) 0.984x (raw/nmajor-ab-drawn-h200.json); over at most as
# many tiles as SMs, 1.057x, 38 of 40 faster, and the named table's 14 such rows 1.013x, all
# faster (raw/nmajor-few-ab-{drawn,named}-h200.json). Past 128 tokens most shares must span
# tiles too (at least half of the tiles shared, more than SMs): 1.35-1.8x the K-major time,
# against 0.97-1.12x under half (e.g. 236 of 896 tiles) or for K of at most 816
# (raw/calibrate-h200-{s35,s36,decode,decode-ends}.json)
N_MAJOR_SHARED_MIN_K = 2048


def _shares_mostly_unaligned(
    group: tuple[Sm90Config, ...], n: int, k: int, dtype: str, sms: int
) -> bool:
    """Whether one token tile's swapped stream-K (``group``'s, its tiles and k tile read
    from its first stream-K config) over ``n`` weight rows shares more tiles than ``sms``
    CTAs, at least half of all its tiles, over a K of at least :data:`N_MAJOR_SHARED_MIN_K`."""
    shared = next((c for c in group if c.stream_k), None)
    if shared is None or k < N_MAJOR_SHARED_MIN_K:
        return False
    tiles = -(-n // shared.block_m)
    if tiles <= sms:
        return False
    k_tiles = -(-k // shared.k_tiles[ATOMS_SM90[dtype][1]])
    sk, _ = sk_shares(tiles, 1, k_tiles, sms, (None,))
    return sk > sms and 2 * sk >= tiles


@lru_cache(maxsize=4096)
def _whole_only(group: tuple[Sm90Config, ...]) -> tuple[Sm90Config, ...]:
    """A swapped group without its stream-K kernels (one tuple per group: its price table is
    built once)."""
    return tuple(c for c in group if not c.stream_k)


@lru_cache(maxsize=4096)
def _whole_with_rows(group: tuple[Sm90Config, ...], dtype: str, sms: int) -> tuple[Sm90Config, ...]:
    """:func:`_whole_only`'s kernels and a 64-row whole tile beside each 128-row one
    (:func:`_whole_rows`; one tuple per group, as there)."""
    whole = _whole_only(group)
    rows = (_whole_rows(c, dtype, sms) for c in whole if c.block_m == 2 * SWAP_ROWS)
    return whole + tuple(c for c in rows if c is not None)


def _whole_rows(whole: Sm90Config, dtype: str, sms: int) -> Sm90Config | None:
    """``whole`` (a 128-row whole swapped kernel) as 64-row tiles of one warpgroup: the same
    tokens, k tile and hint, a ring as deep as ``whole``'s and at least as deep as
    :func:`stream_stages` gives ``sms`` CTAs (16-bit: the deepest), None where the family's
    rules refuse it."""
    full = _stream_stages(SWAP_ROWS, sms, dtype in FP8)
    stages = None if whole.stages is None or full is None else max(whole.stages, full)
    make = lambda depth: replace(  # noqa: E731
        whole, block_m=SWAP_ROWS, consumers=1, stages=depth
    )
    try:
        cfg = _shallower_if_needed(make, stages, dtype)
    except TiledMmaError:
        return None
    return cfg if fits(cfg, dtype) and builds(cfg, dtype) else None


def check_b_major(b_major: object, what: str) -> None:
    """Raise a TiledMmaError naming ``what`` unless ``b_major`` is a major of
    :data:`SWAP_SPLITS` ('K' or 'N').

    >>> check_b_major("N", "candidates")
    """
    if not (isinstance(b_major, str) and b_major in SWAP_SPLITS):
        raise TiledMmaError(f"{what}: b_major={b_major!r}; B is 'K' or 'N' major")


def swap_classes(m: int, n: int, k: int, dtype: str, sms: int = 132) -> tuple[tuple, ...]:
    """The classes of calls whose swapped kernels are an (m, n, k) call's, one per token
    tile (:func:`token_tiles`; a 16-bit call's also :func:`wave_tokens`' first
    :data:`MID_WAVE_TOKEN_TILES`, and past :data:`SWAP_MAX_M` rows those alone): up to
    :data:`SWAP_TOKENS` rows (tokens, :func:`_swap_class`'s (n, k)); past it (tokens, 0,
    whether the weights stream evict-first).

    >>> swap_classes(3, 8192, 8192, "bf16") == swap_classes(9, 8192, 8000, "bf16")
    True
    >>> swap_classes(300, 8192, 8192, "e4m3")
    ((152, 0, 1), (104, 0, 1))
    >>> [t for t, _, _ in swap_classes(300, 8192, 8192, "bf16")], wave_tokens(300, 8192, "bf16")
    ([152, 104, 160, 80], (152, 160, 80))
    """
    _check_counts(dtype, "kernel space: swap_classes", m=m, n=n, k=k, sms=sms)
    return _swap_classes(m, n, k, dtype, sms)


def _swap_classes(m: int, n: int, k: int, dtype: str, sms: int) -> tuple[tuple, ...]:
    if m <= SWAP_TOKENS:
        return ((swap_tokens(m), *_swap_class(n, k, dtype, sms)),)
    streams = _streams_b(n, k, dtype, 1)  # (evict_first per token tile)
    rows = -(-n // (2 * SWAP_ROWS))  # (past SWAP_MAX_M: the 128-row tiles of the weights)
    if m > SWAP_MAX_M:
        tiles = _wave_tokens(m, rows, dtype, sms)
    elif MID_WAVE_TOKEN_TILES and _sixteen_bit(dtype):  # (the fewest first: they win a tie)
        waves = _wave_tokens(m, rows, dtype, sms)[:MID_WAVE_TOKEN_TILES]
        tiles = tuple(dict.fromkeys((*_token_tiles(m, dtype), *waves)))
    else:
        tiles = _token_tiles(m, dtype)
    return tuple([(t, 0, int(streams and _few_rows(m, t))) for t in tiles])


def _check_call(dtype: str, what: str, **counts: int) -> None:
    """Raise a TiledMmaError naming ``what`` unless ``dtype`` is an sm90 dtype and
    ``counts`` are ints >= 1 (numpy's integers too; a bool is not a count)."""
    bad = [f"{f}={v!r}" for f, v in counts.items() if not whole_number(v) or v < 1]
    if not (isinstance(dtype, str) and dtype in ATOMS_SM90):
        bad.append(f"dtype={dtype!r}")
    if bad:
        raise TiledMmaError(
            f"{what}: {', '.join(bad)}; give whole numbers >= 1 and a dtype the sm90 GEMM "
            f"takes, one of {sorted(ATOMS_SM90)}"
        )


def _check_counts(dtype: str, what: str, **counts: int) -> None:
    """Raise a TiledMmaError naming ``what`` unless ``counts`` are ints >= 1 and ``dtype``
    one the swapped and fitted kernels run (an sm90 dtype but tf32)."""
    bad = [f"{f}={v!r}" for f, v in counts.items() if type(v) is not int or v < 1]
    known = isinstance(dtype, str) and dtype in ATOMS_SM90 and dtype != "tf32"
    if bad or not known:
        wrong = bad + ([] if known else [f"dtype={dtype!r}"])
        kinds = sorted(d for d in ATOMS_SM90 if d != "tf32")
        raise TiledMmaError(f"{what}: {', '.join(wrong)}; give ints >= 1 and a dtype of {kinds}")


def token_tiles(m: int, dtype: str) -> tuple[int, ...]:
    """The token tiles of a swapped call of ``m`` rows: up to :data:`SWAP_TOKENS`,
    :func:`swap_tokens`' one; past it, for the fewest tiles that hold m and one more, the
    narrowest multiple of 8 that does (at most what ``dtype``'s mid-size swapped kernel
    holds in registers, :func:`mid_swapped_kernel`).

    >>> token_tiles(40, "bf16"), token_tiles(287, "bf16"), token_tiles(1000, "e4m3")
    ((40,), (144, 96), (200, 168))
    """
    _check_counts(dtype, "kernel space: token_tiles", m=m)
    return _token_tiles(m, dtype)


def _token_tiles(m: int, dtype: str) -> tuple[int, ...]:
    if m <= SWAP_TOKENS:
        return (swap_tokens(m),)
    least = -(-m // _widest_tokens(dtype))
    fewest, more = swap_tokens(-(-m // least)), swap_tokens(-(-m // (least + 1)))
    return (fewest,) if more == fewest else (fewest, more)


def wave_tokens(m: int, n: int, dtype: str, sms: int = 132) -> tuple[int, ...]:
    """The token tiles of a swapped call past :data:`SWAP_MAX_M` rows: of the multiples of
    8 from 64 to what ``dtype``'s mid-size swapped kernel holds (:func:`mid_swapped_kernel`),
    the :data:`WAVE_TOKEN_TILES` whose 128-row tiles over (m, n) leave the fewest SM-tile
    slots of their whole waves empty (the wider first on a tie): a wave's time is about its
    tiles' work, so this weighs padding and a last partial wave alike.

    >>> wave_tokens(5798, 528, "bf16"), wave_tokens(8064, 432, "bf16")
    ((224, 112, 232), (248, 256, 128))
    """
    _check_counts(dtype, "kernel space: wave_tokens", m=m, n=n, sms=sms)
    return _wave_tokens(m, -(-n // (2 * SWAP_ROWS)), dtype, sms)


@lru_cache(maxsize=8192)
def _wave_tokens(m: int, rows: int, dtype: str, sms: int) -> tuple[int, ...]:
    """:func:`wave_tokens` for ``rows`` 128-row tiles of weights."""
    # (each width's slots, its waves times its width: the work is the same at every width;
    # as (slots, -width) so that the wider wins a tie. A new shape's pick runs this: tuples
    # in one comprehension, no key function)
    ranked = sorted([(-(-rows * -(-m // t) // sms) * t, -t) for t in _token_widths(dtype)])
    return tuple([-t for _, t in ranked[:WAVE_TOKEN_TILES]])


@cache
def _token_widths(dtype: str) -> tuple[int, ...]:
    """:func:`wave_tokens`' widths of ``dtype``: multiples of 8 from WAVE_TOKENS_MIN to the
    widest the mid-size swapped kernel holds."""
    return tuple(range(WAVE_TOKENS_MIN, _widest_tokens(dtype) + 1, N_STEP))


@cache
def _widest_tokens(dtype: str) -> int:
    """The widest token tile whose mid-size swapped kernel's sums fit its registers."""
    steps = range(SWAP_TOKENS, 0, -N_STEP)
    return next(t for t in steps if fits(mid_swapped_kernel(t, dtype, False), dtype))


def mid_swapped_kernel(tokens: int, dtype: str, hinted: bool) -> Sm90Config:
    """The whole swapped kernel of a call past :data:`SWAP_TOKENS` rows, its tokens in
    tiles ``tokens`` wide: 128-row tiles of two warpgroups (B^T's rows), the plan's ring
    (a weight tile is read by several token tiles: not a stream), D^T (column-major)
    stored through an MN-major staging tile by TMA (epilogue "tmat"), fp8 promoted by
    token halves (``promote="split"``: one half's batch runs while the other's sums are
    added; 1.5% faster than one batch at a time over 34 such kernels, up to 5.4%,
    bench/results/raw/swap-fp8-split-h200.json); the weights (its A) evict-first where
    ``hinted`` (:func:`evict_first`).

    >>> mid_swapped_kernel(144, "bf16", True).name
    'b128x144_c2_sauto_etmat_efa_swap'
    """
    if type(tokens) is not int or not N_STEP <= tokens <= SWAP_TOKENS or tokens % N_STEP:
        raise TiledMmaError(
            f"kernel space: mid_swapped_kernel tokens={tokens!r}; a token tile is a multiple of 8 "
            f"from 8 to {SWAP_TOKENS} (wgmma's N)"
        )
    _check_counts(dtype, "kernel space: mid_swapped_kernel", tokens=tokens)
    kw = {"epilogue": "tmat", "swap_ab": True, "evict_first": "A" if hinted else ""}
    if dtype in FP8:
        kw["promote"] = "split" if tokens >= SPLIT_MIN_N else True
    return Sm90Config(2 * SWAP_ROWS, tokens, **kw)


def token_pair(whole: Sm90Config) -> Sm90Config:
    """A mid-size swapped kernel (:func:`mid_swapped_kernel`) in pairs of CTAs along the
    tokens, the two tiles of one weight tile: each loads half of the weights' k tile and
    multicasts it to both (``cluster=2, multicast="A"`` on the swapped problem), so the
    weight tile is read once, in step, where two token tiles apart read it twice. Clusters
    take no evict-first hint and no promotion by column halves (fp8 is promoted whole).
    The model prices them as it prices every pair (the multicast operand's rows halved, the
    cluster's fixed cost); it takes them on e4m3 calls of 257-2048 rows whose rows sit half
    a sector apart, where they ran 0.858 of cuBLAS against the old picks' 0.761 (55 calls
    drawn at run time, 44 faster; bench/results/raw/swap-pairs-ab-drawn-h200.json); the
    16-bit ones mostly lost there and the model never takes them.

    >>> token_pair(mid_swapped_kernel(144, "e4m3", True)).name
    'b128x144_c2_sauto_x2a_etmat_swap'
    """
    if not (isinstance(whole, Sm90Config) and whole.swap_ab and whole.cluster == 1):
        raise TiledMmaError(
            f"kernel space: token_pair of {whole!r:.80}; give a swapped kernel of one CTA "
            "(an Sm90Config with swap_ab=True and cluster=1: mid_swapped_kernel's)"
        )
    promote = True if whole.promote == "split" else whole.promote
    return replace(whole, cluster=2, multicast="A", evict_first="", promote=promote)


def token_pairs(
    m: int, n: int, k: int, dtype: str, sms: int = 132, b_major: str = "K"
) -> tuple[Sm90Config, ...]:
    """The swapped call's :func:`token_pair` kernels, one per class of several token tiles
    (:func:`swap_classes`) whose pair fits and builds: what :func:`candidates` adds after
    the swapped kernels where a row sits half a sector off (as it adds the clusters of
    :func:`hinted_kernels`: with aligned rows the lone kernels ran as fast or faster).

    >>> [c.block_n for c in token_pairs(300, 8192, 8208, "e4m3")]
    [152, 104]
    >>> token_pairs(200, 8192, 8208, "e4m3")  # (one token tile: nothing to pair)
    ()
    """
    return _of_classes(_token_pairs, "token_pairs", m, n, k, dtype, sms, b_major)


def token_quads(
    m: int, n: int, k: int, dtype: str, sms: int = 132, b_major: str = "K"
) -> tuple[Sm90Config, ...]:
    """The swapped call's kernels of several token tiles in 2 x 2 clusters: the two token
    tiles of two weight tiles, each CTA loading half of its weight tile's k tile for its
    token pair and half of its token tile's for its weight pair (``cluster=4,
    multicast="AB"`` on the swapped problem). A half must be whole swizzle atoms in either
    major (:func:`_whole_atoms`): fp8 token tiles of a multiple of 16 (each class's width
    rounded up to one), 16-bit ones of 128 or 256. Offered where a row
    sits half a sector off, after :func:`token_pairs`; the pick weighs them apart as it
    weighs :func:`quad_kernels` (their persistent grid is the clusters of 4 that fit). On
    60 drawn e4m3 calls whose pick they became, they ran 0.930 of cuBLAS against the old
    picks' 0.878, 43 faster (bench/results/raw/token-quads-ab-drawn-h200.json).

    >>> [c.name for c in token_quads(300, 8192, 8208, "e4m3")]
    ['b128x160_c2_sauto_x4ab_etmat_swap', 'b128x112_c2_sauto_x4ab_etmat_swap']
    """
    return _of_classes(_token_quads, "token_quads", m, n, k, dtype, sms, b_major)


def _of_classes(
    build: Callable[[tuple, str, str], tuple[Sm90Config, ...]],
    what: str,
    m: int,
    n: int,
    k: int,
    dtype: str,
    sms: int,
    b_major: str,
) -> tuple[Sm90Config, ...]:
    """``build``'s kernels of a call's swapped classes (:func:`swap_classes`), its arguments
    checked under ``what``'s name; none for a call that does not swap."""
    check_b_major(b_major, f"kernel space: {what}")
    _check_counts(dtype, f"kernel space: {what}", m=m, n=n, k=k, sms=sms)
    if not _swaps_call(m, dtype):
        return ()
    return build(_swap_classes(m, n, k, dtype, sms), dtype, b_major)


@lru_cache(maxsize=4096)
def _token_quads(classes: tuple[tuple, ...], dtype: str, b_major: str) -> tuple[Sm90Config, ...]:
    step = 2 * N_STEP  # (a quad's token halves: whole wgmma N steps)
    widths = dict.fromkeys(-(-t // step) * step for t, n, _ in classes if n == 0)
    quads = (replace(token_pair(mid_swapped_kernel(w, dtype, False)), cluster=4, multicast="AB")
             for w in widths if w <= SWAP_TOKENS)  # fmt: skip
    # (halves of whole swizzle atoms in either major: A's major is not the pick's to know)
    return tuple(c for c in quads if _whole_atoms(c, dtype) and _swapped_builds(c, dtype, b_major))


@lru_cache(maxsize=4096)
def _token_pairs(classes: tuple[tuple, ...], dtype: str, b_major: str) -> tuple[Sm90Config, ...]:
    # (a class of several token tiles has n 0; its hint is the weights', which pairs drop)
    pairs = (token_pair(mid_swapped_kernel(t, dtype, False)) for t, n, _ in classes if n == 0)
    return tuple(c for c in pairs if _swapped_builds(c, dtype, b_major))


def _swapped_builds(cfg: Sm90Config, dtype: str, b_major: str) -> bool:
    """Whether a swapped kernel's sums fit and it builds for a B of ``b_major``: the
    swapped problem's A is B^T, M-major where B is N-major."""
    majors = ("M" if b_major == "N" else "K", "K")
    return fits(cfg, dtype) and builds(replace(cfg, swap_ab=False), dtype, majors)


@lru_cache(maxsize=8192)
def _swapped_of_class(
    key: tuple[int, int, int], dtype: str, sms: int, b_major: str = "K"
) -> tuple[Sm90Config, ...]:
    tokens, n, k = key
    splits = SWAP_SPLITS[b_major]
    if n == 0:  # several token tiles: whole, then stream-K (a whole tile wins a tie)
        whole = mid_swapped_kernel(tokens, dtype, bool(k))
        shared = [replace(whole, stream_k=True, split=split) for split in splits]
        # (fits and builds read no split: the first stream-K kernel's answer is each one's)
        kept = shared and fits(shared[0], dtype) and builds(shared[0], dtype)
        return (whole,) * (fits(whole, dtype) and builds(whole, dtype)) + tuple(shared) * kept
    # stream-K's ring depth reads neither n nor k: one build per tokens and hint
    shared = [_swap(tokens, 2 * SWAP_ROWS, k, dtype, sms, False, split) for split in splits]
    wide = None
    if tokens > SWAP_WIDE_TOKENS:
        wide = _swap(tokens, 2 * SWAP_ROWS, k, dtype, sms, False, SWAP_WIDE_SPLIT, 2 * SWAP_ROWS)
    whole = _swap(tokens, n, k, dtype, sms, True)
    return tuple(c for c in (*shared, wide, whole) if c)


def _swap_class(n: int, k: int, dtype: str, sms: int) -> tuple[int, int]:
    """An (n, k) that gives the same swapped kernel as (n, k) does: its ring depth reads n
    only through the CTAs of 128-row tiles (at most ``sms``), and few counts of CTAs give
    one depth, so n stands for the fewest CTAs that give its depth; its hint reads only
    whether B fits :data:`EVICT_FIRST_MAX_BYTES` (tests/kernels/test_space_cost.py compares
    the two). A new shape then rarely builds new swapped kernels (each class costs the pick
    a few hundred microseconds)."""
    hinted = _weights_fit(n, k, dtype)
    ctas = min(-(-n // (2 * SWAP_ROWS)), sms)  # its 128-row (whole) tiles
    rows = _fewest_ctas(ctas, dtype in FP8, sms) * 2 * SWAP_ROWS
    return rows, (1 if hinted else EVICT_FIRST_MAX_BYTES)


def _swap_k_bytes(fp8: bool) -> int:
    """The bytes of K in a swapped kernel's k tile: fp8's 256-byte rows
    (:data:`FP8_BLOCK_K` elements), 16-bit's one 128-byte swizzle row.

    >>> _swap_k_bytes(True), _swap_k_bytes(False)
    (256, 128)
    """
    return FP8_BLOCK_K if fp8 else SWIZZLE_ROW_BYTES


@cache
def _fewest_ctas(ctas: int, fp8: bool, sms: int) -> int:
    """The fewest CTAs of 128-row swapped tiles whose ring is as deep as ``ctas``' is
    (:func:`stream_stages`, as :func:`swapped_kernel` asks it)."""
    depth = _stream_stages(2 * SWAP_ROWS, ctas, fp8)
    # the depth never grows with the CTAs (None: the deepest, at the fewest): the first
    # count of ``depth`` by bisection, a few steps where a scan took up to ``sms``
    lo, hi = 1, ctas
    while lo < hi:
        mid = (lo + hi) // 2
        if _no_deeper(_stream_stages(2 * SWAP_ROWS, mid, fp8), depth):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _no_deeper(stages: int | None, depth: int | None) -> bool:
    """Whether a ring of ``stages`` (None: the plan's, the deepest) is no deeper than one of
    ``depth``."""
    if stages is None:
        return depth is None
    return depth is None or stages <= depth


@lru_cache(maxsize=4096)
def _swap(
    tokens: int,
    n: int,
    k: int,
    dtype: str,
    sms: int,
    whole: bool,
    split: int | None = None,
    rows: int = SWAP_ROWS,
) -> Sm90Config | None:
    """The swapped kernel for ``tokens`` rows (built once per shape class; stream-K's
    ``split`` and tile ``rows`` as given), or None where the family's rules refuse it (a
    ring too deep for the tokens' tile)."""
    if split:  # (split None's kernel with the split: fits and builds read no split)
        cfg = _swap(tokens, n, k, dtype, sms, whole, None, rows)
        return None if cfg is None else replace(cfg, split=split)
    try:
        cfg = swapped_kernel(tokens, n, k, dtype, sms, whole, rows)
    except TiledMmaError:
        return None
    return cfg if fits(cfg, dtype) and builds(cfg, dtype) else None


def builds(cfg: Sm90Config, dtype: str, majors: tuple[str, str] = ("K", "K")) -> bool:
    """Whether a config's ring and staging tile fit shared memory with a 16-bit output (the
    largest staging tile) and its stages tile with GMMA atoms for operands of ``majors``
    (A's 'K' or 'M', B's 'K' or 'N'), by the plan's launch record
    (:func:`~cutemma.kernels.sm90.index.launch_record`: arithmetic, no plan built).

    >>> builds(Sm90Config(128, 256), "bf16"), builds(Sm90Config(128, 256, stages=4), "bf16")
    (True, False)
    >>> builds(Sm90Config(128, 24), "bf16", ("K", "N"))  # (an N-major B stage 24 wide)
    False
    """
    if not (isinstance(majors, tuple) and len(majors) == 2 and majors[0] in ("K", "M")
            and majors[1] in ("K", "N")):  # fmt: skip
        raise TiledMmaError(
            f"kernel space: builds majors={majors!r}; give (A's, B's): A 'K' or 'M', B 'K' or 'N'"
        )
    try:
        launch_record(cfg, dtype, *majors, "bf16")
    except TiledMmaError:
        return False
    return True


def fits(cfg: Sm90Config, dtype: str) -> bool:
    """Whether a config's accumulators fit its consumers' registers, as
    :class:`~cutemma.kernels.sm90.plan.Sm90Plan` checks it (tests/kernels/test_space_cost.py
    compares them) without building the plan: a wgmma of 64 rows by N keeps N / 2
    accumulators per thread, promoted fp8 2 sets of them (3 with ``overlap``); a
    warpgroup holds its share of a tile's rows (pingpong: the whole tile,
    ``tile_warpgroups``).

    >>> fits(Sm90Config(128, 256), "bf16"), fits(Sm90Config(128, 256, promote="split"), "e4m3")
    (True, False)
    >>> fits(Sm90Config(128, 256, schedule="pingpong"), "bf16")
    False
    """
    per_thread = cfg.block_m // cfg.tile_warpgroups * cfg.block_n // WARPGROUP
    promoted = dtype in FP8 and bool(cfg.promote)
    sets = 3 if promoted and cfg.promote == "overlap" else 2 if promoted else 1
    return sets * per_thread <= REGISTER_SPLIT[cfg.consumers][1] - NON_ACC_REGS


@cache
def _tiles(dtype: str) -> tuple[Sm90Config, ...]:
    """The tile configs of ``dtype`` whose accumulators fit (:func:`fits`; each builds its
    plan for every output type and major: tests/kernels/test_space_cost.py; a plan takes 0.1 s
    to build, too long for a pick)."""
    eb = ATOMS_SM90[dtype][1]
    found = []
    for rows, widths in WIDTHS[eb].items():
        for bn in widths:
            kw = {"consumers": ROWS[rows]}
            if dtype in FP8:
                kw["promote"] = FP8_PROMOTE[bn]
            # 320 columns: WIDE_16's 256- and 64-wide wgmmas (one is at most 256 wide)
            wide = (rows, bn) == (WIDE_16.block_m, WIDE_16.block_n)
            cfg = WIDE_16 if wide else Sm90Config(rows, bn, **kw)
            if fits(cfg, dtype):
                found.append(cfg)
    return tuple(found)


@cache
def _variant(
    cfg: Sm90Config, stream_k: bool, streamed: bool, split: int | None = None
) -> Sm90Config:
    """``cfg`` with stream-K (and its ``split``) and the evict-first B hint as given (built
    once: a config checks its rules when made)."""
    return replace(cfg, stream_k=stream_k, evict_first="B" if streamed else "", split=split)


def evict_first(m: int, n: int, k: int, dtype: str, batch: int, rows: int) -> bool:
    """Whether B streams under an L2 evict-first hint: one problem, at most
    :data:`EVICT_FIRST_ROWS` tile rows of ``rows``, B at most
    :data:`EVICT_FIRST_MAX_BYTES` and K at least :data:`LONG_K`.

    >>> evict_first(512, 8192, 8192, "bf16", 1, 128), evict_first(8192, 8192, 8192, "bf16", 1, 128)
    (True, False)
    """
    _check_call(dtype, "kernel space: evict_first", m=m, n=n, k=k, batch=batch, rows=rows)
    return _evict_first(m, n, k, dtype, batch, rows)


def _evict_first(m: int, n: int, k: int, dtype: str, batch: int, rows: int) -> bool:
    """:func:`evict_first` of checked arguments (the pick's)."""
    return _streams_b(n, k, dtype, batch) and _few_rows(m, rows)


def _few_rows(m: int, rows: int) -> bool:
    """:func:`evict_first`'s bound on the tile rows of ``rows`` a call of ``m`` rows takes."""
    return -(-m // rows) <= EVICT_FIRST_ROWS


def _streams_b(n: int, k: int, dtype: str, batch: int) -> bool:
    """:func:`evict_first` but for the tile rows: one problem, B at most
    :data:`EVICT_FIRST_MAX_BYTES` (:func:`_weights_fit`) and K at least :data:`LONG_K`."""
    return batch == 1 and k >= LONG_K and _weights_fit(n, k, dtype)


def _weights_fit(n: int, k: int, dtype: str) -> bool:
    """Whether B's ``n`` x ``k`` bytes (a swapped kernel's A) are at most
    :data:`EVICT_FIRST_MAX_BYTES`."""
    return n * k * ATOMS_SM90[dtype][1] <= EVICT_FIRST_MAX_BYTES


def swapped_kernel(
    m: int, n: int, k: int, dtype: str, sms: int, whole: bool, rows: int = SWAP_ROWS
) -> Sm90Config:
    """The swapped kernel (``swap_ab``: its problem is (n, m, k)) for an (m, n, k) call:
    128-row tiles of two warpgroups run whole (``whole``), else tiles of ``rows`` rows
    (:data:`SWAP_ROWS`, one warpgroup, or twice that, two) shared by stream-K. D^T is
    column-major: an MN-major staging tile and TMA store it (epilogue "tmat"; from
    registers each of a warp's stores wrote 16-byte pieces of four rows of D, ~0.28 ns per
    element of a tile: bench/results/raw/calibrate-h200-mid-regs.json);
    weights of at most :data:`EVICT_FIRST_MAX_BYTES` stream in evict-first (the kernel's A
    is B^T: ``evict_first="A"``). The ring holds about :data:`IN_FLIGHT_BYTES` of weights
    (:func:`stream_stages`), less where shared memory holds less beside the staging tile;
    an fp8 token tile so wide that fewer than :data:`RING_FLOOR` of its 256-byte k tiles
    fit takes 128-byte ones, twice as many.

    >>> swapped_kernel(16, 8192, 8192, "bf16", 132, False).name
    'b64x16_c1_sauto_etmat_efa_sk_swap'
    >>> swapped_kernel(33, 10240, 8192, "e4m3", 132, True).name
    'b128x40x256_c2_s3_etmat_efa_swap'
    >>> swapped_kernel(166, 6000, 42432, "bf16", 132, False, 128).name
    'b128x168_c2_sauto_etmat_sk_swap'
    """
    _check_counts(dtype, "kernel space: swapped_kernel", m=m, n=n, k=k, sms=sms)
    if rows not in (SWAP_ROWS, 2 * SWAP_ROWS) or type(rows) is not int:
        raise TiledMmaError(
            f"kernel space: swapped_kernel rows={rows!r}; a stream-K swapped tile has "
            f"{SWAP_ROWS} rows (one warpgroup) or {2 * SWAP_ROWS} (two)"
        )
    tokens = swap_tokens(m)
    kw = {"stream_k": not whole, "epilogue": "tmat", "swap_ab": True}
    if _weights_fit(n, k, dtype):
        kw["evict_first"] = "A"
    k_bytes = _swap_k_bytes(dtype in FP8)
    block_k = k_bytes if dtype in FP8 else None  # (16-bit: the plan's row, block_k None)
    if whole:
        stages = _stream_stages(2 * SWAP_ROWS, min(-(-n // (2 * SWAP_ROWS)), sms), dtype in FP8)
        shape = {"block_m": 2 * SWAP_ROWS}
    else:
        stages = _stream_stages(rows, sms, dtype in FP8)
        shape = {"block_m": rows, "consumers": rows // SWAP_ROWS}
    make = lambda depth, bk=block_k: Sm90Config(  # noqa: E731
        block_n=tokens, block_k=bk, stages=depth, **shape, **kw
    )
    cfg = _shallower_if_needed(make, stages, dtype)
    if block_k is None or cfg.stages is None or cfg.stages >= RING_FLOOR:
        return cfg
    # 256-byte k tiles two deep (fp8, 136-256 tokens) ran 0.884 of cuBLAS where 128-byte
    # ones four or five deep ran 0.970, 46 of 50 drawn calls faster; where 256-byte tiles
    # reach the floor they stay: 128-byte ones twice as deep took 5% longer on 40-96
    # tokens and 1-2% longer in the decode step (raw/fp8-k128-ring-ab-drawn-h200.json,
    # raw/fp8-k128-all-ab-drawn-h200-rejected.json, raw/decode-step-variants-k128-*.json)
    # (stages is an int here: a ring the rule left to the plan returned above)
    same_bytes = stages * FP8_BLOCK_K // SWIZZLE_ROW_BYTES  # the same bytes in flight
    return _shallower_if_needed(lambda d: make(d, None), same_bytes, dtype)


def _shallower_if_needed(
    make: Callable[[int | None], Sm90Config], stages: int | None, dtype: str
) -> Sm90Config:
    """``make(stages)``, or where its ring and staging tile outgrow shared memory
    (:func:`builds`) the deepest ring down to 2 stages that fits: a wide token tile's
    staging tile takes what a deep ring would (before the TMA store, 16-bit whole kernels
    of 104-256 tokens and fp8 ones of 48-168 left the space for it). Where no depth fits,
    ``make(2)`` as it is: its refusal raised, or a config that does not build, which the
    space leaves out (:func:`_swap`)."""
    if stages is None:
        return make(None)
    for depth in range(stages, 1, -1):
        try:
            cfg = make(depth)
        except TiledMmaError:
            continue
        if builds(cfg, dtype):
            return cfg
    return make(2)


def swap_tokens(m: int) -> int:
    """A swapped kernel's columns for ``m`` rows of the call: m rounded up to a multiple of
    8 (wgmma's N step), at least :data:`TOKENS_MIN`.

    >>> swap_tokens(1), swap_tokens(17)
    (16, 24)
    """
    return max(TOKENS_MIN, -(-m // N_STEP) * N_STEP)


def stream_stages(rows: int, ctas: int, fp8: bool) -> int | None:
    """The ring depth of ``ctas`` swapped CTAs each streaming tiles of ``rows`` rows by a
    k tile of :func:`_swap_k_bytes` (``fp8``: 256 bytes, else 128): for fp8, the depth that
    keeps about :data:`IN_FLIGHT_BYTES` of weights in flight, at least :data:`RING_FLOOR`;
    None (the plan's depth, as many as fit up to MAX_STAGES) where that would be as deep or
    deeper, and for 16-bit weights.

    >>> stream_stages(64, 132, True), stream_stages(128, 80, True)
    (4, 3)
    >>> stream_stages(128, 132, True)  # (2 by the bytes: the floor)
    3
    >>> stream_stages(128, 80, False) is None
    True
    """
    bad = [f"{f}={v!r}" for f, v in (("rows", rows), ("ctas", ctas)) if type(v) is not int or v < 1]
    if bad or type(fp8) is not bool:
        wrong = bad + ([] if type(fp8) is bool else [f"fp8={fp8!r}"])
        raise TiledMmaError(
            f"kernel space: stream_stages {', '.join(wrong)}; give rows and ctas as ints >= 1 "
            "and fp8 as True or False"
        )
    return _stream_stages(rows, ctas, fp8)


def _stream_stages(rows: int, ctas: int, fp8: bool) -> int | None:
    if not fp8:
        return None
    stages = max(RING_FLOOR, round(IN_FLIGHT_BYTES / (ctas * rows * _swap_k_bytes(fp8))))
    return None if stages >= MAX_STAGES else stages


__all__ = [
    "builds",
    "candidates",
    "check_b_major",
    "cluster_kernels",
    "evict_first",
    "fits",
    "fitted_kernels",
    "fitted_wave_width",
    "fitted_widths",
    "wave_kernels",
    "wave_width",
    "fused_kernels",
    "fused_pingpong",
    "hinted_kernels",
    "mid_swapped_kernel",
    "narrow_kernels",
    "quad_kernels",
    "swap_classes",
    "swap_tokens",
    "swapped_groups",
    "swapped_kernel",
    "swapped_kernels",
    "swaps_call",
    "tile_kernels",
    "token_tiles",
    "wave_tokens",
]
