"""Where mid-size calls lose to cuBLAS, under Nsight Compute: for a few of sweep
2118826645's worst rows of 250-800 tokens (the band where the pick runs 0.89-0.95 of
cuBLAS), the pick's kernel and cuBLAS's, side by side.

    python bench/experiments/ncu_mid.py time OUT.json      # the pick, each class's best, cuBLAS
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


def time_rows(path: str) -> None:
    import torch
    from gemm_sweep import operands, reps_for, turns_ms
    from peer_kernels import kernels_of
    from pick_audit import calls_of, class_bests, errors_of

    from cutemma.kernels.dispatch import checked

    rows = []
    for combo, m, n, k in SHAPES:
        A, B, out, peer = operands(combo, m, n, k)
        call, choice = checked(A, B, out=out)
        bests = class_bests(call, m, n, k, combo[:4])
        others = {key: cfg for key, (cfg, _) in bests.items() if cfg != choice.config}
        calls = calls_of(A, B, out, peer, others)
        ref = peer(torch.empty_like(out)).float()
        errs = errors_of(calls, list(calls)[1:], out, ref)
        us = {key: round(v * 1e3, 2) for key, v in turns_ms(calls, reps_for(calls["pick"])).items()}
        r = {"combo": combo, "m": m, "n": n, "k": k, "pick": choice.config.name,
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


def cluster_variants(cfg) -> dict:
    """:data:`CLUSTER_VARIANTS` of a pick; none of a stream-K or kcluster one (their CTAs
    share k tiles, not an operand)."""
    return {"pick": cfg} if cfg.stream_k or cfg.kcluster > 1 else variants(cfg, CLUSTER_VARIANTS)


def ring_variants(cfg) -> dict:
    """:data:`RING_VARIANTS` of a pick."""
    return variants(cfg, RING_VARIANTS)


def time_variants(path: str, variants_of=cluster_variants) -> None:
    """Each shape's pick against its ``variants_of`` (cuBLAS beside them), L2-flushed
    medians in turns."""
    import torch
    from gemm_sweep import operands, reps_for, turns_ms
    from pick_audit import calls_of, errors_of

    from cutemma.kernels.dispatch import checked

    rows = []
    for combo, m, n, k in SHAPES:
        A, B, out, peer = operands(combo, m, n, k)
        _, choice = checked(A, B, out=out)
        found = {key: c for key, c in variants_of(choice.config).items() if key != "pick"}
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
        time_rows(sys.argv[2])
    elif sys.argv[1] == "clusters":
        time_variants(sys.argv[2])
    elif sys.argv[1] == "ring":
        time_variants(sys.argv[2], ring_variants)
    else:
        profile(int(sys.argv[2]) if len(sys.argv) > 2 else None)
