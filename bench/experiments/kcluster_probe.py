"""Split-K in a cluster (``Sm90Config(kcluster=S)``: the S CTAs of a cluster share a tile's k
tiles and add their sums through distributed shared memory) against the built-in pick
(whose stream-K adds partials through global memory) and cuBLAS, on mid-size calls with
few tiles over a long K, where the pick's stream-K ran 0.55-0.75 of cuBLAS in sweep
532424160.

    python bench/experiments/kcluster_probe.py OUT.json [--quick] [--swapped]

``--swapped``: calls of at most 128 rows (decode's and the sweeps' worst small calls), the
swapped kernels (``swap_ab``: the weights as the kernel's A, the tokens as its N) of the
space, whole 128-row and 64-row stream-K, rerun as kcluster configs.

Each row: every kcluster config whose tiles x S CTAs fit one wave (and each CTA has at
least two k tiles), its error against an f32 matmul, whether two runs gave the same bits,
and the L2-flushed medians (3 rounds in turn) of cuBLAS, the pick and each config.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

# (m, n, k) from sweep 532424160's worst stream-K rows, and mid-size calls of public models
SHAPES = [(554, 1840, 12528), (842, 464, 5152), (177, 52688, 8784), (133, 384, 6432),
          (399, 448, 4160), (271, 816, 8288), (160, 1856, 5008), (602, 400, 8048),
          (176, 832, 4512), (63, 480, 4032), (256, 4096, 14336), (128, 4096, 14336),
          (300, 4096, 4096), (64, 7168, 18432), (96, 4096, 14336), (1024, 1024, 8192)]  # fmt: skip
SWAPPED_SHAPES = [(106, 576, 7168), (77, 704, 5952), (5, 1024, 4096), (33, 272, 6336),
                  (21, 656, 10608), (40, 832, 7008), (63, 480, 4032), (1, 4096, 4096),
                  (16, 4096, 4096), (16, 4096, 14336), (32, 4096, 4096), (64, 4096, 4096),
                  (96, 4096, 14336), (128, 4096, 14336), (8, 2048, 8192), (48, 1440, 6528)]  # fmt: skip
TILES = [(128, 128, 2), (128, 256, 2), (128, 192, 2), (128, 64, 2), (64, 128, 1), (64, 256, 1)]
KCS = (2, 4, 8)


def configs(m: int, n: int, k: int, sms: int, dtype: str) -> list:
    from cutemma.kernels.sm90.config import Sm90Config

    k_tile = 64 if dtype == "bf16" else 128
    found = []
    for bm, bn, cons in TILES:
        tiles = -(-m // bm) * -(-n // bn)
        for kc in KCS:
            if tiles * kc <= sms and -(-k // k_tile) >= 2 * kc:
                promote = "split" if dtype == "e4m3" and bn % 16 == 0 and bm == 128 else True
                if dtype == "e4m3" and bn > 192:
                    continue
                found.append(Sm90Config(bm, bn, consumers=cons, kcluster=kc, promote=promote))
    return found


def swapped_configs(m: int, n: int, k: int, sms: int, dtype: str) -> list:
    from dataclasses import replace

    from cutemma.kernels.space import swapped_kernel

    k_tile = 64 if dtype == "bf16" else 128
    found = []
    for whole in (False, True):
        base = swapped_kernel(m, n, k, dtype, sms, whole)
        tiles = -(-n // base.block_m) * -(-m // base.block_n)
        for kc in KCS:
            if tiles * kc <= sms and -(-k // (base.block_k or k_tile)) >= 2 * kc:
                found.append(replace(base, stream_k=False, split=None, kcluster=kc))
    return found


def row(m: int, n: int, k: int, dtype: str, swapped: bool = False) -> dict:
    import torch
    from gemm_sweep import pick_of, reps_for, turns_ms

    import cutemma

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    A = torch.randn(m, k, device="cuda")
    W = torch.randn(n, k, device="cuda")
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    if dtype == "e4m3":
        A8, W8 = A.to(torch.float8_e4m3fn), W.to(torch.float8_e4m3fn)
        ref = A8.float() @ W8.float().t()
        one = torch.ones((), device="cuda")
        peer = lambda: torch._scaled_mm(A8, W8.t(), one, one, out_dtype=torch.bfloat16)  # noqa: E731
        A, B = A8, W8.t()
    else:
        A, W = A.bfloat16(), W.bfloat16()
        ref = A.float() @ W.float().t()
        B = W.t()
        peer = lambda: torch.matmul(A, B, out=out)  # noqa: E731
    calls = {"cublas": peer, "pick": lambda: cutemma.gemm(A, B, out=out)}
    r = {"dtype": dtype, "m": m, "n": n, "k": k, "pick": pick_of(A, B), "errors": {}, "same": {}}
    for cfg in (swapped_configs if swapped else configs)(m, n, k, sms, dtype):
        try:
            out.fill_(float("nan"))
            cutemma.gemm(A, B, out=out, config=cfg)
            first = out.clone()
            r["errors"][cfg.name] = float((out.float() - ref).norm() / ref.norm())
            cutemma.gemm(A, B, out=out, config=cfg)
            r["same"][cfg.name] = bool(torch.equal(first, out))
            calls[cfg.name] = lambda c=cfg: cutemma.gemm(A, B, out=out, config=c)
        except Exception as exc:  # what the family refuses for this call: say why
            r["errors"][cfg.name] = f"{type(exc).__name__}: {exc}"[:200]
    medians = turns_ms(calls, reps_for(calls["pick"]))
    r["us"] = {name: round(ms * 1e3, 2) for name, ms in medians.items()}
    kc = {n: t for n, t in r["us"].items() if "_kc" in n}
    if kc:
        best = min(kc, key=kc.get)
        r["best_kcluster"] = best
        r["best_kcluster_vs_cublas"] = round(r["us"]["cublas"] / kc[best], 4)
    r["pick_vs_cublas"] = round(r["us"]["cublas"] / r["us"]["pick"], 4)
    return r


def main() -> None:
    out = sys.argv[1]
    swapped = "--swapped" in sys.argv
    shapes = SWAPPED_SHAPES if swapped else SHAPES
    shapes = shapes[:4] if "--quick" in sys.argv else shapes
    rows = []
    for dtype in ("bf16", "e4m3"):
        for m, n, k in shapes:
            rows.append(row(m, n, k, dtype, swapped))
            r = rows[-1]
            print(dtype, m, n, k, r.get("pick_vs_cublas"), r.get("best_kcluster"),
                  r.get("best_kcluster_vs_cublas"), flush=True)  # fmt: skip
            with open(out, "w") as f:
                json.dump({"what": __doc__.splitlines()[0], "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
