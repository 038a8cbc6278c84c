"""Tiles not in the space, on the calls of the peer study where cuBLAS ran them and beat the
pick (raw/peer-kernels-h200.json): cuBLAS, the pick and each tile of one set, whole and
stream-K, L2-flushed medians taken in turn; each tile's error against cuBLAS. Sets:

- ``c3``: 192-row tiles of three consumer warpgroups of 64 rows (``consumers=3``), 16-bit;
- ``wn2``: 192-row tiles of two warpgroups side by side along N, each every row by half the
  columns (``consumers_n=2``: cuBLAS's coopB), 16-bit;
- ``fp8w``: fp8 128-row tiles 112 and 144 wide (cuBLAS's 128x104..144), e4m3.

    python bench/experiments/tiles192_probe.py OUT.json [PEER.json] [--set c3|wn2|fp8w]
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

EXTRA = [(300, 4096, 4096), (404, 8192, 3584), (182, 7168, 18432), (256, 14336, 4096),
         (512, 8192, 8192), (640, 5120, 5120)]  # fmt: skip
EXTRA_FP8 = [(300, 28672, 4096), (404, 8192, 3584), (640, 5120, 5120), (1000, 8192, 8192),
             (512, 14336, 4096), (1500, 4096, 14336)]  # fmt: skip
# set -> (tile rows, widths, the config's other fields, dtypes it runs)
SETS = {
    "c3": (192, (96, 112, 128), {"consumers": 3}, "16"),
    "wn2": (192, (128, 160, 192), {"consumers_n": 2}, "16"),
    "fp8w": (128, (112, 144), {}, "fp8"),
}


def tile_set() -> str:
    return sys.argv[sys.argv.index("--set") + 1] if "--set" in sys.argv else "c3"


def configs(name: str | None = None) -> dict:
    """The set's tiles by name: whole, and stream-K split 4 and over the grid (fp8: promoted
    as the space promotes that width)."""
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import FP8_PROMOTE

    rows, widths, fields, kind = SETS[name or tile_set()]
    found = {}
    for bn in widths:
        default = "overlap" if bn <= 128 else "split"  # the space's rule: 3 sets fit to 128
        promote = {"promote": FP8_PROMOTE.get(bn, default)} if kind == "fp8" else {}
        for extra in ({}, {"stream_k": True, "split": 4}, {"stream_k": True}):
            cfg = Sm90Config(rows, bn, **fields, **promote, **extra)
            found[cfg.name] = cfg
    return found


def shapes(peer: str) -> list[tuple]:
    """(combo, m, n, k): the peer study's calls of 129-1024 rows of the set's type (16-bit or
    e4m3), then EXTRA (bf16, B K-major) or EXTRA_FP8 (e4m3)."""
    fp8 = SETS[tile_set()][3] == "fp8"
    rows = json.load(open(peer))["rows"]
    found = [(r["combo"], r["m"], r["n"], r["k"]) for r in rows
             if (r["combo"] == "e4m3") == fp8 and 129 <= r["m"] <= (4096 if fp8 else 1024)]  # fmt: skip
    extra = [("e4m3", *s) for s in EXTRA_FP8] if fp8 else [("bf16_bK", *s) for s in EXTRA]
    return list(dict.fromkeys(found + extra))[:20]


def row(combo: str, m: int, n: int, k: int, tiles: dict) -> dict:
    import torch
    from gemm_sweep import operands, pick_of, reps_for, turns_ms
    from pick_audit import calls_of, errors_of

    A, B, out, peer = operands(combo, m, n, k)
    ref = peer(torch.empty_like(out)).float()
    calls = calls_of(A, B, out, peer, tiles)
    errs = errors_of(calls, list(tiles), out, ref)
    t = turns_ms(calls, reps_for(calls["pick"]))
    us = {key: round(v * 1e3, 2) for key, v in t.items()}
    best = min((key for key in us if key not in ("cublas", "pick")), key=us.get, default=None)
    return {"combo": combo, "m": m, "n": n, "k": k, "pick": pick_of(A, B), "us": us,
            "errors": errs, "best_of_set": best,
            "pick_vs_cublas": round(us["cublas"] / us["pick"], 4),
            "best_of_set_vs_cublas": round(us["cublas"] / us[best], 4) if best else None}  # fmt: skip


def compile_shard(peer: str, shard: int, shards: int) -> None:
    """This shard's (call, kernel) pairs run once (:func:`probe.compile_shard`): the kernels
    land in the disk cache, so the timing process compiles nothing."""
    from probe import compile_shard as compile_cases

    compile_cases(shapes(peer), lambda *call: configs(), shard, shards)


def main() -> None:
    if sys.argv[1] == "compile":
        compile_shard(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    args = [a for i, a in enumerate(sys.argv) if a != "--set" and sys.argv[i - 1] != "--set"]
    peer = args[2] if len(args) > 2 else os.path.join(
        HERE, "..", "results", "raw", "peer-kernels-h200.json")  # fmt: skip
    import subprocess

    cmd = [sys.executable, __file__, "compile", peer]
    procs = [subprocess.Popen([*cmd, str(i), "14", "--set", tile_set()]) for i in range(14)]
    for p in procs:
        p.wait()
    tiles = configs()
    rows = []
    for case in shapes(peer):  # written after each row: a call cut short keeps its rows
        rows.append(row(*case, tiles))
        print(rows[-1], flush=True)
        with open(args[1], "w") as f:
            json.dump({"what": __doc__.splitlines()[0], "set": tile_set(), "rows": rows,
                       "script": open(__file__).read()}, f, indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
