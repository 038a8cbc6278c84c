"""Does the whole-tile staging of the TMA-store epilogue cost our big tiles a stage they need?

The TMA-store epilogue stages the whole output tile in shared memory (32 KiB for 128x128
16-bit output, 48 for 128x192, 64 for 128x256), beside the ring: 128x128 runs 6 stages of
32 KiB, 128x192 4 of 40, 128x256 3 of 48, where the register epilogue leaves room for one
more. The profiles found the consumers of mid-size calls waiting for their stages to land
(the session of 2026-11-29, night, second), and the one test of a seventh stage changed the
epilogue with it (register stores: 0.52 of cuBLAS against 0.54).

Each call (the sweeps' calls of at least 129 rows whose pick was a plain 128-row tile of
128-256 columns, then calls drawn at run time): cuBLAS, the pick, and each of 128x128,
128x192 and 128x256 (whole; fp8 promoted as the space promotes them) three ways: the
TMA-store epilogue at its depth, register stores at that depth, register stores one stage
deeper. The register rows at the two depths say what a stage is worth with the epilogue
held; the TMA row against the shallower register row what the epilogue itself costs.
L2-flushed medians in turn, errors against cuBLAS.

    python bench/experiments/ring_vs_staging.py OUT.json [--draws 12] [--seed S]
"""

from __future__ import annotations

import os
import random
import re
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

WIDTHS = (128, 192, 256)


def _plain_128(r: dict) -> bool:
    got = re.match(r"b128x(\d+)_c2", r.get("pick", {}).get("config", ""))
    return (
        bool(got)
        and int(got[1]) in WIDTHS
        and not r["pick"].get("swap")
        and r["m"] >= 129
        and r.get("ratio", 9) < 0.97
    )


def shapes(draws: int, seed: int) -> list[tuple]:
    """Half the sweeps' such calls, half drawn at run time (129+ rows, the combos in turn)."""
    from gemm_sweep import draw_shapes
    from small_calls import sweep_losers

    lost = sweep_losers(_plain_128, draws // 2, seed)
    combos = ("bf16_bK", "bf16_bN", "e4m3")
    drawn = [(combos[i % 3], m, n, k) for i, (m, n, k) in enumerate(draw_shapes(400, seed))]
    drawn = [c for c in drawn if c[1] >= 129]
    random.Random(seed).shuffle(drawn)
    return list(dict.fromkeys(lost + drawn))[:draws]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.errors import TiledMmaError
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.sm90.plan import Sm90Plan
    from cutemma.kernels.space import FP8_PROMOTE, builds

    dtype, major = combo[:4], "N" if combo == "bf16_bN" else "K"
    out = {}
    for bn in WIDTHS:
        kw = {"promote": FP8_PROMOTE[bn]} if dtype == "e4m3" else {}
        tma = Sm90Config(128, bn, **kw)
        try:
            depth = Sm90Plan(tma, dtype, "K", major, "bf16").stages
        except TiledMmaError:  # (a plan its majors refuse: not timed)
            continue
        for cfg in (tma, replace(tma, epilogue="regs", stages=depth),
                    replace(tma, epilogue="regs", stages=depth + 1)):  # fmt: skip
            if builds(cfg, dtype, ("K", major)):
                out[cfg.name] = cfg
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 12)
