"""Calls whose operand rows sit half a 32-byte sector apart (a pitch that is an odd multiple
of 16 bytes), run through ``cutemma.gemm``'s built-in pick: which kernel the policy chose
(the space offers clusters of 2 for them) and whether the result matches torch, in every
calling form a cluster pick can meet.

    python tests/kernels/gpu_rows16.py OUT.json
    compute-sanitizer --tool racecheck python tests/kernels/gpu_rows16.py OUT.json --small

Forms: bf16 with B K-major and N-major, f32 out, alpha/beta with C, a fused epilogue (bias,
silu), a batch of 3, e4m3 with scales, and odd M, N, K (partial tiles in every mode; a
cluster whose second CTA has no tile).
"""

from __future__ import annotations

import json
import random
import sys

import torch  # before cutemma's CUDA modules

import cutemma
from cutemma.kernels.dispatch import which_kernel


def _mats(m, n, k, b_major, dtype, gen, batch=None):
    lead = () if batch is None else (batch,)
    A = torch.randn(*lead, m, k, device="cuda", generator=gen)
    if b_major == "K":
        B = torch.randn(*lead, n, k, device="cuda", generator=gen).transpose(-1, -2)
    else:
        B = torch.randn(*lead, k, n, device="cuda", generator=gen)
    return A.to(dtype), B.to(dtype)


def _err(got, ref) -> float:
    return float((got.double() - ref.double()).norm() / ref.double().norm().clamp_min(1e-30))


def case(form: str, m: int, n: int, k: int, b_major: str, gen) -> dict:
    row = {"form": form, "m": m, "n": n, "k": k, "b_major": b_major}
    fp8 = form == "e4m3"
    dtype = torch.float8_e4m3fn if fp8 else torch.bfloat16
    batch = 3 if form == "batched" else None
    A, B = _mats(m, n, k, "K" if fp8 else b_major, dtype, gen, batch)
    ref = A.double() @ B.double()
    kw = {}
    if form == "f32_out":
        kw["out_dtype"] = torch.float32
    elif form == "alpha_beta_c":
        C = torch.randn(m, n, device="cuda", generator=gen).bfloat16()
        kw.update(C=C, alpha=0.5, beta=2.0)  # (C by keyword: gemm's third argument)
        ref = 0.5 * ref + 2.0 * C.double()
    elif form == "bias_silu":
        bias = torch.randn(n, device="cuda", generator=gen).bfloat16()
        kw.update(epilogue=("bias", "silu"), bias=bias)
        ref = torch.nn.functional.silu(ref + bias.double())
    elif fp8:
        kw.update(scale_a=0.5, scale_b=2.0, out_dtype=torch.bfloat16)
    try:
        choice = which_kernel(A, B, **kw)
        row["pick"] = choice.config.name if choice.config is not None else None
        row["cluster"] = getattr(choice.config, "cluster", 1)
        D = cutemma.gemm(A, B, **kw)
        torch.cuda.synchronize()
        row["rel_err"] = _err(D, ref)
        row["ok"] = row["rel_err"] < (3e-2 if fp8 else 1e-2)
    except Exception as exc:
        row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        row["ok"] = False
    return row


def main() -> None:
    gen = torch.Generator(device="cuda").manual_seed(16)
    rng = random.Random(16)
    rows = []
    forms = ("plain", "f32_out", "alpha_beta_c", "bias_silu", "batched", "e4m3")
    shapes = [(4096, 8192, 8200), (1536, 4104, 2056), (513, 1000, 1032), (300, 4096, 4104)]
    shapes += [(rng.randrange(129, 3000), rng.randrange(64, 3000) * 8 + 8, rng.randrange(64, 600) * 16 + 8)
               for _ in range(4)]  # fmt: skip
    if "--small" in sys.argv:  # a sanitizer's shapes: pairs along N (128x64) and along M
        shapes = [(300, 520, 264), (2048, 1536, 2056), (1024, 2048, 520)]
        forms = ("plain", "bias_silu", "batched", "e4m3")
    for m, n, k in shapes:
        for form in forms:
            for b_major in ("K", "N") if form == "plain" else ("K",):
                kk = k + 8 if form == "e4m3" else k  # e4m3: K an odd multiple of 16 bytes
                rows.append(case(form, m, n, kk, b_major, gen))
                print(json.dumps(rows[-1]), flush=True)
    summary = {
        "rows": len(rows),
        "ok": sum(r["ok"] for r in rows),
        "cluster_picks": sum(r.get("cluster", 1) == 2 for r in rows),
    }
    print(json.dumps(summary))
    with open(sys.argv[1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "summary": summary, "rows": rows}, f,
                  indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
