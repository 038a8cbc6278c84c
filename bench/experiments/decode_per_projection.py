"""Which kernel each projection of the decode step runs fastest in a CUDA graph: the
8B-class model's four projections one at a time, each as a graph of distinct weights
(~3.5 GB, as bench/gemm_decode_graph.py's step) run by cuBLAS, by cutemma's built-in pick
and by each of the model's cheapest few kernels of the space (``config=``), so that a
projection the step loses on, and the kernel that would win it there, show by name.

    python bench/experiments/decode_per_projection.py OUT.json [TOKENS [DTYPES [TOP]]]
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

GRAPH_BYTES = 3.5e9


def row(dtype: str, m: int, ws: list, copy: float, top: int) -> dict:
    """One projection at ``m`` tokens: cuBLAS's graph, then each kernel's, as ratios."""
    import gemm_decode_graph as g
    import torch

    import cutemma
    from cutemma.kernels import cost, space
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
    found = space.candidates(m, n, k, dtype, 1, 132, True)
    priced = sorted(found, key=lambda c: cost.predict(c, m, n, k, dtype, 1, "h200"))
    timed = {}
    for cfg in [picked] + [c for c in priced[:top] if c != picked]:
        try:
            timed[cfg.name] = round(peer / g.replayed_s([ours(i, cfg) for i in range(len(ws))]), 4)
        except Exception as exc:  # a kernel the graph cannot run: say which and why
            timed[cfg.name] = f"{type(exc).__name__}: {exc}"[:120]
    return {"dtype": dtype, "m": m, "n": n, "k": k, "copies": len(ws),
            "peer_us": round(peer * 1e6, 1),
            "peer_read_of_copy": round(nbytes / peer / 1e12 / copy, 4),
            "pick": picked.name, "ratio_by_config": timed}  # fmt: skip


def main() -> None:
    import gemm_decode_graph as g
    import torch
    from gemm_sweep import MODELS

    out = sys.argv[1]
    tokens = [int(t) for t in (sys.argv[2] if len(sys.argv) > 2 else "1,16").split(",")]
    dtypes = (sys.argv[3] if len(sys.argv) > 3 else "bf16").split(",")
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 6
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
                rows.append(row(dtype, m, ws, copy, top))
                print(json.dumps(rows[-1]), flush=True)
            del ws
            torch.cuda.empty_cache()
    with open(out, "w") as f:
        json.dump({"copy_tbps": round(copy, 3), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
