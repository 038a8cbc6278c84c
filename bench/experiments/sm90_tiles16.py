"""16-bit tile widths against cuBLAS across the square sizes (a script).

    python bench/experiments/sm90_tiles16.py OUT.json

pick_sm90_config chose 16-bit tiles by whole waves between 128x256 and 128x128 (at 0.92
of its speed); 3072^3 (2.2 waves of 128x256) and 1024^3 (a quarter wave) come out at
0.80-0.85x cuBLAS. This times 128x256, 128x192, 128x128 and 128x64 at 1024..8192 (bf16,
B row-major, bf16 out) against torch.matmul in 5 interleaved rounds of do_bench medians,
after checking 128x192 and 128x64 on edge shapes (NaN-poisoned, both majors of B).
"""

from __future__ import annotations

import sys as _sys  # the GPU checks' helpers (gpu_timing) live in tests/kernels
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests" / "kernels"))
_sys.path.insert(0, str(_Path(__file__).resolve().parent))
import json
import statistics
import sys

import gpu_timing  # beside this script
import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

from cutemma.kernels.dispatch import gemm as gemm_sm90
from cutemma.kernels.sm90.plan import Sm90Config

TILES = {f"128x{n}": Sm90Config(128, n) for n in (256, 192, 128, 64)}


def main() -> None:
    gen = torch.Generator(device="cuda").manual_seed(29)
    res = {"device": torch.cuda.get_device_name(), "checks": [], "rows": []}
    for name in ("128x192", "128x64"):
        for m, n, k in [(1, 8, 16), (300, 296, 272), (1031, 1000, 1040)]:  # TMA: 16-byte rows
            for b_col in (False, True):
                A = torch.randn((m, k), generator=gen, device="cuda", dtype=torch.bfloat16)
                B = torch.randn((n, k) if b_col else (k, n), generator=gen, device="cuda",
                                dtype=torch.bfloat16)  # fmt: skip
                B = B.t() if b_col else B
                D = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                gemm_sm90(A, B, out=D, config=TILES[name])
                ref = A.double() @ B.double()
                err = float((D.double() - ref).norm() / ref.norm())
                ok = bool(torch.isfinite(D).all()) and err < 1e-2
                res["checks"].append({"config": name, "mnk": [m, n, k], "b_col": b_col,
                                      "rel_err": err, "ok": ok})  # fmt: skip
    bad = [c for c in res["checks"] if not c["ok"]]
    print(f"checks {len(res['checks']) - len(bad)} / {len(res['checks'])}; failed {bad}")
    for s in (1024, 2048, 3072, 4096, 6144, 8192):
        A = torch.randn((s, s), generator=gen, device="cuda", dtype=torch.bfloat16)
        B = torch.randn((s, s), generator=gen, device="cuda", dtype=torch.bfloat16)
        D = torch.empty((s, s), device="cuda", dtype=torch.bfloat16)
        cases = {"matmul": lambda A=A, B=B, D=D: torch.matmul(A, B, out=D)}
        for name, cfg in TILES.items():
            cases[name] = lambda A=A, B=B, D=D, cfg=cfg: gemm_sm90(A, B, out=D, config=cfg)
        got = gpu_timing.rounds(cases, 2.0 * s**3)
        med = {k: statistics.median(v) for k, v in got.items()}
        res["rows"].append({"size": s, "rounds": got, "median": med})
        base = med["matmul"]
        print(f"bf16 {s}^3: " + ", ".join(f"{k} {v:.0f} ({v / base:.3f})" for k, v in med.items()),
              flush=True)  # fmt: skip
        json.dump(res, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
