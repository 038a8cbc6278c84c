"""Do narrow tiles want rings deeper than MAX_STAGES (8)? cuBLAS runs the mid-size calls we
lose on small tiles with rings as deep as fit (its kernel names' ``_64x15``, ``_64x12``,
``_128x15``: 12-15 stages of 64x48, 64x72, 48x64 tiles in clusters of 8,
raw/peer-kernels-h200-4239184965.json), where ours stop at 8 stages, and our narrow tiles
in clusters ran slower than alone (raw/narrow-clusters-h200.json): a stage's round trip
(release, a peer's producer, the multicast load) is longer than 8 small stages hide.

For the committed sweeps' calls of 129-2048 rows that the pick lost (under 0.95 of cuBLAS)
on an unswapped 64-row tile of one CTA, then calls drawn at run time in that band: cuBLAS,
the pick, the pick's kernel with as many stages as fit, and 64x64 / 64x32 tiles alone, in
2 x 2 and 2 x 4 clusters (``x8ab``: not in the space, MULTICASTS gets it for this process),
each at 8 stages and as deep as fits. L2-flushed medians in turn, errors against cuBLAS.

    python bench/experiments/deep_rings.py OUT.json [--draws 16] [--seed S]
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from functools import partial

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import cutemma.kernels.sm90.config as sm90_config  # noqa: E402

sm90_config.MULTICASTS.update({("AB", 8): (2, 4)})
sm90_config.CLUSTER_SIZES = (1, 2, 4, 8)

DEEPEST = 24  # the most stages tried (shared memory decides first for these tiles)
ROWS = (129, 2048)


def _lost_on_narrow(r: dict) -> bool:
    cfg = r.get("pick", {}).get("config", "")
    return (
        ROWS[0] <= r["m"] <= ROWS[1]
        and r.get("ratio", 9) < 0.95
        and cfg.startswith("b64x")
        and "_c1_" in cfg
        and not r["pick"].get("swap")
        and "_x" not in cfg
    )


def shapes(draws: int, seed: int) -> list[tuple]:
    """Half the sweeps' such losers, half drawn at run time in the band."""
    from small_calls import drawn_small, sweep_losers

    lost = sweep_losers(_lost_on_narrow, draws // 2, seed)
    drawn = drawn_small(draws - len(lost), seed, 60.0, 4000, ROWS)
    return list(dict.fromkeys(lost + drawn))


def deepest(cfg, dtype: str, major: str):
    """``cfg`` with as many stages as fit (at most DEEPEST), or None where that is no deeper."""
    from probe import built

    for s in range(DEEPEST, (cfg.stages or sm90_config.MAX_STAGES), -1):
        # (refused where the stages cannot fit at all)
        deep = built(partial(replace, cfg, stages=s), dtype, ("K", major))
        if deep is not None:
            return deep
    return None


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from probe import call_space

    from cutemma.kernels.pick import builtin
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import FP8_PROMOTE, builds

    dtype, major, r16, _ = call_space(combo, m, n, k)
    out = {}
    pick, _ = builtin(m, n, k, 1, dtype, 132, "h200", True, r16, major, False)
    if isinstance(pick, Sm90Config):
        deep = deepest(pick, dtype, major)
        if deep is not None:
            out[deep.name] = deep
    kw = {"promote": FP8_PROMOTE[64]} if dtype == "e4m3" else {}
    for bn in (32, 64):
        for cl, mc in ((1, "B"), (4, "AB"), (8, "AB")):
            cfg = Sm90Config(64, bn, consumers=1, cluster=cl, multicast=mc, **kw)
            for c in (cfg, deepest(cfg, dtype, major)):
                if c is not None and builds(c, dtype, ("K", major)):
                    out[c.name] = c
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 16)
