"""Calls of few columns and many rows: tiles that read A once by construction. The pick's
tiles cover N in 2-4 tiles, so each A row block is read by 2-4 CTAs, and the profiles of
long-K calls (the session of 2026-11-30) found our kernels reading the operands 1.4-2.9 times
from DRAM where cuBLAS reads them once. Here, per call: the pick; one tile spanning all of
N (64 rows: one warpgroup up to 256 columns, two side by side along N past it; 128 rows:
whole, and stream-K split 2 where half the SMs would idle); pairs along N that share A by
multicast (two tiles spanning N: `x2a`), pairs along M that share B (`x2`) and 2 x 2
clusters (`x4ab`) of the same half-N tile; past 512 columns, four tiles spanning N in
clusters of 4 along N sharing A (`x4a`: not in the space, MULTICASTS gets it for this
process). L2-flushed medians in turn, errors against
cuBLAS, each kernel's price beside it.

    python bench/experiments/skinny_once.py OUT.json [--draws 12] [--seed S]
"""

from __future__ import annotations

import os
import sys
from functools import partial

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from skinny_192 import _skinny  # noqa: E402

import cutemma.kernels.sm90.config as sm90_config  # noqa: E402

sm90_config.MULTICASTS.update({("A", 4): (1, 4)})


def shapes(draws: int, seed: int) -> list[tuple]:
    """Half the sweeps' such calls under 0.9 of cuBLAS, half drawn (combos in turn)."""
    from small_calls import losers_and_drawn

    return losers_and_drawn(_skinny, draws, seed, 40000)


def _up(x: int, q: int) -> int:
    return -(-x // q) * q


def _spans(n: int) -> list[dict]:
    """Configs (as fields) of one tile spanning all of ``n`` columns."""
    w = _up(n, 16)
    if w <= 256:
        return [
            dict(block_m=64, block_n=w, consumers=1),
            dict(block_m=128, block_n=w),
            dict(block_m=128, block_n=w, stream_k=True, split=2),
        ]
    w = _up(n, 32)
    if w > 512:
        return []
    return [
        dict(block_m=64, block_n=w, consumers_n=2),
        dict(block_m=128, block_n=w, consumers_n=2),
        dict(block_m=128, block_n=w, consumers_n=2, stream_k=True, split=2),
    ]


def _halves(n: int) -> list[dict]:
    """Configs of two tiles spanning ``n``, in pairs sharing A, pairs sharing B, 2 x 2."""
    w = _up(-(-n // 2), 16)
    if w > 256:
        w = _up(-(-n // 4), 16)
        return [dict(block_m=128, block_n=w, cluster=4, multicast="A")]
    return [
        dict(block_m=128, block_n=w, cluster=2, multicast="A"),
        dict(block_m=128, block_n=w, cluster=2, multicast="B"),
        dict(block_m=128, block_n=w, cluster=4, multicast="AB"),
    ]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from probe import built

    from cutemma.kernels.sm90.config import Sm90Config

    dtype = "e4m3" if combo == "e4m3" else "bf16"
    major = "N" if combo == "bf16_bN" else "K"
    out = {}
    for fields in _spans(n) + _halves(n):
        if dtype == "e4m3":
            fields = dict(fields, promote="split" if fields.get("cluster", 1) == 1 else True)
        cfg = built(partial(Sm90Config, **fields), dtype, ("K", major))
        if cfg is not None:
            out[cfg.name] = cfg
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 12)
