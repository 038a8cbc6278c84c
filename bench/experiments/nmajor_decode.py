"""Decode calls whose weights are N-major and far past L2: on the sweeps, bf16 calls of at
most 32 rows with B N-major and over 256 MB of weights ran 0.93 of cuBLAS (share >= 0.97:
0.40) where the same calls with B K-major ran 1.00. cuBLAS runs them as 192-row weight tiles
8 tokens wide in 2 x 1 clusters with split-K (raw/peer-kernels-h200.json: (2, 18624, 29952),
(5, 18432, 16384)); the space offers swapped 64- and 128-row tiles, whole, or stream-K with
aligned shares.

Each call, with B N-major and again with B K-major (the same weights' bytes either way):
cuBLAS, the pick, and swapped weight tiles of 64, 128, 192 (three warpgroups) and 256 rows,
whole, stream-K (aligned shares, and the grid's), and in CTA pairs along the weights
(sharing the tokens' tile; register epilogue, the pair's rule). L2-flushed medians in turn.

Shapes: the committed sweeps' N-major decode losers, then ``--draws`` drawn calls of at most
32 rows with 256 MB of weights or more (bench/gemm_sweep.py's distribution, seed recorded).

    python bench/experiments/nmajor_decode.py OUT.json [--draws 4] [--seed S]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from small_calls import sweep_losers  # noqa: E402 - beside this script

MOST_ROWS = 32
LEAST_BYTES = 256 << 20
MOST_BYTES = 2 << 30  # (the timing's flushes and reps stay within a lease)


def _decode(m: int, n: int, k: int) -> bool:
    return m <= MOST_ROWS and LEAST_BYTES <= 2 * n * k <= MOST_BYTES


def shapes(draws: int, seed: int) -> list[tuple]:
    import random

    from gemm_sweep import draw_shapes

    lost = lambda r: (  # noqa: E731
        r["combo"] == "bf16_bN" and _decode(r["m"], r["n"], r["k"]) and r["ratio"] < 0.93
    )
    calls = [c[1:] for c in sweep_losers(lost, 8, 3)]
    rng = random.Random(seed)
    drawn = [c for c in draw_shapes(20000, seed) if _decode(*c)]
    calls += rng.sample(drawn, min(draws, len(drawn)))
    return [(combo, *c) for c in calls for combo in ("bf16_bN", "bf16_bK")]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import builds

    tokens = max(16, -(-m // 8) * 8)
    majors = ("M" if combo == "bf16_bN" else "K", "K")  # (the swapped kernel's A is B^T)
    tried = []
    for rows, cons in ((64, 1), (128, 2), (192, 3), (256, 2)):
        tried.append(dict(block_m=rows, consumers=cons, epilogue="tmat"))
        for split in (16, 4, None):
            tried.append(dict(block_m=rows, consumers=cons, epilogue="tmat", stream_k=True,
                              split=split))  # fmt: skip
        tried.append(dict(block_m=rows, consumers=cons, epilogue="regs", cluster=2))
    tried.append(dict(block_m=128, consumers=2, epilogue="tmat", stages=4))
    out = {}
    for kw in tried:
        try:
            cfg = Sm90Config(block_n=tokens, swap_ab=True, **kw)
        except Exception:  # (a rule refuses it: not in this probe)
            continue
        if builds(cfg, "bf16", majors):
            out[cfg.name] = cfg
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 4)
