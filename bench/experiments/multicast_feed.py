"""Whether the GEMM's clusters of 2 realise multicast's feed (bench/results/raw/
ldgsts-probe-h200.json: with every SM streaming from L2, a lone CTA fills its ring at about
57 GB/s, L2's aggregate limit, and pairs that each load half of a block and multicast it at
about 82 GB/s, an SM's own). Tiles whose operand bytes per flop leave them L2-bound (128x128
at 64 flops a byte for 16-bit: 117 GB/s an SM at the tensor cores' rate) timed alone, in
pairs along M (B multicast), along N (A multicast) and in 2 x 2, against 128x256, on calls
whose tiles fill whole waves either way; the pick and cuBLAS beside them.

    python bench/experiments/multicast_feed.py OUT.json
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

CALLS = [
    ("bf16_bK", 2048, 8448, 4096),  # 16 x 66 tiles of 128x128: 8 waves
    ("bf16_bK", 1024, 16896, 2048),
    ("bf16_bK", 4096, 4224, 4096),
    ("bf16_bN", 2048, 8448, 4096),
    ("e4m3", 1024, 8448, 8192),
    ("e4m3", 514, 6128, 11104),  # the profiled fp8 call (raw/ncu-mid-h200.txt)
    ("bf16_bK", 8192, 8192, 8192),  # compute-bound control
]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels.sm90.config import Sm90Config

    fp8 = {"promote": "overlap"} if combo == "e4m3" else {}
    found = [
        Sm90Config(128, 128, **fp8),
        Sm90Config(128, 128, cluster=2, **fp8),
        Sm90Config(128, 128, cluster=2, multicast="A", **fp8),
        Sm90Config(128, 128, cluster=4, multicast="AB", **fp8),
        # (fp8's promoted 128x256 does not fit its registers: 128x192, fp8's own wide tile)
        Sm90Config(128, 192 if fp8 else 256, **({"promote": True} if fp8 else {})),
        Sm90Config(128, 192 if fp8 else 256, cluster=2, **({"promote": True} if fp8 else {})),
    ]
    return {c.name: c for c in found}


def shapes(draws: int, seed: int) -> list[tuple]:
    return CALLS


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, draws=0)
