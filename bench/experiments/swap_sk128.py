"""Calls of 129-256 rows with a long K (the sweeps' worst band after the large one): the
swapped kernel of 128-row tiles (two consumer warpgroups, B^T's rows) shared by stream-K,
which the space builds only past one token tile (:func:`cutemma.kernels.space.
_swapped_of_class`: one token tile gets 64-row stream-K tiles of one warpgroup), against the
pick and cuBLAS. The model prices it 7-17% under the pick on such calls.

Shapes: the worst such rows of sweeps 3638670898 and 2681349638, then ``--draws`` drawn at
run time (bench/gemm_sweep.py's distribution, 129 <= M <= 256, K >= 8192; the seed
recorded). Each call: cuBLAS, the pick, the space's best 64-row swapped stream-K kernel, and
the 128-row one at splits 16, 8 and over the grid, its ring as deep as keeps
:data:`~cutemma.kernels.space.IN_FLIGHT_BYTES` in flight over every SM (L2-flushed
medians in turn; errors against cuBLAS).

    python bench/experiments/swap_sk128.py OUT.json [--draws 10] [--seed S]
"""

from __future__ import annotations

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

# (combo, m, n, k): the two sweeps' worst calls of 129-256 rows and K >= 8192 (ratio, pick)
WORST = [
    ("bf16_bN", 166, 6000, 42432),  # 0.57, 128x192 sk16
    ("bf16_bN", 148, 4720, 29488),  # 0.60, 64x256 sk16
    ("bf16_bK", 166, 6000, 42432),  # 0.64, 128x192 sk16
    ("bf16_bN", 167, 368, 33360),  # 0.66, 64x128 sk16
    ("bf16_bK", 148, 4720, 29488),  # 0.68, 64x256 sk16
    ("bf16_bK", 160, 5344, 19952),  # 0.71, 64x256 sk16
    ("bf16_bN", 211, 3024, 31040),  # 0.74, 128x256 sk16
    ("e4m3", 160, 5344, 19952),  # 0.57, 128x192 split sk16
    ("e4m3", 136, 28416, 48864),  # 0.62, swapped 64x136 sk16
]
SMS = 132


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    """The space's best 64-row swapped stream-K kernel and the 128-row ones, by name."""
    from dataclasses import replace

    from cutemma.kernels.cost import predict
    from cutemma.kernels.space import (
        FP8,
        SWAP_ROWS,
        builds,
        candidates,
        fits,
        stream_stages,
    )

    dtype, major = combo[:4], "N" if combo == "bf16_bN" else "K"
    found = candidates(m, n, k, dtype, 1, SMS, True, (False, False), major)
    out = {}
    sk64 = [c for c in found if c.swap_ab and c.stream_k and c.block_m == SWAP_ROWS]
    if sk64:
        best = min(sk64, key=lambda c: predict(c, m, n, k, dtype, 1, "h200"))
        out[best.name] = best
    whole = [c for c in found if c.swap_ab and not c.stream_k and c.block_m == 2 * SWAP_ROWS]
    if not whole:
        return out
    depth = stream_stages(2 * SWAP_ROWS, SMS, dtype in FP8)
    for split in (16, 8, None):
        for stages in [depth] if depth is None else range(depth, 1, -1):
            cfg = replace(whole[0], stream_k=True, split=split, stages=stages)
            if fits(cfg, dtype) and builds(cfg, dtype):
                out[cfg.name] = cfg
                break
    # and the plan's own ring (as deep as shared memory holds) at split 16
    cfg = replace(whole[0], stream_k=True, split=16, stages=None)
    if fits(cfg, dtype) and builds(cfg, dtype):
        out[cfg.name] = cfg
    return out


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    rng = random.Random(seed)
    drawn = [s for s in draw_shapes(400 * draws, seed) if 129 <= s[0] <= 256 and s[2] >= 8192]
    picked = [(rng.choice(("bf16_bK", "bf16_bN", "e4m3")), *s) for s in drawn[:draws]]
    return WORST + picked


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, draws=10)
