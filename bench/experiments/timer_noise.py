"""How much of a sweep row's ratio is the timer's: per drawn call, the sweep's own measure
(gemm_sweep.pair_ms: L2-flushed event medians over three interleaved rounds) twice, then
cuBLAS against itself and the pick against itself by the same measure (A/A: the same
function both sides, so every departure from 1 is the timer's), then the GPU time of each
side's kernels under torch.profiler (small_calls.kernel_us, the same flushed calls), twice.

    python bench/experiments/timer_noise.py OUT.json [--draws N] [--seed S]

The calls are the sweep's distribution (gemm_sweep.draw_shapes, the seed drawn at run time
unless given), each in the sweep's three ways. The summary gives, per measure, the share of
rows at >= 0.97 and the median |log| spread between the two repeats.
"""

from __future__ import annotations

import json
import math
import os
import random
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)


def row(combo: str, m: int, n: int, k: int) -> dict:
    """One call: the sweep's ratio twice, the two A/A ratios, the kernel-time ratio twice."""
    import torch
    from gemm_sweep import operands, pair_ms, pick_of, reps_for
    from small_calls import kernel_us

    import cutemma

    A, B, out, peer = operands(combo, m, n, k)
    ref = peer(torch.empty_like(out)).float()
    out.fill_(float("nan"))
    cutemma.gemm(A, B, out=out)
    torch.cuda.synchronize()
    got = {"combo": combo, "m": m, "n": n, "k": k, "pick": pick_of(A, B)["config"]}
    got["err"] = float((out.float() - ref).norm() / ref.norm())
    ours, theirs = (lambda: cutemma.gemm(A, B, out=out)), (lambda: peer(out))
    for name in ("sweep_1", "sweep_2"):
        t_ours, t_peer = pair_ms(ours, theirs)
        got[name] = round(t_peer / t_ours, 4)
        got[name + "_us"] = [round(t_ours * 1e3, 2), round(t_peer * 1e3, 2)]
    a, b = pair_ms(theirs, theirs)
    got["aa_peer"] = round(a / b, 4)
    a, b = pair_ms(ours, ours)
    got["aa_ours"] = round(a / b, 4)
    reps = max(15, reps_for(theirs))
    for name in ("kernel_1", "kernel_2"):
        k_ours, names_ours = kernel_us(ours, reps)
        k_peer, names_peer = kernel_us(theirs, reps)
        got[name] = round(k_peer / k_ours, 4) if k_ours > 0 else None
        got[name + "_us"] = [round(k_ours, 2), round(k_peer, 2)]
    got["kernels"] = {"ours": names_ours, "peer": names_peer}
    return got


def summary(rows: list[dict]) -> dict:
    """Per combo and measure: rows, geomean, share >= 0.97; the repeats' median spread."""
    out = {}
    for combo in ("bf16_bK", "bf16_bN", "e4m3"):
        got = [r for r in rows if r.get("combo") == combo and "sweep_1" in r]
        if not got:
            continue
        per = {}
        for key in ("sweep_1", "sweep_2", "aa_peer", "aa_ours", "kernel_1", "kernel_2"):
            v = [r[key] for r in got if r.get(key)]
            per[key] = {
                "geomean": round(math.exp(statistics.fmean(math.log(x) for x in v)), 4),
                "share_at_least_0.97": round(sum(x >= 0.97 for x in v) / len(v), 3),
                "share_outside_3pct": round(
                    sum(abs(math.log(x)) > math.log(1.03) for x in v) / len(v), 3
                ),  # fmt: skip
            }
        for a, b in (("sweep_1", "sweep_2"), ("kernel_1", "kernel_2")):
            d = [abs(math.log(r[a] / r[b])) for r in got if r.get(a) and r.get(b)]
            per[f"{a[:-2]}_repeat_spread_median"] = round(statistics.median(d), 4)
            per[f"{a[:-2]}_repeat_spread_p90"] = round(sorted(d)[int(0.9 * (len(d) - 1))], 4)
        out[combo] = {"rows": len(got), **per}
    return out


def main() -> None:
    import torch
    from gemm_sweep import COMBOS, draw_shapes, precompile

    args = sys.argv[1:]
    out = args[0]
    draws = int(args[args.index("--draws") + 1]) if "--draws" in args else 60
    seed = (int(args[args.index("--seed") + 1]) if "--seed" in args
            else random.SystemRandom().randrange(1 << 31))  # fmt: skip
    precompile(draws, seed, 14)
    rows = []
    for m, n, k in draw_shapes(draws, seed):
        for combo in COMBOS:
            try:
                rows.append(row(combo, m, n, k))
            except Exception as exc:
                rows.append({"call": [combo, m, n, k], "error": repr(exc)[:300]})
            print(json.dumps(rows[-1])[:300], flush=True)
            torch.cuda.empty_cache()
        with open(out, "w") as f:
            json.dump({"what": __doc__.splitlines()[0], "seed": seed, "summary": summary(rows),
                       "rows": rows, "script": open(__file__).read()}, f, indent=1)  # fmt: skip
    print(json.dumps(summary(rows), indent=1))


if __name__ == "__main__":
    main()
