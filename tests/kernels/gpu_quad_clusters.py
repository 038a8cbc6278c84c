"""Clusters of 2 x 2 sharing both operands (``Sm90Config(cluster=4, multicast="AB")``) in the
calling forms the pick never gives them but a config may ask for: batched 3-D calls
(rank-3 maps, a shared operand, an odd count of tile rows and columns) and fused
epilogues (bias + gelu_tanh, a residual), against torch in float64 on the upcast inputs.

    python tests/kernels/gpu_quad_clusters.py OUT.json

(tests/kernels/gpu_sm90_checks.py checks the plain 2-D calls; gpu_sm90_sanitize.py quad
runs them under compute-sanitizer.) Exits 1 if any check fails.
"""

from __future__ import annotations

import json
import sys

import torch  # before cutemma's CUDA modules

import cutemma
from cutemma.kernels.sm90.config import Sm90Config

QUADS = [
    Sm90Config(128, 128, cluster=4, multicast="AB"),
    Sm90Config(128, 256, cluster=4, multicast="AB"),
]
BOUND = 1e-2  # bf16 out


def _rel(out: torch.Tensor, ref: torch.Tensor) -> float:
    return float((out.double() - ref).norm() / ref.norm())


def batched(cfg: Sm90Config) -> list[dict]:
    rows = []
    for L, m, n, k, shared in [
        (3, 300, 520, 200, None),
        (5, 136, 264, 1000, "A"),
        (2, 520, 136, 72, "B"),
    ]:
        A = torch.randn(1 if shared == "A" else L, m, k, device="cuda").bfloat16()
        B = torch.randn(1 if shared == "B" else L, n, k, device="cuda").bfloat16().transpose(-1, -2)
        A, B = A.expand(L, m, k), B.expand(L, k, n)
        out = torch.full((L, m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        cutemma.gemm(A, B, out=out, config=cfg)
        err = _rel(out, A.double() @ B.double())
        rows.append({"form": "batched", "config": cfg.name, "L": L, "m": m, "n": n, "k": k,
                     "shared": shared, "rel_err": err, "ok": err < BOUND})  # fmt: skip
    return rows


def fused(cfg: Sm90Config) -> list[dict]:
    rows = []
    m, n, k = 300, 520, 1000  # (every tile edge cut; three tile rows: a CTA past M)
    A = torch.randn(m, k, device="cuda").bfloat16()
    B = torch.randn(n, k, device="cuda").bfloat16().t()
    bias = torch.randn(n, device="cuda").bfloat16()
    resid = torch.randn(m, n, device="cuda").bfloat16()
    acc = A.double() @ B.double()
    for ops, kw, ref in [
        (("bias", "gelu_tanh"), {"bias": bias},
         torch.nn.functional.gelu(acc + bias.double(), approximate="tanh")),
        (("residual",), {"residual": resid}, acc + resid.double()),
    ]:  # fmt: skip
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        cutemma.gemm(A, B, out=out, config=cfg, epilogue=ops, **kw)
        err = _rel(out, ref)
        rows.append({"form": "+".join(ops), "config": cfg.name, "rel_err": err, "ok": err < BOUND})
    return rows


def main() -> None:
    torch.manual_seed(0)
    rows = []
    for cfg in QUADS:
        rows += batched(cfg) + fused(cfg)
    torch.cuda.synchronize()
    bad = [r for r in rows if not r["ok"]]
    print(f"quad clusters: {len(rows) - len(bad)}/{len(rows)} pass", flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "checks": len(rows), "failed": bad,
                   "rows": rows}, f, indent=1)  # fmt: skip
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
