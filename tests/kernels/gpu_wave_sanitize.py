"""64-row tiles off the space's 64x128 grid under compute-sanitizer (memcheck, racecheck,
synccheck): those as wide as fills a wave (cutemma.kernels.space.wave_kernels) and the
narrow ones (space.narrow_kernels: bf16 and e4m3), each once on a call whose edges cut its
last tiles, plain and (16-bit) with a fused bias + gelu_tanh.

    compute-sanitizer --tool racecheck python tests/kernels/gpu_wave_sanitize.py
"""

from __future__ import annotations

from dataclasses import replace

import torch  # before cutemma's CUDA modules

import cutemma
from cutemma.kernels.sm90.config import ATOMS_SM90, Sm90Config
from cutemma.kernels.space import FP8_PROMOTE, NARROW_K_BYTES, NARROW_WIDTHS

# (gpu_sm90_checks.py checks the same ones in every major pair; the narrow ones on their
# 256-byte k tiles, space.NARROW_K_BYTES)
CONFIGS = (
    [Sm90Config(64, w, consumers=1) for w in (96, 176)]
    + [
        Sm90Config(64, w, NARROW_K_BYTES // ATOMS_SM90["bf16"][1], consumers=1)
        for w in NARROW_WIDTHS
    ]
    + [Sm90Config(64, 224, consumers=1, evict_first="B")]
)
# (and FP8_NARROW with K-major operands, the only ones fp8's GMMA reads)
FP8_NARROW = [
    Sm90Config(64, w, NARROW_K_BYTES // ATOMS_SM90["e4m3"][1], consumers=1, promote=FP8_PROMOTE[64])
    for w in NARROW_WIDTHS
]


def main() -> None:
    M, N, K = 200, 700, 1000  # (every edge of the tile cut)
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(N, K, device="cuda", dtype=torch.bfloat16).t()
    bias = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    ref = A.float() @ B.float()
    for cfg in CONFIGS:
        _run(A, B, ref, bias, cfg)
    K8 = 1008  # (fp8 rows a multiple of 16 bytes, TMA's; still cutting the last k tile)
    A8 = torch.randn(M, K8, device="cuda").to(torch.float8_e4m3fn)
    B8 = torch.randn(N, K8, device="cuda").to(torch.float8_e4m3fn).t()
    ref8 = A8.float() @ B8.float()
    for cfg in FP8_NARROW:  # (a fused fp8 call promotes its sums once: space.fused_kernels)
        _run(A8, B8, ref8, bias, cfg, replace(cfg, promote=True))


def _run(A, B, ref, bias, cfg: Sm90Config, fused: Sm90Config | None = None) -> None:
    """One config plain and fused with bias + gelu_tanh, each against its reference."""
    out = torch.full(ref.shape, float("nan"), device="cuda", dtype=torch.bfloat16)
    cutemma.gemm(A, B, out=out, config=cfg)
    err = float((out.float() - ref).norm() / ref.norm())
    out.fill_(float("nan"))
    cutemma.gemm(A, B, out=out, config=fused or cfg, epilogue=("bias", "gelu_tanh"), bias=bias)
    want = torch.nn.functional.gelu(ref + bias.float(), approximate="tanh")
    err_fused = float((out.float() - want).norm() / want.norm())
    torch.cuda.synchronize()
    ok = "ok" if max(err, err_fused) < 1e-2 else "FAIL"
    print(cfg.name, f"rel_err {err:.1e} fused {err_fused:.1e}", ok, flush=True)


if __name__ == "__main__":
    main()
