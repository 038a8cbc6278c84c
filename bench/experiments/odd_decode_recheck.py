"""A recheck of one outlier: swapped 128x16 whole ran e4m3 (13, 16752, 336) in 31.5 us where
(5, 20496, 336) took 9.4 us (raw/decode-off-swap-whole-h200.json). The same kernel on its
neighbours (12-14 and 5 tokens; K 336 and 352; N 16752 and 16768), beside the pick and
cuBLAS: an outlier of the timing, or a shape the kernel handles badly?

    python bench/experiments/odd_decode_recheck.py OUT.json
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

CALLS = [(13, 16752, 336), (12, 16752, 336), (14, 16752, 336), (5, 16752, 336),
         (13, 16752, 352), (13, 16768, 336), (13, 20496, 336), (5, 20496, 336)]  # fmt: skip


def shapes(draws: int, seed: int) -> list[tuple]:
    return [("e4m3", *c) for c in CALLS][:draws]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels.space import swapped_kernel

    cfg = swapped_kernel(m, n, k, "e4m3", 132, True)
    return {cfg.name: cfg}


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 8)
