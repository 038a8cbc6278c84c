"""What a K whose rows are not 128-byte aligned costs: cuBLAS, the built-in pick and the pick
with a k tile of two swizzle rows, at K a multiple of 64 elements and 16, 32 or 48 elements
off it (the sweep's rows with K not a multiple of 128 ran 3-7% lower against cuBLAS,
bench/results/sweep-h200-33252061.json), each B major and e4m3; L2-flushed medians in turn.

    python bench/experiments/misaligned_k.py OUT.json
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

SHAPES = ((4096, 8192), (1024, 4096), (8192, 8192))
KS = (8192, 8208, 8224, 8240)
COMBOS = ("bf16_bK", "bf16_bN", "e4m3")


def main() -> None:
    import torch
    from gemm_sweep import operands, reps_for, turns_ms
    from pick_audit import calls_of

    import cutemma
    from cutemma.kernels.dispatch import which_kernel

    rows = []
    for combo in COMBOS:
        for m, n in SHAPES:
            for k in KS:
                A, B, out, peer = operands(combo, m, n, k)
                pick = which_kernel(A, B).config
                eb = 1 if combo == "e4m3" else 2
                wide = replace(pick, block_k=256 // eb)
                try:
                    cutemma.gemm(A, B, out=out, config=wide)
                except Exception as exc:
                    print("bk2", wide.name, type(exc).__name__, str(exc)[:120])
                    wide = None
                calls = calls_of(A, B, out, peer, {"bk2": wide} if wide else {})
                ref = peer(torch.empty_like(out)).float()
                cutemma.gemm(A, B, out=out)
                err = float((out.float() - ref).norm() / ref.norm())
                t = turns_ms(calls, reps_for(calls["pick"]))
                flops = 2 * m * n * k
                r = {"combo": combo, "m": m, "n": n, "k": k, "pick": pick.name, "err": err}
                r |= {f"{key}_us": round(v * 1e3, 2) for key, v in t.items()}
                r |= {f"{key}_tflops": round(flops / v / 1e9, 1) for key, v in t.items()}
                r["ratio"] = round(t["cublas"] / t["pick"], 4)
                rows.append(r)
                print(r, flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
