"""Calls of few columns and many rows, swapped with token tiles fitted to the waves: cuBLAS
runs such calls as D^T = B^T A^T (raw/peer-kernels-h200.json: (10188, 896, 496) on 128 x 184
tiles, 128 along N and 184 along M), and few_cols_swap.py's swapped kernels of 128, 192 and
256 tokens lost where their tiles fell just past a wave ((3899, 544, 1840) B K-major: 5 x 31
tiles of 128 tokens, 155 on 132 SMs, 0.57 of cuBLAS). Here the token tile is chosen so that
the 128-row tiles fill whole waves: of the multiples of 8 that the mid-size swapped kernel
holds, the three whose grids waste the fewest SM-tile slots (the wider on a tie).

Calls: the two committed sweeps' worst calls of more than 1024 rows and at most 1024 columns
(4 per combo), then calls drawn at run time from bench/gemm_sweep.py's distribution with
those bounds (the seed recorded). Each call: cuBLAS (and the names of the CUDA kernels it
launches), the pick, the model's three cheapest kernels, the three fitted swapped kernels
whole and the best-fitted one stream-K split 16, and for 16-bit types the 128 x 128 pingpong
tile (each warpgroup's epilogue under the other's mainloop).

    python bench/experiments/few_cols_fitted.py OUT.json [--draws 16] [--seed S]
"""

from __future__ import annotations

import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

SWEEPS = ("sweep-h200-2096139813.json", "sweep-h200-3261615544.json")


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from dataclasses import replace

    from probe import cheapest_plain

    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import builds, fits, mid_swapped_kernel, wave_tokens

    dtype, major, plain = cheapest_plain(combo, m, n, k)
    extra = []
    a_major = "M" if major == "N" else "K"  # (A' = B^T)
    # (as run: the three widths of fewest SM-tile slots, now space.wave_tokens)
    for i, tokens in enumerate(wave_tokens(m, n, dtype)):
        whole = mid_swapped_kernel(tokens, dtype, False)
        extra += [whole] + [replace(whole, stream_k=True, split=16)] * (i == 0)
    if dtype != "e4m3":
        extra.append(Sm90Config(128, 128, schedule="pingpong"))
    ok = [
        c
        for c in extra
        if fits(c, dtype) and builds(c, dtype, (a_major, "K") if c.swap_ab else ("K", major))
    ]
    return {c.name: c for c in (*plain, *ok)}


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    found = []
    for name in SWEEPS:
        rows = json.load(open(os.path.join(HERE, "..", "results", name)))["rows"]
        few = sorted((r for r in rows if r["m"] > 1024 and r["n"] <= 1024 and "ratio" in r),
                     key=lambda r: r["ratio"])  # fmt: skip
        for combo in ("bf16_bK", "bf16_bN", "e4m3"):
            found += [(combo, r["m"], r["n"], r["k"]) for r in few if r["combo"] == combo][:2]
    rng = random.Random(seed)
    drawn = [(rng.choice(("bf16_bK", "bf16_bN", "e4m3")), m, n, k)
             for m, n, k in draw_shapes(600 * draws, seed) if m > 1024 and n <= 1024]  # fmt: skip
    return list(dict.fromkeys(found)) + drawn[:draws]


if __name__ == "__main__":
    from probe import add_peer_kernels, main

    main(__file__, __doc__, shapes, kernels, draws=16)
    if sys.argv[1] != "compile":
        add_peer_kernels(sys.argv[1])
