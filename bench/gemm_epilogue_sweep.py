"""Fused epilogues over the sweep's shapes (issue 33): bias + gelu_tanh fused into
cutemma.gemm, against the plain call and against torch._addmm_activation (cuBLASLt's
bias + GELU epilogue).

    python bench/gemm_epilogue_sweep.py N --out FILE [--seed S]

Shapes: bench/gemm_sweep.py's distribution (the seed drawn at run time unless given),
bf16, B K-major (nn.Linear). Each row: the fused call's time over the plain call's
(``fused_over_plain``, the cost of the epilogue) and torch._addmm_activation's time over
the fused call's (``vs_addmm_activation``, above 1: cutemma faster), L2-flushed medians in
3 rounds taking turns.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from gemm_sweep import draw_shapes, pick_of, reps_for, turns_ms  # noqa: E402

OPS = ("bias", "gelu_tanh")


def row(m: int, n: int, k: int) -> dict:
    import cutemma

    A = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    W = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    r = {"m": m, "n": n, "k": k}
    try:
        ref = torch._addmm_activation(b, A, W.t(), use_gelu=True)
        cutemma.gemm(A, W.t(), out=out, epilogue=OPS, bias=b)
        torch.cuda.synchronize()
        r["rel_err_vs_peer"] = float((out.float() - ref.float()).norm() / ref.float().norm())
        r["pick"] = pick_of(A, W.t())
        fused = cutemma.kernels.which_kernel(A, W.t(), epilogue=OPS, bias=b)
        r["fused_pick"] = {"config": fused.config.name, "swap": bool(fused.swap)}
        calls = {
            "plain": lambda: cutemma.gemm(A, W.t(), out=out),
            "fused": lambda: cutemma.gemm(A, W.t(), out=out, epilogue=OPS, bias=b),
            "addmm": lambda: torch._addmm_activation(b, A, W.t(), use_gelu=True),
        }
        t = turns_ms(calls, reps_for(calls["fused"]))
    except Exception as exc:
        r["error"] = f"{type(exc).__name__}: {exc}"[:300]
        return r
    r |= {f"{name}_us": round(v * 1e3, 2) for name, v in t.items()}
    r["fused_over_plain"] = round(t["fused"] / t["plain"], 4)
    r["vs_addmm_activation"] = round(t["addmm"] / t["fused"], 4)
    return r


def summary(rows: list[dict]) -> dict:
    ok = [r for r in rows if "fused_over_plain" in r]

    def gm(v):
        return round(math.exp(statistics.fmean(math.log(x) for x in v)), 4)

    fop = [r["fused_over_plain"] for r in ok]
    vs = [r["vs_addmm_activation"] for r in ok]
    return {
        "rows": len(ok),
        "failed": len(rows) - len(ok),
        "fused_over_plain_max": max(fop),
        "fused_over_plain_geomean": gm(fop),
        "vs_addmm_activation": {"geomean": gm(vs), "min": min(vs)},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("count", type=int)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rows = []
    for i, (m, n, k) in enumerate(draw_shapes(args.count, seed)):
        rows.append(row(m, n, k))
        torch.cuda.empty_cache()
        r = rows[-1]
        tag = r.get("error") or f"{r['fused_over_plain']:.3f} {r['vs_addmm_activation']:.3f}"
        print(f"[{i + 1}/{args.count}] {m} {n} {k}: {tag}", flush=True)
    result = {"device": torch.cuda.get_device_name(), "seed": seed, "ops": OPS,
              "summary": summary(rows), "rows": rows}  # fmt: skip
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
