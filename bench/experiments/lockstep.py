"""Do long-K calls lose to cuBLAS because the CTAs sharing an operand drift apart?

Under Nsight Compute (bench/results/raw/ncu-longk-metrics-h200.csv) the pick's kernels on
long-K calls whose operands outgrow L2 read 1.4-4x the operands' bytes from DRAM, where
cuBLAS's read them about once: e.g. (909, 1456, 62480) bf16, 64x192 tiles, one wave of 120
CTAs each walking 977 k tiles, 851 MB against 295 MB. If the CTAs that share an A row slice
or a B column slice reach the same k tile at different times, L2 (50 MB) no longer holds it
for the later ones.

This experiment throttles the producer: every ``W`` k tiles it counts itself in on a
global counter, and it loads window ``w`` only once every CTA of the grid has reached
window ``w - 1`` (roughly: the counter counts arrivals). The CTAs then stay within two
windows of each other. It patches the generated kernel text (a module-global counter, reset
by the last CTA to finish), so it is only for this experiment: not graph-safe across
concurrent launches of one kernel.

    python bench/experiments/lockstep.py W OUT.json   # W = 0: the kernels as they are

Each run times cuBLAS beside the kernels (L2-flushed medians, in turns); compare runs by
their ratios to cuBLAS.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

# (combo, m, n, k): long-K rows of sweeps 1417902515 / 2840113349 whose operands outgrow L2
SHAPES = [
    ("bf16_bK", 909, 1456, 62480),  # 0.54
    ("bf16_bK", 328, 21408, 21728),  # 0.63
    ("e4m3", 295, 58416, 8240),  # 0.56
    ("bf16_bK", 2388, 1024, 50512),  # 0.67
    ("e4m3", 8470, 1024, 41776),  # 0.77
    ("bf16_bK", 4096, 4096, 16384),  # a square-ish control
]
PER_SHAPE = 3  # the model's fastest whole-tile kernels timed beside the pick


def _patch(src: str, config, w: int) -> str:
    """``src`` with the producer throttled to windows of ``w`` k tiles (module doc)."""
    cl = config.cluster
    head = 'extern "C" __global__'
    glob = "__device__ unsigned int cutemma_ls_ctr = 0, cutemma_ls_done = 0;\n"
    wait = "mbar_wait(empty, phase ^ 1);  // the consumers released it"
    throttle = (
        f"if (ls_step % {w}u == 0) {{\n"
        f"  const unsigned int w = ls_step / {w}u;\n"
        "  atomicAdd(&cutemma_ls_ctr, 1u);\n"
        "  if (w >= 1u) {\n"
        "    const unsigned int need = w * gridDim.x;\n"
        "    while (*(volatile unsigned int*)&cutemma_ls_ctr < need) __nanosleep(128);\n"
        "  }\n"
        "}\n"
        "++ls_step;\n"
    )
    finish = (
        "{\n"
        f"  const unsigned int walkers = gridDim.x / {cl};\n"
        "  const unsigned int most = (unsigned)((tiles + walkers - 1) / walkers) * k_tiles;\n"
        f"  const unsigned int max_w = (most + {w}u - 1) / {w}u, my_w = (ls_step + {w}u - 1) / {w}u;\n"
        "  if (max_w > my_w) atomicAdd(&cutemma_ls_ctr, max_w - my_w);\n"
        "  __threadfence();\n"
        "  if (atomicAdd(&cutemma_ls_done, 1u) == gridDim.x - 1) {\n"
        "    cutemma_ls_ctr = 0; cutemma_ls_done = 0; __threadfence();\n"
        "  }\n"
        "}\n"
    )
    start = "int stage = 0; uint32_t phase = 0;"
    end = '\n    }\n  } else {\n    asm volatile("setmaxnreg.inc'
    for part in (head, wait, start, end):
        assert part in src, part
    src = src.replace(head, glob + head, 1)
    src = src.replace(start, start + " unsigned int ls_step = 0;", 1)
    src = src.replace(wait, throttle.replace("\n", " ") + wait)
    return src.replace(end, "\n" + finish.replace("\n", " ") + end, 1)


def install(w: int) -> None:
    """Patch the sm90 generator (every kernel compiled from here on is throttled)."""
    from cutemma.kernels.sm90 import source

    plain = source.gemm_sm90_source

    def throttled(config, *args, **kw):
        src = plain(config, *args, **kw)
        return _patch(src, config, w) if eligible(config) else src

    source.gemm_sm90_source = throttled


def eligible(config) -> bool:
    """Persistent whole-tile loops only (stream-K and kcluster kernels walk otherwise)."""
    return not (
        config.stream_k or config.kcluster > 1 or config.pdl or config.schedule == "pingpong"
    )


def configs_for(call, m: int, n: int, k: int, dtype: str, pick) -> dict:
    from cutemma.kernels.cost import predict
    from cutemma.kernels.space import SWAP_MAX_M, candidates

    b_major = "N" if call.b_major == "N" else "K"
    found = candidates(m, n, k, dtype, 1, 132, m <= SWAP_MAX_M, call.rows16, b_major)
    priced = sorted(
        (
            (predict(c, m, n, k, dtype, 1, "h200", rows16=call.rows16), c)
            for c in found
            if eligible(c)
        ),
        key=lambda x: x[0],
    )
    out = {}
    for _, c in priced:
        if c != pick and len(out) < PER_SHAPE:
            out[c.name] = c
    return out


def main() -> None:
    w, path = int(sys.argv[1]), sys.argv[2]
    os.environ["CUTEMMA_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"ls{w}-")
    if w:
        install(w)
    import torch
    from gemm_sweep import operands, reps_for, turns_ms
    from pick_audit import calls_of, errors_of

    from cutemma.kernels.dispatch import checked

    rows = []
    for combo, m, n, k in SHAPES:
        A, B, out, peer = operands(combo, m, n, k)
        call, choice = checked(A, B, out=out)
        others = configs_for(call, m, n, k, combo[:4], choice.config)
        calls = calls_of(A, B, out, peer, others)
        ref = peer(torch.empty_like(out)).float()
        errs = errors_of(calls, list(calls)[1:], out, ref)
        us = {key: round(v * 1e3, 2) for key, v in turns_ms(calls, reps_for(calls["pick"])).items()}
        r = {"combo": combo, "m": m, "n": n, "k": k, "w": w, "pick": choice.config.name,
             "pick_throttled": w > 0 and eligible(choice.config), "us": us, "errors": errs,
             "vs_cublas": {key: round(us["cublas"] / v, 3) for key, v in us.items()}}  # fmt: skip
        rows.append(r)
        print(json.dumps(r), flush=True)
    with open(path, "w") as f:
        src = open(__file__).read()
        json.dump({"what": __doc__.splitlines()[0], "rows": rows,
                   "script": {"path": "bench/experiments/lockstep.py", "source": src}}, f, indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
