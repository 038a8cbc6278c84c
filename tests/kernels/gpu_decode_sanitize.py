"""Decode kernels with the rings :func:`cutemma.kernels.space.stream_stages` sets (fp8
64-row tiles of 4 stages, shared by stream-K; bf16 128-row tiles of the deepest ring and
fp8 ones of 3 (over 80 CTAs, and at the floor over a full grid), whole; bf16 64-row whole
tiles of the deepest ring over more tiles than SMs, an N-major B's:
space._n_major_whole; fp8 token tiles of 136-256 on 128-byte k tiles, whole and shared
by stream-K), on shapes small enough for compute-sanitizer (issue 21;
validate-streamk-h100.json "session9" and "session10"):

    compute-sanitizer --tool racecheck python tests/kernels/gpu_decode_sanitize.py

(``tests/gpu_validate.sh`` runs it under each tool: steps ``san_*_decode``.)

Each call goes through ``cutemma.gemm`` and is checked against the peer; exits 1 on a
wrong result.
"""

from __future__ import annotations

import sys

import torch

import cutemma
from cutemma.kernels.pick import builtin_sm90_config

CASES = [("e4m3", 8, 2048, 1024), ("e4m3", 64, 8192, 512), ("bf16", 16, 10240, 256),
         ("bf16", 40, 10240, 512), ("e4m3", 40, 10240, 512), ("bf16", 1, 20000, 2048),
         ("bf16", 20, 20000, 2048), ("e4m3", 8, 20000, 1024), ("e4m3", 140, 16384, 512),
         ("e4m3", 164, 28672, 496)]  # fmt: skip


def one(dtype: str, m: int, n: int, k: int) -> bool:
    """Run one decode-sized call and compare it with torch's; print and return whether it
    is within 1e-2 (relative Frobenius error)."""
    if dtype == "e4m3":
        A = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        B = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
        unit = torch.ones((), device="cuda")
        ref = torch._scaled_mm(A, B, unit, unit, out_dtype=torch.bfloat16)
    else:
        A = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        ref = A @ B
    D = cutemma.gemm(A, B)
    torch.cuda.synchronize()
    err = float((D.float() - ref.float()).norm() / ref.float().norm())
    major = "N" if dtype == "bf16" else "K"  # (B as built above)
    name = builtin_sm90_config(m, n, k, dtype, swap=True, b_major=major).name
    print(f"{dtype} ({m}, {n}, {k}) {name}: err {err:.1e}", flush=True)
    return err < 1e-2


if __name__ == "__main__":
    sys.exit(0 if all([one(*case) for case in CASES]) else 1)
