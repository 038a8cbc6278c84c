"""Clusters on 16-bit calls whose rows sit 32 bytes into a 64-byte pair (K an odd multiple
of 16, B K-major): does sharing an operand by multicast win back what such rows cost?
pitch_probe.py found pairs sharing B recovering about a third of 128x128's loss at 4096^2
(raw/pitch-probe-h200.json). Per call (drawn at run time, 129-4096 rows, K an odd multiple
of 16): cuBLAS, the pick, and the pick's tile (and 128x128, 128x256) alone, in pairs along
M (`x2`, sharing B), along N (`x2a`, sharing A) and 2 x 2 (`x4ab`), where they build.
L2-flushed medians in turn, errors against cuBLAS.

    python bench/experiments/pitch_clusters.py OUT.json [--draws 16] [--seed S]
"""

from __future__ import annotations

import os
import random
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

ROWS = (129, 4096)
CLUSTERS = ((1, "B"), (2, "B"), (2, "A"), (4, "AB"))


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    drawn = [s for s in draw_shapes(8000, seed) if ROWS[0] <= s[0] <= ROWS[1] and s[2] % 32 == 16]
    random.Random(seed).shuffle(drawn)
    return [("bf16_bK", *s) for s in drawn[:draws]]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from probe import call_space

    from cutemma.kernels.cost import best
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import builds

    dtype, _, r16, found = call_space(combo, m, n, k, swap=True)
    pick = best(found, m, n, k, dtype, 1, "h200", r16)[0]
    tiles = {(128, 128), (128, 256)}
    if not pick.swap_ab and pick.block_m == 128 and pick.kcluster == 1 and pick.block_n <= 256:
        tiles.add((128, pick.block_n))
    out = {}
    for bm, bn in sorted(tiles):
        for cl, mc in CLUSTERS:
            cfg = replace(Sm90Config(bm, bn), cluster=cl, multicast=mc)
            if builds(cfg, dtype):
                out[cfg.name] = cfg
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 16)
