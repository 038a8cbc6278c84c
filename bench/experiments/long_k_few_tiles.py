"""Long-K calls of few tiles: where the pick runs furthest under cuBLAS after the few-columns
swap (bench/results/sweep-h200-{1507705134,687802848}.json: 16-bit calls of 129-1024 rows
and K >= 16384 ran 0.888 / 0.901 of cuBLAS, geomean; (789, 2624, 58512) 0.62, (300, 320,
45344) 0.61), and where the model prices the pick 10-35% under its time. Is a faster
kernel in the space (a model error), or none (a kernel to build)?

Calls: the sweeps' four worst such calls, then calls drawn at run time from bench/gemm_sweep.py's distribution, 129 <= M <= 2048,
K >= 16384, at most 200 128x128 tiles; bf16 with each B major and e4m3. Each call: cuBLAS
(and its kernels' names), the pick, and the space's twelve kernels the model prices lowest (at most two splits of a tile)
(L2-flushed medians in turn; errors against cuBLAS; each kernel's price beside it).

    python bench/experiments/long_k_few_tiles.py OUT.json [--draws 24] [--seed S]
"""

from __future__ import annotations

import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

KEPT = 12
# the sweeps' worst such calls (sweep-h200-1507705134.json, -687802848.json, -3261615544.json)
WORST = [("bf16_bK", 789, 2624, 58512), ("bf16_bN", 300, 320, 45344),
         ("bf16_bK", 941, 368, 50896), ("bf16_bK", 568, 400, 25952)]  # fmt: skip


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from probe import call_space

    from cutemma.kernels.cost import best

    dtype, major, r16, found = call_space(combo, m, n, k, swap=True)
    priced = sorted(found, key=lambda c: best((c,), m, n, k, dtype, 1, "h200", r16)[1])
    kept, per_tile = {}, {}
    for c in priced:  # (at most two splits of a tile: more tiles, not every split of one)
        tile = re.sub(r"_sk\d*", "", c.name)
        if per_tile.setdefault(tile, 0) < 2 and len(kept) < KEPT:
            per_tile[tile] += 1
            kept[c.name] = c
    return kept


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    rng = random.Random(seed)
    found = [(rng.choice(("bf16_bK", "bf16_bN", "e4m3")), m, n, k)
             for m, n, k in draw_shapes(2000 * draws, seed)
             if 129 <= m <= 2048 and k >= 16384 and -(-m // 128) * -(-n // 128) <= 200]  # fmt: skip
    return WORST + found[:draws]


if __name__ == "__main__":
    from probe import add_peer_kernels, main

    main(__file__, __doc__, shapes, kernels, draws=24)
    if sys.argv[1] != "compile":
        add_peer_kernels(sys.argv[1])
