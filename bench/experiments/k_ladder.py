"""Where a mid-size call's time goes, fixed part or per k: calls the sweeps lost on (16-bit,
129-4096 rows, the pick an unswapped 128-row tile) timed at a ladder of K, cuBLAS beside
the pick and the 128x128, 128x192 and 128x256 whole tiles, so that a straight line
T(K) = fixed + slope * K fitted per kernel splits each one's time into what it pays once
(launch, prologue, pipeline fill, epilogue, tail) and what each k costs (its mainloop's
rate), against cuBLAS's (whose kernel may change along the ladder: each row records the
kernels it launched).

    python bench/experiments/k_ladder.py OUT.json      # GPU: the ladder
    K_LADDER_SET=clusters python bench/experiments/k_ladder.py OUT.json
    K_LADDER_SET=order python bench/experiments/k_ladder.py OUT.json   # (or swap_order)
    K_LADDER_SET=order ncu --profile-from-start off --metrics ... --csv \
        python bench/experiments/k_ladder.py profile
    python bench/experiments/k_ladder.py fit OUT.json  # CPU: the lines

The "clusters" set times, on the calls where cuBLAS ran a 128-row tile of T tokens (its
kernel names, in its column-major terms: ``128xT_..._1x2`` is our swapped tile of 128
weight rows by T tokens, in pairs along the tokens), our swapped 128 x T tile alone and in
pairs along the tokens (``space.token_pair``), and the 128x128 tile in pairs along N
(A multicast) and along M (B multicast). The "order" set times the 128x128 tile on one
wave of its tiles in each raster group size (``group_m``) beside the swapped 128x128 tile
and the swapped tile of cuBLAS's width; "swap_order" the two swapped tiles in each group
size.

``fit`` fits each (call, kernel) over the ladder's K from 1024 up (least squares), and
reports the intercept in us, the slope as the TFLOP/s the kernel's k steps run at, and
the same for cuBLAS where its kernel name held over those K.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

# (m, n) of sweep rows under 0.9 whose pick was a whole unswapped 128-row tile
# (bench/results/sweep-h200-{611084540,3795371067,1407898092}.json), 0.55-3 waves of it
PAIRS = ((1187, 1584), (777, 1808), (539, 2432), (198, 4608), (1337, 1600), (204, 11680),
         (284, 10784), (1158, 7168), (3467, 3344))  # fmt: skip
LADDER = (256, 512, 1024, 2048, 4096, 8192)
FIT_FROM = 1024


# (m, n) -> the token width of cuBLAS's 128-row kernel there (raw/k-ladder-h200.json)
PEER_TOKENS = {(1187, 1584): 120, (1337, 1600): 136, (204, 11680): 104, (1158, 7168): 168}


# (m, n) of one wave of 128 x 128 tiles for the "order" set: the unswapped tile in each raster
# group (group_m), against the swapped tile of the same shape and of cuBLAS's width
ORDER_PAIRS = {(1187, 1584): 120, (777, 1808): 112}


def _set() -> str:
    return os.environ.get("K_LADDER_SET", "widths")


def shapes(draws: int, seed: int) -> list[tuple]:
    if _set() in ("order", "swap_order"):
        return [("bf16_bK", m, n, k) for m, n in ORDER_PAIRS for k in LADDER[2:]]
    pairs = PEER_TOKENS if _set() == "clusters" else PAIRS
    return [(combo, m, n, k) for m, n in pairs for k in LADDER
            for combo in ("bf16_bK", "bf16_bN")]  # fmt: skip


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from dataclasses import replace

    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import mid_swapped_kernel, token_pair

    if _set() == "swap_order":  # (the swapped tiles in each raster group size)
        return {f"swap{t}_g{g}": replace(mid_swapped_kernel(t, "bf16", False), group_m=g)
                for t in (128, ORDER_PAIRS[m, n]) for g in (1, 2, 8, 16)}  # fmt: skip
    if _set() == "order":
        swapped = {
            f"swap{t}": mid_swapped_kernel(t, "bf16", False) for t in (128, ORDER_PAIRS[m, n])
        }
        return {f"w128_g{g}": Sm90Config(128, 128, group_m=g) for g in (1, 2, 8, 16)} | swapped
    if _set() != "clusters":
        return {f"w{bn}": Sm90Config(128, bn) for bn in (128, 192, 256)}

    lone = mid_swapped_kernel(PEER_TOKENS[m, n], "bf16", False)
    return {"swap": lone, "swap_pair": token_pair(lone),
            "w128": Sm90Config(128, 128), "w128_pair_n": Sm90Config(128, 128, cluster=2, multicast="A"),
            "w128_pair_m": Sm90Config(128, 128, cluster=2, multicast="B")}  # fmt: skip


def fit(path: str) -> dict:
    """Per (combo, m, n): each kernel's fixed us and k-step TFLOP/s over K >= FIT_FROM."""
    import json
    import statistics

    rows = json.load(open(path))["rows"]
    out = []
    for combo, m, n in sorted({(r["combo"], r["m"], r["n"]) for r in rows}):
        ladder = sorted((r for r in rows if (r["combo"], r["m"], r["n"]) == (combo, m, n)
                         and r["k"] >= FIT_FROM), key=lambda r: r["k"])  # fmt: skip
        ks = [r["k"] for r in ladder]
        got = {"combo": combo, "m": m, "n": n, "k": ks}
        for name in ladder[0]["us"]:
            ts = [r["us"][name] for r in ladder]
            slope, fixed = statistics.linear_regression(ks, ts)
            got[name] = {"fixed_us": round(fixed, 2),
                         "k_tflops": round(2 * m * n / (slope * 1e6), 1)}  # fmt: skip
        peers = {tuple(r.get("peer_kernels", ())) for r in ladder}
        got["peer_kernel_held"] = len(peers) == 1
        got["peer_kernels"] = [list(p) for p in peers]
        out.append(got)
    return {"fit_from_k": FIT_FROM, "rows": out}


def profile() -> None:
    """For ncu (``--profile-from-start off``): the "order" set's kernels and cuBLAS once each
    on its calls at the ladder's longest K, in the order printed."""
    from gemm_sweep import operands
    from ncu_mid import profile_once
    from pick_audit import calls_of

    for m, n in ORDER_PAIRS:
        A, B, out, peer = operands("bf16_bK", m, n, LADDER[-1])
        found = calls_of(A, B, out, peer, kernels("bf16_bK", m, n, LADDER[-1]))
        profile_once(found)
        print("profiled:", m, n, LADDER[-1], list(found), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "profile":
        profile()
    elif sys.argv[1] == "fit":
        import json

        print(json.dumps(fit(sys.argv[2]), indent=1))
    else:
        from probe import add_peer_kernels, main

        main(__file__, __doc__, shapes, kernels, 0)
        add_peer_kernels(sys.argv[1])
