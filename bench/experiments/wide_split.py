"""Split-K with tiles as wide as N (or a half, a third, a quarter of it) on long-K calls:
the sweeps' worst band, against the pick and cuBLAS.

Under Nsight Compute cuBLAS runs these calls as split-K kernels whose tiles cover few
columns' worth of tiles (112x192, 80x128, 168x128, ...) and reads the operands about once
from DRAM, where our kernels read them 1.4-2.9 times (bench/results/raw/ncu-longk-*.json).
A tile as wide as N reads each A row once; its k split among CTAs that start together
(a cluster's split-K, :mod:`cutemma.kernels.sm90.kcluster`, or stream-K with aligned shares
of ``split`` CTAs a tile) keeps every SM busy on few tiles.

    python bench/experiments/wide_split.py OUT.json [--only I]

For each shape: each width ``ceil(N / t)`` rounded up to 16 (t = 1..8, 64-320
columns) at 64 and 128 rows, as a kcluster kernel of the largest cluster size whose
clusters all run at once, and as stream-K with ``split = 132 // tiles``; the model's
price beside each. Kernels compile in parallel processes first (the disk cache), then
L2-flushed medians in turns, in one process; ratios to cuBLAS.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

# (combo, m, n, k): sweeps 1229192481 and 2164198011's worst long-K rows (ratio, pick)
SHAPES = [
    ("bf16_bK", 3047, 272, 33712),  # 0.43, 128x64
    ("bf16_bN", 1287, 848, 22064),  # 0.48, 64x128 sk16
    ("bf16_bN", 948, 1184, 24096),  # 0.50, 64x128 sk16
    ("bf16_bK", 1287, 848, 22064),  # 0.55, 64x144
    ("bf16_bN", 2127, 656, 47792),  # 0.60, 128x128
    ("bf16_bN", 523, 416, 32704),  # 0.56, 128x192 kc8
    ("bf16_bK", 361, 640, 59984),  # 0.68, 128x128 kc8
    ("bf16_bK", 909, 1456, 62480),  # 0.54, 64x192
    ("bf16_bK", 1347, 304, 21616),  # 0.60, 64x64
    ("bf16_bK", 1149, 336, 28800),  # 0.70, 128x128 kc4
    ("e4m3", 948, 1184, 24096),  # 0.60, 64x128 ovl sk16
    ("e4m3", 513, 576, 22000),  # best in the space 0.78
    ("bf16_bK", 2048, 1024, 16384),  # control
]
SMS = 132
MAX_WIDTH = 320
KEEP = 8


def wgmma_widths(width: int) -> tuple[int, ...] | None:
    """A tile wider than one wgmma (256 columns) as 256 then powers of 2, each starting at
    a multiple of its own N (Sm90Config.wgmma_n)."""
    from cutemma.mma.arch.sm90_gmma import N_ALL

    widest = max(N_ALL)  # (one wgmma's N at most)
    if width <= widest:
        return None
    out, rest = [widest], width - widest
    while rest:
        p = 1 << (rest.bit_length() - 1)
        out.append(p)
        rest -= p
    return tuple(out)


def variants(m: int, n: int, k: int, dtype: str) -> dict:
    """The wide split-K kernels of a call, by name."""
    from cutemma.errors import TiledMmaError
    from cutemma.kernels.sm90.config import ATOMS_SM90, SWIZZLE_ROW_BYTES, Sm90Config
    from cutemma.kernels.sm90.kcluster import clusters

    k_tiles = -(-k // (SWIZZLE_ROW_BYTES // ATOMS_SM90[dtype][1]))  # (block_k None's)
    found: dict = {}
    for t in range(1, 9):
        share = -(-n // t)  # each tile column's share of N
        bn = -(-share // 16) * 16
        if bn > MAX_WIDTH or bn < 64:
            continue
        for bm in (64, 128):
            tiles = -(-m // bm) * -(-n // bn)
            base = {"block_m": bm, "block_n": bn, "consumers": bm // 64,
                    "wgmma_n": wgmma_widths(bn)}  # fmt: skip
            kcs = [kc for kc in (8, 4, 2) if tiles <= clusters(kc, SMS) and k_tiles >= 2 * kc]
            tries = [{"kcluster": kcs[0]}] if kcs else []
            split = min(SMS // tiles, 16)
            if split >= 2:
                tries.append({"stream_k": True, "split": split})
            for extra in tries:
                try:
                    cfg = Sm90Config(**base, **extra)
                except TiledMmaError as exc:
                    print("refused:", base, extra, str(exc)[:120])
                    continue
                found[cfg.name] = cfg
    # the model's KEEP cheapest (compiles are the experiment's cost)
    from cutemma.kernels.cost import predict

    priced = sorted(found, key=lambda name: predict(found[name], m, n, k, dtype, 1, "h200"))
    return {name: found[name] for name in priced[:KEEP]}


def compile_shard(shard: int, shards: int) -> None:
    import torch
    from gemm_sweep import operands

    import cutemma

    for i, (combo, m, n, k) in enumerate(SHAPES):
        if i % shards != shard:
            continue
        A, B, out, _ = operands(combo, m, n, k, fill=False)
        for cfg in [None, *variants(m, n, k, combo[:4]).values()]:
            try:
                cutemma.gemm(A, B, out=out, config=cfg)
                torch.cuda.synchronize()
            except Exception as exc:  # seen again (and recorded) when timed
                print(f"compile {cfg}: {type(exc).__name__}: {exc}"[:200], flush=True)
        torch.cuda.empty_cache()


def main(path: str, only: int | None) -> None:
    shards = min(len(SHAPES), os.cpu_count() or 4)
    cmd = [sys.executable, __file__, "compile"]
    for p in [subprocess.Popen([*cmd, str(i), str(shards)]) for i in range(shards)]:
        p.wait()

    import torch
    from gemm_sweep import operands, reps_for, turns_ms
    from pick_audit import calls_of, errors_of

    from cutemma.kernels.cost import predict
    from cutemma.kernels.dispatch import checked

    rows = []
    for i, (combo, m, n, k) in enumerate(SHAPES):
        if only is not None and i != only:
            continue
        A, B, out, peer = operands(combo, m, n, k)
        call, choice = checked(A, B, out=out)
        found = variants(m, n, k, combo[:4])
        calls = calls_of(A, B, out, peer, found)
        ref = peer(torch.empty_like(out)).float()
        errs = errors_of(calls, list(calls)[1:], out, ref)
        us = {key: round(v * 1e3, 2) for key, v in turns_ms(calls, reps_for(calls["pick"])).items()}
        pred = {name: round(predict(c, m, n, k, combo[:4], 1, "h200", rows16=call.rows16) * 1e6, 2)
                for name, c in found.items()}  # fmt: skip
        pred["pick"] = round(choice.predicted_s * 1e6, 2)
        r = {"combo": combo, "m": m, "n": n, "k": k, "pick": choice.config.name, "us": us,
             "predicted_us": pred, "errors": errs,
             "vs_cublas": {key: round(us["cublas"] / v, 3) for key, v in us.items()}}  # fmt: skip
        rows.append(r)
        best = max((v, key) for key, v in r["vs_cublas"].items() if key != "cublas")
        print(combo, m, n, k, "pick", r["vs_cublas"]["pick"], "best", best, flush=True)
    with open(path, "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "source": open(__file__).read(),
                   "rows": rows}, f, indent=1)  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1] == "compile":
        compile_shard(int(sys.argv[2]), int(sys.argv[3]))
    else:
        main(sys.argv[1], int(sys.argv[3]) if len(sys.argv) > 3 else None)
