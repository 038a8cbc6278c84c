"""The built-in configs and how ``cutemma.gemm`` picks one for a problem shape, per family:
:func:`pick_config` (sm80: whole waves of 128x128 tiles, else 64x64, else 32x32) and
:func:`pick_sm90_config` (sm90: the 128-row tile that finishes first by whole waves and
measured per-tile speeds).

>>> builtin_config(8192, 8192, 8192).name, pick_sm90_config(8192, 8192).name
('b128x128x32_w2x2_s4', 'b128x256_c2_sauto')
"""

from __future__ import annotations

import numbers
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cutemma.errors import TiledMmaError
from cutemma.kernels.common.scheduler import FULL_WAVE
from cutemma.kernels.sm80.config import ELEM_BYTES, GemmConfig
from cutemma.kernels.sm90.config import ATOMS_SM90, FP8, SWIZZLE_ROW_BYTES, Sm90Config
from cutemma.kernels.sm90.streamk import sk_split

if TYPE_CHECKING:  # designs load with the first pick_config: a call's host side needs none
    from cutemma.kernels.design import GemmDesign

BUILTIN_CONFIGS = {
    "large": GemmConfig(128, 128, 32, (2, 2), 4),
    "wide": GemmConfig(128, 256, 32, (2, 4), 3),
    "small": GemmConfig(64, 64, 32, (2, 2), 4),
    "skinny": GemmConfig(32, 32, 64, (2, 2), 4),
}


# fp8 on sm_90a: ptxas turns each m16n8k32 fp8 mma.sync into F2FP conversions + two HMMA
# + FADDs, whose temporaries make the 4-warp 128x128 tile spill; 8 warps halve the
# accumulators per thread and spill nothing (SASS checked in tests/kernels).
FP8_LARGE = GemmConfig(128, 128, 32, (4, 2), 4)


def builtin_config(m: int, n: int, k: int, batch: int = 1, dtype: str = "bf16") -> GemmConfig:
    """The built-in config for a problem shape: smaller tiles when big ones leave SMs idle.

    ``batch`` problems of (m, n, k) fill the SMs together; ``dtype`` is the kernel's
    element type ('bf16', 'e4m3', ...: fp8 takes an 8-warp large tile).

    >>> builtin_config(1024, 1024, 64).name, pick_config(8192, 8192, 8192).name
    ('b64x64x32_w2x2_s4', 'b128x128x32_w2x2_s4')
    >>> builtin_config(16, 4096, 4096).name, pick_config(1024, 1024, 64, batch=8).name
    ('b32x32x64_w2x2_s4', 'b128x128x32_w2x2_s4')
    >>> builtin_config(8192, 8192, 8192, dtype="e4m3").name
    'b128x128x32_w4x2_s4'
    """
    from cutemma.layout.checks import as_int

    for what, v in (("m", m), ("n", n), ("k", k), ("batch", batch)):
        if as_int(v) is None or as_int(v) < 1:
            raise TiledMmaError(f"pick_config: {what}={v!r} must be a whole number >= 1")
    if not isinstance(dtype, str) or dtype not in ELEM_BYTES:
        raise TiledMmaError(f"pick_config: dtype {dtype!r}; choose one of {', '.join(ELEM_BYTES)}")
    m, n, batch = as_int(m), as_int(n), as_int(batch)
    for name in ("large", "small"):
        cfg = BUILTIN_CONFIGS[name]
        if -(-m // cfg.block_m) * -(-n // cfg.block_n) * batch >= 132:  # H100: 132 SMs
            return FP8_LARGE if name == "large" and dtype in ELEM_BYTES and dtype[0] == "e" else cfg
    return BUILTIN_CONFIGS["skinny"]


DEFAULT_SM90 = Sm90Config(128, 256)


SMALL_SM90 = Sm90Config(128, 128)


# fp8's big tile: 2 x 96 accumulators per thread, the k-tile sums promoted by N halves
FP8_SM90 = Sm90Config(128, 192, promote="split")

# fp8 tile widths and their per-tile speed relative to 128x192 (promoted by halves): 128x160
# fills the waves where N is a multiple of 160 (run 6, raw/tile-widths-run6.json, e4m3
# against _scaled_mm: (M, 10240, 8192) at M = 256 / 512 / 1024: 1.06 / 1.11 / 1.04x against
# 1.01 / 0.99 / 0.94x; where 160 leaves a ragged last column it loses, as the waves say).
# 128x128 keeps a wgmma batch in flight while it promotes (promote="overlap"): where the
# waves pick 128 it beat promote=True (raw/sk-probe-table-run3.json: (M, 8192, 28672) at
# M = 256 / 512: 0.98 / 0.98x _scaled_mm against 0.94 / 0.92x; (512, 8192, 8192) 1.02x
# against 0.97x; within 1.3% either way on the other such rows); its speed against
# 128x192 stays 0.88 (at 0.92 and up the waves would pick it where it measured slower)
FP8_TILES = {
    192: (FP8_SM90, 1.0),
    160: (Sm90Config(128, 160, promote="split"), 0.93),
    128: (Sm90Config(128, 128, promote="overlap"), 0.88),
}
# fp8 calls of one tile row (M <= 128; past decode's 64 swapped tokens) stream B, and 128x64
# tiles (a batch in flight) put twice the CTAs on that stream wherever their tiles take no
# more waves than 128x128's: e4m3 (128, N, K) ran 1.01-1.15x _scaled_mm against 0.61-1.11x
# at 128x128 for (N, K) from (2048, 8192) to (8192, 28672), (80, 4096, 14336) 0.84 against
# 0.81x, but (96, 8192, 28672) 0.90 against 0.95x (raw/fp8-one-row-run18.json)
FP8_ONE_ROW = Sm90Config(128, 64, promote="overlap")
# 128x256 from FULL_WAVE of a wave of its tiles up when K is this long (run 6: (512, 8192,
# 8192|28672): 128 tiles of 128x256 for 132 SMs, 0.98-0.99x cuBLAS against 0.94-0.95x for
# 128x128); with a short K two waves of 128x128 pipeline one tile's epilogue under the
# next's mainloop and win (run 29: 2048^3, 128x128 3% faster than one wave of 128x256)
LONG_K = 4096


# 16-bit tile widths (block_n of 128-row tiles) and their per-tile speed relative to
# 128x256, bf16 at 6144^3 and 8192^3 (run 29, raw/sm90-tiles16-run29.json): a tile is
# chosen by whole waves over the SMs and these speeds (pick_sm90_config)
TILE_SPEEDS_16 = {320: 0.98, 256: 1.0, 192: 0.955, 128: 0.93, 64: 0.54}
# Width 320 is WIDE_16: a m64n256 and a m64n64 wgmma side by side (Sm90Config.wgmma_n; a
# multiple of 64 columns each, so an N-major B's 128-byte swizzle atoms stay whole), k tiles
# of 32 (6 stages beside the half-width staging tile). Its speed is from session 12's run 6
# (raw/wide-mixed-s12-run6.json): at (1024, 10240, 8192) its 2 waves ran 1.011x cuBLAS
# against 0.953x for 128x128's 5, which the costs below give at 0.987 (0.98 here, so that
# it does not replace 128x256 on a margin under 1%, as at (1024 | 2048, 57344, 8192),
# where it was not measured). There 5 x m64n64 ran 0.94 (raw/wide-tiles-s12-run1.json):
# 4 x m64n64 for 128x256 is 0.87 of one m64n256 at 4096^3 (raw/wgmma-widths-s12-run5.json).
# It wins where its tiles fill whole waves that 128x256's do not: (512 | 1024, 10240, 8192)
# 1.018 / 1.011x against 0.949 / 0.953x; raw/pick-wide-s12-run8.json times every pick it
# changed.
WIDE_16 = Sm90Config(128, 320, block_k=32, epilogue="tma2", wgmma_n=(256, 64))
# Width 64 above is the narrow tile's output: 128 x 64 when it was timed. The kernel runs it
# as 64x128 tiles of one consumer warpgroup. That ran 1.6-13% faster (means of 9 rounds)
# than 128x64 on all 12 shapes where the picker took 128x64, from (1024, 1024, 1024) to
# (128, 8192, 28672) (raw/tile-64x128-run7.json). Never stream-K: it lost 1-43% there.
NARROW_16 = Sm90Config(64, 128, consumers=1)
# Stream-K for a grid of tiles whose last wave is partial (K this long: measured there): the
# whole waves, then the last wave's tiles cut into `split` aligned k chunks, cost whole
# waves + 1 / split + SK_WAVES of a wave (its fix-up, the chunks' pipeline fill and
# epilogues; runs 5-6, raw/sk-probe-dpfirst-run6.json: (512, 10240, 8192) bf16 at 128x256
# ran 1.53 waves, (2048, 8192, 28672) e4m3 at 128x192 5.53: 0.28 over the chunk count)
SK_WAVES = 0.28
# fp8 128x128 (promote="overlap") runs whole tiles faster as its stream-K kernel than as its
# plain kernel, even with no tile shared (raw/tile-map-run1.json, e4m3 against _scaled_mm at
# M = 1024 / 2048 on (8192, 28672): 1.00 / 1.02x against 0.88 / 0.82x; the same in the A/B
# runs raw/sk-vs-plain-ab-run2.json and raw/tile-loop-ab-run3-old.json. Why is not known:
# the k loops' SASS differs only in the plain loop re-reading K from the constant bank, and
# the plain kernel's tile loop walked by a count ran no faster, tile-loop-ab-run3-counted).
# Where stream-K may run (one 2-D call, K >= LONG_K, more than a wave of tiles, two tile
# rows and columns) this tile takes that kernel, at this speed against 128x192's (the
# map's best fit: 0.96-0.98)
FP8_SK_KERNEL_SPEEDS = {128: 0.97}
# B's loads carry an L2 evict-first policy (Sm90Config.evict_first) where B is read by at
# most EVICT_FIRST_ROWS tile rows, K is at least LONG_K (as measured) and B is at most this
# many bytes (decode's swapped calls: the weights, their A). A short stream of B starts at
# half the DRAM bandwidth while L2 writes back the lines the kernels before it left dirty
# (per-CTA arrival times, raw/decode-timeline-run9.json: 1.3-2 TB/s for the first ~20 us,
# 3+ after); with B's lines the first to leave L2 nothing is written back
# (raw/decode-evict-first-run10.json, 16 tokens swapped: e4m3 (10240 | 8192, 8192) 0.97 /
# 0.99x cuBLAS -> 1.07 / 1.16x, bf16 1.00 / 0.99x -> 1.05 / 1.06x;
# raw/evict-first-b-run11.json, unswapped: e4m3 (128 | 256, 8192,
# 8192) 0.97 / 0.99x -> 1.11 / 1.12x, bf16 (128, 8192, 8192) 0.99x -> 1.07x). Over a longer
# stream the write-back is a smaller share and the hint lost: swapped e4m3 (16, 57344,
# 8192) 1.06 -> 1.05x, bf16 1.00 -> 0.96x; 235 MB of B ((8192, 28672) e4m3) broke even.
# At 4 and 8 tile rows (M = 512, 1024; K >= LONG_K) it still gained 0-4% on the two shapes
# under the bound, at 16 it was even, and over the bound it lost up to 15%
# (raw/evict-first-b-mid-run14.json)
EVICT_FIRST_MAX_BYTES = 192 << 20
EVICT_FIRST_ROWS = 8


def _whole(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def builtin_sm90_config(
    m: int, n: int, sms: int = 132, dtype: str = "bf16", batch: int = 1, k: int | None = None
) -> Sm90Config:
    """The built-in tile for an (m, n) output (``batch`` of them): for 16-bit types the
    128-row tile of :data:`TILE_SPEEDS_16` that finishes first counting whole waves of
    tiles over the SMs (the last wave's idle SMs cost time) and each width's speed
    (128x256 only from one whole wave up, or from ``scheduler.FULL_WAVE`` of one when ``k``
    is at least :data:`LONG_K`), the narrowest (128 x 64 of output) run as
    :data:`NARROW_16`'s 64x128 tiles; tf32 between 128x256 and 128x128 the same way. fp8
    (promoted accumulation: two accumulator sets, at most 2 x 96 per
    thread) the same way between the widths of :data:`FP8_TILES` (192 and 160 promoted by
    N halves, ``promote="split"``, and 128 with a batch in flight, ``promote="overlap"``),
    or :data:`FP8_ONE_ROW`'s 128x64 for one tile row where it takes no more waves.
    B streams in under an L2 evict-first policy (``_efb``) where few tile rows read a B of at
    most :data:`EVICT_FIRST_MAX_BYTES`.

    >>> [builtin_sm90_config(s, s).name for s in (8192, 4096, 3072, 2048, 1024)]
    ['b128x256_c2_sauto', 'b128x256_c2_sauto', 'b128x192_c2_sauto', 'b128x128_c2_sauto', 'b64x128_c1_sauto']
    >>> builtin_sm90_config(512, 8192, k=8192).name  # 128 tiles of 128x256: 97% of a wave
    'b128x256_c2_sauto_efb'
    >>> builtin_sm90_config(1024, 10240, k=8192).name  # 2 waves of 128x320 (WIDE_16)
    'b128x320x32_c2_sauto_etma2_efb_n256_64'
    >>> [builtin_sm90_config(s, s, dtype="e4m3").name for s in (8192, 6144, 4096, 1024)]
    ['b128x192_c2_sauto_spl', 'b128x192_c2_sauto_spl', 'b128x192_c2_sauto_spl', 'b128x128_c2_sauto_ovl']
    >>> builtin_sm90_config(2048, 2048, batch=8).name  # 8 x 64 tiles of 128x256: 3.9 waves
    'b128x256_c2_sauto'
    """
    counts = {"m": m, "n": n, "sms": sms, "batch": batch} | ({} if k is None else {"k": k})
    bad = [f"{f}={v!r}" for f, v in counts.items() if not _whole(v) or v < 1]
    kinds = sorted(ATOMS_SM90)
    if bad or dtype not in kinds:
        wrong = bad + ([] if dtype in kinds else [f"dtype={dtype!r}"])
        raise TiledMmaError(
            f"pick_sm90_config: {', '.join(wrong)}; m, n, sms, batch (and k) are ints >= 1 and "
            f"dtype one of {kinds}"
        )

    k_row = SWIZZLE_ROW_BYTES // ATOMS_SM90[dtype][1]  # a built-in tile's k tile

    def waves(bn: int) -> tuple[float, bool]:  # (waves, by stream-K) of 128 x bn tiles
        tiles_m, tiles_n = -(-m // 128), -(-n // bn)
        whole = -(-batch * tiles_m * tiles_n // sms)
        small = min(tiles_m, tiles_n) < 2 or tiles_m * tiles_n <= sms
        # WIDE_16 runs whole tiles: its stream-K kernel spills (24 bytes, compiled here)
        if batch > 1 or k is None or k < LONG_K or small or bn == WIDE_16.block_n:
            return whole, False
        sk_kernel = dtype in FP8 and bn in FP8_SK_KERNEL_SPEEDS  # taken even with none shared
        sk, ctas = sk_split(tiles_m, tiles_n, -(-k // k_row), sms)
        if sk == 0:
            return whole, sk_kernel
        by_sk = tiles_m * tiles_n // sms + sk / ctas + SK_WAVES
        return (by_sk, True) if sk_kernel else min((whole, False), (by_sk, True))

    def cost(bn: int, speed: float) -> float:  # time in units of a 128-row, 1-column tile
        w, sk = waves(bn)
        return w * bn / (FP8_SK_KERNEL_SPEEDS.get(bn, speed) if sk and dtype in FP8 else speed)

    streamed = (  # B read by few tile rows, and short: evict-first B (EVICT_FIRST_MAX_BYTES)
        batch == 1
        and k is not None
        and k >= LONG_K
        and -(-m // 128) <= EVICT_FIRST_ROWS
        and n * k * ATOMS_SM90[dtype][1] <= EVICT_FIRST_MAX_BYTES
    )

    def chosen(cfg: Sm90Config, bn: int) -> Sm90Config:  # stream-K where bn's waves say so
        sk = waves(bn)[1] and cfg != NARROW_16
        return replace(cfg, stream_k=sk, evict_first="B" if streamed else "")

    if dtype in FP8:
        # promoted fp8, run 22 (e4m3, ratio to _scaled_mm): 128x192 promoted by N halves
        # 1.016 / 0.997 / 0.942 at 8192^3 / 6144^3 / 4096^3; 128x128 (runs 14-17: 0.87-0.91,
        # 0.90, 0.93) is ~0.88 of its speed. By whole waves alone, also under one wave of
        # 128x192: (256, 10240) is one wave of 108 such tiles against two of 160 128x128
        # (0.80x _scaled_mm, inference-h100.json before)
        best = FP8_TILES[min(FP8_TILES, key=lambda bn: (cost(bn, FP8_TILES[bn][1]), -bn))][0]
        one_row = (
            batch == 1
            and m <= FP8_ONE_ROW.block_m
            and waves(FP8_ONE_ROW.block_n)[0] <= waves(best.block_n)[0]
        )
        cfg = FP8_ONE_ROW if one_row else best
        return chosen(cfg, cfg.block_n)
    widths = dict(TILE_SPEEDS_16)
    if ATOMS_SM90[dtype][1] != 2:  # tf32: only the widths measured for it (run 9)
        widths = {bn: widths[bn] for bn in (256, 128)}
    wave = FULL_WAVE if k is not None and k >= LONG_K else 1.0
    for wide in (256, WIDE_16.block_n):  # tiles short of a wave: narrower ones
        if batch * -(-m // 128) * -(-n // wide) < wave * sms:
            widths = {bn: v for bn, v in widths.items() if bn < wide}
    if m < 128:  # a partly empty tile: 128x64 loaded 2 bytes of (zero) A per byte of B
        widths.pop(64, None)  # (M = 16 x 4096 x 4096: 0.68x cuBLAS, 128x128 0.76x; NARROW_16
        # was not timed there)
    bn = min(widths, key=lambda bn: (cost(bn, widths[bn]), -bn))
    cfg = NARROW_16 if bn == 64 else WIDE_16 if bn == WIDE_16.block_n else Sm90Config(128, bn)
    return chosen(cfg, bn)


def pick_config(m: int, n: int, k: int, batch: int = 1, dtype: str = "bf16") -> GemmDesign:
    """The built-in sm80 design for a problem shape (:func:`builtin_config`'s config as a
    design; its ``.config`` is the config, its kernel the config's).

    >>> d = pick_config(1024, 1024, 64)
    >>> d.name, d.tiled_mma.atom.name, d.tile
    ('b64x64x32_w2x2_s4', 'SM80_16x8x16_F32BF16BF16F32_TN', (64, 64, 32))
    """
    from cutemma.kernels.design import GemmDesign

    return GemmDesign.from_config(builtin_config(m, n, k, batch, dtype), dtype)


def pick_sm90_config(
    m: int, n: int, sms: int = 132, dtype: str = "bf16", batch: int = 1
) -> GemmDesign:
    """The built-in sm90 design for an (m, n) output (:func:`builtin_sm90_config` as a design).

    >>> pick_sm90_config(4096, 4096, dtype="e4m3").config.promote
    'split'
    """
    from cutemma.kernels.design import GemmDesign

    return GemmDesign.from_config(builtin_sm90_config(m, n, sms, dtype, batch), dtype)
