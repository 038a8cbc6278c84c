"""An N-major B's decode calls on clusters of weight tiles: cuBLAS runs them as 192-row
weight tiles 8-24 tokens wide in clusters of 4 along the weights (nvjet_sm90_tst_192x8_
64x8_4x1, 192x24_64x7_4x1: seen under compute-sanitizer, bench/results/nmajor-whole64-
sanitize-h200.json), where the space runs whole 64- and 128-row tiles alone
(space._n_major_whole). Clusters of 2 and 4 CTAs along the weights sharing the tokens' tile
(the register epilogue: "tmat" runs on clusters of 1); clusters of 4 along one side are not
in the space, MULTICASTS gets them here for this process only.

Each call with B N-major: cuBLAS, the pick, and 64- and 128-row swapped tiles alone, in
pairs and in fours. L2-flushed medians in turn.

    python bench/experiments/nmajor_clusters.py OUT.json [--draws 4] [--seed S]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import cutemma.kernels.sm90.config as sm90_config  # noqa: E402

sm90_config.MULTICASTS.update({("B", 4): (4, 1)})
sm90_config.CLUSTER_SIZES = (1, 2, 4)


def shapes(draws: int, seed: int) -> list[tuple]:
    from nmajor_decode import shapes as decode_shapes

    return [c for c in decode_shapes(draws, seed) if c[0] == "bf16_bN"]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import builds

    out = {}
    for rows, cons in ((64, 1), (128, 2)):
        tried = [dict(epilogue="tmat"), dict(epilogue="regs")]
        tried += [dict(epilogue="regs", cluster=c, multicast="B") for c in (2, 4)]
        for kw in tried:
            # (each CTA of a cluster loads its share of the tokens' tile: 8 rows or more)
            step = 8 * kw.get("cluster", 1)
            tokens = max(16, -(-m // step) * step)
            try:
                cfg = Sm90Config(rows, tokens, consumers=cons, swap_ab=True, **kw)
            except Exception as exc:  # (a rule refuses it: say so once)
                print("refused", rows, kw, str(exc)[:120])
                continue
            if builds(cfg, "bf16", ("M", "K")):
                out[cfg.name] = cfg
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 4)
