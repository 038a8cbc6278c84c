"""How far the built-in pick is from the best kernel of its own space, and how far that best
is from cuBLAS, on shapes drawn at run time (bench/gemm_sweep.py's distribution): for each
call, cuBLAS, the pick, and the kernel the cost model prices fastest in each class of the
space (swapped or not; whole, stream-K or split-K in a cluster), L2-flushed medians taken
in turn. ``oracle``: the fastest of those timed.

    python bench/experiments/pick_audit.py OUT.json [--rows R] [--seed S] [--m-max M]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

COMBOS = ("bf16_bK", "bf16_bN", "e4m3")


def kind_of(cfg) -> str:
    """A kernel's class: swapped or not, and whole, stream-K ('sk') or kcluster ('kc')."""
    how = "kc" if cfg.kcluster > 1 else "sk" if cfg.stream_k else "whole"
    return ("swap_" if cfg.swap_ab else "") + how


def class_bests(call, m: int, n: int, k: int, dtype: str) -> dict:
    """The cost model's fastest kernel of each class of the call's candidates."""
    from cutemma.kernels.cost import predict
    from cutemma.kernels.space import SWAP_MAX_M, candidates

    b_major = "N" if call.b_major == "N" else "K"
    found = candidates(m, n, k, dtype, 1, 132, m <= SWAP_MAX_M, call.rows16, b_major)
    bests: dict = {}
    for cfg in found:
        t = predict(cfg, m, n, k, dtype, 1, "h200", rows16=call.rows16)
        key = kind_of(cfg)
        if key not in bests or t < bests[key][1]:
            bests[key] = (cfg, t)
    wide = [(predict(c, m, n, k, dtype, 1, "h200", rows16=call.rows16), c)
            for c in wide_kcluster(m, n, k, dtype)]  # fmt: skip
    if wide:
        t, cfg = min(wide, key=lambda x: x[0])
        bests["kc_wide"] = (cfg, t)
    return bests


def wide_kcluster(m: int, n: int, k: int, dtype: str) -> list:
    """Split-K in a cluster past the space's bounds (any row count, fp8 too, as many tiles
    as fit a wave of clusters of 2): each of the space's kcluster tiles with its largest
    size."""
    from dataclasses import replace

    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import KCLUSTER_TILES, _capacities, _largest_kc

    k_tiles = -(-k // (128 if dtype in ("e4m3", "e5m2") else 64))
    found = []
    for bm, bn, consumers in KCLUSTER_TILES:
        kc = _largest_kc(-(-m // bm) * -(-n // bn), k_tiles, _capacities(132))
        if kc:
            cfg = Sm90Config(bm, bn, consumers=consumers, kcluster=kc)
            if dtype in ("e4m3", "e5m2") and consumers == 2:
                cfg = replace(cfg, promote="split")
            found.append(cfg)
    return found


def shapes_of(rows: int, seed: int, m_max: int) -> list:
    from gemm_sweep import draw_shapes

    return [s for s in draw_shapes(20 * rows, seed) if s[0] <= m_max][:rows]


def compile_shard(rows: int, seed: int, m_max: int, shard: int, shards: int) -> None:
    """Run this shard's kernels once on uninitialised operands: they land in the disk cache,
    so the timing process compiles nothing."""
    import torch
    from gemm_sweep import operands

    import cutemma
    from cutemma.kernels.dispatch import checked

    for i, (m, n, k) in enumerate(shapes_of(rows, seed, m_max)):
        if i % shards != shard:
            continue
        combo = COMBOS[i % len(COMBOS)]
        A, B, out, _ = operands(combo, m, n, k, fill=False)
        call, _ = checked(A, B, out=out)
        for cfg in [None] + [c for c, _ in class_bests(call, m, n, k, combo[:4]).values()]:
            try:
                cutemma.gemm(A, B, out=out, config=cfg)
                torch.cuda.synchronize()
            except Exception as exc:  # seen again (and recorded) when timed
                print(f"compile {cfg}: {type(exc).__name__}: {exc}"[:200])
        torch.cuda.empty_cache()


def geomean_of(rows: list[dict], key: str) -> float | None:
    """The geometric mean of ``key`` over ``rows``, to 4 places (None without rows)."""
    return round(math.exp(sum(math.log(r[key]) for r in rows) / len(rows)), 4) if rows else None


def ab_summary(rows: list[dict]) -> dict:
    """An A/B run's summary: its rows, the geomean ratios to cuBLAS of the new and the old
    picks, and on how many calls the new one ran faster."""
    return {"rows": len(rows), "new_vs_cublas": geomean_of(rows, "new_vs_cublas"),
            "old_vs_cublas": geomean_of(rows, "old_vs_cublas"),
            "new_faster": sum(r["new_us"] < r["old_us"] for r in rows)}  # fmt: skip


def calls_of(A, B, out, peer, configs: dict) -> dict:
    """cuBLAS, the pick and each named config as calls on the same operands."""
    import cutemma

    calls = {"cublas": lambda: peer(out), "pick": lambda: cutemma.gemm(A, B, out=out)}
    for key, cfg in configs.items():
        calls[key] = lambda c=cfg: cutemma.gemm(A, B, out=out, config=c)
    return calls


def old_and_new(A, B, out, peer, old, new) -> tuple[dict, dict]:
    """An A/B of two configs on one call: each one's error against cuBLAS, then cuBLAS, the
    old and the new timed in turns (L2-flushed medians, ms)."""
    import torch
    from gemm_sweep import reps_for, turns_ms

    ref = peer(torch.empty_like(out)).float()
    calls = calls_of(A, B, out, peer, {"old": old, "new": new})
    del calls["pick"]
    errs = {}
    for key in ("old", "new"):
        calls[key]()
        errs[key] = float((out.float() - ref).norm() / ref.norm())
    return errs, turns_ms(calls, reps_for(calls["new"]))


def errors_of(calls: dict, names: list, out, ref) -> dict:
    """Run each named call once: its error against ``ref`` in ``out``, or (dropping it from
    ``calls``) what it raised, so that a kernel that cannot run is seen, not timed."""
    errs = {}
    for name in names:
        try:
            calls[name]()
            errs[name] = float((out.float() - ref).norm() / ref.norm())
        except Exception as exc:
            errs[name] = f"{type(exc).__name__}: {str(exc)[:160]}"
            del calls[name]
    return errs


def main() -> None:
    if sys.argv[1] == "compile":
        compile_shard(*map(int, sys.argv[2:]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=60)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--m-max", type=int, default=16384)
    ap.add_argument("--shards", type=int, default=14)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    import subprocess

    cmd = [sys.executable, __file__, "compile", str(args.rows), str(seed), str(args.m_max)]
    procs = [subprocess.Popen([*cmd, str(i), str(args.shards)]) for i in range(args.shards)]
    for p in procs:
        p.wait()

    import torch
    from gemm_sweep import operands, reps_for, turns_ms

    from cutemma.kernels.dispatch import checked

    rows = []
    for i, (m, n, k) in enumerate(shapes_of(args.rows, seed, args.m_max)):
        combo = COMBOS[i % len(COMBOS)]
        A, B, out, peer = operands(combo, m, n, k)
        call, choice = checked(A, B, out=out)
        pick = choice.config
        bests = class_bests(call, m, n, k, combo[:4])
        others = {key: cfg for key, (cfg, _) in bests.items() if cfg != pick}
        calls = calls_of(A, B, out, peer, others)
        ref = peer(torch.empty_like(out)).float()
        errs = errors_of(calls, list(calls)[1:], out, ref)
        t = turns_ms(calls, reps_for(calls["pick"]))
        us = {key: round(v * 1e3, 2) for key, v in t.items()}
        ours = {key: v for key, v in us.items() if key != "cublas"}
        oracle = min(ours, key=ours.get)
        r = {"combo": combo, "m": m, "n": n, "k": k, "rows16": list(call.rows16),
             "pick": pick.name, "pick_kind": kind_of(pick), "us": us, "errors": errs,
             "predicted_us": {key: round(p * 1e6, 2) for key, (_, p) in bests.items()},
             "configs": {key: c.name for key, (c, _) in bests.items()},
             "oracle": oracle, "pick_vs_cublas": round(us["cublas"] / us["pick"], 4),
             "oracle_vs_cublas": round(us["cublas"] / ours[oracle], 4)}  # fmt: skip
        rows.append(r)
        print(r, flush=True)

    summary = {"rows": len(rows), "pick_vs_cublas": geomean_of(rows, "pick_vs_cublas"),
               "oracle_vs_cublas": geomean_of(rows, "oracle_vs_cublas")}  # fmt: skip
    with open(args.out, "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "seed": seed, "summary": summary,
                   "rows": rows}, f, indent=1)  # fmt: skip
    print(summary)


if __name__ == "__main__":
    main()
