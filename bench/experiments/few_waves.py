"""Calls of more than 1024 rows whose plain 128-row tiles fill at most two waves: on the
sweeps, the 16-bit ones ran 0.89 (under one wave) and 0.93 (one to two) of cuBLAS where
picks of more waves ran 0.98-0.99. Whether the space holds a faster kernel than the pick
there (the model's choice) or not (the space's): every kernel of the space for the call
(``space.candidates``, the kcluster kernels with them), and beside them tiles it lacks:
192-row tiles of two warpgroups side by side along N (cuBLAS's coopB, 128-192 wide), and
64-row tiles of 96-256 columns. L2-flushed medians in turn, each against cuBLAS.

Shapes: the committed sweeps' such calls that the pick lost (under 0.95), then ``--draws``
drawn at run time (bench/gemm_sweep.py's distribution, 1025 rows or more, at most two
waves of the pick's tiles; seed recorded).

    python bench/experiments/few_waves.py OUT.json [--draws 6] [--seed S]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from small_calls import sweep_losers  # noqa: E402 - beside this script

SMS = 132


def _few_waves(m: int, n: int, k: int, dtype: str) -> bool:
    from cutemma.kernels.pick import builtin

    cfg, _ = builtin(m, n, k, 1, dtype, SMS, "h200", False)
    tiles = -(-m // cfg.block_m) * -(-n // cfg.block_n)
    return m > 1024 and not cfg.swap_ab and tiles <= 2 * SMS


def shapes(draws: int, seed: int) -> list[tuple]:
    import random

    from gemm_sweep import draw_shapes

    lost = lambda r: (  # noqa: E731
        r["combo"] != "e4m3" and r["ratio"] < 0.95 and _few_waves(r["m"], r["n"], r["k"], "bf16")
    )
    calls = sweep_losers(lost, 12, 4)
    rng = random.Random(seed)
    drawn = [c for c in draw_shapes(4000, seed) if _few_waves(*c, "bf16")]
    calls += [
        (rng.choice(("bf16_bK", "bf16_bN")), *c) for c in rng.sample(drawn, min(draws, len(drawn)))
    ]
    return calls


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import builds, candidates

    major = "N" if combo == "bf16_bN" else "K"
    found = {c.name: c for c in candidates(m, n, k, "bf16", 1, SMS, False, b_major=major)}
    extra = [Sm90Config(192, w, consumers_n=2) for w in (128, 160, 192)]
    extra += [Sm90Config(64, w, consumers=1) for w in (96, 160, 192, 224)]
    extra += [Sm90Config(192, w, consumers_n=2, stream_k=True) for w in (128, 192)]
    for cfg in extra:
        if builds(cfg, "bf16", ("K", major)):
            found.setdefault(cfg.name, cfg)
    return found


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 6)
