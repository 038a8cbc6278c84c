"""The tile map behind the built-in picker's constants (issue 21): every mid-size row of the
inference table (M = 128 .. 4096 tokens on its four projection shapes) run with each
candidate tile, plain and stream-K, against its peer, on the GPU, in one process:

    python bench/experiments/tile_map.py OUT.json [--dtype bf16|e4m3] [--m 512,1024]

Each row: the built-in pick (``default``), the candidates' ratios (peer time / cutemma
time, medians of interleaved rounds, L2 flushed), and which candidate was best.
:data:`cutemma.kernels.pick.TILE_SPEEDS_16`, ``FP8_TILES`` and ``SK_WAVES`` are read off
such maps (bench/results/raw/tile-map-*.json).
"""

# ruff: noqa: B023 -- each loop iteration times its own lambdas before the next rebinds them
from __future__ import annotations

import sys as _sys  # the GPU checks' helpers (gpu_timing) live in tests/kernels
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests" / "kernels"))
_sys.path.insert(0, str(_Path(__file__).resolve().parent))
import datetime
import json
import os
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor

import torch

sys.path.insert(0, os.path.dirname(__file__))
from sk_probe import BF, E4, _compile, make, peer_call  # noqa: E402

import cutemma  # noqa: E402
from cutemma.kernels.dispatch import gemm as gemm_sm90  # noqa: E402
from cutemma.kernels.pick import builtin_sm90_config  # noqa: E402
from cutemma.kernels.sm90.config import Sm90Config  # noqa: E402

SHAPES_NK = [(10240, 8192), (8192, 28672), (57344, 8192), (8192, 8192)]
MS = (128, 256, 512, 1024, 2048, 4096)
TILES = {  # the tiles tried on every row, each plain and as stream-K
    "bf16": [dict(block_n=256), dict(block_n=192), dict(block_n=128), dict(block_n=64)],
    "e4m3": [
        dict(block_n=192, promote="split"),
        dict(block_n=160, promote="split"),
        dict(block_n=128, promote="overlap"),
    ],
}
ROUNDS = 3


def candidates(dtype: str) -> list[Sm90Config]:
    return [Sm90Config(**kw, stream_k=sk) for kw in TILES[dtype] for sk in (False, True)]


def quick_ms(fn) -> float:
    """Median ms over ~25 ms of calls, L2 flushed between them (triton's do_bench)."""
    import triton.testing as tt

    return tt.do_bench(fn, warmup=5, rep=25, return_mode="median")


def ratio(ours, theirs) -> tuple[float, float]:
    """(peer / ours, peer us): medians over ROUNDS rounds, the order swapped each round."""
    mine, peer = [], []
    for r in range(ROUNDS):
        a, b = (ours, theirs) if r % 2 == 0 else (theirs, ours)
        ta, tb = quick_ms(a), quick_ms(b)
        mine.append(ta if r % 2 == 0 else tb)
        peer.append(tb if r % 2 == 0 else ta)
    return statistics.median(peer) / statistics.median(mine), statistics.median(peer) * 1e3


def prewarm(dtypes) -> None:
    cases = []
    for dt in dtypes:
        bmaj = "K" if dt == "e4m3" else "N"
        cases += [(c, dt, "K", bmaj) for c in candidates(dt)]
    with ProcessPoolExecutor(16) as ex:
        bad = [r for r in ex.map(_compile, cases) if r != "ok"]
    print(f"prewarmed {len(cases)}; failed {bad}", flush=True)


def row_of(dt: str, m: int, n: int, k: int, A, B, out) -> dict:
    fp8 = dt == "e4m3"
    peer = peer_call(fp8, A, B, out)
    pick = builtin_sm90_config(m, n, k, dt)
    row = {"dtype": dt, "m": m, "n": n, "k": k, "builtin": pick.name, "ratio": {}}
    cands = {"default": lambda: cutemma.gemm(A, B, out=out)}
    cands |= {c.name: (lambda c=c: gemm_sm90(A, B, out=out, config=c)) for c in candidates(dt)}
    for name, fn in cands.items():
        try:
            fn()
            torch.cuda.synchronize()
            row["ratio"][name], row["peer_us"] = (
                round(v, 4 - 2 * i) for i, v in enumerate(ratio(fn, peer))
            )
        except Exception as exc:  # noqa: BLE001
            row["ratio"][name] = f"{type(exc).__name__}: {exc}"[:200]
    timed = {k: v for k, v in row["ratio"].items() if isinstance(v, float) and k != "default"}
    row["best"] = max(timed, key=timed.get) if timed else None
    return row


def main() -> None:
    args = sys.argv[1:]
    path = args[0]
    dtypes = [args[args.index("--dtype") + 1]] if "--dtype" in args else ["bf16", "e4m3"]
    ms = [int(v) for v in args[args.index("--m") + 1].split(",")] if "--m" in args else MS
    result = {
        "device": torch.cuda.get_device_name(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "method": f"triton do_bench medians (5 ms warm-up, 25 ms of calls, L2 flushed), {ROUNDS} "
        "rounds alternating cutemma and the peer; ratio = peer time / cutemma time",
        "rows": [],
    }
    prewarm(dtypes)
    for dt in dtypes:
        dtype = E4 if dt == "e4m3" else BF
        for n, k in SHAPES_NK:
            B = make(k, n, dt == "e4m3", dtype)
            for m in ms:
                A = make(m, k, False, dtype)
                out = torch.empty(m, n, device="cuda", dtype=BF)
                row = row_of(dt, m, n, k, A, B, out)
                result["rows"].append(row)
                print(json.dumps(row), flush=True)
                with open(path, "w") as f:  # what is done so far survives a timeout
                    json.dump(result, f, indent=1)
            B = None
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
