"""The decode step's ring depth on this device: each projection of the 8B-class model as a
CUDA graph of distinct weights (~3.5 GB, as bench/gemm_decode_graph.py's step), run by
cuBLAS and by the built-in pick with its ring (``stages``) as the space sets it
(:func:`cutemma.kernels.space.stream_stages`: about ``IN_FLIGHT_BYTES`` of weights in flight
over the grid, 8 MiB, fitted on an H100 at ~3 TB/s) and deeper, to see whether a device
with more DRAM bandwidth wants more bytes in flight (Little's law: bandwidth x latency).

    python bench/experiments/decode_ring_depth.py OUT.json [TOKENS [DTYPES]]
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

GRAPH_BYTES = 3.5e9
DEEPER = (1, 1.5, 2)  # the pick's ring depth times these (to at most MAX_STAGES, if it fits)


def depths(cfg, dtype: str) -> list:
    """The pick and its deeper rings that fit shared memory (the plan's own depth where the
    space left ``stages`` unset: the deepest that fits up to MAX_STAGES already)."""
    from cutemma.errors import TiledMmaError
    from cutemma.kernels.sm90.config import MAX_STAGES
    from cutemma.kernels.space import builds

    if cfg.stages is None:
        return [cfg]
    out = []
    for f in DEEPER:
        s = min(MAX_STAGES, round(cfg.stages * f))
        try:
            c = replace(cfg, stages=s)
        except TiledMmaError:  # a ring that shared memory cannot hold
            continue
        if builds(c, dtype) and c not in out:
            out.append(c)
    return out


def row(dtype: str, m: int, ws: list, copy: float) -> dict:
    import gemm_decode_graph as g
    import torch

    import cutemma
    from cutemma.kernels.pick import _sm90_pick

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
    picked = _sm90_pick(m, n, k, dtype, 1, 132, "h200", True)[0]
    timed = {}
    for cfg in depths(picked, dtype):
        try:
            s = g.replayed_s([ours(i, cfg) for i in range(len(ws))])
            timed[cfg.name] = {"ratio": round(peer / s, 4),
                               "read_of_copy": round(nbytes / s / 1e12 / copy, 4)}  # fmt: skip
        except Exception as exc:  # a kernel the graph cannot run: say which and why
            timed[cfg.name] = f"{type(exc).__name__}: {exc}"[:120]
    return {"dtype": dtype, "m": m, "n": n, "k": k, "copies": len(ws),
            "peer_us": round(peer * 1e6, 1),
            "peer_read_of_copy": round(nbytes / peer / 1e12 / copy, 4),
            "pick": picked.name, "by_depth": timed}  # fmt: skip


def main() -> None:
    import gemm_decode_graph as g
    import torch
    from gemm_sweep import MODELS

    out = sys.argv[1]
    tokens = [int(t) for t in (sys.argv[2] if len(sys.argv) > 2 else "1,16").split(",")]
    dtypes = (sys.argv[3] if len(sys.argv) > 3 else "bf16,e4m3").split(",")
    copy = g.copy_tbps()
    rows = []
    for dtype in dtypes:
        for n, k in MODELS["llama-3-8b"]:
            eb = 1 if dtype == "e4m3" else 2
            ws = []
            for _ in range(max(2, round(GRAPH_BYTES / (n * k * eb)))):
                w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
                ws.append(w.to(torch.float8_e4m3fn) if dtype == "e4m3" else w)
            for m in tokens:
                rows.append(row(dtype, m, ws, copy))
                print(json.dumps(rows[-1]), flush=True)
            del ws
            torch.cuda.empty_cache()
    with open(out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "copy_tbps": round(copy, 3),
                   "rows": rows}, f, indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
