"""Small calls of 65-1024 rows, narrow tiles in clusters of 2-8: where cuBLAS beats the pick on
a call of few tiles it runs tiles 32-72 wide in clusters of 4-8 (64x32 in 2x4, 56x64 in 2x4,
40x64 in 4x1: bench/results/raw/small-calls-h200.json), so that more CTAs share the work and
multicast spares each its operand bytes. The space's narrowest plain tiles are 64x128 and
128x64, in clusters of at most 2 along one side.

Each call: cuBLAS, the pick, and 64x32 / 64x64 tiles alone, in pairs along N (sharing A),
in fours along N, in 2 x 2 and in 2 x 4 clusters (clusters of 4 along one side and of 8
are not in the space: MULTICASTS gets them here, for this process only). L2-flushed medians
in turn, errors against cuBLAS.

Shapes: the committed sweeps' small calls of 65-1024 rows (peer under 15 us) that the pick
lost, then ``--draws`` drawn at run time (bench/gemm_sweep.py's distribution, 65-1024 rows,
the pick priced under 15 us; the seed recorded).

    python bench/experiments/narrow_clusters.py OUT.json [--draws 10] [--seed S]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from small_calls import drawn_small, sweep_losers  # noqa: E402 - beside this script

import cutemma.kernels.sm90.config as sm90_config  # noqa: E402

# clusters of 4 along N (sharing A) and 2 x 4 (sharing both): the kernel text derives its
# masks, peers and raster from cluster_mn for any powers of 2; the rules list what the
# space offers
sm90_config.MULTICASTS.update({("A", 4): (1, 4), ("AB", 8): (2, 4)})
sm90_config.MULTICAST_TAGS.setdefault("AB", "ab")
sm90_config.CLUSTER_SIZES = (1, 2, 4, 8)

PEER_MAX_US = 15.0
CLUSTERS = ((1, "B"), (2, "A"), (4, "A"), (4, "AB"), (8, "AB"))


def worst(limit: int) -> list[tuple]:
    """The committed sweeps' calls of 65-1024 rows under PEER_MAX_US that the pick lost."""
    lost = lambda r: (  # noqa: E731
        65 <= r["m"] <= 1024 and r.get("ratio", 9) < 0.95 and r.get("peer_us", 99) < PEER_MAX_US
    )
    return sweep_losers(lost, limit, 2)


def shapes(draws: int, seed: int) -> list[tuple]:
    return worst(16) + drawn_small(draws, seed, PEER_MAX_US, 20000, (65, 1024))


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import FP8_PROMOTE, builds

    dtype, major = combo[:4], "N" if combo == "bf16_bN" else "K"
    out = {}
    for bn in (32, 64):
        kw = {"promote": FP8_PROMOTE[64]} if dtype == "e4m3" else {}
        for cl, mc in CLUSTERS:
            cfg = Sm90Config(64, bn, consumers=1, cluster=cl, multicast=mc, **kw)
            if builds(cfg, dtype, ("K", major)):
                out[cfg.name] = cfg
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 10)
