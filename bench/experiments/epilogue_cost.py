"""What a fused epilogue costs and what pingpong tiles run at: on shapes drawn from the
sweep's distribution and the epilogue sweep's short-K rows, the built-in plain call, each
pingpong tile's plain call (``config=``), and the built-in fused call of several op chains
(each with the kernel it ran), so that the cost model can be given a per-element epilogue
cost by kind of op and pingpong tiles their rates.

    python bench/experiments/epilogue_cost.py OUT.json [COUNT [SEED [CHAINS]]]

CHAINS: op chains as ``op+op,op,...`` (default: the five below); COUNT 0 runs only the
short-K shapes.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

CHAINS = [
    ("bias",),
    ("gelu_tanh",),
    ("bias", "gelu_tanh"),
    ("scale_col", "bias", "silu"),
    ("relu",),
]
PINGPONG = [(64, 128), (64, 192), (64, 256), (128, 64), (128, 128)]
SHORT_K = [(9643, 15616, 352), (38, 64480, 432), (36, 32768, 512), (2993, 5120, 1280),
           (4096, 8192, 512), (1024, 12288, 256)]  # fmt: skip


def row(m: int, n: int, k: int, chains: list[tuple[str, ...]]) -> dict:
    """One shape's times (us, L2-flushed medians of 2 rounds in turn) and kernels."""
    import torch
    from gemm_sweep import pick_of, reps_for, turns_ms

    import cutemma
    from cutemma.kernels.sm90.config import Sm90Config

    A = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    W = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    vec = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    tensors = {"bias": vec, "scale_col": vec, "bias_row": torch.randn(m, device="cuda",
               dtype=torch.bfloat16), "residual": torch.randn(m, n, device="cuda")}  # fmt: skip
    tensors["scale_row"] = tensors["bias_row"]
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    calls = {"plain": lambda: cutemma.gemm(A, W.t(), out=out)}
    r = {"m": m, "n": n, "k": k, "pick": pick_of(A, W.t()), "fused_picks": {}}
    for bm, bn in PINGPONG:
        cfg = Sm90Config(bm, bn, schedule="pingpong")
        calls[cfg.name] = lambda c=cfg: cutemma.gemm(A, W.t(), out=out, config=c)
    for chain in chains:
        kw = {op: tensors[op] for op in chain if op in tensors}
        name = "+".join(chain)
        calls[name] = lambda c=chain, kw=kw: cutemma.gemm(A, W.t(), out=out, epilogue=c, **kw)
        fused = cutemma.kernels.which_kernel(A, W.t(), epilogue=chain, **kw)
        r["fused_picks"][name] = {"config": fused.config.name, "swap": bool(fused.swap)}
    for call in calls.values():
        call()
    medians = turns_ms(calls, reps_for(calls["plain"]), turns=2)
    r["us"] = {name: round(ms * 1e3, 2) for name, ms in medians.items()}
    return r


def main() -> None:
    import torch
    from gemm_sweep import draw_shapes

    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 14
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 41
    chains = [tuple(c.split("+")) for c in sys.argv[4].split(",")] if len(sys.argv) > 4 else CHAINS
    rows = []
    for m, n, k in (draw_shapes(count, seed) if count else []) + SHORT_K:
        try:
            rows.append(row(m, n, k, chains))
        except Exception as exc:  # a shape the experiment cannot run: say which and why
            rows.append({"m": m, "n": n, "k": k, "error": f"{type(exc).__name__}: {exc}"[:200]})
        torch.cuda.empty_cache()
        print(json.dumps(rows[-1]), flush=True)
    with open(out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "seed": seed, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
