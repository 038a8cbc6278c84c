"""Swapped tiles of several token tiles for 16-bit calls of 129-256 rows: such calls run
one token tile (``space.swap_tokens``), where cuBLAS runs the tokens in several tiles
fitted to the wave (nvjet ``128x72_4x1`` at (198, 4608): three tiles of 72 by 36 weight
tiles, raw/k-ladder-h200.json). Per call drawn at run time (bf16, B of either major, 129-256
rows): cuBLAS, the pick, and the mid-size swapped kernel (``space.mid_swapped_kernel``) on
each of ``space.wave_tokens``' first three widths narrower than the call's one tile,
whole, the weights evict-first where the space would hint them. L2-flushed medians in
turn, errors against cuBLAS, the model's price beside each.

    python bench/experiments/low_wave_tokens.py OUT.json [--draws 30] [--seed S]
"""

from __future__ import annotations

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

ROWS = (129, 256)


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    drawn = [s for s in draw_shapes(40 * draws, seed) if ROWS[0] <= s[0] <= ROWS[1]]
    random.Random(seed).shuffle(drawn)
    return [(("bf16_bK", "bf16_bN")[i % 2], *s) for i, s in enumerate(drawn[:draws])]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels import space

    one = space.swap_tokens(m)
    hinted = space._streams_b(n, k, "bf16", 1)
    widths = [t for t in space.wave_tokens(m, n, "bf16")[:3] if t < one]
    found = {}
    for t in widths:
        cfg = space.mid_swapped_kernel(t, "bf16", hinted and space._few_rows(m, t))
        found[f"wave{t}"] = cfg
    return found


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 30)
