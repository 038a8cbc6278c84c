"""The large 16-bit calls (more than 1,024 rows) against cuBLAS, tile by tile: where the
sweeps' largest band (bf16 1025+ rows, geomean 0.95-0.96) loses, and whether another tile
of the space (or a raster's group) would have won. The model prices 128x320 1.25x under
its measured time on calls of more than 4 waves and 128x256 1.14x (the sweeps of 3260ec0).

Shapes: the worst of those rows in the last two sweeps, then ``--draws`` calls drawn at run
time as the sweep draws them (M in 1025..16384; the seed recorded). Each call: cuBLAS, the
pick and the tiles of :func:`tiles`, L2-flushed medians taken in turns; each one's error.

    python bench/experiments/big_tiles.py OUT.json [--draws 12] [--seed S]
"""

from __future__ import annotations

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

# (combo, m, n, k, ratio, pick) of sweeps 1527520440 and 1755787830, worst first
WORST = [
    ("bf16_bK", 10173, 13456, 54640),  # 0.749, 128x320
    ("bf16_bK", 16178, 272, 2432),  # 0.704, 128x320
    ("bf16_bK", 2119, 36976, 944),  # 0.768, 128x320
    ("bf16_bK", 4311, 9536, 2320),  # 0.798, 128x320
    ("bf16_bN", 15525, 416, 1856),  # 0.790, 128x256
    ("bf16_bN", 15758, 416, 5392),  # 0.800, 128x256
    ("bf16_bK", 2248, 3072, 3072),  # 0.803, 128x256
    ("bf16_bN", 4101, 1680, 1168),  # 0.830, 128x256
    ("bf16_bK", 3439, 2048, 2192),  # 0.850, 128x256
    ("bf16_bK", 10528, 51328, 1776),  # 0.879, 128x320
    ("bf16_bK", 4457, 1024, 1024),  # 0.807, 128x192
    ("bf16_bN", 10484, 496, 1504),  # 0.727, 128x192
]


def tiles() -> dict:
    from dataclasses import replace

    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import WIDE_16

    found = [
        WIDE_16,
        replace(WIDE_16, group_m=16),
        replace(WIDE_16, group_m=4),
        Sm90Config(128, 256),
        Sm90Config(128, 256, group_m=16),
        Sm90Config(256, 128),
        Sm90Config(128, 192),
        Sm90Config(192, 128, consumers_n=2),
        Sm90Config(128, 256, cluster=2, multicast="A"),
    ]
    return {c.name: c for c in found}


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    rng = random.Random(seed)
    drawn = [s for s in draw_shapes(40 * draws, seed) if s[0] > 1024]
    picked = [(rng.choice(("bf16_bK", "bf16_bN")), *s) for s in drawn[:draws]]
    return WORST + picked


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    """Every call's tiles (:func:`tiles`)."""
    return tiles()


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, draws=12)
