"""What makes our clusters slower than the same tile alone on aligned calls?

On every aligned call of raw/multicast-feed-h200.json, 128x128 tiles in pairs and 2 x 2
clusters ran 1-10% slower than alone, even at 8192^3 bf16 where the loads do not set the
pace (2 x 2: 0.896 of cuBLAS against 0.986 alone), while cuBLAS runs most mid-size calls in
clusters of 2-8. Two parts could cost: the cluster launch itself (CTAs placed by cluster,
our tile order by cluster, the start and end cluster barriers) and multicast (a stage is
filled by several CTAs' loads and released to every peer's producer).

``VARIANT=plain`` (default): the kernels as the space builds them. ``VARIANT=nomc``: the
same cluster kernels with every operand loaded by each CTA alone and each stage released
to its own producer only (Sm90Plan.split and source.peers patched for this process: the
cluster launch and tile order kept, multicast gone). Compare the two files' cluster rows.

Each call: cuBLAS, the pick, 128x128 alone, in pairs along M and N and in 2 x 2, 128x256
alone and in pairs; L2-flushed medians in turn, errors against cuBLAS.

    VARIANT=nomc python bench/experiments/cluster_cost.py OUT.json [--seed S]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

VARIANT = os.environ.get("VARIANT", "plain")
if VARIANT == "nomc":
    import cutemma.kernels.sm90.plan as sm90_plan
    import cutemma.kernels.sm90.source as sm90_source

    sm90_plan.Sm90Plan.split = lambda self, which: 1
    sm90_source.peers = lambda config: ()

CALLS = [("bf16_bK", 8192, 8192, 8192), ("bf16_bK", 2048, 8448, 4096),
         ("bf16_bK", 1024, 16896, 2048), ("bf16_bN", 2048, 8448, 4096),
         ("e4m3", 1024, 8448, 8192), ("bf16_bK", 512, 8192, 4096),
         ("bf16_bK", 768, 3584, 4096), ("bf16_bN", 400, 6144, 8192)]  # fmt: skip


def shapes(draws: int, seed: int) -> list[tuple]:
    return CALLS[:draws]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import builds

    major = "N" if combo == "bf16_bN" else "K"
    kw = {"promote": "overlap"} if combo == "e4m3" else {}
    out = {}
    for bn, clusters in (
        (128, ((1, "B"), (2, "B"), (2, "A"), (4, "AB"))),
        (256, ((1, "B"), (2, "B"))),
    ):
        for cl, mc in clusters:
            cfg = Sm90Config(128, bn, cluster=cl, multicast=mc, **kw)
            if builds(cfg, combo[:4], ("K", major)):
                out[cfg.name] = cfg
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, len(CALLS))
