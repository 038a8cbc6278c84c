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
    return _sm80_tile(as_int(m), as_int(n), as_int(batch), dtype)


def builtin(m: int, n: int, k: int, batch: int, dtype: str, sms: int, sm90: bool) -> Any:
    """The policy's built-in config of a checked call (plain ints >= 1, a kernel dtype):
    :func:`builtin_sm90_config`'s where the sm90 kernel reads the operands (``sm90``), else
    :func:`builtin_config`'s, without their argument checks.

    >>> builtin(8192, 8192, 8192, 1, "bf16", 132, True).name
    'b128x256_c2_sauto'
    >>> builtin(8192, 8192, 8192, 1, "s8", 132, False).name
    'b128x128x32_w2x2_s4'
    """
    if not sm90:
        return _sm80_tile(m, n, batch, dtype)
    return _sm90_tile(m, n, sms, dtype, batch, k)


def _sm80_tile(m: int, n: int, batch: int, dtype: str) -> GemmConfig:
    for name in ("large", "small"):
        cfg = BUILTIN_CONFIGS[name]
        if -(-m // cfg.block_m) * -(-n // cfg.block_n) * batch >= 132:  # H100: 132 SMs
            return FP8_LARGE if name == "large" and dtype in ELEM_BYTES and dtype[0] == "e" else cfg
    return BUILTIN_CONFIGS["skinny"]


DEFAULT_SM90 = Sm90Config(128, 256)
SMALL_SM90 = Sm90Config(128, 128)
# fp8's big tile: 2 x 96 accumulators per thread, the k-tile sums promoted by N halves
FP8_SM90 = Sm90Config(128, 192, promote="split")
# fp8 widths and their per-tile speed against 128x192 (raw/tile-widths-run6.json,
# raw/sk-probe-table-run3.json)
FP8_TILES = {
    192: (FP8_SM90, 1.0),
    160: (Sm90Config(128, 160, promote="split"), 0.93),
    128: (Sm90Config(128, 128, promote="overlap"), 0.88),
}
# one tile row of fp8 streams B: 128x64 tiles put twice the CTAs on it (raw/fp8-one-row-run18.json)
FP8_ONE_ROW = Sm90Config(128, 64, promote="overlap")
# from this K, 128x256 from FULL_WAVE of a wave up: the mainloop hides the partial wave
# (raw/sm90-tiles16-run29.json)
LONG_K = 4096
# 16-bit widths (block_n of 128-row tiles) and their per-tile speed against 128x256
# (raw/sm90-tiles16-run29.json; 320: raw/wide-mixed-s12-run6.json)
TILE_SPEEDS_16 = {320: 0.98, 256: 1.0, 192: 0.955, 128: 0.93, 64: 0.54}
# width 320: a m64n256 and a m64n64 wgmma side by side, taken where its tiles fill whole
# waves (raw/pick-wide-s12-run8.json)
WIDE_16 = Sm90Config(128, 320, block_k=32, epilogue="tma2", wgmma_n=(256, 64))
# width 64 runs as 64x128 tiles of one warpgroup, never stream-K (raw/tile-64x128-run7.json)
NARROW_16 = Sm90Config(64, 128, consumers=1)
# a stream-K last wave costs 1 / split + this of a wave: fix-up, pipeline fill, epilogues
# (raw/sk-probe-dpfirst-run6.json)
SK_WAVES = 0.28
# fp8 128x128 runs whole tiles faster as its stream-K kernel (why is not known;
# raw/tile-map-run1.json, raw/sk-vs-plain-ab-run2.json)
FP8_SK_KERNEL_SPEEDS = {128: 0.97}
# B under an L2 evict-first policy where few tile rows stream a B this small: nothing dirty
# is written back ahead of it (raw/decode-evict-first-run10.json, raw/evict-first-b-mid-run14.json)
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

    return _sm90_tile(m, n, sms, dtype, batch, k)


def _sm90_tile(m: int, n: int, sms: int, dtype: str, batch: int, k: int | None) -> Sm90Config:
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
