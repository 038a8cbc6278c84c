"""e4m3 calls of at most 16 tokens whose K is an odd multiple of 16 (the weights' rows half a
sector apart): swapped or not? Over the committed sweeps, such calls whose pick was an
unswapped tile (128x64, 64x128, 128x160, pairs sharing A) ran 0.70-0.99 of cuBLAS, where
the swapped picks of aligned K ran 1.05-1.15. With one token the activations' rows count
as aligned (call.rows16: a single row), the weights' as off, so the model weighs the
swapped kernel's weight rows (its A) at half_sector against the unswapped kernel's (its B)
alike, and the unswapped tile won on price. Per call (half the sweeps' such rows under
0.95, half drawn at run time): cuBLAS, the pick, the model's cheapest swapped kernel and
cheapest unswapped one, and the swapped decode kernels (64x16 / 128x16 on 256-byte k
tiles) whole and split. L2-flushed medians in turn, errors against cuBLAS.

    python bench/experiments/decode_off_swap.py OUT.json [--draws 16] [--seed S]

``KERNELS=whole``: the pick against the model's cheapest swapped whole kernel of 128 rows and
of 64 rows only (more calls in the same time).
"""

from __future__ import annotations

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

MOST_M = 16
WHOLE = os.environ.get("KERNELS") == "whole"


def _off(m: int, n: int, k: int) -> bool:
    return m <= MOST_M and k % 32 == 16


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes
    from small_calls import sweep_losers

    lost = sweep_losers(
        lambda r: r["combo"] == "e4m3" and _off(r["m"], r["n"], r["k"]) and r["ratio"] < 0.95,
        draws // 2,
        seed,
    )
    drawn = [("e4m3", *s) for s in draw_shapes(60000, seed) if _off(*s)]
    random.Random(seed).shuffle(drawn)
    return list(dict.fromkeys(lost + drawn))[:draws]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels.cost import predict
    from cutemma.kernels.space import candidates

    r16 = (m > 1, True)  # (call.rows16: one token's row is not apart from another)
    found = candidates(m, n, k, "e4m3", 1, 132, True, r16, "K")
    price = lambda c: predict(c, m, n, k, "e4m3", 1, "h200", 2, r16)  # noqa: E731
    out = {}
    if WHOLE:
        for rows in (128, 64):
            mine = sorted((c for c in found if c.swap_ab and not c.stream_k and c.kcluster == 1
                           and c.block_m == rows), key=price)  # fmt: skip
            if mine:
                out[mine[0].name] = mine[0]
        return out
    for swapped in (True, False):
        mine = sorted((c for c in found if c.swap_ab == swapped), key=price)
        if mine:
            out[mine[0].name] = mine[0]
    for c in found:
        if c.swap_ab and c.block_n == 16 and c.kcluster == 1 and c.split in (None, 16):
            out[c.name] = c
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 16)
