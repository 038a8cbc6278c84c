"""Programmatic dependent launches (``Sm90Config(pdl=True)``) on the GPU: each step of a
decode-like sequence has a torch kernel rewrite the activations and then ``cutemma.gemm``
read them, so a launch that read before the previous grid ended would read stale data.
Run eagerly and as a CUDA graph replayed three times with every output poisoned (NaN)
first; each output is compared with the peer (issue 21; tests/gpu_validate.sh step pdl):

    python tests/kernels/gpu_pdl.py OUT.json [--small]

``--small``: shapes small enough for compute-sanitizer (gpu_validate.sh san_*_pdl).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import torch

import cutemma
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.space import swapped_kernel

STEPS = 4
UNIT = None  # the peer's unit scales, made on the device once


def cases(small: bool) -> list[tuple]:
    """(dtype, m, n, k, config): decode configs with pdl added (64-row tiles shared by
    stream-K; 128-row whole tiles where N = 10240 puts 64-row tiles between one and two
    waves) and a plain 2-D kernel with it."""
    k = 512 if small else 8192
    n = 2048 if small else 10240
    return [
        ("e4m3", 16, n, k, replace(swapped_kernel(16, n, k, "e4m3", 132, False), pdl=True)),
        (
            "e4m3",
            64,
            n * 4 // 5,
            k,
            replace(swapped_kernel(64, n * 4 // 5, k, "e4m3", 132, False), pdl=True),
        ),
        ("bf16", 16, 10240, k, replace(swapped_kernel(16, 10240, k, "bf16", 132, False), pdl=True)),
        ("bf16", 256, n, k, Sm90Config(128, 256, pdl=True)),
    ]


def operands(dtype: str, m: int, n: int, k: int) -> tuple[list, list]:
    """STEPS activations (M, K) and weights (K, N; fp8 column-major)."""
    if dtype == "e4m3":
        acts = [torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn) for _ in range(STEPS)]
        ws = [torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t() for _ in range(STEPS)]
    else:
        acts = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(STEPS)]
        ws = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _ in range(STEPS)]
    return acts, ws


def peer(A, W):
    if A.dtype == torch.float8_e4m3fn:
        return torch._scaled_mm(A, W, UNIT, UNIT, out_dtype=torch.bfloat16)
    return A @ W


def check(dtype: str, m: int, n: int, k: int, cfg) -> dict:
    """Eager, then a graph replayed 3 times: every step's output within 1e-2 of the peer's
    and the same bits each time."""
    assert cfg.pdl, cfg.name
    acts, ws = operands(dtype, m, n, k)
    act = torch.empty_like(acts[0])
    outs = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(STEPS)]
    refs = [peer(a, w).float() for a, w in zip(acts, ws, strict=True)]

    def steps():
        for s in range(STEPS):
            act.copy_(acts[s])  # the kernel before each gemm writes what it reads
            cutemma.gemm(act, ws[s], out=outs[s], config=cfg)

    def errors() -> list[float]:
        torch.cuda.synchronize()
        return [float((o.float() - r).norm() / r.norm()) for o, r in zip(outs, refs, strict=True)]

    for o in outs:
        o.fill_(float("nan"))
    steps()
    eager = errors()
    first = [o.clone() for o in outs]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        steps()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        steps()
    replays, same = [], True
    for _ in range(3):
        for o in outs:
            o.fill_(float("nan"))
        graph.replay()
        replays.append(max(errors()))
        same &= all(torch.equal(a, b) for a, b in zip(first, outs, strict=True))
    ok = max(eager) < 1e-2 and max(replays) < 1e-2 and same
    return {"dtype": dtype, "m": m, "n": n, "k": k, "config": cfg.name, "ok": ok,
            "eager_max_err": max(eager), "graph_max_err": max(replays), "same_bits": same}  # fmt: skip


def main() -> int:
    global UNIT
    UNIT = torch.ones((), device="cuda")
    out_path = sys.argv[1]
    results = [check(*case) for case in cases("--small" in sys.argv)]
    for r in results:
        print(("ok  " if r["ok"] else "FAIL") + f" {r['dtype']} ({r['m']}, {r['n']}, {r['k']}) "
              f"{r['config']} eager {r['eager_max_err']:.1e} graph {r['graph_max_err']:.1e}")  # fmt: skip
    with open(out_path, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "checks": results}, f, indent=1)
    good = sum(r["ok"] for r in results)
    print(f"{good}/{len(results)} checks passed")
    return 0 if good == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
