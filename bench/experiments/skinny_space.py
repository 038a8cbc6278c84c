"""Calls of few columns and many rows against the space's own kernels: does the space hold a
faster kernel than the pick (a model error), or none (a kernel to build)?

The sweeps' largest block of rows under 0.85 of cuBLAS (with the few-tile long-K calls) is
calls of at most ~700 columns, 2,000+ rows and K of 4,000+; 192-row tiles split four ways
won on 4 of 12 of them (raw/skinny-192-h200.json). Each call (half the sweeps' such losers,
half drawn at run time; bf16 with each B major and e4m3): cuBLAS, the pick, the model's next
eight kernels (one per tile and schedule, its cheapest split: fitted_long_k.py's), and for
16-bit calls 192x96 and 192x128 of three warpgroups split four ways. L2-flushed medians in
turn, errors against cuBLAS, each kernel's price beside it.

    python bench/experiments/skinny_space.py OUT.json [--draws 12] [--seed S]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import fitted_long_k  # noqa: E402 - beside this script
from skinny_192 import _skinny  # noqa: E402

NEXT = 8  # the model's next kernels timed beside the pick


def shapes(draws: int, seed: int) -> list[tuple]:
    from small_calls import losers_and_drawn

    return losers_and_drawn(_skinny, draws, seed, 40000)


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import builds

    out = fitted_long_k.kernels(combo, m, n, k, NEXT)
    if combo != "e4m3":
        major = "N" if combo == "bf16_bN" else "K"
        for bn in (96, 128):
            cfg = Sm90Config(192, bn, consumers=3, stream_k=True, split=4)
            if builds(cfg, "bf16", ("K", major)):
                out[cfg.name] = cfg
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 12)
