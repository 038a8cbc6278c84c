"""Fused bias + gelu_tanh with pingpong tiles (each consumer warpgroup its own tile, so one
warpgroup's epilogue runs under the other's wgmma) against the built-in pick's fused and
plain calls, on the epilogue sweep's rows where the fused call cost most over the plain
one (short K: the epilogue is a large share of the call) and a few where it cost little.

    python bench/experiments/epilogue_schedules.py OUT.json [SWEEP.json [ROWS]]

Each row: the plain and fused built-in calls' times, and each pingpong tile's fused time
and its error against torch._addmm_activation, and the fused call on the plain call's kernel
where it runs unswapped (L2-flushed medians, 3 rounds in turn).
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

OPS = ("bias", "gelu_tanh")
TILES = [(64, 128), (64, 192), (64, 256), (128, 64), (128, 128)]


def row(m: int, n: int, k: int) -> dict:
    """One shape: plain, fused, and each pingpong tile's fused call."""
    import torch
    from gemm_sweep import reps_for, turns_ms

    import cutemma
    from cutemma.kernels.dispatch import checked
    from cutemma.kernels.sm90.config import Sm90Config

    A = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    W = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    ref = torch._addmm_activation(b, A, W.t(), use_gelu=True).float()
    calls = {
        "plain": lambda: cutemma.gemm(A, W.t(), out=out),
        "fused": lambda: cutemma.gemm(A, W.t(), out=out, epilogue=OPS, bias=b),
    }
    r = {"m": m, "n": n, "k": k, "errors": {}}
    # the fused epilogue on the plain call's own kernel: what the fused pick weighs the
    # pingpong tiles against (cost.predict_fused); not for a swapped pick, whose config
    # given to these operands would run unswapped, another kernel
    _, plain = checked(A, W.t(), out=out)
    r["plain_kernel"] = plain.config.name + ("_swap" if plain.swap else "")
    if not plain.swap:
        calls["fused_on_plain_kernel"] = lambda: cutemma.gemm(
            A, W.t(), out=out, epilogue=OPS, bias=b, config=plain.config
        )
    for bm, bn in TILES:
        cfg = Sm90Config(bm, bn, schedule="pingpong")
        try:
            out.fill_(float("nan"))
            cutemma.gemm(A, W.t(), out=out, epilogue=OPS, bias=b, config=cfg)
            r["errors"][cfg.name] = float((out.float() - ref).norm() / ref.norm())
            calls[cfg.name] = lambda c=cfg: cutemma.gemm(
                A, W.t(), out=out, epilogue=OPS, bias=b, config=c
            )
        except Exception as exc:  # a tile the family refuses for this call: say why
            r["errors"][cfg.name] = f"{type(exc).__name__}: {exc}"[:160]
    medians = turns_ms(calls, reps_for(calls["fused"]))
    r["us"] = {name: round(ms * 1e3, 2) for name, ms in medians.items()}
    return r


def main() -> None:
    import torch

    out = sys.argv[1]
    sweep = (
        sys.argv[2]
        if len(sys.argv) > 2
        else os.path.join(HERE, "..", "results", "epilogue-sweep-h200.json")
    )
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    rows = json.load(open(sweep))["rows"]
    worst = sorted(rows, key=lambda r: -r.get("fused_over_plain", 0))
    shapes = [(r["m"], r["n"], r["k"]) for r in worst[:count] + worst[-4:]]
    found = []
    for m, n, k in shapes:
        found.append(row(m, n, k))
        torch.cuda.empty_cache()
        print(json.dumps(found[-1]), flush=True)
    with open(out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "ops": OPS, "rows": found}, f, indent=1)


if __name__ == "__main__":
    main()
