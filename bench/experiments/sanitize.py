"""A few edge-shape GEMMs for compute-sanitizer (memcheck, racecheck) on the GPU.

compute-sanitizer --tool memcheck python bench/experiments/sanitize.py
"""

from __future__ import annotations

import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

from cutemma.kernels import BUILTIN_CONFIGS, gemm


def main() -> None:
    torch.manual_seed(0)
    worst = 0.0
    for m, n, k in [(1, 1, 1), (67, 70, 45), (130, 129, 97), (64, 64, 64)]:
        for a_col in (False, True):
            for b_col in (False, True):
                for cfg in (BUILTIN_CONFIGS["small"], BUILTIN_CONFIGS["large"]):
                    A = (
                        torch.randn(k, m).half().cuda().t()
                        if a_col
                        else torch.randn(m, k).half().cuda()
                    )
                    B = (
                        torch.randn(n, k).half().cuda().t()
                        if b_col
                        else torch.randn(k, n).half().cuda()
                    )
                    D = gemm(A, B, out_dtype=torch.float32, config=cfg)
                    ref = A.double() @ B.double()
                    worst = max(worst, float((D.double() - ref).norm() / ref.norm()))
    worst = max(worst, _other_paths())
    torch.cuda.synchronize()
    print(f"sanitize run done; worst rel err {worst:.2e}")


def _rel(D, ref) -> float:
    return float((D.double() - ref).norm() / ref.norm().clamp_min(1e-30))


def _other_paths() -> float:
    """Batched (broadcast B and C), fp8 with scales, int8 and tf32, at edge shapes."""
    worst = 0.0
    A = torch.randn(3, 67, 45, device="cuda").bfloat16()
    B = torch.randn(45, 70, device="cuda").bfloat16()
    C = torch.randn(70, device="cuda").bfloat16()
    D = gemm(A, B, C, beta=1.0, out_dtype=torch.float32)
    worst = max(worst, _rel(D, A.double() @ B.double() + C.double()))
    a8 = torch.randn(130, 97, device="cuda").to(torch.float8_e4m3fn)
    b8 = torch.randn(97, 129, device="cuda").to(torch.float8_e5m2)
    D = gemm(a8, b8, scale_a=0.5, scale_b=2.0, out_dtype=torch.float32)
    worst = max(worst, _rel(D, a8.double() @ b8.double()))
    ai = torch.randint(-8, 8, (67, 45), device="cuda", dtype=torch.int8)
    bi = torch.randint(-8, 8, (45, 70), device="cuda", dtype=torch.int8)
    worst = max(worst, _rel(gemm(ai, bi), ai.double() @ bi.double()))
    af, bf = torch.randn(67, 45, device="cuda"), torch.randn(45, 70, device="cuda")
    return max(worst, _rel(gemm(af, bf), af.double() @ bf.double()) / 1e2)  # tf32 bound


if __name__ == "__main__":
    main()
