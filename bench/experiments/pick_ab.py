"""A change of the cost model's device constants, judged on shapes drawn at run time
(bench/gemm_sweep.py's distribution): for each call whose pick the change moves, cuBLAS,
the pick with the device file's constants ('old') and with the change ('new'), L2-flushed
medians in 3 rounds in turn.

    python bench/experiments/pick_ab.py OUT.json --eff CLASS=FACTOR [...] [--rows R] [--seed S]

``--eff 16/128x64=0.9``: that tile class's efficiency times 0.9. ``--without wave``: 'old'
is the pick of the space without its wave-fitted tiles (space.wave_kernels), 'new' the
space's own. ``--rows-of SWEEP.json``: the calls of a sweep's rows instead of drawn ones.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

COMBOS = ("bf16_bK", "bf16_bN", "e4m3")


def changed(dev, scale: dict):
    """``dev`` with each named tile class's efficiency times its factor."""
    return replace(dev, eff=dev.eff | {c: dev.eff[c] * f for c, f in scale.items()})


def pick_with(dev, call, m: int, n: int, k: int, dtype: str, without: tuple = ()):
    """The candidate the model prices fastest on device constants ``dev`` (ties: first),
    leaving out the kernels in ``without``."""
    from cutemma.kernels.cost import price, shape_free
    from cutemma.kernels.space import SWAP_MAX_M, candidates

    major = "N" if call.b_major == "N" else "K"
    found = candidates(m, n, k, dtype, 1, dev.sms, m <= SWAP_MAX_M, call.rows16, major)
    found = [c for c in found if c not in without]
    return min(found, key=lambda c: price(shape_free(c, dtype, dev), c, m, n, k, dtype, 1, dev,
                                          2, call.rows16))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--eff", action="append", default=[])
    ap.add_argument("--draws", type=int, default=3000)
    ap.add_argument("--rows", type=int, default=40)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--without", choices=("wave",))
    ap.add_argument("--rows-of", help="a sweep's result file: its rows' calls, not drawn ones")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    scale = {c: float(f) for c, f in (e.split("=") for e in args.eff)}

    from gemm_sweep import draw_shapes, operands
    from pick_audit import ab_summary, old_and_new

    from cutemma.kernels.cost import device
    from cutemma.kernels.dispatch import checked
    from cutemma.kernels.space import wave_kernels

    base = device("h200")
    new_dev = changed(base, scale)
    rows = []
    if args.rows_of:
        found = json.load(open(args.rows_of))["rows"]
        calls_to = [((r["m"], r["n"], r["k"]), (r["combo"],)) for r in found]
    else:
        calls_to = [(shape, COMBOS) for shape in draw_shapes(args.draws, seed)]
    for (m, n, k), combos in calls_to:
        for combo in combos:
            if len(rows) >= args.rows:
                break
            A, B, out, peer = operands(combo, m, n, k, fill=False)
            call, _ = checked(A, B, out=out)
            dt = combo[:4]
            left = wave_kernels(m, n, k, dt) if args.without == "wave" else ()
            old, new = (
                pick_with(base, call, m, n, k, dt, left),
                pick_with(new_dev, call, m, n, k, dt),
            )
            if old == new:
                continue
            A, B, out, peer = operands(combo, m, n, k)
            errs, t = old_and_new(A, B, out, peer, old, new)
            r = {"combo": combo, "m": m, "n": n, "k": k, "old": old.name, "new": new.name,
                 "errors": errs, **{f"{key}_us": round(v * 1e3, 2) for key, v in t.items()},
                 "new_vs_cublas": round(t["cublas"] / t["new"], 4),
                 "old_vs_cublas": round(t["cublas"] / t["old"], 4)}  # fmt: skip
            rows.append(r)
            print(r, flush=True)

    summary = ab_summary(rows)
    with open(args.out, "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "seed": seed, "eff": scale,
                   "without": args.without,
                   "summary": summary, "rows": rows}, f, indent=1)  # fmt: skip
    print(summary)


if __name__ == "__main__":
    main()
