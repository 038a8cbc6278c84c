"""fp8 e4m3 on sm90: promoted vs fast accumulation, against torch._scaled_mm (a script).

    python bench/experiments/sm90_fp8.py OUT.json [SIZE ...]

Per square size (default 8192 4096), A row-major, B column-major (K-major both, what fp8
wgmma reads), bf16 output: torch._scaled_mm with per-tensor scales of 1 (its default
accumulation, and use_fast_accum=True) and cutemma's sm90 variants, 5 interleaved rounds
of do_bench medians. Precision: rel. error of f32 output against float64 at 4096^3.
"""

from __future__ import annotations

import sys as _sys  # the GPU checks' helpers (gpu_timing) live in tests/kernels
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests" / "kernels"))
_sys.path.insert(0, str(_Path(__file__).resolve().parent))
import json
import sys

import gpu_timing  # beside this script
import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

from cutemma.kernels.dispatch import gemm as gemm_sm90
from cutemma.kernels.sm90.plan import Sm90Config

VARIANTS = {
    "promoted_128x128": Sm90Config(128, 128),
    "promoted_128x128_x2": Sm90Config(128, 128, cluster=2),
    "promoted_192x128_c3": Sm90Config(192, 128, consumers=3),
    "fastacc_128x256": Sm90Config(128, 256, promote=False),
    "fastacc_128x128": Sm90Config(128, 128, promote=False),
}


def main() -> None:
    path = sys.argv[1]
    sizes = [int(s) for s in sys.argv[2:]] or [8192, 4096]
    gen = torch.Generator(device="cuda").manual_seed(8)
    one = torch.ones((), device="cuda")
    res = {"device": torch.cuda.get_device_name(), "rows": [], "precision": {}}
    # precision at 4096^3, f32 out
    s = 4096
    A = torch.randn((s, s), generator=gen, device="cuda").to(torch.float8_e4m3fn)
    B = torch.randn((s, s), generator=gen, device="cuda").to(torch.float8_e4m3fn).t()
    ref = A.double() @ B.double()
    for name, cfg in VARIANTS.items():
        D = gemm_sm90(A, B, out_dtype=torch.float32, config=cfg)
        res["precision"][name] = float((D.double() - ref).norm() / ref.norm())
    for fast in (False, True):
        D = torch._scaled_mm(A, B, one, one, out_dtype=torch.float32, use_fast_accum=fast)
        res["precision"][f"scaled_mm_fast{int(fast)}"] = float(
            (D.double() - ref).norm() / ref.norm()
        )
    print(
        "rel err f32 out, 4096^3:", json.dumps({k: f"{v:.1e}" for k, v in res["precision"].items()})
    )
    # 3 consumer warpgroups: edges in M, N, K, both output types, poisoned output
    checks = []
    for dt in (torch.float8_e4m3fn, torch.bfloat16):
        cfg = Sm90Config(192, 128, consumers=3)
        for m, n, k in [(1, 8, 16), (193, 136, 272), (577, 1000, 1040), (2000, 384, 4096)]:
            for out_dtype in (torch.float32, torch.bfloat16):
                A = torch.randn((m, k), generator=gen, device="cuda").to(dt)
                B = torch.randn((n, k), generator=gen, device="cuda").to(dt).t()
                D = torch.full((m, n), float("nan"), device="cuda", dtype=out_dtype)
                gemm_sm90(A, B, out=D, config=cfg, alpha=0.5)
                ref = 0.5 * (A.double() @ B.double())
                err = float((D.double() - ref).norm() / ref.norm())
                bound = 3e-4 if out_dtype == torch.float32 else 1e-2
                ok = bool(torch.isfinite(D).all()) and err < bound
                checks.append({"config": cfg.name, "dtype": str(dt), "out": str(out_dtype),
                               "mnk": [m, n, k], "rel_err": err, "ok": ok})  # fmt: skip
    res["checks_c3"] = checks
    print(f"c3 checks: {sum(c['ok'] for c in checks)} / {len(checks)}", flush=True)
    for s in sizes:
        res["rows"].append(gpu_timing.e4m3_square(s, VARIANTS, gen, fast_peer=True))
        json.dump(res, open(path, "w"), indent=1)


if __name__ == "__main__":
    main()
