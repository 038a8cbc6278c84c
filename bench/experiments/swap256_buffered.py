"""Swapped tiles of 256 weight rows with the buffered TMA store ("tmatb"): cuBLAS's
mid-size kernels (swapped 256 x 120-200 token tiles, e.g. `256x120 coopA`) that ours ran
at 410-460 TFLOPS with a whole staging tile (2-3 stages: raw/swap-wide-rows-h200.json) and
up to 1.108 of cuBLAS with two buffers and 4 stages (raw/buffered-store2-h200.json). The
data to fit their class's rate ("16/swap256") and to judge them against the pick.

Per call (16-bit, B of either major, 257-4096 rows drawn by the sweep's distribution at
run time): cuBLAS, the pick, and 256 x T for T each of the two token widths of the fewest
and one more token tiles that such a tile holds (at most what its registers hold), whole,
the weights without an evict-first hint. L2-flushed medians in turn, errors against cuBLAS.

    python bench/experiments/swap256_buffered.py OUT.json [--draws 40] [--seed S]
    python bench/experiments/swap256_buffered.py fit OUT.json   # CPU: the class's rate

``fit`` (no GPU): the rate of the class ("16/swap256") that makes the model's median error
over the even-numbered calls' 256-row kernels zero (the plain 256x128 class, which caps a
swapped tile's rate, lifted out of the way), then on the odd-numbered calls the kernels
the model would take over the pick with that rate, and their measured times against it.
"""

from __future__ import annotations

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

ROWS = (257, 4096)


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    drawn = [s for s in draw_shapes(20 * draws, seed) if ROWS[0] <= s[0] <= ROWS[1]]
    random.Random(seed).shuffle(drawn)
    return [(("bf16_bK", "bf16_bN")[i % 2], *s) for i, s in enumerate(drawn[:draws])]


ROWS_256 = 256  # weight rows: two warpgroups of two 64-row wgmma slices each


def _tile(tokens: int):
    from cutemma.kernels.sm90.config import Sm90Config

    return Sm90Config(ROWS_256, tokens, epilogue="tmatb", swap_ab=True)


def wide_swapped_kernels(m: int, b_major: str) -> tuple:
    """A 16-bit call's swapped 256-row kernels, whole: its tokens in the fewest tiles such
    a tile's registers hold and in one more, each where it builds for B's major."""
    from cutemma.kernels.space import SWAP_TOKENS, _swapped_builds, fits, swap_tokens

    if m <= SWAP_TOKENS:
        return ()
    widest = next(t for t in range(SWAP_TOKENS, 0, -8) if fits(_tile(t), "bf16"))
    least = -(-m // widest)
    widths = dict.fromkeys(swap_tokens(-(-m // tiles)) for tiles in (least, least + 1))
    found = (_tile(t) for t in widths)
    return tuple(c for c in found if fits(c, "bf16") and _swapped_builds(c, "bf16", b_major))


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    major = "N" if combo == "bf16_bN" else "K"
    return {c.name: c for c in wide_swapped_kernels(m, major)}


def _priced(c, r: dict, eff: float) -> float:
    """Microseconds the model gives 256-row kernel ``c`` on row ``r``'s call at rate ``eff``."""
    from dataclasses import replace

    from cutemma.kernels.cost import device, price, shape_free

    dev = device("h200")
    dev = replace(dev, eff=dev.eff | {"16/swap256": eff, "16/256x128": 1.0})
    return price(shape_free(c, "bf16", dev), c, r["m"], r["n"], r["k"], "bf16", 1, dev) * 1e6


def fit(path: str) -> dict:
    """The class rate from the even calls; the odd calls' moves at that rate."""
    import json
    import math
    import statistics

    rows = json.load(open(path))["rows"]

    def timed(r):
        major = "N" if r["combo"] == "bf16_bN" else "K"
        return [(c, r["us"][c.name]) for c in wide_swapped_kernels(r["m"], major)]

    def median_log(sub, eff):
        return statistics.median(
            math.log(_priced(c, r, eff) / us) for r in sub for c, us in timed(r)
        )

    even, odd = rows[::2], rows[1::2]
    eff = min((abs(median_log(even, e / 100)), e / 100) for e in range(40, 101))[1]
    moved = []
    for r in odd:
        priced = [(_priced(c, r, eff), us, c.name) for c, us in timed(r)]
        if priced and min(priced)[0] < r["pick"]["predicted_us"]:
            _, us, name = min(priced)
            moved.append({"call": [r["combo"], r["m"], r["n"], r["k"]], "kernel": name,
                          "speedup_over_pick": round(r["us"]["pick"] / us, 3)})  # fmt: skip
    errs = [abs(math.log(_priced(c, r, eff) / us)) for r in odd for c, us in timed(r)]
    return {"eff": eff, "held_out_median_abs_log_error": round(statistics.median(errs), 3),
            "moved_on_held_out": moved}  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1] == "fit":
        import json

        print(json.dumps(fit(sys.argv[2]), indent=1))
    else:
        from probe import main

        main(__file__, __doc__, shapes, kernels, 40)
