"""Promoted fp8 by N halves (``promote="split"``) against the promoted default (a script).

    python tests/kernels/gpu_sm90_fp8_split.py OUT.json

Checks each variant on edge shapes (NaN-poisoned f32 output, rel. error < 3e-4 against
float64 of the upcast inputs; e4m3 and e5m2), the precision at 4096^3 against the promoted
default and _scaled_mm, then times e4m3 8192^3 / 6144^3 / 4096^3 with bf16 output against
torch._scaled_mm (per-tensor scales, its default promoted accumulation) in 5 interleaved
rounds of do_bench medians. Fast accumulation rows show what promotion costs each tile.
"""

from __future__ import annotations

import json
import statistics
import sys

import gpu_timing  # beside this script
import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

from cutemma.kernels.dispatch_sm90 import gemm_sm90
from cutemma.kernels.plan_sm90 import Sm90Config

VARIANTS = {
    "128x192": Sm90Config(128, 192),
    "128x192_split": Sm90Config(128, 192, promote="split"),
    "128x128_split": Sm90Config(128, 128, promote="split"),
    "128x192_x2b": Sm90Config(128, 192, cluster=2),
    "128x192_split_x2b": Sm90Config(128, 192, cluster=2, promote="split"),
    "128x192_fast": Sm90Config(128, 192, promote=False),
    "128x256_fast": Sm90Config(128, 256, promote=False),
}
CHECKED = ("128x192_split", "128x128_split", "128x192_split_x2b")


def rel_err(D, A, B) -> float:
    ref = A.double() @ B.double()
    return float((D.double() - ref).norm() / ref.norm())


def main() -> None:
    gen = torch.Generator(device="cuda").manual_seed(22)
    one = torch.ones((), device="cuda")
    res = {"device": torch.cuda.get_device_name(), "checks": [], "rows": []}
    shapes = [(1, 8, 16), (300, 290, 272), (1031, 1000, 1040), (129, 200, 4096), (64, 96, 128)]
    for name in CHECKED:
        cfg = VARIANTS[name]
        for dt in (torch.float8_e4m3fn, torch.float8_e5m2):
            for m, n, k in shapes:
                A = torch.randn((m, k), generator=gen, device="cuda").to(dt)
                B = torch.randn((n, k), generator=gen, device="cuda").to(dt).t()
                D = torch.full((m, n), float("nan"), device="cuda")
                gemm_sm90(A, B, out=D, config=cfg)
                err = rel_err(D, A, B)
                ok = bool(torch.isfinite(D).all()) and err < 3e-4
                res["checks"].append(
                    {"config": name, "dtype": str(dt), "mnk": [m, n, k], "rel_err": err, "ok": ok}
                )
    bad = [c for c in res["checks"] if not c["ok"]]
    print(f"checks {len(res['checks']) - len(bad)} / {len(res['checks'])}; failed {bad}")
    e4m3 = torch.float8_e4m3fn
    s = 4096
    A = torch.randn((s, s), generator=gen, device="cuda").to(e4m3)
    B = torch.randn((s, s), generator=gen, device="cuda").to(e4m3).t()
    prec = {"scaled_mm": rel_err(torch._scaled_mm(A, B, one, one, out_dtype=torch.float32), A, B)}
    for name in ("128x192", "128x192_split", "128x128_split", "128x192_fast"):
        D = torch.empty((s, s), device="cuda")
        gemm_sm90(A, B, out=D, config=VARIANTS[name])
        prec[name] = rel_err(D, A, B)
    res["precision_4096_f32out"] = prec
    print("precision at 4096^3, f32 out:", {k: f"{v:.3e}" for k, v in prec.items()})
    for s in (8192, 6144, 4096):
        A = torch.randn((s, s), generator=gen, device="cuda").to(e4m3)
        B = torch.randn((s, s), generator=gen, device="cuda").to(e4m3).t()
        D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
        cases = {
            "scaled_mm": lambda A=A, B=B: torch._scaled_mm(A, B, one, one, out_dtype=torch.bfloat16)
        }
        for name, cfg in VARIANTS.items():
            cases[name] = lambda A=A, B=B, D=D, cfg=cfg: gemm_sm90(A, B, out=D, config=cfg)
        rounds = gpu_timing.rounds(cases, 2.0 * s**3)
        med = {k: statistics.median(v) for k, v in rounds.items()}
        res["rows"].append({"size": s, "rounds": rounds, "median": med})
        base = med["scaled_mm"]
        print(f"e4m3 {s}^3: " + ", ".join(f"{k} {v:.0f} ({v / base:.3f})" for k, v in med.items()))
        json.dump(res, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
