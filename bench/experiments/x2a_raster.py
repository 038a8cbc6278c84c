"""The raster of pairs that share A (``_x2a``: pairs along N): with ``group_m`` 8 a wave of
them covers 8 tile rows by twice as many columns as pairs along M (``_x2``, whose group
counts cluster rows: 16 tile rows), so each CTA's own B tile, the operand it does not
share, streams from DRAM twice as often. On aligned bf16 calls ``group_m`` 16 took them
from 0.944 to 0.983 of cuBLAS at (2048, 8448, 4096) and 0.834 to 0.884 at (4096, 4224, 4096)
(raw/cluster-waves-h200.json). The space offers them only where rows sit half a sector
apart (e4m3 with K an odd multiple of 16): is 16 better there too?

Calls: e4m3, 1025 <= M <= 16384 (more than 8 tile rows), K an odd multiple of 16, drawn at
run time (bench/gemm_sweep.py's distribution; the seed recorded). Each call: cuBLAS, the
pick, every pair of the space sharing A with ``group_m`` 8 and 16, and the pairs sharing B
(L2-flushed medians in turn; errors against cuBLAS).

    python bench/experiments/x2a_raster.py OUT.json [--draws 12] [--seed S]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

SMS = 132


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from dataclasses import replace

    from cutemma.kernels.space import cluster_kernels

    out = {}
    for c in cluster_kernels("e4m3"):
        out[c.name] = c
        if c.multicast == "A":
            g16 = replace(c, group_m=16)
            out[g16.name] = g16
    return out


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    from cutemma.kernels.call import half_sector_off

    found = [("e4m3", m, n, k) for m, n, k in draw_shapes(400 * draws, seed)
             if m > 1024 and half_sector_off(k) and 2 * m * n * k < 4e12]  # fmt: skip
    return found[:draws]


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, draws=12)
