"""Split-K as a batched GEMM over k slices (raw/ncu-splitk-h200.csv: cuBLAS's split-K
kernels have L2's request coalescer serve 27-58% of their sectors to several SMs at once,
ours 8-28%; the CTAs sharing lines must ask at the same time, and those of one k slice
do). Each call whose K splits into L slices of 16-byte multiples: the slices as a batch of
L problems through the batched kernel (rank-3 maps; one slice's tiles consecutive, its
grouped raster, pairs that multicast where the config has them) into an f32 workspace,
then the slices summed (torch.sum, the fix-up cuBLAS runs as a second kernel too). Times
(L2-flushed medians in turns): cuBLAS, the pick, each batched GEMM alone and the sum alone;
errors of GEMM + sum against cuBLAS.

    python bench/experiments/splitk_batched.py OUT.json
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

# long-K calls of few tiles (long_k_few_tiles.py's, K rounded to split into 8 slices of 64s)
SHAPES = [("bf16_bN", 300, 320, 45056), ("bf16_bK", 180, 400, 27648),
          ("bf16_bK", 568, 400, 26624), ("bf16_bK", 941, 368, 50176),
          ("bf16_bK", 789, 2624, 57344), ("bf16_bN", 367, 4608, 36864),
          ("bf16_bK", 381, 400, 45056), ("bf16_bN", 190, 368, 48128)]  # fmt: skip
SLICES = (4, 8)


def configs() -> list:
    from cutemma.kernels.sm90.config import Sm90Config

    tiles = [Sm90Config(64, 128, consumers=1), Sm90Config(128, 64), Sm90Config(128, 128)]
    out = []
    for t in tiles:
        out += [
            t,
            Sm90Config(t.block_m, t.block_n, consumers=t.consumers, cluster=2),
            Sm90Config(t.block_m, t.block_n, consumers=t.consumers, cluster=2, multicast="A"),
        ]
    return out


def slices(combo: str, A, B, L: int):
    """(A3, B3): the operands' L k slices as batched views (no copy)."""
    m, k = A.shape
    n, ks = B.shape[1], k // L
    A3 = A.as_strided((L, m, ks), (ks, k, 1))
    if combo == "bf16_bN":  # B (k, n) row-major
        B3 = B.as_strided((L, ks, n), (ks * n, n, 1))
    else:  # B = (n, k) row-major, transposed
        B3 = B.t().as_strided((L, n, ks), (ks, k, 1)).transpose(1, 2)
    return A3, B3


def main(path: str) -> None:
    import torch
    from gemm_sweep import operands, reps_for, turns_ms

    import cutemma

    rows = []
    for combo, m, n, k in SHAPES:
        A, B, out, peer = operands(combo, m, n, k)
        calls = {"cublas": lambda p=peer, o=out: p(o),
                 "pick": lambda A=A, B=B, o=out: cutemma.gemm(A, B, out=o)}  # fmt: skip
        errors, works = {}, {}
        ref = peer(out).float()
        for L in SLICES:
            A3, B3 = slices(combo, A, B, L)
            W = works[L] = torch.empty(L, m, n, device="cuda", dtype=torch.float32)
            R = torch.empty(m, n, device="cuda", dtype=torch.float32)
            calls[f"sum_L{L}"] = lambda W=W, R=R: torch.sum(W, 0, out=R)
            for cfg in configs():
                name = f"L{L}_{cfg.name}"
                try:
                    cutemma.gemm(A3, B3, out=W, config=cfg)
                    torch.cuda.synchronize()
                    got = W.sum(0)
                    errors[name] = float((got - ref).norm() / ref.norm())
                except Exception as exc:  # (a config the batched kernel refuses)
                    errors[name] = f"{type(exc).__name__}: {exc}"[:160]
                    continue
                calls[name] = lambda A3=A3, B3=B3, W=W, cfg=cfg: cutemma.gemm(
                    A3, B3, out=W, config=cfg
                )
        reps = reps_for(calls["pick"])
        us = {key: round(v * 1e3, 2) for key, v in turns_ms(calls, reps).items()}
        best = min((v + us[f"sum_L{key[1:].split('_')[0]}"], key) for key, v in us.items()
                   if key.startswith("L"))  # fmt: skip
        rows.append({"combo": combo, "m": m, "n": n, "k": k, "us": us, "errors": errors,
                     "best_split": {"name": best[1], "gemm_plus_sum_us": round(best[0], 2)}})  # fmt: skip
        print(combo, m, n, k, "cublas", us["cublas"], "pick", us["pick"], "best", best, flush=True)
        with open(path, "w") as f:
            json.dump({"what": __doc__.splitlines()[0], "rows": rows,
                       "script": open(__file__).read()}, f, indent=1)  # fmt: skip
        del works
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1])
