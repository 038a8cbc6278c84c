"""Where mid-size calls lose to cuBLAS, under Nsight Compute: for a few of sweep
2118826645's worst rows of 250-800 tokens (the band where the pick runs 0.89-0.95 of
cuBLAS), the pick's kernel and cuBLAS's, side by side.

    python bench/experiments/ncu_mid.py time OUT.json [longk]  # the pick, each class's best, cuBLAS
    python bench/experiments/ncu_mid.py clusters OUT.json  # the pick in clusters of 1 and 2
    python bench/experiments/ncu_mid.py ring OUT.json      # the pick with deeper rings
    ncu --clock-control none --profile-from-start off --section SpeedOfLight \
        --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis \
        --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
        python bench/experiments/ncu_mid.py profile

``time`` times (L2-flushed medians, in turns) the pick, the cost model's fastest kernel of
each class of the space (bench/experiments/pick_audit.py's classes) and cuBLAS, and names
cuBLAS's kernels. ``profile`` runs cuBLAS then the pick once each between
cudaProfilerStart and Stop (after a warm-up that compiles), for ncu's
``--profile-from-start off`` (``profile I``: the I-th shape alone). ``clusters`` times the pick
against itself in clusters of 1 and 2 multicasting A or B.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

# (combo, m, n, k): sweep-h200-2118826645.json's rows, ratio to cuBLAS in the comment
SHAPES = [
    ("bf16_bK", 411, 3072, 3072),  # 0.79, swapped 128x144
    ("bf16_bK", 788, 1600, 6400),  # 0.71, 128x128
    ("bf16_bK", 763, 1040, 5280),  # 0.78, 64x128
    ("bf16_bN", 353, 10896, 14432),  # 0.76, swapped 128x120
    ("e4m3", 514, 6128, 11104),  # 0.58, 128x128 overlap
    ("e4m3", 276, 6528, 5360),  # 0.63, 128x160
]
# long-K calls of 129-2048 rows, the sweeps' worst band (``time longk``): sweeps
# 1417902515 and 2840113349's rows, ratio to cuBLAS in the comment
LONGK_SHAPES = [
    ("bf16_bK", 909, 1456, 62480),  # 0.54, 64x192
    ("bf16_bK", 1347, 304, 21616),  # 0.60, 64x64
    ("bf16_bK", 180, 400, 27456),  # 0.62, 64x128 kcluster 8
    ("bf16_bK", 505, 272, 8496),  # 0.66, 64x128 kcluster 4
    ("bf16_bK", 534, 2048, 8192),  # 0.66, 64x160
    ("bf16_bK", 1149, 336, 28800),  # 0.70, 128x128 kcluster 4
    ("bf16_bK", 328, 21408, 21728),  # 0.63, swapped 128x112
    ("e4m3", 1456, 912, 20592),  # 0.61, 128x128 overlap
    ("e4m3", 295, 58416, 8240),  # 0.56, 128x192 x2A
    ("e4m3", 513, 576, 22000),  # calibrate-h200-longk: best in the space 0.78
]
SETS = {"mid": SHAPES, "longk": LONGK_SHAPES}


def class_calls(combo: str, m: int, n: int, k: int) -> tuple:
    """(out, peer, the pick's config, each class's best (config, predicted s), the calls:
    cuBLAS, the pick and each class's best that is not the pick) on fresh operands."""
    from gemm_sweep import operands
    from pick_audit import calls_of, class_bests

    from cutemma.kernels.dispatch import checked

    A, B, out, peer = operands(combo, m, n, k)
    call, choice = checked(A, B, out=out)
    bests = class_bests(call, m, n, k, combo[:4])
    others = {key: cfg for key, (cfg, _) in bests.items() if cfg != choice.config}
    return out, peer, choice.config, bests, calls_of(A, B, out, peer, others)


def time_rows(path: str, shapes: list = SHAPES) -> None:
    import torch
    from gemm_sweep import reps_for, turns_ms
    from peer_kernels import kernels_of
    from pick_audit import errors_of

    rows = []
    for combo, m, n, k in shapes:
        out, peer, pick, bests, calls = class_calls(combo, m, n, k)
        ref = peer(torch.empty_like(out)).float()
        errs = errors_of(calls, list(calls)[1:], out, ref)
        us = {key: round(v * 1e3, 2) for key, v in turns_ms(calls, reps_for(calls["pick"])).items()}
        r = {"combo": combo, "m": m, "n": n, "k": k, "pick": pick.name,
             "configs": {key: c.name for key, (c, _) in bests.items()},
             "predicted_us": {key: round(t * 1e6, 2) for key, (_, t) in bests.items()},
             "us": us, "errors": errs, "peer_kernels": kernels_of(lambda p=peer, o=out: p(o)),
             "vs_cublas": {key: round(us["cublas"] / v, 3) for key, v in us.items()}}  # fmt: skip
        rows.append(r)
        print(json.dumps(r), flush=True)
    with open(path, "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "rows": rows}, f, indent=1)


# the pick in clusters of 1 and 2 sharing A or B (a cluster multicasts its loads, so it
# drops the evict-first hint), and without that hint (``clusters``)
CLUSTER_VARIANTS = {
    "x1B": {"cluster": 1, "multicast": "B"},
    "x2B": {"cluster": 2, "multicast": "B", "evict_first": ""},
    "x2A": {"cluster": 2, "multicast": "A", "evict_first": ""},
    "no_evict_first": {"evict_first": ""},
}
# changes to a pick that give its ring more bytes in flight (``ring``): the TMA store's
# staging tile's room given to a stage, narrower tiles, the other fp8 promotion
RING_VARIANTS = {
    "regs": {"epilogue": "regs"},
    "s9_regs": {"stages": 9, "epilogue": "regs"},
    "n112_regs": {"block_n": 112, "epilogue": "regs"},
    "n104_regs": {"block_n": 104, "epilogue": "regs"},
    "n112": {"block_n": 112},
    "split_regs": {"promote": "split", "epilogue": "regs"},
}


def variants(cfg, changes: dict) -> dict:
    """The config as it is ('pick') and with each of ``changes`` that its rules allow and
    that makes another kernel."""
    from dataclasses import replace

    from cutemma.errors import TiledMmaError

    out = {"pick": cfg}
    for key, change in changes.items():
        try:
            v = replace(cfg, **change)
        except TiledMmaError:  # a combination the config's rules refuse
            continue
        if v not in out.values():
            out[key] = v
    return out


def cluster_variants(cfg, dtype: str = "") -> dict:
    """:data:`CLUSTER_VARIANTS` of a pick; none of a stream-K or kcluster one (their CTAs
    share k tiles, not an operand)."""
    return {"pick": cfg} if cfg.stream_k or cfg.kcluster > 1 else variants(cfg, CLUSTER_VARIANTS)


def ring_variants(cfg, dtype: str = "") -> dict:
    """:data:`RING_VARIANTS` of a pick."""
    return variants(cfg, RING_VARIANTS)


def time_variants(path: str, variants_of=cluster_variants, shapes: list = SHAPES) -> list:
    """Each shape's pick against its ``variants_of(pick, dtype)`` (cuBLAS beside them),
    L2-flushed medians in turns; the rows, also written to ``path``."""
    import torch
    from gemm_sweep import operands, reps_for, turns_ms
    from pick_audit import calls_of, errors_of

    from cutemma.kernels.dispatch import checked

    rows = []
    for combo, m, n, k in shapes:
        A, B, out, peer = operands(combo, m, n, k)
        _, choice = checked(A, B, out=out)
        found = {
            key: c for key, c in variants_of(choice.config, combo[:4]).items() if key != "pick"
        }
        calls = calls_of(A, B, out, peer, found)
        ref = peer(torch.empty_like(out)).float()
        errs = errors_of(calls, list(calls)[1:], out, ref)
        us = {key: round(v * 1e3, 2) for key, v in turns_ms(calls, reps_for(calls["pick"])).items()}
        r = {"combo": combo, "m": m, "n": n, "k": k, "pick": choice.config.name,
             "configs": {key: c.name for key, c in found.items()}, "us": us, "errors": errs,
             "vs_cublas": {key: round(us["cublas"] / v, 3) for key, v in us.items()}}  # fmt: skip
        rows.append(r)
        print(json.dumps(r), flush=True)
    with open(path, "w") as f:
        json.dump({"what": variants_of.__doc__, "rows": rows}, f, indent=1)
    return rows


def profile_once(calls: dict) -> None:
    """Each call twice (compiled, warm), then once each between cudaProfilerStart and Stop
    (for ncu's ``--profile-from-start off``)."""
    import torch

    for _ in range(2):
        for f in calls.values():
            f()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for f in calls.values():
        f()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def profile_classes(shapes: list) -> None:
    """For ncu (``profile-classes longk``): cuBLAS, the pick and each class's best (as
    ``time`` names them) once each between cudaProfilerStart and Stop, after a warm-up
    that compiles; prints the order of the calls."""
    for combo, m, n, k in shapes:
        _, _, pick, bests, calls = class_calls(combo, m, n, k)
        profile_once(calls)
        names = {key: pick.name if key == "pick" else bests[key][0].name
                 for key in calls if key != "cublas"}  # fmt: skip
        print("profiled:", combo, m, n, k, json.dumps(names), flush=True)


def profile(only: int | None = None) -> None:
    import torch
    from gemm_sweep import operands

    import cutemma

    for i, (combo, m, n, k) in enumerate(SHAPES):
        if only is not None and i != only:
            continue
        A, B, out, peer = operands(combo, m, n, k)
        for _ in range(2):
            peer(out)
            cutemma.gemm(A, B, out=out)
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        peer(out)
        cutemma.gemm(A, B, out=out)
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
        print("profiled:", combo, m, n, k, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "time":
        time_rows(sys.argv[2], SETS[sys.argv[3]] if len(sys.argv) > 3 else SHAPES)
    elif sys.argv[1] == "clusters":
        time_variants(sys.argv[2])
    elif sys.argv[1] == "ring":
        time_variants(sys.argv[2], ring_variants)
    elif sys.argv[1] == "profile-classes":
        profile_classes(SETS[sys.argv[2]])
    else:
        profile(int(sys.argv[2]) if len(sys.argv) > 2 else None)
