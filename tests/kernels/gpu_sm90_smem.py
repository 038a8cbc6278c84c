"""sm90 designs with their own shared-memory layouts (canonical GMMA stages of each swizzle
mode, K- and MN-major) and TMA copy atoms, run through ``cutemma.gemm(A, B, design=d)`` on
two shapes each (one with partial tiles in every mode), checked against float64 torch.

    python tests/kernels/gpu_sm90_smem.py OUT.json
"""

from __future__ import annotations

import json
import sys

import torch  # before cutemma's CUDA modules

import cutemma
from cutemma import make_mma_atom, make_tiled_mma
from cutemma.kernels.design import GemmDesign, check
from cutemma.layout import tile_to_shape
from cutemma.smem import gmma_layout_atom


def _stage(major, mode, rows, k, dtype):
    order = (1, 0) if major == "MN" else None
    return tile_to_shape(gmma_layout_atom(major, mode, dtype), (rows, k), order)


def designs():
    bf = "SM90_64x128x16_F32BF16BF16_SS"
    kk = make_tiled_mma(make_mma_atom(bf), (2, 1, 1))
    mn = make_tiled_mma(make_mma_atom(bf, a_major="MN", b_major="MN"), (2, 1, 1))
    f8 = make_tiled_mma(make_mma_atom("SM90_64x128x32_F32E4M3E4M3_SS_TN"), (2, 1, 1))
    t = (128, 128, 64)
    yield "bf16 K SW64/SW32", "bf16", GemmDesign(
        kk, tile=t, smem_a=_stage("K", "SW64", 128, 64, "bf16"),
        smem_b=_stage("K", "SW32", 128, 64, "bf16"), copy_a="SM90_TMA_LOAD")  # fmt: skip
    yield (
        "bf16 K A SW32",
        "bf16",
        GemmDesign(kk, tile=t, smem_a=_stage("K", "SW32", 128, 64, "bf16")),
    )
    yield "bf16 MN SW64/SW32", "bf16", GemmDesign(
        mn, tile=t, smem_a=_stage("MN", "SW64", 128, 64, "bf16"),
        smem_b=_stage("MN", "SW32", 128, 64, "bf16"))  # fmt: skip
    yield "bf16 B MN SW64 (K,K atom)", "bf16", GemmDesign(
        kk, tile=t, smem_b=_stage("MN", "SW64", 128, 64, "bf16"))  # fmt: skip
    yield "e4m3 K SW64/SW32", "e4m3", GemmDesign(
        f8, tile=(128, 128, 128), smem_a=_stage("K", "SW64", 128, 128, "e4m3"),
        smem_b=_stage("K", "SW32", 128, 128, "e4m3"))  # fmt: skip


def run(name, dtype, design, m, n, k, gen) -> dict:
    row = {"design": name, "m": m, "n": n, "k": k}
    try:
        d = check(design)
        row["config"] = d.config.name
        A = torch.randn(m, k, device="cuda", generator=gen)
        B = torch.randn(k, n, device="cuda", generator=gen)
        ref = A.double() @ B.double()
        if dtype == "e4m3":
            A8, B8 = A.to(torch.float8_e4m3fn), B.t().contiguous().to(torch.float8_e4m3fn).t()
            ref = A8.double() @ B8.double()
            D = cutemma.gemm(A8, B8, design=d, out_dtype=torch.float32)
        else:
            A, B = A.bfloat16(), B.bfloat16()
            ref = A.double() @ B.double()
            D = cutemma.gemm(A, B, design=d)
        torch.cuda.synchronize()
        err = float((D.double() - ref).norm() / ref.norm())
        row.update(rel_err=err, ok=err < (2e-2 if dtype == "e4m3" else 1e-2))
    except Exception as exc:
        row.update(error=f"{type(exc).__name__}: {exc}"[:300], ok=False)
    return row


def main() -> None:
    gen = torch.Generator(device="cuda").manual_seed(32)
    rows = [run(*spec, m, n, k, gen) for spec in designs()
            for m, n, k in ((512, 640, 512), (333, 517, 392))]  # fmt: skip
    for r in rows:
        print(json.dumps(r), flush=True)
    summary = {"rows": len(rows), "ok": sum(r["ok"] for r in rows)}
    print(json.dumps(summary))
    with open(sys.argv[1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "summary": summary, "rows": rows}, f,
                  indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
