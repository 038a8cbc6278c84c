"""Promoted fp8 with one batch in flight (``Sm90Config(promote="overlap")``) on the GPU (a script).

    python bench/experiments/sm90_overlap.py OUT.json      # checks, precision, timing, cuBLAS's kernel
    python bench/experiments/sm90_overlap.py sanitize      # small shapes for compute-sanitizer

Checks: poisoned (NaN) output, M/N/K off the tile, M = 1, e4m3 and e5m2, f32 and bf16 out,
alpha, beta with C (f32 and bf16); rel. error against float64 of the upcast inputs, bound
3e-4 for f32 out (promoted fp8, notes/kernels-journal.md), 1e-2 for bf16 out. Precision at 4096^3
(f32 out) of every timed variant and torch._scaled_mm. Timing: 5 interleaved rounds of
do_bench medians (gpu_sm90_fp8.py's method), _scaled_mm timed between ours, e4m3 8192^3 and
4096^3, bf16 out. The name of the kernel torch._scaled_mm launches at 8192^3 (torch.profiler).
"""

from __future__ import annotations

import sys as _sys  # the GPU checks' helpers (gpu_timing) live in tests/kernels
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests" / "kernels"))
_sys.path.insert(0, str(_Path(__file__).resolve().parent))
import json
import statistics
import sys

import gpu_timing  # beside this script
import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

from cutemma.kernels.dispatch import gemm as gemm_sm90
from cutemma.kernels.sm90.plan import Sm90Config

OVERLAP = [
    Sm90Config(128, 128, promote="overlap"),
    Sm90Config(128, 128, promote="overlap", cluster=2),
]
TIMED = {
    "overlap_128x128": Sm90Config(128, 128, promote="overlap"),
    "promoted_128x128": Sm90Config(128, 128),
    "promoted_128x192": Sm90Config(128, 192),
    "fastacc_128x128": Sm90Config(128, 128, promote=False),
}
SHAPES = [(1, 8, 16), (1, 300, 1008), (129, 136, 32), (193, 136, 272), (577, 1000, 1040),
          (2000, 384, 4096), (256, 256, 128), (300, 520, 7008)]  # fmt: skip


def _rel(D, ref) -> float:
    return float((D.double() - ref).norm() / ref.norm())


def checks(gen) -> list[dict]:
    out = []
    for cfg in OVERLAP:
        for dt in (torch.float8_e4m3fn, torch.float8_e5m2):
            for m, n, k in SHAPES:
                A = torch.randn((m, k), generator=gen, device="cuda").to(dt)
                B = torch.randn((n, k), generator=gen, device="cuda").to(dt).t()
                AB = A.double() @ B.double()
                for out_dtype in (torch.float32, torch.bfloat16):
                    for alpha, beta in ((1.0, 0.0), (0.5, 0.0), (1.0, 0.75)):
                        C = torch.randn((m, n), generator=gen, device="cuda").to(out_dtype)
                        D = torch.full((m, n), float("nan"), device="cuda", dtype=out_dtype)
                        gemm_sm90(A, B, C if beta else None, alpha=alpha, beta=beta, out=D,
                                  config=cfg)  # fmt: skip
                        ref = alpha * AB + (beta * C.double() if beta else 0.0)
                        err = _rel(D, ref)
                        bound = 3e-4 if out_dtype == torch.float32 else 1e-2
                        ok = bool(torch.isfinite(D).all()) and err < bound
                        out.append({"config": cfg.name, "dtype": str(dt), "out": str(out_dtype),
                                    "mnk": [m, n, k], "alpha": alpha, "beta": beta,
                                    "rel_err": err, "ok": ok})  # fmt: skip
    return out


def cublas_kernel(A, B, one) -> list[str]:
    from torch.profiler import ProfilerActivity, profile

    torch._scaled_mm(A, B, one, one, out_dtype=torch.bfloat16)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch._scaled_mm(A, B, one, one, out_dtype=torch.bfloat16)
        torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type.name == "CUDA"})


def main(path: str) -> None:
    gen = torch.Generator(device="cuda").manual_seed(12)
    one = torch.ones((), device="cuda")
    res = {"device": torch.cuda.get_device_name(), "rows": [], "precision": {}}
    res["checks"] = checks(gen)
    bad = [c for c in res["checks"] if not c["ok"]]
    worst = max(c["rel_err"] for c in res["checks"] if c["out"] == "torch.float32")
    print(f"overlap checks: {len(res['checks']) - len(bad)} / {len(res['checks'])} pass, "
          f"worst f32-out rel err {worst:.2e}; failed: {bad[:5]}", flush=True)  # fmt: skip
    s = 4096
    A = torch.randn((s, s), generator=gen, device="cuda").to(torch.float8_e4m3fn)
    B = torch.randn((s, s), generator=gen, device="cuda").to(torch.float8_e4m3fn).t()
    ref = A.double() @ B.double()
    for name, cfg in TIMED.items():
        res["precision"][name] = _rel(gemm_sm90(A, B, out_dtype=torch.float32, config=cfg), ref)
    for fast in (False, True):
        D = torch._scaled_mm(A, B, one, one, out_dtype=torch.float32, use_fast_accum=fast)
        res["precision"][f"scaled_mm_fast{int(fast)}"] = _rel(D, ref)
    del ref
    print("rel err f32 out, 4096^3:",
          json.dumps({k: f"{v:.2e}" for k, v in res["precision"].items()}), flush=True)  # fmt: skip
    json.dump(res, open(path, "w"), indent=1)
    for s in (8192, 4096):
        A = torch.randn((s, s), generator=gen, device="cuda").to(torch.float8_e4m3fn)
        B = torch.randn((s, s), generator=gen, device="cuda").to(torch.float8_e4m3fn).t()
        D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
        if s == 8192:
            res["scaled_mm_kernels_8192"] = cublas_kernel(A, B, one)
            print("_scaled_mm kernels at 8192^3:", res["scaled_mm_kernels_8192"], flush=True)
        cases = {}
        for name, cfg in TIMED.items():
            cases[name] = lambda A=A, B=B, D=D, cfg=cfg: gemm_sm90(A, B, out=D, config=cfg)
            cases[f"scaled_mm_after_{name}"] = lambda A=A, B=B: torch._scaled_mm(
                A, B, one, one, out_dtype=torch.bfloat16
            )
        rounds = gpu_timing.rounds(cases, 2.0 * s**3)
        med = {k: statistics.median(v) for k, v in rounds.items()}
        base = statistics.median(
            [v for k, vs in rounds.items() if k.startswith("scaled") for v in vs]
        )
        ratio = {k: med[k] / base for k in TIMED}
        res["rows"].append({"size": s, "rounds": rounds, "median": med, "scaled_mm": base,
                            "ratio": ratio})  # fmt: skip
        print(f"e4m3 {s}^3 (_scaled_mm {base:.0f} TFLOP/s): "
              + ", ".join(f"{k} {med[k]:.0f} ({ratio[k]:.3f})" for k in TIMED), flush=True)  # fmt: skip
        json.dump(res, open(path, "w"), indent=1)


def sanitize() -> None:
    torch.manual_seed(0)
    worst = 0.0
    for cfg in OVERLAP:
        for m, n, k in [(1, 8, 16), (136, 264, 208), (300, 520, 1008)]:
            A = torch.randn(m, k).cuda().to(torch.float8_e4m3fn)
            B = torch.randn(n, k).cuda().to(torch.float8_e4m3fn).t()
            ref = A.double() @ B.double()
            for out_dtype in (torch.float32, torch.bfloat16):
                worst = max(worst, _rel(gemm_sm90(A, B, out_dtype=out_dtype, config=cfg), ref))
    torch.cuda.synchronize()
    print(f"overlap sanitize run done; worst rel err {worst:.2e}")


if __name__ == "__main__":
    sanitize() if sys.argv[1:] == ["sanitize"] else main(sys.argv[1])
