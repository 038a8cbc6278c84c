"""Why 256x128 tiles wait for their data: variants of it against 128x256 on aligned calls.

Under Nsight Compute (ncu_wide_rows.py, raw/ncu-wide-rows-*-h200.*) the 256x128 tile's
consumers spent 48% of their samples waiting on a stage's full barrier and 5% on the tensor
cores, where 128x256's spent 28% on each: the same bytes a stage, the same ring, yet its
data come late. The one asymmetry of the two kernels is A's TMA box, 256 rows against 128
(B's 128 against 256). Per call: cuBLAS, 128x256, 256x128, and 256x128 with rasters of 4
and 16 tile rows, k tiles half as deep (twice the stages), one more stage (the half-size
staging epilogue `tma2`); with ``VARIANT=box128`` every TMA box of at most 128 rows (A's as
two copies: the process's TMA_RULES.max_box is 128, its own kernel cache folder).
L2-flushed medians in turn, errors against cuBLAS.

    [VARIANT=box128] python bench/experiments/wide_rows_starve.py OUT.json
"""

from __future__ import annotations

import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

VARIANT = os.environ.get("VARIANT", "")
if VARIANT == "box128":
    os.environ.setdefault("CUTEMMA_CACHE_DIR", os.path.join(tempfile.gettempdir(), "box128"))
    from cutemma.copy.tma_map import TMA_RULES

    object.__setattr__(TMA_RULES, "max_box", 128)

CALLS = [
    ("bf16_bK", 4096, 4096, 8192),
    ("bf16_bK", 6144, 5120, 6208),
    ("bf16_bK", 3000, 7000, 5008),
]


def shapes(draws: int, seed: int) -> list[tuple]:
    return CALLS[:draws]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.kernels.sm90.config import Sm90Config

    wide = dict(block_m=256, block_n=128)
    found = [
        Sm90Config(128, 256),
        Sm90Config(**wide),
        Sm90Config(**wide, group_m=4),
        Sm90Config(**wide, group_m=16),
        Sm90Config(**wide, block_k=32),
        Sm90Config(**wide, stages=4, epilogue="tma2"),
    ]
    return {c.name: c for c in found}


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 3)
