"""Are narrow tiles paced by their per-stage cost? 256-byte k tiles for 64-row tiles.

Narrow tiles ran 0.25-0.76 of cuBLAS on the mid-size calls deep_rings.py timed, whatever
their ring's depth or cluster (raw/deep-rings-h200.json): neither the feed's latency nor
L2's bandwidth sets their pace. A consumer's stage costs a fixed part (the full barrier's
wait, the wgmma fence, issue, commit and wait, the release) beside its MMA, and a 64x64
16-bit k tile's MMA is about 120 clocks: if that fixed part is a few hundred clocks, a
stage twice as deep along K (256 bytes: 128 16-bit or 256 fp8 values) halves it per byte.

Each call (deep_rings.py's: the sweeps' losers of 129-2048 rows on 64-row tiles, then
calls drawn at run time): cuBLAS, the pick, the pick's tile with 256-byte k tiles where it
has 128-byte ones, and 64x32, 64x64, 64x128 (one warpgroup) and 128x64 with 128- and
256-byte k tiles. L2-flushed medians in turn, errors against cuBLAS.

    python bench/experiments/wide_k_narrow.py OUT.json [--draws 16] [--seed S]
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from deep_rings import shapes  # noqa: E402,F401 - the same calls

TILES = ((64, 32, 1), (64, 64, 1), (64, 128, 1), (128, 64, 2))


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from probe import call_space

    from cutemma.kernels.pick import builtin
    from cutemma.kernels.sm90.config import ATOMS_SM90, Sm90Config
    from cutemma.kernels.space import FP8_PROMOTE, builds

    dtype, major, r16, _ = call_space(combo, m, n, k)
    wide = 256 // ATOMS_SM90[dtype][1]  # 256 bytes of K
    pick, _ = builtin(m, n, k, 1, dtype, 132, "h200", True, r16, major, False)
    cfgs = []
    if isinstance(pick, Sm90Config) and pick.block_k is None:
        cfgs.append(replace(pick, block_k=wide))
    for bm, bn, c in TILES:
        kw = {"promote": FP8_PROMOTE[max(bn, 64)]} if dtype == "e4m3" else {}
        cfgs += [Sm90Config(bm, bn, consumers=c, block_k=bk, **kw) for bk in (None, wide)]
    return {c.name: c for c in cfgs if builds(c, dtype, ("K", major))}


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 16)
