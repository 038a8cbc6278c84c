"""Mid-size calls whose pick is a swapped tile (the weights in wgmma's M, the tokens in its
N): in pairs along the weights sharing the tokens? cuBLAS runs such calls as swapped tiles
in clusters of two along the weights (e.g. (700, 52768, 16992) e4m3: `128x144 2x1 coopA`,
the tokens' tile read once per pair by multicast), where our pick, a lone swapped
128 x T tile (T the token width), ran 0.86-0.89 of it and 1.2x its price
(raw/timer-noise-h200.json). The space's swapped pairs (:func:`space.token_pairs`) pair
the other way (along the tokens, sharing the weights) and only where a row sits off.

Per call (257-2048 tokens, K a multiple of 32 so that no row sits off, the pick swapped;
half the committed sweeps' such rows under 0.92, half drawn at run time): cuBLAS, the pick,
the pick whole, the pick whole in pairs along the weights (``cluster=2, multicast="B"`` on
the swapped problem), and the same for the token width of one more token tile (cuBLAS's
narrower tiles), each where the family builds it. L2-flushed medians in turn, errors
against cuBLAS.

    python bench/experiments/swap_weight_pairs.py OUT.json [--draws 16] [--seed S]
"""

from __future__ import annotations

import os
import random
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

ROWS = (257, 2048)


def _pick(combo: str, m: int, n: int, k: int):
    from probe import pick_of_call

    return pick_of_call(combo, m, n, k)


def _takes(combo: str, m: int, n: int, k: int) -> bool:
    return ROWS[0] <= m <= ROWS[1] and k % 32 == 0 and _pick(combo, m, n, k).swap_ab


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes
    from small_calls import sweep_losers

    lost = sweep_losers(
        lambda r: r["ratio"] < 0.92 and _takes(r["combo"], r["m"], r["n"], r["k"]),
        draws // 2,
        seed,
    )
    combos = ("e4m3", "bf16_bK", "bf16_bN")
    drawn = [(combos[i % 3], *s) for i, s in enumerate(draw_shapes(6000, seed))]
    random.Random(seed).shuffle(drawn)
    drawn = [c for c in drawn[:3000] if _takes(*c)]
    return list(dict.fromkeys(lost + drawn))[:draws]


def _narrower(m: int, width: int) -> int:
    """The token width of one more token tile than ``width`` gives (a multiple of 16)."""
    tiles = -(-m // width) + 1
    per_tile = -(-m // tiles)
    return 16 * -(-per_tile // 16)


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from cutemma.errors import TiledMmaError
    from cutemma.kernels.space import _swapped_builds

    dtype = combo[:4]
    b_major = "N" if combo == "bf16_bN" else "K"
    pick = _pick(combo, m, n, k)
    whole = replace(pick, stream_k=False, split=None)
    narrow = replace(whole, block_n=_narrower(m, whole.block_n))
    # (fp8 in clusters is promoted whole: by column halves it spills there)
    pair = {"cluster": 2, "multicast": "B", "evict_first": ""}
    pair |= {"promote": True} if pick.promote else {}
    found = {}
    for name, make in (
        ("whole", lambda: whole),
        ("pairs", lambda: replace(whole, **pair)),
        ("narrow", lambda: narrow),
        ("narrow_pairs", lambda: replace(narrow, **pair)),
    ):
        try:
            cfg = make()
        except TiledMmaError:  # (a rule refuses it: not timed)
            continue
        if cfg != pick and _swapped_builds(cfg, dtype, b_major):
            found[name + "_" + cfg.name] = cfg
    return found


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, 16)
