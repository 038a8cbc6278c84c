"""Long-K calls of few tiles under Nsight Compute: cuBLAS's split-K kernels against our
kcluster and stream-K kernels on the same calls (raw/kcluster-pairs-h200.json: at (300, 320,
45344) cuBLAS 29 us, our best 41.6; both run about 120 CTAs of ~2.2-2.5 MB of operands).
Where does ours lose: DRAM bytes, L2 hits, the SMs' issue, the tensor pipe?

    ncu --clock-control none --profile-from-start off --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
        --section WarpStateStats --metrics dram__bytes_read.sum,lts__t_bytes.sum \
        --csv --page details python bench/experiments/ncu_splitk.py > OUT.csv

Each call: cuBLAS, then each config of ``CONFIGS`` that builds for it, once each between
cudaProfilerStart and Stop after a warm-up (ncu flushes the caches before each kernel);
prints the order.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

SHAPES = [("bf16_bN", 300, 320, 45344), ("bf16_bK", 180, 400, 27456), ("bf16_bK", 568, 400, 25952)]


def configs() -> list:
    from cutemma.kernels.sm90.config import Sm90Config

    return [
        Sm90Config(64, 128, consumers=1, kcluster=8),
        Sm90Config(128, 64, kcluster=8),
        Sm90Config(128, 128, stream_k=True, split=16),
        Sm90Config(64, 128, consumers=1, stream_k=True, split=16),
    ]


def main() -> None:
    from gemm_sweep import operands
    from ncu_mid import profile_once

    import cutemma

    for combo, m, n, k in SHAPES:
        A, B, out, peer = operands(combo, m, n, k)
        calls = {"cublas": lambda p=peer, o=out: p(o)}
        for cfg in configs():
            calls[cfg.name] = lambda A=A, B=B, o=out, c=cfg: cutemma.gemm(A, B, out=o, config=c)
        profile_once(calls)
        print("profiled:", combo, m, n, k, list(calls), flush=True)


if __name__ == "__main__":
    main()
