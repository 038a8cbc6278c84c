"""Which kernel each projection of the decode step runs fastest in a CUDA graph: the
8B-class model's four projections one at a time, each as a graph of distinct weights
(~3.5 GB, as bench/gemm_decode_graph.py's step) run by cuBLAS, by cutemma's built-in pick
and by each of the model's cheapest few kernels of the space (``config=``), so that a
projection the step loses on, and the kernel that would win it there, show by name. With
TOP "rings": the pick at deeper rings than the space's (``space.stream_stages``: about
``space.IN_FLIGHT_BYTES`` of weights in flight over the grid, 8 MiB, set on an H100 at
~3 TB/s), to see whether a faster DRAM wants more bytes in flight
(raw/decode-ring-depth-h200.json).

    python bench/experiments/decode_per_projection.py OUT.json [TOKENS [DTYPES [TOP|rings [MODEL]]]]

MODEL (default llama-3-8b) names bench/gemm_sweep.py's MODELS entry whose projections run.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

GRAPH_BYTES = 3.5e9


def contenders(dtype: str, m: int, ws: list) -> tuple:
    """At ``m`` tokens over the weights ``ws``: cuBLAS's graph seconds, the weights' bytes,
    and a function of a config that gives cutemma's graph seconds with it."""
    import gemm_decode_graph as g
    import torch

    import cutemma

    n, k = ws[0].shape
    acts = [torch.randn(m, k, device="cuda").to(ws[0].dtype) for _ in ws]
    outs = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in ws]
    one = torch.ones((), device="cuda")

    def theirs(i):
        if dtype == "e4m3":
            return lambda: torch._scaled_mm(acts[i], ws[i].t(), one, one, out_dtype=torch.bfloat16)
        return lambda: torch.matmul(acts[i], ws[i].t(), out=outs[i])

    def ours(i, cfg):
        return lambda: cutemma.gemm(acts[i], ws[i].t(), out=outs[i], config=cfg)

    peer = g.replayed_s([theirs(i) for i in range(len(ws))])
    nbytes = sum(w.numel() * w.element_size() for w in ws)
    return peer, nbytes, lambda cfg: g.replayed_s([ours(i, cfg) for i in range(len(ws))])


def weight_copies(n: int, k: int, dtype: str) -> list:
    """Distinct (n, k) weights of ``dtype``, about GRAPH_BYTES of them (at least 2)."""
    import torch

    eb = 1 if dtype == "e4m3" else 2
    ws = []
    for _ in range(max(2, round(GRAPH_BYTES / (n * k * eb)))):
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        ws.append(w.to(torch.float8_e4m3fn) if dtype == "e4m3" else w)
    return ws


# "rings": the pick's ring depth (its stages) times these, to at most MAX_STAGES, where it fits
DEEPER = (1, 1.5, 2)


def deeper_rings(cfg, dtype: str) -> list:
    """``cfg`` and its deeper rings that fit shared memory (none where the space left
    ``stages`` unset: the plan's own depth is the deepest that fits up to MAX_STAGES)."""
    from dataclasses import replace

    from cutemma.errors import TiledMmaError
    from cutemma.kernels.sm90.config import MAX_STAGES
    from cutemma.kernels.space import builds

    if cfg.stages is None:
        return [cfg]
    out = []
    for f in DEEPER:
        try:
            c = replace(cfg, stages=min(MAX_STAGES, round(cfg.stages * f)))
        except TiledMmaError:  # a ring that shared memory cannot hold
            continue
        if builds(c, dtype) and c not in out:
            out.append(c)
    return out


def row(dtype: str, m: int, ws: list, copy: float, top: int | str) -> dict:
    """One projection at ``m`` tokens: cuBLAS's graph, then each kernel's (its time's ratio
    to cuBLAS's and its weights' read rate over the copy's): the pick and the model's
    cheapest ``top`` of the space, or with ``top`` "rings" the pick at deeper rings."""
    from cutemma.kernels import cost, space
    from cutemma.kernels.pick import _sm90_pick

    n, k = ws[0].shape
    peer, nbytes, ours = contenders(dtype, m, ws)
    picked = _sm90_pick(m, n, k, dtype, 1, 132, "h200", True)[0]
    if top == "rings":
        configs = deeper_rings(picked, dtype)
    else:
        found = space.candidates(m, n, k, dtype, 1, 132, True)
        priced = sorted(found, key=lambda c: cost.predict(c, m, n, k, dtype, 1, "h200"))
        configs = [picked] + [c for c in priced[:top] if c != picked]
    timed = {}
    for cfg in configs:
        try:
            s = ours(cfg)
            timed[cfg.name] = {"ratio": round(peer / s, 4),
                               "read_of_copy": round(nbytes / s / 1e12 / copy, 4)}  # fmt: skip
        except Exception as exc:  # a kernel the graph cannot run: say which and why
            timed[cfg.name] = f"{type(exc).__name__}: {exc}"[:120]
    return {"dtype": dtype, "m": m, "n": n, "k": k, "copies": len(ws),
            "peer_us": round(peer * 1e6, 1),
            "peer_read_of_copy": round(nbytes / peer / 1e12 / copy, 4),
            "pick": picked.name, "by_config": timed}  # fmt: skip


def main() -> None:
    import gemm_decode_graph as g
    import torch
    from gemm_sweep import MODELS

    out = sys.argv[1]
    tokens = [int(t) for t in (sys.argv[2] if len(sys.argv) > 2 else "1,16").split(",")]
    dtypes = (sys.argv[3] if len(sys.argv) > 3 else "bf16").split(",")
    top = sys.argv[4] if len(sys.argv) > 4 else "6"
    top = top if top == "rings" else int(top)
    model = sys.argv[5] if len(sys.argv) > 5 else "llama-3-8b"
    if model not in MODELS:
        sys.exit(f"decode_per_projection: MODEL {model!r}; give one of {sorted(MODELS)}")
    copy = g.copy_tbps()
    rows = []
    for dtype in dtypes:
        for n, k in MODELS[model]:
            ws = weight_copies(n, k, dtype)
            for m in tokens:
                rows.append(row(dtype, m, ws, copy, top))
                print(json.dumps(rows[-1]), flush=True)
            del ws
            torch.cuda.empty_cache()
    with open(out, "w") as f:
        json.dump({"copy_tbps": round(copy, 3), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
