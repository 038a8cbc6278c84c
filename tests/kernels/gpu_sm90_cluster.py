"""Clusters of 2 on the H100: correctness (B K-major), a diagnostic of the N-major-B bug
(which M tiles / N blocks go wrong), and interleaved-round speed vs no cluster and cuBLAS.

    python tests/kernels/gpu_sm90_cluster.py OUT.json
"""

from __future__ import annotations

import json
import statistics
import sys

import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

import cutemma.kernels.plan_sm90 as plan_sm90
from cutemma.kernels.dispatch_sm90 import gemm_sm90
from cutemma.kernels.plan_sm90 import Sm90Config


def operand(rows, cols, contiguous_rows, gen):
    if contiguous_rows:
        return torch.randn((cols, rows), generator=gen, device="cuda").bfloat16().t()
    return torch.randn((rows, cols), generator=gen, device="cuda").bfloat16()


def main() -> None:
    out = {"device": torch.cuda.get_device_name()}
    gen = torch.Generator(device="cuda").manual_seed(7)
    rows = []
    for cfg in (Sm90Config(128, 256, cluster=2), Sm90Config(128, 128, cluster=2)):
        for am in ("K", "M"):
            for m, n, k in [(1000, 1000, 1000), (136, 520, 200), (2048, 1536, 512), (8, 8, 8)]:
                A, B = operand(m, k, am == "M", gen), operand(k, n, True, gen)
                D = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
                gemm_sm90(A, B, out=D, config=cfg)
                ref = A.double() @ B.double()
                err = float((D.double() - ref).norm() / ref.norm())
                rows.append({"config": cfg.name, "majors": am + "K", "mnk": (m, n, k), "rel_err": err,
                             "ok": bool(torch.isfinite(D).all()) and err < 1e-2})  # fmt: skip
    out["correctness"] = rows
    print("cluster correctness:", sum(r["ok"] for r in rows), "/", len(rows), flush=True)
    # the N-major-B diagnostic: error per (128-row M tile, 64-column N block)
    plan_sm90.ALLOW_CLUSTER_N_MAJOR_B = True
    diag = {}
    for cfg in (Sm90Config(128, 128, cluster=2), Sm90Config(128, 256, cluster=2)):
        m = n = k = 512
        A, B = operand(m, k, False, gen), operand(k, n, False, gen)
        D = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        gemm_sm90(A, B, out=D, config=cfg)
        torch.cuda.synchronize()
        ref = A.double() @ B.double()
        bad = ((D.double() - ref).abs() > 0.05 * ref.abs().mean()) | ~torch.isfinite(D)
        grid = bad.reshape(m // 128, 128, n // 64, 64).float().mean(dim=(1, 3))
        diag[cfg.name] = [[round(float(x), 2) for x in row] for row in grid]
        print(cfg.name, "bad fraction per (M tile, 64-col block):", diag[cfg.name], flush=True)
    plan_sm90.ALLOW_CLUSTER_N_MAJOR_B = False
    out["n_major_b_diagnostic"] = diag
    # speed, B column-major, interleaved rounds
    import triton.testing as tt

    speed = {}
    for s in (4096, 8192):
        A, B = operand(s, s, False, gen), operand(s, s, True, gen)
        D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
        cases = {"cublas": lambda A=A, B=B, D=D: torch.matmul(A, B, out=D)}
        for cfg in (Sm90Config(128, 256), Sm90Config(128, 256, cluster=2), Sm90Config(128, 128),
                    Sm90Config(128, 128, cluster=2)):  # fmt: skip
            cases[cfg.name] = lambda cfg=cfg, A=A, B=B, D=D: gemm_sm90(A, B, out=D, config=cfg)
        res = {name: [] for name in cases}
        for _ in range(4):
            for name, fn in cases.items():
                t = tt.do_bench(fn, warmup=25, rep=60, return_mode="median")
                res[name].append(2.0 * s**3 / t / 1e9)
        speed[s] = {name: round(statistics.median(v), 1) for name, v in res.items()}
        print(s, json.dumps(speed[s]), flush=True)
    out["speed_KK"] = speed
    json.dump(
        out, open(sys.argv[1] if len(sys.argv) > 1 else "gpu_sm90_cluster.json", "w"), indent=1
    )


if __name__ == "__main__":
    main()
