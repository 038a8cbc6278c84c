"""One launch each of the kernels to compare under Nsight Compute (a script for ncu).

    ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis \
        --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
        -k regex:"cutemma_gemm_sm90|nvjet" python bench/experiments/profile_fp8.py

e4m3 8192^3, bf16 out: cutemma's promoted 128x192 (fp8's default), its fast-accumulation
128x256, and torch._scaled_mm (cuBLAS's nvjet kernel); then bf16 8192^3: cutemma's 128x256
and torch.matmul. One launch each (ncu replays it per section, caches flushed).
``split`` as the argument: e4m3 only, promoted by N halves (fp8's default since run 22),
promoted with both halves at once, and torch._scaled_mm.
"""

from __future__ import annotations

import sys

import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

from cutemma.kernels.dispatch import gemm as gemm_sm90
from cutemma.kernels.sm90.plan import Sm90Config


def main() -> None:
    s = 8192
    one = torch.ones((), device="cuda")
    A8 = torch.randn(s, s, device="cuda").to(torch.float8_e4m3fn)
    B8 = torch.randn(s, s, device="cuda").to(torch.float8_e4m3fn).t()
    A16 = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    B16 = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    D = torch.empty(s, s, device="cuda", dtype=torch.bfloat16)
    runs = [
        ("cutemma e4m3 promoted 128x192", lambda: gemm_sm90(A8, B8, out=D, config=Sm90Config(128, 192))),
        ("cutemma e4m3 fast 128x256", lambda: gemm_sm90(A8, B8, out=D, config=Sm90Config(128, 256, promote=False))),
        ("cuBLAS _scaled_mm", lambda: torch._scaled_mm(A8, B8, one, one, out_dtype=torch.bfloat16)),
        ("cutemma bf16 128x256", lambda: gemm_sm90(A16, B16, out=D, config=Sm90Config(128, 256))),
        ("cuBLAS bf16", lambda: torch.matmul(A16, B16, out=D)),
    ]  # fmt: skip
    if sys.argv[1:] == ["split"]:
        split = Sm90Config(128, 192, promote="split")
        runs = [
            ("cutemma e4m3 promoted by halves 128x192", lambda: gemm_sm90(A8, B8, out=D, config=split)),
            runs[0],
            runs[2],
        ]  # fmt: skip
    for name, fn in runs:
        fn()
        torch.cuda.synchronize()
        print("profiled:", name, flush=True)


if __name__ == "__main__":
    main()
