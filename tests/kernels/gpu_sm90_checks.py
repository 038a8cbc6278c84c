"""GPU correctness and speed of the sm90 GEMM against torch (run as a script; torch first).

    python tests/kernels/gpu_sm90_checks.py OUT.json [--quick]

Correctness: fresh random inputs per check, the output poisoned with NaN before each run
and required fully written, ||D - ref|| / ||ref|| against float64 on the upcast inputs
within the output format's bound; every major pair, both configs, f16/bf16, f32 output,
alpha/beta with C, shapes with edges in M, N and K (TMA zero fill), a NaN in A reaching D.
Speed: L2-flushed medians (triton.testing.do_bench) of cutemma sm90, cutemma sm80 and
torch.matmul (cuBLAS) on the same tensors in this process, reported as ratios.
Exits 1 if any check fails.
"""

from __future__ import annotations

import faulthandler
import json
import random
import sys
import time
import traceback

import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

from cutemma.kernels.dispatch_sm90 import gemm_sm90
from cutemma.kernels.plan_sm90 import Sm90Config

BOUND = {torch.float32: 1e-5, torch.float16: 1.5e-3, torch.bfloat16: 1e-2}
CONFIGS = [Sm90Config(128, 128), Sm90Config(128, 256)]
MAJORS = [("K", "K"), ("K", "N"), ("M", "K"), ("M", "N")]


def operand(rows, cols, contiguous_rows, dtype, gen):
    """(rows, cols); rows contiguous (column-major) when contiguous_rows."""
    if contiguous_rows:
        return torch.randn((cols, rows), generator=gen, device="cuda").to(dtype).t()
    return torch.randn((rows, cols), generator=gen, device="cuda").to(dtype)


def shapes_for(am, bm, rng, count):
    """Random (M, N, K) whose TMA-contiguous extents are multiples of 8 (16-byte strides)."""
    fixed = [(1, 8, 8), (8, 8, 8), (13, 24, 72), (128, 128, 64), (129, 257, 136), (200, 72, 8),
             (1000, 1000, 1000), (256, 512, 4096), (777, 640, 264), (64, 1032, 520)]  # fmt: skip
    out = []
    for m, n, k in fixed + [
        (rng.randint(1, 2100), rng.randint(1, 2100), rng.randint(1, 1100)) for _ in range(count)
    ]:
        k = -(-k // 8) * 8  # A K-major or B K-major both need it; M/N-major need M/N
        if am == "M":
            m = -(-m // 8) * 8
        if bm == "N":
            n = -(-n // 8) * 8
        out.append((m, n, k))
    return out


def check(m, n, k, dtype, am, bm, config, gen, out_dtype=None, beta=0.0, alpha=1.0, nan=False):
    A = operand(m, k, am == "M", dtype, gen)
    B = operand(k, n, bm == "K", dtype, gen)
    out_dtype = out_dtype or dtype
    C = torch.randn((m, n), generator=gen, device="cuda").to(out_dtype) if beta else None
    if nan:
        A[m // 2, k // 2] = float("nan")
    out = torch.full((m, n), float("nan"), dtype=out_dtype, device="cuda")
    gemm_sm90(A, B, C, alpha=alpha, beta=beta, out=out, config=config)
    torch.cuda.synchronize()
    ref = alpha * (A.double() @ B.double())
    if C is not None:
        ref += beta * C.double()
    case = {"m": m, "n": n, "k": k, "dtype": str(dtype)[6:], "out": str(out_dtype)[6:],
            "majors": am + bm, "config": config.name, "alpha": alpha, "beta": beta}  # fmt: skip
    if nan:
        row_nan = bool(torch.isnan(out[m // 2]).all())
        others = torch.cat([out[: m // 2], out[m // 2 + 1 :]])
        ok = row_nan and bool(torch.isfinite(others).all())
        return {**case, "nan_row_propagates": row_nan, "ok": ok}
    written = bool(torch.isfinite(out.double()).all())
    err = float((out.double() - ref).norm() / ref.norm().clamp_min(1e-30))
    return {**case, "rel_err": err, "fully_written": written,
            "ok": written and err <= BOUND[out_dtype]}  # fmt: skip


def correctness(quick: bool) -> list[dict]:
    rng = random.Random(12)
    gen = torch.Generator(device="cuda").manual_seed(12)
    rows = []
    for dtype in (torch.bfloat16, torch.float16):
        for am, bm in MAJORS:
            for cfg in CONFIGS:
                for m, n, k in shapes_for(am, bm, rng, 2 if quick else 8):
                    rows.append(check(m, n, k, dtype, am, bm, cfg, gen))
                m, n, k = shapes_for(am, bm, rng, 0)[4]
                rows.append(check(m, n, k, dtype, am, bm, cfg, gen, torch.float32, 0.5, 1.5))
                rows.append(check(m, n, k, dtype, am, bm, cfg, gen, dtype, -1.0, 0.75))
                rows.append(check(m, n, k, dtype, am, bm, cfg, gen, nan=True))
    return rows


def bench(quick: bool) -> dict:
    import triton.testing as tt

    from cutemma.kernels.dispatch import gemm as gemm_sm80

    def ms(fn):
        return tt.do_bench(fn, warmup=25, rep=100 if not quick else 40, return_mode="median")

    # noqa B023 below: each lambda is timed (called) before the loop variables move on

    out = {"rows": [], "ablation": []}
    gen = torch.Generator(device="cuda").manual_seed(1)
    sizes = [1024, 2048, 4096, 6144, 8192] if not quick else [4096, 8192]
    for s in sizes:
        for am, bm in (("K", "K"), ("K", "N")):
            A = operand(s, s, am == "M", torch.bfloat16, gen)
            B = operand(s, s, bm == "K", torch.bfloat16, gen)
            D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
            flop = 2.0 * s**3
            t_cublas = ms(lambda: torch.matmul(A, B, out=D))  # noqa: B023
            row = {"m": s, "n": s, "k": s, "dtype": "bf16", "majors": am + bm,
                   "cublas_tflops": flop / t_cublas / 1e9}  # fmt: skip
            for cfg in CONFIGS:
                t = ms(lambda cfg=cfg: gemm_sm90(A, B, out=D, config=cfg))  # noqa: B023
                row[f"sm90_{cfg.name}_tflops"] = flop / t / 1e9
            if s in (4096, 8192):
                t = ms(lambda: gemm_sm80(A, B, out=D))  # noqa: B023
                row["sm80_default_tflops"] = flop / t / 1e9
            t2 = ms(lambda: torch.matmul(A, B, out=D))  # noqa: B023
            row["cublas_again_tflops"] = flop / t2 / 1e9
            best = max(v for k_, v in row.items() if k_.startswith("sm90_"))
            row["best_sm90_over_cublas"] = best / max(
                row["cublas_tflops"], row["cublas_again_tflops"]
            )
            out["rows"].append(row)
            print(json.dumps(row), flush=True)
    # ablation at 8192^3 bf16 KK: what each knob buys
    s = 8192
    A = operand(s, s, False, torch.bfloat16, gen)
    B = operand(s, s, True, torch.bfloat16, gen)
    D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
    flop = 2.0 * s**3
    variants = [
        ("128x256 persistent grouped(8) auto stages", Sm90Config(128, 256), True),
        ("128x256 non-persistent (one CTA per tile)", Sm90Config(128, 256), False),
        ("128x256 raster group_m=1 (row-major tiles)", Sm90Config(128, 256, group_m=1), True),
        ("128x256 2 stages", Sm90Config(128, 256, stages=2), True),
        ("128x256 3 stages", Sm90Config(128, 256, stages=3), True),
        ("128x128 persistent auto stages", Sm90Config(128, 128), True),
        ("128x128 1 consumer warpgroup (64x128 tiles)", Sm90Config(64, 128, consumers=1), True),
    ]
    t_cublas = ms(lambda: torch.matmul(A, B, out=D))  # noqa: B023
    out["ablation_cublas_tflops"] = flop / t_cublas / 1e9
    for what, cfg, pers in variants:
        try:
            t = ms(lambda cfg=cfg, pers=pers: gemm_sm90(A, B, out=D, config=cfg, persistent=pers))
            r = {"variant": what, "config": cfg.name, "tflops": flop / t / 1e9}
        except Exception as exc:  # a variant that does not build is reported, not fatal
            r = {"variant": what, "config": cfg.name, "error": f"{type(exc).__name__}: {exc}"}
        out["ablation"].append(r)
        print(json.dumps(r), flush=True)
    return out


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "gpu_sm90.json"
    quick = "--quick" in sys.argv
    faulthandler.dump_traceback_later(420, exit=True)  # a hung kernel: say where, then stop
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    t = time.perf_counter()
    try:
        rows = correctness(quick)
    except Exception:
        traceback.print_exc()
        rows = [{"ok": False, "error": traceback.format_exc()}]
    result["correctness_s"] = time.perf_counter() - t
    bad = [r for r in rows if not r["ok"]]
    result["checks"], result["failed"] = len(rows), bad
    print(
        f"correctness: {len(rows) - len(bad)}/{len(rows)} pass in {result['correctness_s']:.1f} s"
    )
    for r in bad[:10]:
        print("FAIL", json.dumps(r)[:400])
    json.dump(result, open(path, "w"), indent=1)
    if not bad and "--no-bench" not in sys.argv:
        result["bench"] = bench(quick)
    result["all_checks"] = rows
    json.dump(result, open(path, "w"), indent=1)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
