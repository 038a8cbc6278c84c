"""Pairs of CTAs on e4m3 calls whose rows sit half a sector apart, against the model's best
kernel without a cluster and cuBLAS: where do the pairs pay?

In the sweeps the e4m3 calls whose K is an odd multiple of 16 (``rows16``: TMA reads such
rows at about half speed, and a pair halves one operand's reads) took pairs on about 15% of
their rows, which ran 0.77-0.96 of cuBLAS (geomean by M band; pairs along N sharing A at
up to 64 rows 0.80), the model pricing them 5-16% too cheap.

    python bench/experiments/cluster_floor.py OUT.json [--rows R] [--seed S]

Draws calls from bench/gemm_sweep.py's distribution (the seed drawn at run time unless
given), keeps the e4m3 ones whose K / 16 is odd and whose pick is a pair (cluster 2), and
times the pick, the model's cheapest kernel of cluster 1 and cuBLAS (L2-flushed medians in
3 rounds in turn).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)


def unclustered(call, m: int, n: int, k: int):
    """The model's cheapest candidate of cluster 1 (and its predicted seconds)."""
    from cutemma.kernels.cost import best
    from cutemma.kernels.space import SWAP_MAX_M, candidates

    found = candidates(m, n, k, "e4m3", 1, 132, m <= SWAP_MAX_M, call.rows16, "K")
    return best(tuple(c for c in found if c.cluster == 1), m, n, k, "e4m3", 1, "h200", call.rows16)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=40)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)

    import torch
    from gemm_sweep import draw_shapes, operands, reps_for, turns_ms
    from pick_audit import calls_of

    from cutemma.kernels.call import half_sector_off
    from cutemma.kernels.dispatch import checked

    rows = []
    for m, n, k in draw_shapes(20000, seed):
        if len(rows) >= args.rows:
            break
        if not half_sector_off(k):  # (e4m3: K's bytes are its elements)
            continue
        A, B, out, peer = operands("e4m3", m, n, k, fill=False)
        call, choice = checked(A, B, out=out)
        if choice.config.cluster != 2:
            continue
        alone, alone_t = unclustered(call, m, n, k)
        A, B, out, peer = operands("e4m3", m, n, k)
        ref = peer(torch.empty_like(out)).float()
        calls = calls_of(A, B, out, peer, {"alone": alone})
        errs = {}
        for key in ("pick", "alone"):
            calls[key]()
            errs[key] = float((out.float() - ref).norm() / ref.norm())
        t = turns_ms(calls, reps_for(calls["pick"]))
        r = {"m": m, "n": n, "k": k, "pick": choice.config.name, "alone": alone.name,
             "predicted_us": {"pick": round(choice.predicted_s * 1e6, 2),
                              "alone": round(alone_t * 1e6, 2)},
             "errors": errs, **{f"{key}_us": round(v * 1e3, 2) for key, v in t.items()},
             "pick_vs_cublas": round(t["cublas"] / t["pick"], 4),
             "alone_vs_cublas": round(t["cublas"] / t["alone"], 4)}  # fmt: skip
        rows.append(r)
        print(r, flush=True)
    with open(args.out, "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "seed": seed, "rows": rows,
                   "source": open(__file__).read()}, f, indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
