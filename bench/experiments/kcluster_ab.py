"""The built-in pick with split-K in a cluster in the space against the pick without it, on
shapes drawn at run time (bench/gemm_sweep.py's distribution) whose new pick is a kcluster
kernel, bf16 with each B major: cuBLAS, the new pick and the old one (the best of the
space's other candidates, as the pick took before), L2-flushed medians in 3 rounds in turn.

    python bench/experiments/kcluster_ab.py OUT.json [--draws N] [--rows R] [--seed S]
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


COMBOS = ("bf16_bK", "bf16_bN", "e4m3")


def _times(A, B, out, peer, old) -> dict:
    from gemm_sweep import reps_for, turns_ms

    import cutemma

    calls = {"cublas": lambda: peer(out), "new": lambda: cutemma.gemm(A, B, out=out),
             "old": lambda: cutemma.gemm(A, B, out=out, config=old)}  # fmt: skip
    return turns_ms(calls, reps_for(calls["new"]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--draws", type=int, default=6000)
    ap.add_argument("--rows", type=int, default=50)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)

    import torch
    from gemm_sweep import draw_shapes, operands
    from pick_audit import ab_summary

    import cutemma
    from cutemma.kernels.cost import best
    from cutemma.kernels.dispatch import which_kernel
    from cutemma.kernels.space import SWAP_MAX_M, candidates

    rows, seen = [], set()
    for m, n, k in draw_shapes(args.draws, seed):
        if len(rows) >= args.rows:
            break
        for combo in COMBOS:
            if (combo, m, n, k) in seen or len(rows) >= args.rows:
                continue
            seen.add((combo, m, n, k))
            A, B, out, peer = operands(combo, m, n, k, fill=False)
            new = which_kernel(A, B).config
            if new.kcluster == 1:
                continue
            b_major, dtype = ("N" if combo == "bf16_bN" else "K"), combo[:4]
            others = tuple(c for c in candidates(m, n, k, dtype, 1, 132, m <= SWAP_MAX_M,
                                                 (False, False), b_major) if c.kcluster == 1)  # fmt: skip
            old = best(others, m, n, k, dtype, 1, "h200")[0]
            A, B, out, peer = operands(combo, m, n, k)
            ref = peer(torch.empty_like(out)).float()
            r = {"combo": combo, "m": m, "n": n, "k": k, "new": new.name, "old": old.name}
            cutemma.gemm(A, B, out=out)
            r["err_new"] = float((out.float() - ref).norm() / ref.norm())
            t = _times(A, B, out, peer, old)
            r |= {f"{name}_us": round(v * 1e3, 2) for name, v in t.items()}
            r["new_vs_cublas"] = round(t["cublas"] / t["new"], 4)
            r["old_vs_cublas"] = round(t["cublas"] / t["old"], 4)
            rows.append(r)
            print(r, flush=True)

    summary = ab_summary(rows)
    with open(args.out, "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "seed": seed, "summary": summary,
                   "rows": rows}, f, indent=1)  # fmt: skip
    print(summary)


if __name__ == "__main__":
    main()
