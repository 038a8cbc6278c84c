"""(issue 21; raw/decode-stages-run6.json: `OUT=DIR python bench/experiments/decode_stages.py`)
Decode configs with B's bytes in flight per SM capped (64 or 96 KiB of weights) against
the built-in (8 stages), every decode shape, 5 interleaved rounds of L2-flushed medians."""

# ruff: noqa: B023 -- each iteration times its own closures before the next rebinds them

import sys as _sys  # the GPU checks' helpers (gpu_timing) live in tests/kernels
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests" / "kernels"))
_sys.path.insert(0, str(_Path(__file__).resolve().parent))
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, "tests/kernels")
sys.path.insert(0, "bench")
import triton.testing as tt
from sk_probe import BF, E4, make

from cutemma.kernels.dispatch import gemm as gemm_sm90
from cutemma.kernels.sm90.config import Sm90Config as C
from cutemma.kernels.space import swapped_kernel

res = []
one = torch.ones((), device="cuda")


def capped(c, es, cap):
    kb = (c.block_k * es) if c.block_k else 128
    return C(**{**c.__dict__, "stages": max(2, min(8, cap // (c.block_m * kb)))})


for dt in ("e4m3", "bf16"):
    for n, k in [(10240, 8192), (8192, 8192), (8192, 28672), (57344, 8192)]:
        fp8 = dt == "e4m3"
        dtype = E4 if fp8 else BF
        es = 1 if fp8 else 2
        B = make(k, n, fp8, dtype)
        for m in (1, 16, 32, 64):
            base = swapped_kernel(m, n, k, dt, 132, whole=132 < -(-n // 64) < 264)
            if base is None:
                continue
            A = make(m, k, False, dtype)
            out = torch.empty(m, n, device="cuda", dtype=BF)
            cands = {
                "built-in": base,
                "cap64": capped(base, es, 64 << 10),
                "cap96": capped(base, es, 96 << 10),
            }
            fns = {}
            for name, c in cands.items():
                cu = C(**{**c.__dict__, "swap_ab": False})
                fns[name] = lambda cu=cu: gemm_sm90(B.t(), A.t(), out=out.t(), config=cu)
                fns[name]()
                torch.cuda.synchronize()
            fns["peer"] = (
                (lambda: torch._scaled_mm(A, B, one, one, out_dtype=BF))
                if fp8
                else (lambda: torch.matmul(A, B, out=out))
            )
            times = {nm: [] for nm in fns}
            for r in range(5):
                for nm in list(fns) if r % 2 == 0 else list(fns)[::-1]:
                    times[nm].append(
                        tt.do_bench(fns[nm], warmup=5, rep=30, return_mode="median") * 1e3
                    )
            med = {nm: round(statistics.median(v), 2) for nm, v in times.items()}
            row = {
                "dt": dt,
                "m": m,
                "n": n,
                "k": k,
                "names": {a: c.name for a, c in cands.items()},
                "us": med,
            }
            res.append(row)
            print(
                dt,
                m,
                n,
                k,
                {a: c.stages for a, c in cands.items()},
                med,
                "cap64 gain {:.3f} cap96 gain {:.3f}".format(
                    med["built-in"] / med["cap64"], med["built-in"] / med["cap96"]
                ),
                flush=True,
            )
            A = out = None
        B = None
        torch.cuda.empty_cache()
json.dump(res, open(os.environ["OUT"] + "/confirm.json", "w"), indent=1)
