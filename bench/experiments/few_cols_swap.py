"""Calls of few columns and many rows, swapped: D^T = B^T A^T, whose weights (N of them)
are the 128-row tiles and whose tokens (M) the tile's columns, so 128-row padding falls on
the few columns and up to 256-column padding on the many rows. The space swaps only calls
of at most SWAP_MAX_M (2048) rows; past that the sweeps' worst rows are such calls (bf16
with B N-major (5798, 528, 2688) at 0.62 of cuBLAS, (2049, 272, 4848) 0.71; the best
kernel of the space on the calibration sets' bf16 B N-major calls of at most 1024 columns
and more than 1024 rows 0.863, B K-major 0.922).

Calls: 1025 <= M <= 16384, N <= 1024, drawn at run time (bench/gemm_sweep.py's
distribution; the seed recorded), bf16 with each B major and e4m3. Each call: cuBLAS, the
pick, the model's three cheapest kernels, and the swapped 128-row kernels of 128, 192 and
256 tokens (where they fit), whole and stream-K split 16 and 8 (L2-flushed medians in turn;
errors against cuBLAS).

    python bench/experiments/few_cols_swap.py OUT.json [--draws 24] [--seed S]
"""

from __future__ import annotations

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from dataclasses import replace

    from probe import cheapest_plain

    from cutemma.kernels.space import builds, fits, mid_swapped_kernel

    dtype, major, plain = cheapest_plain(combo, m, n, k)
    swapped = []
    a_major = "M" if major == "N" else "K"  # (A' = B^T)
    for tokens in (128, 192, 256):
        whole = mid_swapped_kernel(tokens, dtype, False)
        for cfg in (whole, replace(whole, stream_k=True, split=16),
                    replace(whole, stream_k=True, split=8)):  # fmt: skip
            if fits(cfg, dtype) and builds(cfg, dtype, (a_major, "K")):
                swapped.append(cfg)
    return {c.name: c for c in (*plain, *swapped)}


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    rng = random.Random(seed)
    found = [(rng.choice(("bf16_bK", "bf16_bN", "e4m3")), m, n, k)
             for m, n, k in draw_shapes(600 * draws, seed) if m > 1024 and n <= 1024]  # fmt: skip
    return found[:draws]


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, draws=24)
