"""Does a decode projection's best kernel in a CUDA graph (distinct weights replayed back to
back, bench/gemm_decode_graph.py's timing) win L2-flushed too (bench/gemm.py --sweep's)?
For the 8B-class model's gate+up (28672 x 4096) and QKV (6144 x 4096) projections at 1, 4
and 16 tokens: the pick, 64x256 and 64x128 whole tiles (one tile row), and the pick's
swapped tiles at deeper rings, each as a graph over ~3.5 GB of distinct weights and as a
flushed call, both against cuBLAS in the same process.

    python bench/experiments/decode_graph_vs_flushed.py OUT.json
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

SHAPES = ((28672, 4096), (6144, 4096))
TOKENS = (1, 4, 16)


def configs(m: int, n: int, k: int) -> dict:
    """The pick and its rivals at (m, n, k) bf16, B K-major, by name."""
    from cutemma.kernels.pick import _sm90_pick
    from cutemma.kernels.sm90.config import Sm90Config

    picked = _sm90_pick(m, n, k, "bf16", 1, 132, "h200", True)[0]
    found = {"pick": picked, "w64x256": Sm90Config(64, 256, consumers=1),
             "w64x128": Sm90Config(64, 128, consumers=1)}  # fmt: skip
    from cutemma.kernels.cost import predict
    from cutemma.kernels.space import candidates

    # the model's cheapest swapped kernel of each other tile shape, up to two
    seen = {(picked.block_m, picked.block_n)}
    for c in sorted(
        candidates(m, n, k, "bf16"), key=lambda c: predict(c, m, n, k, "bf16", 1, "h200")
    ):
        if c.swap_ab and (c.block_m, c.block_n) not in seen and len(seen) < 3:
            seen.add((c.block_m, c.block_n))
            found[f"swap{c.block_m}x{c.block_n}"] = c
    if picked.swap_ab and picked.stages:
        for s in (6, 8):
            try:
                found[f"pick_s{s}"] = replace(picked, stages=s)
            except Exception:  # a ring that shared memory cannot hold
                pass
    return found


def main() -> None:
    import gemm_decode_graph as g
    import torch
    from decode_per_projection import contenders, weight_copies
    from gemm_sweep import operands, reps_for, turns_ms
    from pick_audit import calls_of, errors_of

    copy = g.copy_tbps()
    rows = []
    for n, k in SHAPES:
        ws = weight_copies(n, k, "bf16")
        for m in TOKENS:
            named = configs(m, n, k)
            peer, nbytes, ours = contenders("bf16", m, ws)
            graph = {}
            for key, cfg in named.items():
                try:
                    s = ours(cfg)
                    graph[key] = {"ratio": round(peer / s, 4),
                                  "read_of_copy": round(nbytes / s / 1e12 / copy, 4)}  # fmt: skip
                except Exception as exc:
                    graph[key] = f"{type(exc).__name__}: {exc}"[:120]
            A, B, out, p = operands("bf16_bK", m, n, k)
            # (calls_of's own "pick" runs the call's pick; the named one, set after it, is
            # the config itself, as in the graph)
            calls = calls_of(A, B, out, p, named)
            ref = p(torch.empty_like(out)).float()
            errs = errors_of(calls, list(named), out, ref)
            t = turns_ms(calls, reps_for(calls["cublas"]))
            row = {"m": m, "n": n, "k": k, "kernels": {key: c.name for key, c in named.items()},
                   "graph_vs_cublas": graph, "errors": errs,
                   "flushed_vs_cublas": {key: round(t["cublas"] / v, 4) for key, v in t.items()
                                         if key != "cublas"},
                   "flushed_us": {key: round(v * 1e3, 2) for key, v in t.items()}}  # fmt: skip
            rows.append(row)
            print(json.dumps(row), flush=True)
        del ws
        torch.cuda.empty_cache()
    with open(sys.argv[1], "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "copy_tbps": copy, "rows": rows,
                   "source": open(__file__).read()}, f, indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
