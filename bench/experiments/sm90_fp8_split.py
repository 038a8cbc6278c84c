"""Promoted fp8 by N halves (``promote="split"``) against the promoted default (a script).

    python bench/experiments/sm90_fp8_split.py OUT.json [--more]

Checks each variant on edge shapes (NaN-poisoned f32 output, rel. error < 3e-4 against
float64 of the upcast inputs; e4m3 and e5m2), the precision at 4096^3 against the promoted
default and _scaled_mm, then times e4m3 8192^3 / 6144^3 / 4096^3 with bf16 output against
torch._scaled_mm (per-tensor scales, its default promoted accumulation) in 5 interleaved
rounds of do_bench medians. Fast accumulation rows show what promotion costs each tile.
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

VARIANTS = {
    "128x192": Sm90Config(128, 192),
    "128x192_split": Sm90Config(128, 192, promote="split"),
    "128x128_split": Sm90Config(128, 128, promote="split"),
    "128x192_x2b": Sm90Config(128, 192, cluster=2),
    "128x192_fast": Sm90Config(128, 192, promote=False),
    "128x256_fast": Sm90Config(128, 256, promote=False),
}
CHECKED = ("128x192_split", "128x128_split")  # (split in clusters of 2: refused since)
# ``--more``: variants of the default around it, 8192^3 only, 9 rounds
MORE = {
    "128x192_split": Sm90Config(128, 192, promote="split"),
    "128x192_split_tma2": Sm90Config(128, 192, promote="split", epilogue="tma2"),  # 5 stages
    "128x192_tma2": Sm90Config(128, 192, epilogue="tma2"),
    "128x192_fast": Sm90Config(128, 192, promote=False),
    "128x192_fast_tma2": Sm90Config(128, 192, promote=False, epilogue="tma2"),
}
# bf16 with the half staging tile ("tma2": 128x256 gets 4 stages instead of 3), --more too
MORE_BF16 = {
    "128x256": Sm90Config(128, 256),
    "128x256_tma2": Sm90Config(128, 256, epilogue="tma2"),
}


def rel_err(D, A, B) -> float:
    ref = A.double() @ B.double()
    return float((D.double() - ref).norm() / ref.norm())


def check_16bit_out(gen, res) -> None:
    """The "tma2" variants on edge shapes with bf16/f16 output (the TMA-store path), both
    passes and the clipped edges: NaN-poisoned, rel. error < 5e-3 (bf16 rounding)."""
    shapes = [(1, 8, 16), (300, 290, 272), (1031, 1000, 1040), (129, 200, 4096), (64, 100, 128)]
    cases = [(n, c, torch.float8_e4m3fn) for n, c in MORE.items() if c.epilogue == "tma2"]
    cases += [(n, c, torch.bfloat16) for n, c in MORE_BF16.items() if c.epilogue == "tma2"]
    for name, cfg, dt in cases:
        outs = (torch.bfloat16, torch.float16) if dt != torch.bfloat16 else (torch.bfloat16,)
        for out in outs:
            for m, n, k in shapes:
                A = torch.randn((m, k), generator=gen, device="cuda").to(dt)
                B = torch.randn((n, k), generator=gen, device="cuda").to(dt).t()
                D = torch.full((m, n), float("nan"), device="cuda", dtype=out)
                gemm_sm90(A, B, out=D, config=cfg)
                err = rel_err(D, A, B)
                ok = bool(torch.isfinite(D).all()) and err < 5e-3
                res["checks"].append({"config": name, "dtype": str(dt), "out": str(out),
                                      "mnk": [m, n, k], "rel_err": err, "ok": ok})  # fmt: skip
    bad = [c for c in res["checks"] if not c["ok"]]
    print(f"checks {len(res['checks']) - len(bad)} / {len(res['checks'])}; failed {bad}")


def more() -> None:
    gen = torch.Generator(device="cuda").manual_seed(23)
    res = {"device": torch.cuda.get_device_name(), "checks": []}
    check_16bit_out(gen, res)
    s = 8192
    res.update(gpu_timing.e4m3_square(s, MORE, gen, n=9))
    D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
    A16 = torch.randn((s, s), generator=gen, device="cuda", dtype=torch.bfloat16)
    B16 = torch.randn((s, s), generator=gen, device="cuda", dtype=torch.bfloat16)
    cases = {"matmul": lambda: torch.matmul(A16, B16, out=D)}
    for name, cfg in MORE_BF16.items():
        cases[name] = lambda cfg=cfg: gemm_sm90(A16, B16, out=D, config=cfg)
    r16 = gpu_timing.rounds(cases, 2.0 * s**3, n=7)
    m16 = {k: statistics.median(v) for k, v in r16.items()}
    print(
        f"bf16 {s}^3: "
        + ", ".join(f"{k} {v:.0f} ({v / m16['matmul']:.3f})" for k, v in m16.items())
    )
    res.update({"bf16_rounds": r16, "bf16_median": m16})
    json.dump(res, open(sys.argv[1], "w"), indent=1)


def main() -> None:
    if "--more" in sys.argv:
        return more()
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
        res["rows"].append(gpu_timing.e4m3_square(s, VARIANTS, gen))
        json.dump(res, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
