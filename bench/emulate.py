"""Time the CPU emulation of a 256x256x256 bf16 GEMM through a 4-warp sm80 TiledMMA.

    python bench/emulate.py [--out bench/results/emulate-cpu.json]

Also times numpy's float64 matmul of the same size in the same run, as the peer.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import time

import numpy as np

from cutemma import emulate, make_tiled_mma


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tiled = make_tiled_mma("SM80_16x8x16_F32BF16BF16F32_TN", (2, 2, 1), (32, 32, 16))
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((256, 256)), rng.standard_normal((256, 256))
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        D = emulate.gemm(tiled, A, B)
        times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    ref = A @ B.T
    peer = time.perf_counter() - t0
    err = float(np.abs(D - ref).max())
    row = {
        "what": "emulate.gemm 256x256x256 bf16->f32, 4 warps of SM80_16x8x16, tile 32x32x16",
        "threads": tiled.size,
        "seconds_median": sorted(times)[len(times) // 2],
        "numpy_f64_matmul_seconds": peer,
        "max_abs_diff_vs_unrounded_f64": err,
        "machine": platform.processor() or platform.machine(),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(row, indent=2))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(row, f, indent=2)


if __name__ == "__main__":
    main()
