"""Do mid-size swapped calls lose to cuBLAS because two CTAs read each weight tile? A
swapped kernel with two or more token tiles gives each 128-row weight tile to as many CTAs,
one per token tile; where they drift apart the second reads the weights again from DRAM
(K-major weights, 128 bytes a row a k tile, read at a poor DRAM rate). Pairs of CTAs along
the tokens sharing the weights by multicast (``cluster=2, multicast="A"`` on the swapped
problem) read each weight tile once, in step.

For mid-size calls of the sweeps whose pick is a swapped 128-row kernel of two or more token
tiles (bf16 with each B major, e4m3), it times cuBLAS, the pick, the pick whole (no
stream-K: clusters take none), the pick's tile in pairs with its TMA-store epilogue
(``pair``: the tree's ``tmat_cooperative`` rule must allow cluster 2 for it to build) and
with the register epilogue (``pair_regs``), and the pick's tile at the token width that
makes the token tiles even (``pair_even``), L2-flushed medians in turn, each with its error
against cuBLAS.

    python bench/experiments/swap_pairs_mid.py OUT.json [drawn N SEED [COMBOS]]

(e4m3 picks promoted by column halves, which clusters do not take, are also timed whole
promoted as a 16-bit tile is and overlapped, and in pairs promoted whole.)
"""

from __future__ import annotations

import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

# (combo, m, n, k): sweeps 2701130065 and 2158372369's worst such rows (ratio in the comment)
CALLS = [
    ("bf16_bK", 284, 33472, 37600),  # 0.68
    ("bf16_bN", 284, 33472, 37600),  # 0.92
    ("e4m3", 284, 33472, 37600),  # 0.73
    ("bf16_bK", 417, 8192, 32768),  # 0.78
    ("bf16_bN", 417, 8192, 32768),  # 0.98
    ("bf16_bK", 272, 9072, 54928),  # 0.73 (stream-K)
    ("e4m3", 272, 9072, 54928),  # 0.73 (stream-K)
    ("bf16_bK", 1072, 1600, 6400),  # 0.78 (stream-K)
    ("bf16_bK", 429, 3520, 54144),  # 0.83 (stream-K)
    ("bf16_bK", 2086, 2320, 3312),  # 0.83
    ("e4m3", 1544, 43888, 10960),  # 0.84
    ("bf16_bK", 568, 61904, 3024),  # 0.85
    ("bf16_bK", 833, 16384, 16384),  # 0.89
    ("bf16_bK", 465, 36864, 7168),  # 0.87 (stream-K)
]


def drawn(count: int, seed: int, combos: tuple = ("bf16_bK", "bf16_bN", "e4m3")) -> list[tuple]:
    """``count`` calls of 129-2048 rows drawn as bench/gemm_sweep.py draws N and K, whose
    pick is a swapped 128-row kernel of two or more token tiles."""
    from cutemma.kernels.pick import builtin_sm90_config

    rng, out = random.Random(seed), []
    while len(out) < count:
        m = round(math.exp(rng.uniform(math.log(129), math.log(2048))))
        n, k = (16 * round(math.exp(rng.uniform(math.log(256), math.log(65536))) / 16)
                for _ in range(2))  # fmt: skip
        combo = rng.choice(combos)
        pick = _pick(combo, m, n, k, builtin_sm90_config)
        if pick.swap_ab and pick.block_m == 128 and -(-m // pick.block_n) >= 2:
            out.append((combo, m, n, k))
    return out


def _pick(combo, m, n, k, builtin):
    """The call's built-in pick, with where its rows sit as a contiguous call's are (the
    runs of 2026-11-30 in bench/results/raw/swap-pairs-mid*-h200.json left that out: their
    e4m3 'pick' on K an odd multiple of 16 is the aligned call's)."""
    from cutemma.kernels.call import half_sector_off

    dtype = "e4m3" if combo == "e4m3" else "bf16"
    pitch = half_sector_off(k * (1 if dtype == "e4m3" else 2))
    rows16 = (pitch, pitch and combo != "bf16_bN")
    major = "N" if combo == "bf16_bN" else "K"
    return builtin(m, n, k, dtype, swap=True, b_major=major, rows16=rows16)


def variants(pick, m: int) -> dict:
    """The changes timed beside the pick, each applied to it in order (a refused one: its
    TiledMmaError's text)."""
    whole = {"stream_k": False, "split": None}
    pair = whole | {"cluster": 2, "multicast": "A", "evict_first": ""}
    out = {"whole": whole}
    if pick.promote == "split":  # (fp8 promoted by column halves runs without clusters)
        pair |= {"promote": True}
        out |= {"whole_promoted": whole | {"promote": True},
                "whole_overlap": whole | {"promote": "overlap"}}  # fmt: skip
    out |= {"pair": pair, "pair_regs": pair | {"epilogue": "regs"}}
    tiles = -(-m // pick.block_n)
    if tiles % 2:  # the token width that gives one more tile, an even count
        out["pair_even"] = pair | {"block_n": 8 * -(-m // (8 * (tiles + 1)))}
    return out


def row(combo: str, m: int, n: int, k: int) -> dict:
    from gemm_sweep import operands
    from probe import applied, timed_against_peer

    from cutemma.kernels.pick import builtin_sm90_config

    A, B, out, peer = operands(combo, m, n, k)
    pick = _pick(combo, m, n, k, builtin_sm90_config)
    got = {"combo": combo, "m": m, "n": n, "k": k, "pick": pick.name}
    configs = applied(pick, variants(pick, m), got)
    return timed_against_peer(A, B, out, peer, configs, got)


def main() -> None:
    calls = list(CALLS)
    if len(sys.argv) > 2 and sys.argv[2] == "drawn":
        combos = (
            tuple(sys.argv[5].split(",")) if len(sys.argv) > 5 else ("bf16_bK", "bf16_bN", "e4m3")
        )
        calls = drawn(int(sys.argv[3]), int(sys.argv[4]), combos)
    rows = []
    for combo, m, n, k in calls:
        try:
            rows.append(row(combo, m, n, k))
        except Exception as exc:
            rows.append({"combo": combo, "m": m, "n": n, "k": k, "error": repr(exc)[:300]})
        print(json.dumps(rows[-1]), flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump({"rows": rows, "argv": sys.argv[1:], "script": open(__file__).read()}, f,
                  indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
