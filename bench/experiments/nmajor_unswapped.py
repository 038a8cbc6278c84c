"""An N-major B's calls of one tile row on unswapped stream-K tiles: do their shares read the
weights as slowly as the swapped shares did? The session of 2026-11-30 (fifth) found an
N-major B's swapped stream-K reading the weights at 0.79 of cuBLAS where whole tiles read
them at 0.935 (each share a 128-byte piece of every k row it covers, at rows no other CTA
reads then), and made those calls' swapped kernels whole. The unswapped 64-row tiles kept
their stream-K: on the sweeps such picks (`b64x128_c1_sauto_sk16`, `b64x256..._sk16`) ran
0.68-0.95 of cuBLAS with B N-major where B K-major's ran 0.94-1.02, and the model priced
them 17-24% under their times on calls of 1.6-6 GB of weights. Per call (half the sweeps'
such rows, half drawn at run time whose pick is one): cuBLAS, the pick, and the model's
cheapest kernel of each kind: unswapped whole, unswapped stream-K, swapped whole of 128
and of 64 rows. L2-flushed medians in turn, errors against cuBLAS, prices beside.

    python bench/experiments/nmajor_unswapped.py OUT.json [--draws 14] [--seed S]
"""

from __future__ import annotations

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

LEAST_K = 2048


def _shared_unswapped(cfg_name: str, swap: bool) -> bool:
    return not swap and cfg_name.startswith("b64x") and "_sk" in cfg_name


def _model_pick(m: int, n: int, k: int):
    from probe import call_space

    from cutemma.kernels.cost import best

    _, _, r16, found = call_space("bf16_bN", m, n, k, swap=True)
    return best(found, m, n, k, "bf16", 1, "h200", r16)[0]


def shapes(draws: int, seed: int) -> list[tuple]:
    """Half the sweeps' B N-major rows of at most 128 rows over K >= 2048 whose pick was an
    unswapped 64-row stream-K tile, half drawn calls whose model pick is one."""
    from gemm_sweep import draw_shapes
    from small_calls import sweep_losers

    def keep(r: dict) -> bool:
        p = r.get("pick", {})
        return (r["combo"] == "bf16_bN" and r["m"] <= 128 and r["k"] >= LEAST_K
                and _shared_unswapped(p.get("config", ""), p.get("swap", False)))  # fmt: skip

    lost = sweep_losers(keep, draws // 2, seed)
    pool = [s for s in draw_shapes(30000, seed) if s[0] <= 128 and s[2] >= LEAST_K]
    random.Random(seed).shuffle(pool)
    drawn = []
    for m, n, k in pool:
        if len(lost) + len(drawn) >= draws:
            break
        cfg = _model_pick(m, n, k)
        if _shared_unswapped(cfg.name, cfg.swap_ab):
            drawn.append(("bf16_bN", m, n, k))
    return list(dict.fromkeys(lost + drawn))[:draws]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    """The model's cheapest kernel of each kind (unswapped whole / stream-K, swapped whole
    of 128 and 64 rows)."""
    from probe import call_space

    from cutemma.kernels.cost import predict

    dtype, _, r16, found = call_space(combo, m, n, k, swap=True)
    price = lambda c: predict(c, m, n, k, dtype, 1, "h200", 2, r16)  # noqa: E731
    kinds = {
        "unswapped_whole": lambda c: not c.swap_ab and not c.stream_k and c.kcluster == 1,
        "unswapped_sk": lambda c: not c.swap_ab and c.stream_k,
        "swapped_whole128": lambda c: c.swap_ab and not c.stream_k and c.block_m == 128,
        "swapped_whole64": lambda c: c.swap_ab and not c.stream_k and c.block_m == 64,
    }
    out = {}
    for kind, ok in kinds.items():
        mine = sorted((c for c in found if ok(c)), key=price)
        if mine:
            out[f"{kind}:{mine[0].name}"] = mine[0]
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 14)
