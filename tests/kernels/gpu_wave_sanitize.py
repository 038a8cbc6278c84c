"""64-row tiles as wide as fills a wave (cutemma.kernels.space.wave_kernels) under
compute-sanitizer (memcheck, racecheck, synccheck): each of a few widths once on a call
whose edges cut its last tiles, plain and with a fused bias + gelu_tanh.

    compute-sanitizer --tool racecheck python tests/kernels/gpu_wave_sanitize.py
"""

from __future__ import annotations

import torch  # before cutemma's CUDA modules

import cutemma
from cutemma.kernels.sm90.config import Sm90Config

# (gpu_sm90_checks.py checks the same ones in every major pair)
CONFIGS = [Sm90Config(64, w, consumers=1) for w in (96, 176)] + [
    Sm90Config(64, 224, consumers=1, evict_first="B")
]


def main() -> None:
    M, N, K = 200, 700, 1000  # (every edge of the tile cut)
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(N, K, device="cuda", dtype=torch.bfloat16).t()
    bias = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    ref = A.float() @ B.float()
    for cfg in CONFIGS:
        out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        cutemma.gemm(A, B, out=out, config=cfg)
        err = float((out.float() - ref).norm() / ref.norm())
        cutemma.gemm(A, B, out=out, config=cfg, epilogue=("bias", "gelu_tanh"), bias=bias)
        torch.cuda.synchronize()
        print(cfg.name, f"rel_err {err:.1e}", "ok" if err < 1e-2 else "FAIL", flush=True)


if __name__ == "__main__":
    main()
