"""Swapped tiles of 192 and 256 weight rows on calls of 129-2048 rows: cuBLAS's tiles there.

cuBLAS names its tiles in its column-major frame, where the weights' N is its M: on the
sweeps' mid-size calls it runs `256x120 coopA` (256 weight rows, two warpgroups of 128 each,
by 120 tokens), `192x144 coopB` (192 weight rows, two warpgroups side by side along the
tokens), `256x96`, `192x160` (bench/results/raw/peer-kernels-h200*.json). Our swapped
kernels stop at 128 weight rows (two warpgroups of 64): their k tile loads (128 + T) rows
for 128 x T products, where 256 x T loads (256 + T) for twice the products. Per call (half
the sweeps' such calls under 0.9 of cuBLAS, half drawn): cuBLAS, the pick, and swapped
256 x T (two warpgroups of 128 rows) and 192 x T (two warpgroups side by side along the
tokens) for the two widest token tiles T that cover the tokens in the fewest tiles, whole
and stream-K. L2-flushed medians in turn, errors against cuBLAS, each kernel's price.

    python bench/experiments/swap_wide_rows.py OUT.json [--draws 16] [--seed S]
"""

from __future__ import annotations

import os
import sys
from functools import partial

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

ROWS = (129, 2048)
WIDEST = {"bf16": 192, "e4m3": 128}  # token tiles past these do not fit the registers


def _mid(m: int) -> bool:
    return ROWS[0] <= m <= ROWS[1]


def shapes(draws: int, seed: int) -> list[tuple]:
    """Half the sweeps' such calls under 0.9 of cuBLAS, half drawn (combos in turn)."""
    from small_calls import losers_and_drawn

    return losers_and_drawn(lambda m, n, k: _mid(m), draws, seed, 20000)


def _up(x: int, q: int) -> int:
    return -(-x // q) * q


def _token_tiles(m: int, step: int, widest: int) -> list[int]:
    """The two widest token tiles (multiples of ``step``, at most ``widest``) that cover
    ``m`` tokens in the fewest tiles."""
    out = []
    for count in range(1, 64):
        t = _up(_up(m, count) // count, step)
        if t <= widest and t not in out:
            out.append(t)
        if len(out) == 2:
            break
    return out


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from probe import built

    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import fits

    dtype = "e4m3" if combo == "e4m3" else "bf16"
    major = "N" if combo == "bf16_bN" else "K"
    fp8 = dtype == "e4m3"
    families = [(192, 2, 16)] if fp8 else [(256, 1, 8), (192, 2, 16)]
    out = {}
    for rows, cn, step in families:
        for t in _token_tiles(m, step, WIDEST[dtype]):
            for sk in (False, True):
                kw = dict(block_m=rows, block_n=t, consumers_n=cn, swap_ab=True)
                kw |= dict(epilogue="tmat", stream_k=sk)
                if fp8:
                    kw["promote"] = True
                # the swapped problem's B is the call's A (K-major), its A the call's B
                majors = ("M" if major == "N" else "K", "K")
                cfg = built(partial(Sm90Config, **kw), dtype, majors)
                if cfg is not None and fits(cfg, dtype):
                    out[cfg.name] = cfg
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 16)
