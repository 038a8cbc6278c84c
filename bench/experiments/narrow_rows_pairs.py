"""64-row tiles in pairs on calls of 129-2048 rows where the pick is one: a 64-row tile
loads 64 + N rows a k tile for 64 x N products (64x256: 51 flops a byte, against 85 for
128x256), and its consumers wait on data; pairs along M that share B by multicast fetch
half of B each from L2 (64 + N / 2 rows). The space clusters only 128-row tiles. Per call
(half the sweeps' such calls under 0.95 of cuBLAS, half drawn at run time whose model pick
is one; bf16 with each B major): cuBLAS, the pick, and the pick's tile alone, in pairs
along M (`x2`), along N (`x2a`) and 2 x 2 (`x4ab`); 64x256 likewise where the pick is
narrower. L2-flushed medians in turn, errors against cuBLAS.

    python bench/experiments/narrow_rows_pairs.py OUT.json [--draws 14] [--seed S]
"""

from __future__ import annotations

import os
import random
import sys
from dataclasses import replace
from functools import partial

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

ROWS = (129, 2048)
CLUSTERS = ((1, "B"), (2, "B"), (2, "A"), (4, "AB"))


def _plain64(cfg) -> bool:
    return cfg.block_m == 64 and not cfg.swap_ab and cfg.kcluster == 1 and cfg.cluster == 1


def _pick(combo: str, m: int, n: int, k: int):
    from probe import call_space

    from cutemma.kernels.cost import best

    dtype, _, r16, found = call_space(combo, m, n, k, swap=True)
    return best(found, m, n, k, dtype, 1, "h200", r16)[0]


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes
    from small_calls import sweep_losers

    def keep(r: dict) -> bool:
        p = r.get("pick", {})
        return (r["combo"] != "e4m3" and ROWS[0] <= r["m"] <= ROWS[1] and r["ratio"] < 0.95
                and p.get("config", "").startswith("b64x") and not p.get("swap")
                and "_kc" not in p.get("config", ""))  # fmt: skip

    lost = sweep_losers(keep, draws // 2, seed)
    pool = [s for s in draw_shapes(20000, seed) if ROWS[0] <= s[0] <= ROWS[1]]
    random.Random(seed).shuffle(pool)
    drawn = []
    for i, (m, n, k) in enumerate(pool):
        if len(lost) + len(drawn) >= draws:
            break
        combo = ("bf16_bK", "bf16_bN")[i % 2]
        if _plain64(_pick(combo, m, n, k)):
            drawn.append((combo, m, n, k))
    return list(dict.fromkeys(lost + drawn))[:draws]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from probe import built

    from cutemma.kernels.sm90.config import Sm90Config

    major = "N" if combo == "bf16_bN" else "K"
    pick = _pick(combo, m, n, k)
    base = [replace(pick, stream_k=False, split=None, stages=None, evict_first="")]
    base = base if _plain64(pick) else []
    if pick.block_n != 256 or not base:
        base.append(Sm90Config(64, 256, consumers=1))
    out = {}
    for tile in base:
        for cl, mc in CLUSTERS:
            cfg = built(partial(replace, tile, cluster=cl, multicast=mc), "bf16", ("K", major))
            if cfg is not None:
                out[cfg.name] = cfg
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 14)
