"""e4m3 calls whose built-in pick is a cluster of 2 (the space offers them where a row sits
half a sector off): the pick against the model's cheapest kernels without a cluster,
timed with cuBLAS on shapes drawn at run time. Over the four sweeps before this one, e4m3
picks of 2-clusters ran 1.10-1.14x their price and 0.78-0.94 of cuBLAS.

    python bench/experiments/fp8_clusters.py plan PLAN.json [--rows R] [--seed S]   # CPU
    python bench/experiments/fp8_clusters.py time PLAN.json OUT.json                # GPU

``plan`` draws shapes from bench/gemm_sweep.py's distribution (seed drawn at run time
unless given, and recorded) and keeps up to R e4m3 calls (contiguous operands: their
``rows16`` as a call sees them) whose pick is a plain cluster of 2; for each it lists the
model's two cheapest kernels of the call's candidates without a cluster, and its
cheapest other cluster. ``time`` runs cuBLAS, the pick and those, L2-flushed medians in
3 rounds in turn, each with its error against cuBLAS.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from dataclasses import asdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from tree_ab import call_of, config_of  # noqa: E402

SMS, KIND = 132, "h200"


def fields(cfg, t: float) -> dict:
    return asdict(cfg) | {"_name": cfg.name, "_us": round(t * 1e6, 2)}


def plan(path: str, rows: int, seed: int | None) -> None:
    from gemm_sweep import draw_shapes

    from cutemma.kernels import pick
    from cutemma.kernels.cost import predict
    from cutemma.kernels.space import candidates

    seed = seed if seed is not None else random.SystemRandom().randrange(2**32)
    kept, draws = [], 0
    for m, n, k in draw_shapes(20000, seed):
        draws += 1
        call = call_of("e4m3", m, n, k)
        r16 = tuple(call[4])
        cfg, t = pick.builtin(m, n, k, 1, "e4m3", SMS, KIND, True, r16, "K")
        if cfg.cluster != 2 or cfg.kcluster > 1:
            continue
        priced = sorted(
            (predict(c, m, n, k, "e4m3", 1, KIND, rows16=r16), i, c)
            for i, c in enumerate(candidates(m, n, k, "e4m3", 1, SMS, True, r16, "K"))
        )
        lone = [(t2, c) for t2, _, c in priced if c.cluster == 1][:2]
        other = [(t2, c) for t2, _, c in priced if c.cluster > 1 and c.name != cfg.name][:1]
        kept.append({"call": call, "pick": fields(cfg, t),
                     "alts": {f"lone{i}": fields(c, t2) for i, (t2, c) in enumerate(lone)}
                     | {f"cluster{i + 1}": fields(c, t2) for i, (t2, c) in enumerate(other)}})  # fmt: skip
        if len(kept) >= rows:
            break
    out = {"seed": seed, "draws": draws, "rows": kept,
           "tree": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                  text=True, cwd=HERE).stdout.strip()}  # fmt: skip
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"seed {seed}: {len(kept)} cluster picks in {draws} draws")


def compile_shard(path: str, shard: int, shards: int) -> None:
    """Run this shard's kernels once on uninitialised operands (into the disk cache)."""
    import torch
    from gemm_sweep import operands

    import cutemma

    for i, r in enumerate(json.load(open(path))["rows"]):
        if i % shards != shard:
            continue
        A, B, out, _ = operands(*r["call"][:4], fill=False)
        for f in (r["pick"], *r["alts"].values()):
            try:
                cutemma.gemm(A, B, out=out, config=config_of(f))
                torch.cuda.synchronize()
            except Exception as exc:  # seen again (and recorded) when timed
                print(f"compile {f['_name']}: {type(exc).__name__}: {exc}"[:200])
        torch.cuda.empty_cache()


def time_plan(path: str, out_path: str) -> None:
    shards = os.cpu_count() or 4
    cmd = [sys.executable, __file__, "compile", path]
    for p in [subprocess.Popen([*cmd, str(i), str(shards)]) for i in range(shards)]:
        p.wait()

    import torch
    from gemm_sweep import operands, reps_for, turns_ms
    from pick_audit import calls_of, errors_of

    planned = json.load(open(path))
    rows = []
    for r in planned["rows"]:
        combo, m, n, k, _, _ = r["call"]
        named = {"chosen": r["pick"], **r["alts"]}
        A, B, out, peer = operands(combo, m, n, k)
        calls = calls_of(A, B, out, peer, {key: config_of(f) for key, f in named.items()})
        del calls["pick"]
        ref = peer(torch.empty_like(out)).float()
        errs = errors_of(calls, list(named), out, ref)
        t = turns_ms(calls, reps_for(calls["chosen"]))
        row = {"m": m, "n": n, "k": k, "errors": errs,
               "kernels": {key: f["_name"] for key, f in named.items()},
               "predicted_us": {key: f["_us"] for key, f in named.items()},
               "us": {key: round(v * 1e3, 2) for key, v in t.items()},
               "vs_cublas": {key: round(t["cublas"] / v, 4) for key, v in t.items()
                             if key != "cublas"}}  # fmt: skip
        rows.append(row)
        print(row, flush=True)
    with open(out_path, "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "plan": {k: v for k, v in planned.items()
                   if k != "rows"}, "rows": rows, "source": open(__file__).read()},
                  f, indent=1)  # fmt: skip


def main() -> None:
    if sys.argv[1] == "compile":
        compile_shard(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("plan", "time"))
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--rows", type=int, default=30)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args()
    if args.mode == "plan":
        plan(args.paths[0], args.rows, args.seed)
    else:
        time_plan(*args.paths)


if __name__ == "__main__":
    main()
