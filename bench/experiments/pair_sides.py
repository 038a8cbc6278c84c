"""Which operand a pair should share where fp8 rows sit half a sector apart: the space's
clusters (pairs along M sharing B, ``_x2``; along N sharing A, ``_x2a``; 2 x 2, ``_x4ab``)
on e4m3 calls of 129-2048 rows whose K is an odd multiple of 16, where the sweeps' picks
are pairs at 0.81 (A shared) and 0.86 (B shared) of cuBLAS over 739 rows. On (530, 51456,
3728) the pair sharing B ran 9% faster than the one sharing A though its tile rows pad
from 5 to 6 (raw/cluster-waves-h200.json), where the model prices it 3% dearer: it counts
a multicast operand's rows half a sector apart at the cost of a lone CTA's
(``half_sector``), and a probe had multicast pairs lose 12-15% to such rows against a lone
CTA's 30% (raw/ldgsts-probe-h200.json).

Calls drawn at run time (bench/gemm_sweep.py's distribution; the seed recorded). Each call:
cuBLAS, the pick, every cluster kernel of the space and the model's three cheapest others
(L2-flushed medians in turn; errors against cuBLAS).

    python bench/experiments/pair_sides.py OUT.json [--draws 24] [--seed S]
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
    from cutemma.kernels.call import half_sector_off
    from cutemma.kernels.cost import predict
    from cutemma.kernels.space import candidates

    r16 = (half_sector_off(k), half_sector_off(k))
    found = candidates(m, n, k, "e4m3", 1, SMS, True, r16)
    pairs = [c for c in found if c.cluster > 1]
    rest = sorted((c for c in found if c.cluster == 1),
                  key=lambda c: predict(c, m, n, k, "e4m3", 1, "h200", 2, r16))  # fmt: skip
    return {c.name: c for c in (*pairs, *rest[:3])}


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    from cutemma.kernels.call import half_sector_off

    found = [("e4m3", m, n, k) for m, n, k in draw_shapes(400 * draws, seed)
             if 129 <= m <= 2048 and half_sector_off(k)]  # fmt: skip
    return found[:draws]


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, draws=24)
