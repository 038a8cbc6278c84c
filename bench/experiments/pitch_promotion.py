"""The operand maps' L2 promotion on 16-bit calls whose row pitch sits 32 bytes off 64
(K an odd multiple of 16: each 128-byte row of a k tile starts a sector into a 64-byte
pair). pitch_probe.py found 128x128 tiles 12-15% slower at such K than at K 16 less or
more, 128x256 about 3% (raw/pitch-probe-h200.json); over the H200 calibration sets the
space's best kernel on such calls ran 0.876 of the peer against 0.955 on aligned ones.
l2_promotion.py tried the promotions on e4m3 only. Per call (bf16 with B K-major, aligned
and off pairs): the pick and 128x128 under each promotion (none, 64, 128, 256 bytes), cuBLAS;
one process, L2-flushed medians in turns.

    python bench/experiments/pitch_promotion.py OUT.json
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from l2_promotion import PROMOTIONS, promoted  # noqa: E402

CALLS = [(1024, 8192, 4096), (1024, 8192, 4112), (4096, 4096, 4096), (4096, 4096, 4144),
         (700, 5120, 3072), (700, 5120, 3088), (2500, 2048, 8192), (2500, 2048, 8208)]  # fmt: skip


def main(out: str) -> None:
    import torch
    from gemm_sweep import operands, reps_for, turns_ms

    import cutemma
    from cutemma.kernels.dispatch import checked
    from cutemma.kernels.sm90.config import Sm90Config

    rows = []
    for m, n, k in CALLS:
        A, B, o, peer = operands("bf16_bK", m, n, k)
        ref = peer(torch.empty_like(o)).float()
        calls, errs = {"cublas": lambda p=peer, o=o: p(o)}, {}
        for cfg in (None, Sm90Config(128, 128)):
            for name, v in PROMOTIONS.items():
                key = f"{'pick' if cfg is None else cfg.name}:{name}"
                calls[key] = lambda v=v, c=cfg, a=A, b=B, d=o: (
                    promoted(v),
                    cutemma.gemm(a, b, out=d, config=c),
                )
                calls[key]()
                errs[key] = float((o.float() - ref).norm() / ref.norm())
        t = turns_ms(calls, reps_for(calls["pick:256B"]))
        _, choice = checked(A, B, out=o)
        row = {"m": m, "n": n, "k": k, "pitch_mod_64": k * 2 % 64, "pick": choice.config.name,
               "errors": errs, "us": {key: round(v * 1e3, 2) for key, v in t.items()},
               "vs_cublas": {key: round(t["cublas"] / v, 4) for key, v in t.items()}}  # fmt: skip
        rows.append(row)
        print(m, n, k, row["vs_cublas"], flush=True)
    promoted(PROMOTIONS["256B"])
    with open(out, "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "rows": rows,
                   "script": open(__file__).read()}, f, indent=1)  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1])
