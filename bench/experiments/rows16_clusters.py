"""Clusters of 4 along one side and of 8 for e4m3 calls whose rows sit half a sector apart.

Over the sweeps 4239184965, 438925931, 3585905314 and 2249378347, e4m3 calls with K an
odd multiple of 16 (each operand row starting half a 32-byte sector off) ran 0.89 of cuBLAS
at 129-2048 rows (a third of them at 0.97 or more) where aligned ones ran 0.99; cuBLAS runs
them in clusters of 8 (``4x2``, ``2x4``: 112x128, 64x72, 48x64, 128x120;
raw/peer-kernels-h200-4239184965.json) where the space's largest clusters are 2 x 2, so
each CTA reads from L2 a third of the rows it consumes, which the half-sector cost does
not take back.

Each call (the sweeps' such calls of 129-2048 rows under 0.95, then calls drawn at run
time): cuBLAS, the pick, and the pick's tile (whole) and the 128x128 tile alone, in pairs
each way, 2 x 2, 4 along M (sharing B), 4 along N (sharing A) and 8 (``ORIENT`` = '24': 2
along M by 4 along N, '42': 4 by 2); the clusters past 2 x 2 are not in the space,
MULTICASTS gets them for this process. L2-flushed medians in turn, errors against cuBLAS.

    ORIENT=24 python bench/experiments/rows16_clusters.py OUT.json [--draws 16] [--seed S]
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

import cutemma.kernels.sm90.config as sm90_config  # noqa: E402

ORIENT = os.environ.get("ORIENT", "24")
sm90_config.MULTICASTS.update(
    {("A", 4): (1, 4), ("B", 4): (4, 1), ("AB", 8): (2, 4) if ORIENT == "24" else (4, 2)}
)
sm90_config.CLUSTER_SIZES = (1, 2, 4, 8)

ROWS = (129, 2048)
CLUSTERS = ((1, "B"), (2, "B"), (2, "A"), (4, "AB"), (4, "B"), (4, "A"), (8, "AB"))


def _off(m: int, k: int) -> bool:
    return ROWS[0] <= m <= ROWS[1] and k % 32 == 16


def shapes(draws: int, seed: int) -> list[tuple]:
    """Half the sweeps' lost such calls, half drawn at run time."""
    from gemm_sweep import draw_shapes
    from small_calls import sweep_losers

    lost = sweep_losers(
        lambda r: r["combo"] == "e4m3" and _off(r["m"], r["k"]) and r["ratio"] < 0.95,
        draws // 2,
        seed,
    )
    drawn = [("e4m3", m, n, k) for m, n, k in draw_shapes(20000, seed) if _off(m, k)]
    random.Random(seed).shuffle(drawn)
    return list(dict.fromkeys(lost + drawn))[:draws]


def _whole(cfg):
    return replace(cfg, stream_k=False, split=None, kcluster=1, cluster=1, multicast="B")


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from probe import built, call_space

    from cutemma.kernels.pick import builtin
    from cutemma.kernels.sm90.config import Sm90Config

    dtype, major, r16, _ = call_space(combo, m, n, k)
    pick, _ = builtin(m, n, k, 1, dtype, 132, "h200", True, r16, major, False)
    tiles = [_whole(pick)] if isinstance(pick, Sm90Config) else []
    plain = Sm90Config(128, 128, promote="overlap")
    if all(t.block_m != 128 or t.block_n != 128 or t.swap_ab for t in tiles):
        tiles.append(plain)
    out = {}
    for tile in tiles:
        for cl, mc in CLUSTERS:
            cfg = built(partial(replace, tile, cluster=cl, multicast=mc), dtype, ("K", major))
            if cfg is not None:
                out[cfg.name] = cfg
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 16)
