"""256x128 tiles with a fourth stage (the half-size staging epilogue `tma2`) on 16-bit calls
of many rows, against the pick. wide_rows_starve.py found the 256x128 tile's three stages
starving its consumers (raw/wide-rows-starve-h200.json: 0.89-0.93 of cuBLAS on three
aligned calls where four stages ran 0.92-1.02, the pick 1.00-1.01). Per call (drawn at run
time: bf16 with each B major, 1,025+ rows): cuBLAS, the pick, 256x128 of three stages and
of four (whole and stream-K split 16), 128x256 of four. L2-flushed medians in turn, errors
against cuBLAS, the model's prices beside (its 256x128 class for both depths).

    python bench/experiments/tall_tma2.py OUT.json [--draws 16] [--seed S]
"""

from __future__ import annotations

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

LEAST_M = 1025


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    drawn = [s for s in draw_shapes(4000, seed) if s[0] >= LEAST_M]
    random.Random(seed).shuffle(drawn)
    return [(("bf16_bK", "bf16_bN")[i % 2], *s) for i, s in enumerate(drawn[:draws])]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels.sm90.config import Sm90Config

    four = dict(stages=4, epilogue="tma2")
    found = [
        Sm90Config(256, 128),
        Sm90Config(256, 128, **four),
        Sm90Config(256, 128, **four, stream_k=True, split=16),
        Sm90Config(128, 256, **four),
    ]
    return {c.name: c for c in found}


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 16)
