"""Split-K in a cluster of pairs that multicast a shared operand (``Sm90Config(cluster=2,
kcluster=S)``): on long-K calls of few tiles cuBLAS runs split-K kernels in 1 x 2 and 2 x 1
clusters (raw/long-k-few-tiles-h200.json: nvjet ..._64x152_64x7_1x2_..._splitK, 1.3-1.6x
our kernels there). Our split-K kernels' CTAs each read a distinct k share, which L2 feeds
at about 57 GB/s an SM where pairs that multicast half of a shared operand each got 81-83
(raw/ldgsts-probe-h200.json). Do pairs lift the kcluster kernels on such calls?

Calls: long_k_few_tiles.py's (the sweeps' worst long-K calls of few tiles, and drawn ones);
each: cuBLAS, the pick, the space's six cheapest kernels, the kcluster kernels of 64x128,
128x64 and 128x128 tiles at 2, 4 and 8 CTAs a tile, and the same tiles in pairs along M
(B multicast) and along N (A multicast) at 2 and 4 pairs a tile (L2-flushed medians in
turn; errors against cuBLAS).

    python bench/experiments/kcluster_pairs.py OUT.json [--draws 8] [--seed S]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

SPACE_KEPT = 6
TILES = ((64, 128, 1), (128, 64, 2), (128, 128, 2))


def _variants(dtype: str, k: int) -> list:
    from cutemma.errors import TiledMmaError
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.sm90.plan import Sm90Plan

    eb = 1 if dtype == "e4m3" else 2
    promote = {"promote": "overlap"} if dtype == "e4m3" else {}
    found = []
    for bm, bn, c in TILES:
        for cl, mc, kcs in ((1, "B", (2, 4, 8)), (2, "B", (2, 4)), (2, "A", (2, 4))):
            for kc in kcs:
                try:
                    cfg = Sm90Config(bm, bn, consumers=c, cluster=cl, multicast=mc, kcluster=kc,
                                     **promote)  # fmt: skip
                    Sm90Plan(cfg, dtype, "K", "K", "bf16")
                except TiledMmaError:
                    continue
                if -(-k // (128 // eb)) >= kc:
                    found.append(cfg)
    return found


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from probe import call_space

    from cutemma.kernels.cost import best

    dtype, _, r16, found = call_space(combo, m, n, k, swap=True)
    priced = sorted(found, key=lambda c: best((c,), m, n, k, dtype, 1, "h200", r16)[1])
    kept = {c.name: c for c in priced[:SPACE_KEPT]}
    kept.update({c.name: c for c in _variants(dtype, k)})
    return kept


def shapes(draws: int, seed: int) -> list[tuple]:
    from long_k_few_tiles import shapes as long_k

    return long_k(draws, seed)


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, draws=8)
