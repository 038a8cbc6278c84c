"""Why tiles of two 64-row slices a warpgroup run slowly: under Nsight Compute, on one
aligned square call, 128x256 (one slice a warpgroup, the space's fastest 16-bit tile),
256x128 (two slices a warpgroup: the model's rate 0.69 against 0.86), 192x192 with the
warpgroups side by side along N (three slices each), the swapped 256x128, and cuBLAS.
bench/results/raw/swap-wide-rows-h200.json found swapped 256-row tiles at 420-460 TFLOPS on
a call of twelve waves where 192x192 side by side ran 720.

    python bench/experiments/ncu_wide_rows.py time OUT.json
    ncu --clock-control none --profile-from-start off --section SpeedOfLight \
        --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
        --section WarpStateStats --section LaunchStats --section SchedulerStats \
        --csv --page details python bench/experiments/ncu_wide_rows.py profile

``VARIANT=buffered``: 128x256, and 256x128 and the swapped 256x128 each with the whole
staging tile and through two buffers ("tmab" / "tmatb": 4 stages for 3), to see whether
the deeper ring takes away the two-slice tiles' waits on a stage's data.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

CALL = ("bf16_bK", 4096, 4096, 8192)


def configs() -> dict:
    from cutemma.kernels.sm90.config import Sm90Config

    if os.environ.get("VARIANT") == "buffered":
        return {
            "128x256": Sm90Config(128, 256),
            "256x128": Sm90Config(256, 128),
            "256x128_tmab": Sm90Config(256, 128, epilogue="tmab"),
            "256x128_swap": Sm90Config(256, 128, swap_ab=True, epilogue="tmat"),
            "256x128_swap_tmatb": Sm90Config(256, 128, swap_ab=True, epilogue="tmatb"),
        }
    return {
        "128x256": Sm90Config(128, 256),
        "256x128": Sm90Config(256, 128),
        "128x128": Sm90Config(128, 128),
        "192x192_wn2": Sm90Config(192, 192, consumers_n=2),
        "256x128_swap": Sm90Config(256, 128, swap_ab=True, epilogue="tmat"),
        "128x256_swap": Sm90Config(128, 256, swap_ab=True, epilogue="tmat"),
    }


def calls() -> dict:
    from gemm_sweep import operands

    import cutemma

    A, B, out, peer = operands(*CALL)
    found = {"cublas": lambda: peer(out)}
    for name, cfg in configs().items():
        found[name] = lambda c=cfg: cutemma.gemm(A, B, out=out, config=c)
    return found


def time(path: str) -> None:
    from gemm_sweep import flushed_ms, reps_for

    from cutemma.kernels.sm90.plan import Sm90Plan

    found = calls()
    reps = reps_for(found["cublas"])
    _, m, n, k = CALL
    rows = {}
    for name, f in found.items():
        ms = sorted(flushed_ms(f, reps) for _ in range(5))[2]
        rows[name] = {"us": round(ms * 1e3, 2), "tflops": round(2 * m * n * k / ms / 1e9, 1)}
        if name != "cublas":
            plan = Sm90Plan(configs()[name], "bf16", "K", "K", "bf16")
            rows[name] |= {"stages": plan.stages, "slices": plan.mma_m}
        print(name, rows[name], flush=True)
    with open(path, "w") as fh:
        json.dump({"what": __doc__.splitlines()[0], "call": CALL, "rows": rows,
                   "script": open(__file__).read()}, fh, indent=1)  # fmt: skip


def profile() -> None:
    from ncu_mid import profile_once

    found = calls()
    profile_once(found)
    print("profiled, in order:", list(found), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "time":
        time(sys.argv[2])
    else:
        profile()
