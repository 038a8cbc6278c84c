"""Interleaved timing of sm90 GEMM variants against cuBLAS (run as a script on the GPU).

    python bench/experiments/sm90_variants.py OUT.json [SIZE ...]

For each square bf16 size (default 8192 4096), A row-major and B row-major (torch's usual
layout, 'KN') and B column-major ('KK'): cuBLAS (torch.matmul) and each variant timed in 5
interleaved rounds of triton.testing.do_bench medians (L2 flushed), the same tensors, one
process. Prints TFLOP/s medians and ratios to cuBLAS; writes every round to OUT.json.
"""

from __future__ import annotations

import sys as _sys  # the GPU checks' helpers (gpu_timing) live in tests/kernels
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests" / "kernels"))
_sys.path.insert(0, str(_Path(__file__).resolve().parent))
import json
import statistics
import sys

import torch  # before cutemma's CUDA modules (see notes/CUDA.md)
from gpu_timing import rounds  # beside this script

from cutemma.kernels.dispatch import gemm as gemm_sm90
from cutemma.kernels.sm90.plan import Sm90Config

VARIANTS = {
    "tma_epi_128x256": Sm90Config(128, 256),
    "regs_epi_128x256": Sm90Config(128, 256, epilogue="regs"),
    "regs_epi_128x256_s3": Sm90Config(128, 256, stages=3, epilogue="regs"),
    "tma_epi_256x128": Sm90Config(256, 128),
    "tma_epi_128x128": Sm90Config(128, 128),
}
CLUSTER = {"tma_epi_128x256_x2": Sm90Config(128, 256, cluster=2)}  # B K-major only


def main() -> None:
    path = sys.argv[1]
    sizes = [int(s) for s in sys.argv[2:]] or [8192, 4096]
    gen = torch.Generator(device="cuda").manual_seed(5)
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": []}
    for s in sizes:
        for bm in ("N", "K"):
            A = torch.randn((s, s), generator=gen, device="cuda").bfloat16()
            B = torch.randn((s, s), generator=gen, device="cuda").bfloat16()
            if bm == "K":
                B = B.t()
            D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
            ref = torch.matmul(A, B)
            cases = {"cublas": lambda A=A, B=B, D=D: torch.matmul(A, B, out=D)}
            variants = dict(VARIANTS, **(CLUSTER if bm == "K" else {}))
            for name, cfg in variants.items():
                try:
                    gemm_sm90(A, B, out=D, config=cfg)
                    err = float((D.float() - ref.float()).norm() / ref.float().norm())
                    if not err < 1e-2:
                        print(f"{s} K{bm} {name}: WRONG rel err {err}", flush=True)
                        continue
                except Exception as exc:  # a variant that does not build is reported
                    print(f"{s} K{bm} {name}: {type(exc).__name__}: {exc}", flush=True)
                    continue
                cases[name] = lambda A=A, B=B, D=D, cfg=cfg: gemm_sm90(A, B, out=D, config=cfg)
            r = rounds(cases, 2.0 * s**3)
            med = {k: statistics.median(v) for k, v in r.items()}
            row = {"size": s, "majors": "K" + bm, "rounds": r, "median": med}
            res["rows"].append(row)
            line = ", ".join(
                f"{k} {v:.0f} ({v / med['cublas']:.3f})" for k, v in med.items() if k != "cublas"
            )
            print(f"{s}^3 K{bm}: cublas {med['cublas']:.0f}; {line}", flush=True)
            json.dump(res, open(path, "w"), indent=1)


if __name__ == "__main__":
    main()
