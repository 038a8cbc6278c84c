"""Where the GEMM's clusters of 2 and 2 x 2 lose on aligned calls, by wave (the code read
of the cluster kernels: nothing extra per tile but one remote arrive a stage; the grid (2 x
2: 30 clusters, 120 CTAs) and the tile counts padded to the cluster shape). Per call, 128x128
tiles alone, in pairs along M (B shared) and N (A shared) and in 2 x 2; the pairs with the
raster group that keeps each CTA's private operand in L2 (``group_m`` 16 for A shared, 4
for B shared) and with rings of 4 stages and of 7 (``epilogue="tma2"``); 128x192 for fp8.
Calls whose waves tie across the cluster shapes ((1280, 7680) and (2560, 3840): 5 waves
each way) beside ones where they do not, and two e4m3 calls whose rows sit half a sector
apart and whose pick is a pair sharing A.

``CAP_GRID=120`` in the environment caps every cluster-of-1 persistent grid at 120 CTAs
(2 x 2's): whether its per-tile gain is the fewer SMs (power, L2 per SM) or multicast.

    python bench/experiments/cluster_waves.py OUT.json
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

CALLS = [
    ("bf16_bK", 2048, 8448, 4096),  # c1 8 waves, 2 x 2 9
    ("bf16_bK", 1280, 7680, 4096),  # 5 waves every way
    ("bf16_bK", 2560, 3840, 4096),  # 5 waves every way
    ("bf16_bK", 4096, 4224, 4096),  # 33 tile columns: pairs along N pad to 34
    ("e4m3", 1024, 8448, 8192),
    ("e4m3", 304, 23488, 55824),  # sweep 1845104327's worst e4m3 row, the pick a pair (A)
    ("e4m3", 530, 51456, 3728),
]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from dataclasses import replace

    from cutemma.kernels.sm90.config import Sm90Config

    if combo == "e4m3":
        base = Sm90Config(128, 192, promote=True)
        alone = [Sm90Config(128, 192, promote="split")]
    else:
        base = Sm90Config(128, 128)
        alone = [base, replace(base, stages=4)]
    x2, x2a = replace(base, cluster=2), replace(base, cluster=2, multicast="A")
    found = [*alone, x2, x2a, replace(base, cluster=4, multicast="AB"),
             replace(x2a, group_m=16), replace(x2, group_m=4),
             replace(x2, stages=4), replace(x2a, stages=4),
             replace(x2, epilogue="tma2"), replace(x2a, epilogue="tma2")]  # fmt: skip
    return {c.name: c for c in found}


def shapes(draws: int, seed: int) -> list[tuple]:
    return CALLS


def _cap_grid() -> None:
    cap = int(os.environ.get("CAP_GRID", "0"))
    if not cap:
        return
    from cutemma.kernels.sm90 import host

    grid = host._grid

    def capped(config, M, N, batch, sms, persistent):
        g = grid(config, M, N, batch, sms, persistent)
        return min(g, cap) if config.cluster == 1 and persistent and not config.stream_k else g

    host._grid = capped


if __name__ == "__main__":
    from probe import main

    _cap_grid()
    main(__file__, __doc__, shapes, kernels, draws=0)
