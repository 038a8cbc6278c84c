"""Pingpong and 3-consumer sm90 configs on the GPU: edge-shape checks, then timing (a script).

    python bench/experiments/sm90_pingpong.py OUT.json [checks] [fp8] [bf16]

checks: every config of CHECKS on shapes with edges in M (not a multiple of the tile, M =
1), N and K (TMA zero fill), tile counts that leave a pingpong CTA an odd number of tiles,
fp8 (e4m3, e5m2) with f32/bf16/f16 out, bf16 in either major, alpha, beta with C (the
register epilogue), a NaN planted in A; output poisoned with NaN, rel. error against
float64 within the format's bound. fp8 / bf16: interleaved rounds (5 x do_bench median,
L2 flushed) of the variants against torch._scaled_mm (per-tensor scales, default
accumulation) / torch.matmul on the same tensors, one process. Exits 1 if a check fails.
"""

from __future__ import annotations

import sys as _sys  # the GPU checks' helpers (gpu_timing) live in tests/kernels
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests" / "kernels"))
_sys.path.insert(0, str(_Path(__file__).resolve().parent))
import json
import statistics
import sys
import traceback

import torch  # before cutemma's CUDA modules (see notes/CUDA.md)
from gpu_timing import rounds  # beside this script

from cutemma.kernels.dispatch import gemm as gemm_sm90
from cutemma.kernels.sm90.plan import Sm90Config

PP = "pingpong"
FP8_CHECKS = [
    Sm90Config(192, 128, consumers=3),
    Sm90Config(128, 192),
    Sm90Config(64, 128, schedule=PP),
    Sm90Config(128, 64, schedule=PP),
    Sm90Config(64, 192, schedule=PP),
    Sm90Config(64, 256, schedule=PP, promote=False),
    Sm90Config(128, 192, schedule="alternate"),
    Sm90Config(192, 128, consumers=3, schedule="alternate"),
    Sm90Config(128, 128, schedule="alternate"),
]
BF16_CHECKS = [
    Sm90Config(128, 128, schedule=PP),
    Sm90Config(64, 256, schedule=PP),
    Sm90Config(128, 128, schedule=PP, epilogue="regs"),
    Sm90Config(192, 128, consumers=3),
    Sm90Config(128, 256, schedule="alternate"),
]
SHAPES = [(1, 8, 16), (1, 136, 4096), (193, 136, 272), (577, 1000, 1040), (2000, 384, 4096),
          (3000, 2056, 256), (4096, 1024, 128), (130, 264, 48)]  # fmt: skip
# run 14 timed more variants (c3 with 3 stages / group_m 16, pingpong 128x64, 64x192),
# run 15 the register epilogue and group_m 4 (raw/sm90-pingpong-run1{4,5}.json); run 16:
ALT = "alternate"
FP8_TIMED = {
    "promoted_128x128": Sm90Config(128, 128),
    "alt_128x128": Sm90Config(128, 128, schedule=ALT),
    "c2_128x192": Sm90Config(128, 192),
    "alt_128x192": Sm90Config(128, 192, schedule=ALT),
    "c3_192x128": Sm90Config(192, 128, consumers=3),
    "alt_c3_192x128": Sm90Config(192, 128, consumers=3, schedule=ALT),
    "fastacc_128x256": Sm90Config(128, 256, promote=False),
}
BF16_TIMED = {
    "coop_128x256": Sm90Config(128, 256),
    "alt_128x256": Sm90Config(128, 256, schedule=ALT),
    "pp_128x128": Sm90Config(128, 128, schedule=PP),
    "pp_128x128_s4": Sm90Config(128, 128, schedule=PP, stages=4),
    "coop_128x128": Sm90Config(128, 128),
}


def bound(in_dtype, out_dtype, cfg) -> float:
    if out_dtype == torch.float32:
        if in_dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            return 3e-4 if cfg.promote else 3e-3
        return 1e-5
    return 1.5e-3 if out_dtype == torch.float16 else 1e-2


def one_check(cfg, dt, m, n, k, out_dtype, gen, majors=("K", "K"), beta=0.0, nan=False):
    def operand(rows, cols, contiguous_rows):
        if contiguous_rows:
            return torch.randn((cols, rows), generator=gen, device="cuda").to(dt).t()
        return torch.randn((rows, cols), generator=gen, device="cuda").to(dt)

    A = operand(m, k, majors[0] == "M")
    B = operand(k, n, majors[1] == "K")
    if nan:
        A[m // 2, k // 3] = float("nan")
    C = torch.randn((m, n), generator=gen, device="cuda").to(out_dtype) if beta else None
    D = torch.full((m, n), float("nan"), device="cuda", dtype=out_dtype)
    gemm_sm90(A, B, C, out=D, config=cfg, alpha=0.5, beta=beta)
    ref = 0.5 * (A.double() @ B.double())
    if beta:
        ref += beta * C.double()
    if nan:
        row = D[m // 2]
        ok = bool(torch.isnan(row).all()) and bool(
            torch.isfinite(torch.cat([D[: m // 2], D[m // 2 + 1 :]])).all()
        )
        err = 0.0
    else:
        err = float((D.double() - ref).norm() / ref.norm())
        ok = bool(torch.isfinite(D).all()) and err < bound(dt, out_dtype, cfg)
    return {"config": cfg.name, "dtype": str(dt), "out": str(out_dtype), "mnk": [m, n, k],
            "majors": "".join(majors), "beta": beta, "nan": nan, "rel_err": err, "ok": ok}  # fmt: skip


def checks(gen) -> list[dict]:
    out = []
    fp8_outs = (torch.float32, torch.bfloat16, torch.float16)
    for cfg in FP8_CHECKS:
        for i, (m, n, k) in enumerate(SHAPES):
            dt = torch.float8_e5m2 if i % 3 == 2 else torch.float8_e4m3fn
            for od in fp8_outs:
                out.append(one_check(cfg, dt, m, n, k, od, gen, beta=0.25 if i % 2 else 0.0))
        out.append(
            one_check(cfg, torch.float8_e4m3fn, 300, 264, 512, torch.bfloat16, gen, nan=True)
        )
    for cfg in BF16_CHECKS:
        for i, (m, n, k) in enumerate(SHAPES):
            majors = [("K", "K"), ("K", "N"), ("M", "K"), ("M", "N")][i % 4]
            m8, n8 = -(-m // 8) * 8 if majors[0] == "M" else m, n
            for od in (torch.float32, torch.bfloat16):
                out.append(one_check(cfg, torch.bfloat16, m8, n8, k, od, gen, majors,
                                     beta=0.25 if i % 2 else 0.0))  # fmt: skip
        out.append(one_check(cfg, torch.bfloat16, 300, 264, 512, torch.bfloat16, gen, nan=True))
    return out


def add_checked(cases, variants, A, B, D, ref, label) -> None:
    """Add each variant to ``cases`` (timed) once its result is within 1e-2 of ``ref``;
    a wrong or failing one is printed and left out."""
    for name, cfg in variants.items():
        try:
            gemm_sm90(A, B, out=D, config=cfg)
            err = float((D.float() - ref).norm() / ref.norm())
            if not err < 1e-2:
                print(f"{label} {name}: WRONG {err}", flush=True)
                continue
        except Exception as exc:
            print(f"{label} {name}: {type(exc).__name__}: {exc}", flush=True)
            continue
        cases[name] = lambda cfg=cfg: gemm_sm90(A, B, out=D, config=cfg)


def timing_fp8(gen, res, sizes=(8192, 4096, 6144)) -> None:
    one = torch.ones((), device="cuda")
    for s in sizes:
        A = torch.randn((s, s), generator=gen, device="cuda").to(torch.float8_e4m3fn)
        B = torch.randn((s, s), generator=gen, device="cuda").to(torch.float8_e4m3fn).t()
        D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
        ref = torch._scaled_mm(A, B, one, one, out_dtype=torch.bfloat16).float()
        cases = {"scaled_mm": lambda A=A, B=B: torch._scaled_mm(A, B, one, one, out_dtype=torch.bfloat16),
                 "scaled_mm_fastacc": lambda A=A, B=B: torch._scaled_mm(
                     A, B, one, one, out_dtype=torch.bfloat16, use_fast_accum=True)}  # fmt: skip
        add_checked(cases, FP8_TIMED, A, B, D, ref, f"fp8 {s}")
        r = rounds(cases, 2.0 * s**3, 7)
        med = {k: statistics.median(v) for k, v in r.items()}
        res["fp8"].append({"size": s, "rounds": r, "median": med})
        print(f"e4m3 {s}^3 vs scaled_mm {med['scaled_mm']:.0f}: " + ", ".join(
            f"{k} {v:.0f} ({v / med['scaled_mm']:.3f})" for k, v in med.items()), flush=True)  # fmt: skip


def timing_bf16(gen, res, sizes=(8192, 4096)) -> None:
    for s in sizes:
        A = torch.randn((s, s), generator=gen, device="cuda").bfloat16()
        B = torch.randn((s, s), generator=gen, device="cuda").bfloat16()
        D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
        ref = torch.matmul(A, B).float()
        cases = {"cublas": lambda A=A, B=B, D=D: torch.matmul(A, B, out=D)}
        add_checked(cases, BF16_TIMED, A, B, D, ref, f"bf16 {s}")
        r = rounds(cases, 2.0 * s**3, 7)
        med = {k: statistics.median(v) for k, v in r.items()}
        res["bf16"].append({"size": s, "majors": "KN", "rounds": r, "median": med})
        print(f"bf16 {s}^3 KN vs cublas {med['cublas']:.0f}: " + ", ".join(
            f"{k} {v:.0f} ({v / med['cublas']:.3f})" for k, v in med.items()), flush=True)  # fmt: skip


def main() -> None:
    path = sys.argv[1]
    what = sys.argv[2:] or ["checks", "fp8", "bf16"]
    gen = torch.Generator(device="cuda").manual_seed(12)
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "checks": [],
           "fp8": [], "bf16": []}  # fmt: skip
    failed = 0
    if "checks" in what:
        try:
            res["checks"] = checks(gen)
        except Exception:
            traceback.print_exc()
            failed += 1
        bad = [c for c in res["checks"] if not c["ok"]]
        failed += len(bad)
        worst = {}
        for c in res["checks"]:
            worst[c["config"]] = max(worst.get(c["config"], 0.0), c["rel_err"])
        print(f"checks: {len(res['checks']) - len(bad)} / {len(res['checks'])} pass; worst "
              + json.dumps({k: f"{v:.1e}" for k, v in worst.items()}), flush=True)  # fmt: skip
        for c in bad[:20]:
            print("FAIL", c, flush=True)
        json.dump(res, open(path, "w"), indent=1)
    if "fp8" in what:
        timing_fp8(gen, res)
        json.dump(res, open(path, "w"), indent=1)
    if "bf16" in what:
        timing_bf16(gen, res)
        json.dump(res, open(path, "w"), indent=1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
