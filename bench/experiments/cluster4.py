"""Clusters of 2 x 2 CTAs sharing both operands (``Sm90Config(cluster=4, multicast="AB")``)
against the pick, its tile alone and in pairs, and cuBLAS.

Under Nsight Compute cuBLAS feeds its mid-size fp8 tiles through clusters of 2 x 4 and 4 x
1 (bench/results/raw/ncu-mid-times-h200.json, ncu-longk-times-h200.json), and our fp8
kernels on calls whose K is an odd multiple of 16 (rows half a sector apart: TMA reads
them at about half speed) run 0.87-0.94 of cuBLAS in the sweeps against 0.97-1.06 for the
other K. A 2 x 2 cluster loads half of each operand tile per CTA.

    python bench/experiments/cluster4.py OUT.json

L2-flushed medians in turns, in one process; ratios to cuBLAS.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

# (combo, m, n, k); e4m3 rows with K / 16 odd are 'rows16' (both operands K-major)
SHAPES = [
    ("e4m3", 1456, 912, 20592),  # rows16; sweep 2840113349: 0.61
    ("e4m3", 295, 58416, 8240),  # rows16; 0.56
    ("e4m3", 8470, 1024, 41776),  # rows16; 0.77
    ("e4m3", 276, 6528, 5360),  # rows16; ncu_mid 0.63
    ("e4m3", 1024, 4096, 4112),  # rows16; misaligned_k: 0.68
    ("e4m3", 2048, 8192, 8208),  # rows16
    ("e4m3", 514, 6128, 11104),  # aligned; ncu_mid 0.58 (data not landed)
    ("e4m3", 4096, 4096, 4096),  # aligned control
    ("bf16_bK", 788, 1600, 6400),  # ncu_mid 0.71
    ("bf16_bK", 909, 1456, 62480),  # 0.54
    ("bf16_bK", 2048, 8192, 8192),
    ("bf16_bN", 1024, 4096, 4096),
]
X4 = {"cluster": 4, "multicast": "AB", "evict_first": ""}
X2 = {"cluster": 2, "multicast": "B", "evict_first": ""}
X2A = {"cluster": 2, "multicast": "A", "evict_first": ""}
X1 = {"cluster": 1, "multicast": "B"}
# (the tile, its promotion for fp8) whose cluster variants are timed
TILES = {
    "e4m3": [(128, 128, "overlap"), (128, 192, True)],  # (promoted 128x256 does not fit)
    "bf16": [(128, 128, True), (128, 192, True), (128, 256, True)],
}


def variants(pick, dtype: str) -> dict:
    """Each tile of :data:`TILES` alone, in pairs sharing B or A and in 2 x 2, but the pick."""
    from cutemma.errors import TiledMmaError
    from cutemma.kernels.sm90.config import Sm90Config

    out = {}
    for bm, bn, promote in TILES[dtype]:
        base = Sm90Config(bm, bn, promote=promote)
        for tag, change in (("x1", X1), ("x2", X2), ("x2a", X2A), ("x4ab", X4)):
            try:
                cfg = replace(base, **change)
            except TiledMmaError:
                continue
            if cfg != pick:
                out[f"{bm}x{bn}_{tag}"] = cfg
    return out


def main() -> None:
    import torch
    from ncu_mid import time_variants

    rows = time_variants(sys.argv[1], variants, SHAPES)
    with open(sys.argv[1], "w") as f:
        src = open(__file__).read()
        json.dump({"what": __doc__.splitlines()[0], "rows": rows, "device": torch.cuda.get_device_name(),
                   "script": {"path": "bench/experiments/cluster4.py", "source": src}}, f, indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
