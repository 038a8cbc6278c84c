"""16-bit calls whose row pitch is not a multiple of 128 bytes: where our time goes up with K
off 128-byte rows and cuBLAS's does not. Over the last twelve sweeps, bf16 calls of
129-2048 rows ran 0.953 of cuBLAS where K * 2 is a multiple of 128 and 0.91-0.93 where it
sits 32, 64 or 96 bytes past one (2,049+ rows: 0.984 against 0.953-0.962; both B majors),
while e4m3 at the same pitches ran as well as aligned (only half-sector rows lose there).
Per (M, N): K of 4096, 4112, 4128, 4144 (pitch % 128 = 0, 32, 64, 96), bf16 with B K-major
and N-major: cuBLAS, the pick, fixed 128x256 and 128x128 tiles (the same kernel at every
K), and 128x128 in pairs along M (`x2`), along N (`x2a`) and 2 x 2 (`x4ab`).

    python bench/experiments/pitch_probe.py OUT.json
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

MN = [(512, 4096), (1024, 8192), (4096, 4096)]
KS = (4096, 4112, 4128, 4144)


def shapes(draws: int, seed: int) -> list[tuple]:
    return [(c, m, n, k) for c in ("bf16_bK", "bf16_bN") for m, n in MN for k in KS][:draws]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels.sm90.config import Sm90Config

    found = [
        Sm90Config(128, 256),
        Sm90Config(128, 128),
        Sm90Config(128, 128, cluster=2, multicast="B"),
        Sm90Config(128, 128, cluster=2, multicast="A"),
        Sm90Config(128, 128, cluster=4, multicast="AB"),
    ]
    return {c.name: c for c in found}


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 24)
