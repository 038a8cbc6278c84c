"""The bench table's key rows after the kernels package was rebuilt (issue 20, acceptance 4;
a script): cutemma.gemm over its peer in the same process, interleaved rounds.

    python tests/kernels/gpu_key_rows.py OUT.json [ROUNDS]

bf16 8192^3 and 4096^3 against torch.matmul (cuBLAS), e4m3 8192^3 against
torch._scaled_mm (its default accumulation); each round times ours, then the peer, on the
same tensors (CUDA events, median of 10 launches after 3 warm-ups); the ratio is
median(peer) / median(ours) over the rounds (> 1: ours is faster).
"""

from __future__ import annotations

import json
import os
import statistics
import sys

import torch

import cutemma


def _time(fn, reps: int = 10) -> float:
    sys.path.insert(
        0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
    )
    from gemm import event_median_ms

    return event_median_ms(fn, 3, reps)


def _pair(A, B, fp8: bool):
    """(ours, peer) callables on these operands (fp8: e4m3, B column-major for _scaled_mm)."""
    if not fp8:
        return (lambda: cutemma.gemm(A, B)), (lambda: torch.matmul(A, B))
    A8, B8 = A.to(torch.float8_e4m3fn), B.t().contiguous().t().to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    return (lambda: cutemma.gemm(A8, B8)), (
        lambda: torch._scaled_mm(A8, B8, one, one, out_dtype=torch.bfloat16)
    )


def main(path: str, rounds: int = 5) -> None:
    rows = []
    for name, n, fp8 in (("bf16 8192^3", 8192, False), ("bf16 4096^3", 4096, False),
                         ("e4m3 8192^3", 8192, True)):  # fmt: skip
        A = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        ours, peer = _pair(A, B, fp8)
        us, them = [], []
        for _ in range(rounds):
            us.append(_time(ours))
            them.append(_time(peer))
        ratio = statistics.median(them) / statistics.median(us)
        tflops = 2 * n**3 / (statistics.median(us) * 1e-3) / 1e12
        rows.append({"case": name, "ours_ms": us, "peer_ms": them, "ratio": round(ratio, 3),
                     "ours_tflops": round(tflops, 1)})  # fmt: skip
        print(name, round(ratio, 3), round(tflops, 1))
    out = {"device": torch.cuda.get_device_name(0), "rounds": rounds, "rows": rows}
    json.dump(out, open(path, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
