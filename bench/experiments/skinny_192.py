"""192-row tiles for calls of few columns and many rows: a lead for the sweeps' worst rows.

A third of the worst rows of sweep 1407898092 and its predecessors are 16-bit or e4m3 calls
of at most ~700 columns, 2,000-15,000 rows and K of 4,000-60,000 ((11327, 288, 23840) 0.62
of cuBLAS, (7501, 560, 14320) e4m3 0.62, (2997, 320, 37808) 0.65, (5341, 416, 8624) 0.75):
128-row tiles there leave a wave and a bit ((11327, 288): 89 x 2 tiles of 128x144 for 132
SMs), where cuBLAS runs 144x192 / 160x192 tiles (raw/peer-kernels-h200-4239184965.json),
about one wave. The space has no 192-row tile; the configs do (three consumer warpgroups
of 64 rows, ``consumers=3``; two side by side along N, ``consumers_n=2``).

Each bf16 call (the sweeps' such calls, then calls drawn at run time): cuBLAS, the pick, and
192-row tiles of both kinds at the widths that build and cut N into at most four tiles,
whole and stream-K split 4. L2-flushed medians in turn, errors against cuBLAS.

    python bench/experiments/skinny_192.py OUT.json [--draws 12] [--seed S]
"""

from __future__ import annotations

import os
import random
import sys
from functools import partial

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

MOST_N, LEAST_M, LEAST_K = 768, 2048, 4096


def _skinny(m: int, n: int, k: int) -> bool:
    return n <= MOST_N and m >= LEAST_M and k >= LEAST_K


def shapes(draws: int, seed: int) -> list[tuple]:
    """Half the sweeps' such bf16 calls that ran under 0.9 of cuBLAS, half drawn."""
    from gemm_sweep import draw_shapes
    from small_calls import sweep_losers

    lost = sweep_losers(
        lambda r: r["combo"] != "e4m3" and _skinny(r["m"], r["n"], r["k"]) and r["ratio"] < 0.9,
        draws // 2,
        seed,
    )
    drawn = [s for s in draw_shapes(40000, seed) if _skinny(*s)]
    random.Random(seed).shuffle(drawn)
    combos = ("bf16_bK", "bf16_bN")
    drawn = [(combos[i % 2], *s) for i, s in enumerate(drawn)]
    return list(dict.fromkeys(lost + drawn))[:draws]


def widths(n: int) -> list[int]:
    """The 192-row tiles' widths that build (three warpgroups: at most 128; two along N:
    96, 128, 160, 192) and cut N into at most four tiles."""
    return [w for w in (96, 112, 128, 160, 192) if -(-n // w) <= 4]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from probe import built

    from cutemma.kernels.sm90.config import Sm90Config

    major = "N" if combo == "bf16_bN" else "K"
    out = {}
    for bn in widths(n):
        for kind in ({"consumers": 3}, {"consumers_n": 2}):
            for extra in ({}, {"stream_k": True, "split": 4}):
                cfg = built(partial(Sm90Config, 192, bn, **kind, **extra), "bf16", ("K", major))
                if cfg is not None:
                    out[cfg.name] = cfg
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 12)
