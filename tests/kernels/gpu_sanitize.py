"""A few edge-shape GEMMs for compute-sanitizer (memcheck, racecheck) on the GPU.

compute-sanitizer --tool memcheck python tests/kernels/gpu_sanitize.py
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
    torch.cuda.synchronize()
    print(f"sanitize run done; worst rel err {worst:.2e}")


if __name__ == "__main__":
    main()
