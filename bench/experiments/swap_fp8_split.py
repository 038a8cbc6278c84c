"""fp8 swapped kernels with their N halves promoted in turn: the space's swapped fp8
kernels promote each k tile's whole batch (``promote=True``: wait for the batch, add, issue
the next), where the unswapped fp8 tiles take ``promote="split"`` (half a tile's batch runs
while the other half's sums are added; +4-6% at 128x192, notes/kernels-journal.md session
4). The class's fitted rate ('fp8/swap128' 0.5485) sits under every plain fp8 tile's
(0.65-0.75): is it the promotion?

Calls: e4m3, M 129..2048 drawn at run time (bench/gemm_sweep.py's distribution; the seed
recorded) whose swapped kernels have token tiles a multiple of 16 wide (the split's halves
are whole wgmma widths). Each call: cuBLAS, the pick, the model's three cheapest swapped
kernels as the space builds them, and each with ``promote="split"`` (L2-flushed medians in
turn; errors against cuBLAS).

    python bench/experiments/swap_fp8_split.py OUT.json [--draws 16] [--seed S]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

SMS = 132


def swapped(m: int, n: int, k: int) -> list:
    """The space's swapped fp8 kernels of the call, cheapest first (the model's order)."""
    from cutemma.kernels.call import half_sector_off
    from cutemma.kernels.cost import predict
    from cutemma.kernels.space import candidates

    rows16 = (half_sector_off(k), half_sector_off(k))
    found = [c for c in candidates(m, n, k, "e4m3", 1, SMS, True, rows16) if c.swap_ab]
    return sorted(found, key=lambda c: predict(c, m, n, k, "e4m3", 1, "h200"))


def split_of(cfg):
    from dataclasses import replace

    from cutemma.errors import TiledMmaError
    from cutemma.kernels.space import builds, fits

    try:
        out = replace(cfg, promote="split")
    except TiledMmaError:
        return None
    return out if fits(out, "e4m3") and builds(out, "e4m3") else None


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    out = {}
    for cfg in swapped(m, n, k)[:3]:
        out[cfg.name] = cfg
        split = split_of(cfg)
        if split is not None:
            out[split.name] = split
    return out


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    found = []
    for m, n, k in draw_shapes(200 * draws, seed):
        if 129 <= m <= 2048 and any(split_of(c) for c in swapped(m, n, k)[:3]):
            found.append(("e4m3", m, n, k))
        if len(found) == draws:
            break
    return found


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, draws=16)
