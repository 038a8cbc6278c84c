"""The TMA-store epilogue in passes through two staging buffers ("tmab", "tmatb") against
the whole staging tile ("tma", "tmat"): the same kernel with the ring a stage deeper where
the smaller staging frees one (128x256 and 256x128: 4 stages for 3; 128x192 5 for 4;
swapped 256-row tiles 4 for 3 or 2). cuBLAS runs 4 stages of its 128x256-equivalent tile
and swapped tiles of 256 weight rows on mid-size calls; ours keep 3 beside a 64 KiB
staging tile, and two-slice tiles wait 48% of the time on a stage's data
(raw/ncu-wide-rows-*-h200.json).

Calls: big fixed ones (128x256, 256x128, 128x192, 128x224 both ways; short K too), calls
drawn at run time whose pick is an unswapped whole tile with the TMA store (the pick both
ways), and drawn calls of 257-2048 tokens whose pick is swapped (the pick both ways, and
its token width on 256 weight rows both ways). L2-flushed medians in turn against cuBLAS,
each kernel's error against it.

    python bench/experiments/buffered_store.py OUT.json [--draws 30] [--seed S]
"""

from __future__ import annotations

import os
import random
import sys
from dataclasses import replace
from functools import partial

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

FIXED = [("bf16_bK", 4096, 4096, 8192), ("bf16_bN", 4096, 4096, 8192),
         ("e4m3", 8192, 8192, 8192), ("bf16_bN", 2048, 10240, 8192),
         ("bf16_bK", 8192, 16384, 512), ("bf16_bN", 4096, 32768, 1024)]  # fmt: skip
TILES = ((128, 256), (256, 128), (128, 192), (128, 224))
BUFFERED = {"tma": "tmab", "tmat": "tmatb"}
SWAP_ROWS = (257, 2048)


def _pick(combo: str, m: int, n: int, k: int):
    from probe import pick_of_call

    return pick_of_call(combo, m, n, k)


def _buffered(cfg):
    """``cfg`` whole with the buffered store, or None where a rule refuses it."""
    from cutemma.errors import TiledMmaError

    try:
        return replace(cfg, epilogue=BUFFERED[cfg.epilogue], stream_k=False, split=None)
    except (TiledMmaError, KeyError):
        return None


def _plain(combo: str, m: int, n: int, k: int) -> bool:
    cfg = _pick(combo, m, n, k)
    return m >= 129 and not cfg.swap_ab and cfg.epilogue == "tma" and _buffered(cfg) is not None


def _swapped(combo: str, m: int, n: int, k: int) -> bool:
    cfg = _pick(combo, m, n, k)
    return SWAP_ROWS[0] <= m <= SWAP_ROWS[1] and cfg.swap_ab and cfg.epilogue == "tmat"


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    combos = ("bf16_bK", "bf16_bN", "e4m3")
    drawn = [(combos[i % 3], *s) for i, s in enumerate(draw_shapes(4000, seed))]
    random.Random(seed).shuffle(drawn)
    rest = max(0, draws - len(FIXED))
    plain = [c for c in drawn if _plain(*c)][: rest // 3]
    swapped = [c for c in drawn if _swapped(*c)][: rest - len(plain)]
    return FIXED + plain + swapped


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from probe import built

    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import FP8_PROMOTE, fits

    dtype = combo[:4]
    majors = ("K", "N" if combo == "bf16_bN" else "K")
    if (combo, m, n, k) in FIXED:

        def tile(bm: int, bn: int) -> Sm90Config:
            fp8 = {"promote": FP8_PROMOTE.get(bn, "split")} if dtype == "e4m3" else {}
            return Sm90Config(bm, bn, **fp8)

        found = [built(partial(tile, *t), dtype, majors) for t in TILES]
    else:
        pick = _pick(combo, m, n, k)
        found = [pick, replace(pick, stream_k=False, split=None)] if pick.stream_k else [pick]
        if pick.swap_ab:  # (fp8 promoted whole: two sets of 256-row sums fit only so)
            rows256 = {"block_m": 256, "stream_k": False, "split": None, "evict_first": ""}
            found.append(replace(pick, **rows256, **({"promote": True} if pick.promote else {})))
    out = {}
    swapped_majors = ("M" if combo == "bf16_bN" else "K", "K")
    for cfg in filter(None, found):
        for c in (cfg, _buffered(cfg)):
            if c is None or not fits(c, dtype):
                continue
            plain = replace(c, swap_ab=False)
            if built(lambda p=plain: p, dtype, swapped_majors if c.swap_ab else majors):
                out[c.name] = c
    return out


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 30)
