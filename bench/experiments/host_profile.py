"""Where a repeated cutemma.gemm call spends its host time (run as a script on the GPU machine).

    python bench/experiments/host_profile.py [calls]

Times 2000 back-to-back calls of a 128^3 bf16 product (GPU work ~ nothing) through
cutemma.gemm, gemm_sm90 and torch.matmul, then prints cProfile's top entries of the
cutemma.gemm loop: the next session's map for the issue's 5 us target.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time

import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

import cutemma
from cutemma.kernels.dispatch import gemm as gemm_sm90


def per_call_us(fn, calls: int) -> float:
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    dt = time.perf_counter() - t
    torch.cuda.synchronize()
    return dt / calls * 1e6


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    A = torch.randn(128, 128, device="cuda").bfloat16()
    B = torch.randn(128, 128, device="cuda").bfloat16()
    D = torch.empty(128, 128, device="cuda", dtype=torch.bfloat16)
    for name, fn in (
        ("cutemma.gemm", lambda: cutemma.gemm(A, B, out=D)),
        ("gemm_sm90", lambda: gemm_sm90(A, B, out=D)),
        ("torch.matmul", lambda: torch.matmul(A, B, out=D)),
    ):
        print(f"{name}: {per_call_us(fn, calls):.1f} us per call", flush=True)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        cutemma.gemm(A, B, out=D)
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
