"""The sm90 kernel space: every kernel the sm90 family builds for a call, as data.

A kernel is an :class:`~cutemma.kernels.sm90.config.Sm90Config`. The space is the product
of a few axes, each a table below, filtered by the family's own rules (a config that
``Sm90Config`` or :class:`~cutemma.kernels.sm90.plan.Sm90Plan` refuses is not in it):

- the tile: rows (64 with one consumer warpgroup, 128 or 256 with two) by columns
  (:data:`WIDTHS`, per element type; 16-bit 320 is a m64n256 and a m64n64 wgmma side by
  side), fp8 promoted as its width allows (:data:`FP8_PROMOTE`);
- whole tiles, or stream-K (a last partial wave's, or a small grid's, k iterations shared
  over every SM, fixed up in a fixed order: deterministic);
- swap-AB for calls of at most :data:`SWAP_MAX_M` rows (D^T = B^T A^T: B's N fills the
  wgmma's 64 rows), 64-row tiles shared by stream-K or 128-row tiles whole;
- B (or, swapped, B^T) read under an L2 evict-first hint where few tile rows stream a B
  that L2 cannot keep anyway (:func:`evict_first`).

:mod:`cutemma.kernels.cost` predicts each candidate's time; the policy takes the fastest.

>>> names = [c.name for c in candidates(4096, 4096, 4096, "bf16")]
>>> "b128x256_c2_sauto" in names and "b128x192_c2_sauto_sk" in names
True
>>> any(c.swap_ab for c in candidates(32, 8192, 8192, "bf16"))
True
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache, lru_cache

from cutemma.errors import TiledMmaError
from cutemma.kernels.decode import ROWS as SWAP_ROWS
from cutemma.kernels.decode import _swapped, swap_tokens
from cutemma.kernels.pick import EVICT_FIRST_MAX_BYTES, EVICT_FIRST_ROWS, LONG_K, WIDE_16
from cutemma.kernels.sm90.config import (
    ATOMS_SM90,
    FP8,
    NON_ACC_REGS,
    WARPGROUP,
    Sm90Config,
    register_split,
)
from cutemma.kernels.sm90.streamk import sk_split

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
SWAP_MAX_M = 256  # a swapped call's tokens are one wgmma's N: at most 256


def candidates(
    m: int,
    n: int,
    k: int,
    dtype: str,
    batch: int = 1,
    sms: int = 132,
    swap: bool = True,
) -> tuple[Sm90Config, ...]:
    """The sm90 kernels that run an (m, n, k) call of ``dtype`` (``batch`` of them) on
    ``sms`` SMs: every tile of :data:`WIDTHS`, whole and (where it shares anything)
    stream-K, and the swapped kernels where ``swap`` allows (2-D calls without C or
    epilogue, m <= :data:`SWAP_MAX_M`).

    >>> len(candidates(8192, 8192, 8192, "bf16")) >= 8
    True
    """
    if dtype not in ATOMS_SM90:
        raise TiledMmaError(
            f"kernel space: dtype {dtype!r}; the sm90 GEMM takes {sorted(ATOMS_SM90)}"
        )
    tiles = _tiles(dtype)
    found = []
    for cfg in tiles:
        streamed = evict_first(m, n, k, dtype, batch, cfg.block_m)
        found.append(_variant(cfg, False, streamed))
        tm, tn = -(-m // cfg.block_m), -(-n // cfg.block_n)
        # 320 wide runs whole tiles: its stream-K kernel spills (24 bytes, compiled here)
        if (
            batch == 1
            and cfg.wgmma_n is None
            and sk_split(tm, tn, -(-k // cfg.k_tile(ATOMS_SM90[dtype][1])), sms)[0]
        ):
            found.append(_variant(cfg, True, streamed))
    if swap and batch == 1 and m <= SWAP_MAX_M and dtype != "tf32":
        tokens = swap_tokens(m)
        n_k = _swap_class(n, k, dtype, sms)  # the swapped kernels depend on n, k only so
        found += [c for whole in (False, True) if (c := _swap(tokens, *n_k, dtype, sms, whole))]
    return tuple(found)


def _swap_class(n: int, k: int, dtype: str, sms: int) -> tuple[int, int]:
    """An (n, k) that gives the same swapped kernel as (n, k) does: its ring depth reads n
    only as the CTAs of 128-row tiles (at most ``sms``), its hint only whether B fits
    :data:`EVICT_FIRST_MAX_BYTES` (tests/kernels/test_space_cost.py compares the two)."""
    hinted = n * k * ATOMS_SM90[dtype][1] <= EVICT_FIRST_MAX_BYTES
    rows = min(-(-n // (2 * SWAP_ROWS)), sms) * 2 * SWAP_ROWS  # its 128-row (whole) tiles
    return rows, (1 if hinted else EVICT_FIRST_MAX_BYTES)


@lru_cache(maxsize=4096)
def _swap(tokens: int, n: int, k: int, dtype: str, sms: int, whole: bool) -> Sm90Config | None:
    """The swapped kernel for ``tokens`` rows (built once per shape class), or None where
    the family's rules refuse it (a ring too deep for the tokens' tile)."""
    try:
        cfg = _swapped(tokens, n, k, dtype, sms, whole)
    except TiledMmaError:
        return None
    return cfg if fits(cfg, dtype) else None


def fits(cfg: Sm90Config, dtype: str) -> bool:
    """Whether a config's accumulators fit its consumers' registers, as
    :class:`~cutemma.kernels.sm90.plan.Sm90Plan` checks it (tests/kernels/test_space_cost.py
    compares them) without building the plan: a wgmma of 64 rows by N keeps N / 2
    accumulators per thread, promoted fp8 2 sets of them (3 with ``overlap``).

    >>> fits(Sm90Config(128, 256), "bf16"), fits(Sm90Config(128, 256, promote="split"), "e4m3")
    (True, False)
    """
    per_thread = cfg.block_m // cfg.consumers * cfg.block_n // WARPGROUP
    promoted = dtype in FP8 and bool(cfg.promote)
    sets = 3 if promoted and cfg.promote == "overlap" else 2 if promoted else 1
    return sets * per_thread <= register_split(cfg.consumers)[1] - NON_ACC_REGS


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
            # 320 columns: pick.WIDE_16's 256- and 64-wide wgmmas (one is at most 256 wide)
            wide = (rows, bn) == (WIDE_16.block_m, WIDE_16.block_n)
            cfg = WIDE_16 if wide else Sm90Config(rows, bn, **kw)
            if fits(cfg, dtype):
                found.append(cfg)
    return tuple(found)


@cache
def _variant(cfg: Sm90Config, stream_k: bool, streamed: bool) -> Sm90Config:
    """``cfg`` with stream-K and the evict-first B hint as given (built once: a config
    checks its rules when made)."""
    return replace(cfg, stream_k=stream_k, evict_first="B" if streamed else "")


def evict_first(m: int, n: int, k: int, dtype: str, batch: int, rows: int) -> bool:
    """Whether B streams under an L2 evict-first hint: one problem, at most
    :data:`EVICT_FIRST_ROWS` tile rows of ``rows``, B at most
    :data:`EVICT_FIRST_MAX_BYTES` (those two from :mod:`.pick`, which measured them) and K
    at least ``pick.LONG_K`` (a short K's B is re-read from L2).

    >>> evict_first(512, 8192, 8192, "bf16", 1, 128), evict_first(8192, 8192, 8192, "bf16", 1, 128)
    (True, False)
    """
    return (
        batch == 1
        and k >= LONG_K
        and -(-m // rows) <= EVICT_FIRST_ROWS
        and n * k * ATOMS_SM90[dtype][1] <= EVICT_FIRST_MAX_BYTES
    )


__all__ = ["candidates", "evict_first", "fits"]
