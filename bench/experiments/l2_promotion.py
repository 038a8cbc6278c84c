"""The operand tensor maps' L2 promotion (``CUtensorMapL2promotion``: none, 64, 128 or 256
bytes; the family encodes 256) on e4m3 calls whose rows sit half a sector apart (K an odd
multiple of 16 bytes: each 128-byte row of a k tile spans two L2 lines) and on aligned
ones, shapes drawn at run time: the built-in pick's kernel, each promotion timed in turn
with cuBLAS (L2-flushed medians, 3 rounds), one process.

    python bench/experiments/l2_promotion.py OUT.json [--rows R] [--seed S]
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

PROMOTIONS = {"none": 0, "64B": 1, "128B": 2, "256B": 3}  # CUDA driver API's enum


def promoted(value: int):
    """Encode operand and output maps with L2 promotion ``value`` from now on: the fast
    path's and the output maps' caches are dropped when it changes."""
    from cutemma.copy import tma_map
    from cutemma.kernels.runtime import fastpath
    from cutemma.kernels.sm90 import tma_maps

    if tma_map.L2_PROMOTION_256B != value:
        tma_map.L2_PROMOTION_256B = value  # (read by tensor_map_args at each encoding)
        fastpath.FAST.clear()
        tma_maps._DMAPS.clear()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=24)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)

    import torch
    from gemm_sweep import draw_shapes, operands, reps_for, turns_ms

    import cutemma
    from cutemma.kernels.dispatch import checked

    want = {True: args.rows * 2 // 3, False: args.rows - args.rows * 2 // 3}
    rows = []
    for m, n, k in draw_shapes(4000, seed):
        off = (k // 16) % 2 == 1
        if m < 17 or want[off] == 0 or 2 * m * n * k > 4e12:  # (at most ~4 ms a call)
            continue
        want[off] -= 1
        A, B, out, peer = operands("e4m3", m, n, k)
        ref = peer(torch.empty_like(out)).float()
        calls = {"cublas": lambda p=peer, o=out: p(o)}
        for name, v in PROMOTIONS.items():
            calls[name] = lambda v=v, a=A, b=B, o=out: (promoted(v), cutemma.gemm(a, b, out=o))
        errs = {}
        for name in PROMOTIONS:
            calls[name]()
            errs[name] = float((out.float() - ref).norm() / ref.norm())
        t = turns_ms(calls, reps_for(calls["256B"]))
        _, choice = checked(A, B, out=out)
        row = {"m": m, "n": n, "k": k, "off": off, "pick": choice.config.name, "errors": errs,
               "us": {key: round(v * 1e3, 2) for key, v in t.items()},
               "vs_256B": {key: round(t["256B"] / v, 4) for key, v in t.items()}}  # fmt: skip
        rows.append(row)
        print(row, flush=True)
        if not any(want.values()):
            break
    with open(args.out, "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "seed": seed, "rows": rows,
                   "source": open(__file__).read()}, f, indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
