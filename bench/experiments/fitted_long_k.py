"""Do the 64-row whole tiles the pick takes on long-K calls lose to the kernels the model
ranks just behind them? On sweep 4239184965 the three worst bf16 rows ((285, 4720, 51472)
0.58 of cuBLAS, (717, 1200, 9440) 0.58-0.71, (247, 6720, 17328) 0.73) took 64-row tiles
(64x192, 64x112, 64x208) that ran 1.06-1.24x their price, where the model priced 128-row
stream-K and swapped kernels within 2-3% of them. For the committed sweeps' calls whose pick
is such a tile (unswapped, whole, 64 rows, K of at least 4096), of every outcome: cuBLAS,
the pick, and the model's next kernels (one per tile and schedule, its cheapest split),
L2-flushed medians in turn, with each one's price beside it.

    python bench/experiments/fitted_long_k.py OUT.json [--draws N] [--seed S]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

LEAST_K = 4096
NEXT = 5  # the model's next kernels timed beside the pick


def _takes_64_row_whole(r: dict) -> bool:
    cfg = r.get("pick", {}).get("config", "")
    return (
        r["k"] >= LEAST_K
        and cfg.startswith("b64x")
        and not r["pick"].get("swap")
        and "_sk" not in cfg
        and "_kc" not in cfg
    )


WORST = [("bf16_bK", 285, 4720, 51472), ("bf16_bN", 717, 1200, 9440), ("bf16_bK", 247, 6720, 17328)]


def shapes(draws: int, seed: int) -> list[tuple]:
    """The three worst rows above, then the committed sweeps' calls (every outcome) whose pick
    was such a tile, ``draws`` in all."""
    from small_calls import sweep_losers

    found = WORST + sweep_losers(_takes_64_row_whole, draws, seed)
    return list(dict.fromkeys(found))[:draws]


def kernels(combo: str, m: int, n: int, k: int, count: int = NEXT) -> dict:
    """The model's cheapest ``count`` kernels after the pick, one per tile and schedule."""
    from probe import call_space

    from cutemma.kernels.cost import predict

    dtype, _, r16, found = call_space(combo, m, n, k, swap=True)
    price = lambda c: predict(c, m, n, k, dtype, 1, "h200", 2, r16)  # noqa: E731
    out, seen = {}, set()
    for cfg in sorted(found, key=price):
        key = (cfg.block_m, cfg.block_n, cfg.swap_ab, cfg.stream_k, cfg.kcluster, cfg.cluster)
        if key in seen:
            continue
        seen.add(key)
        out[cfg.name] = cfg
        if len(out) > count:
            break
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 16)
