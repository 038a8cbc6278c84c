"""Clusters of 2 on the H100: the N-major-B bug before/after its fix, correctness of every
cluster config for both A and both B majors over edge shapes, and interleaved-round speed
(cluster vs no cluster, both B majors) next to cuBLAS; pairs along N multicasting A too.

    python tests/kernels/gpu_sm90_cluster.py OUT.json

The bug (notes/kernels-journal.md, "Clusters"): the consumers built wgmma descriptors as
``DESC | ((stage address + offset) >> 4)``; in a cluster the shared::cta address carries
the CTA's rank at bit 24, so in rank 1 the OR set bit 20 of the descriptor (LBO += 256
bytes). K-major operands ignore LBO; an N-major B tile wider than 64 columns walks its
64-column blocks by LBO, so every block but the first was read from the wrong place. The
"unmasked" variant below rebuilds that kernel to show the pattern next to the fixed one.
"""

from __future__ import annotations

import json
import random
import re
import statistics
import sys

import gpu_timing  # beside this script
import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

import cutemma.kernels.sm90.host as ds
import cutemma.kernels.sm90.source as src_mod
from cutemma.errors import LaunchError
from cutemma.kernels.dispatch import gemm as gemm_sm90
from cutemma.kernels.sm90.plan import Sm90Config

CLUSTERS = (Sm90Config(128, 256, cluster=2), Sm90Config(128, 128, cluster=2))
# pairs along N sharing (multicasting) A
CLUSTERS_A = (Sm90Config(128, 256, cluster=2, multicast="A"),
              Sm90Config(128, 128, cluster=2, multicast="A"))  # fmt: skip


def operand(rows, cols, contiguous_rows, gen):
    """(rows, cols) bf16; ``contiguous_rows``: column-major (the rows mode is contiguous)."""
    if contiguous_rows:
        return torch.randn((cols, rows), generator=gen, device="cuda").bfloat16().t()
    return torch.randn((rows, cols), generator=gen, device="cuda").bfloat16()


def rel_err(D, ref) -> float:
    return float((D.double() - ref).norm() / ref.norm().clamp_min(1e-30))


def error_grid(cfg, gen, unmasked: bool) -> list[list[float]]:
    """Fraction of wrong elements per (128-row M tile, 64-column N block), 512^3, B N-major."""
    real = src_mod.gemm_sm90_source  # host imports it from there at each compile
    if unmasked:

        def source(*args, **kw):
            src, n = re.subn(r"\(smem & 0x3ffffu\) \+ stage", "smem + stage", real(*args, **kw))
            assert n == 1, "the descriptor base line changed: update this diagnostic"
            return src

        src_mod.gemm_sm90_source, index = source, ds._index_path
        ds._index_path = lambda *a: None  # keep the unmasked kernel out of the disk index
    ds.compiled_sm90.cache_clear()
    ds._PREPARED.clear()
    try:
        m = n = k = 512
        A, B = operand(m, k, False, gen), operand(k, n, False, gen)
        D = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        gemm_sm90(A, B, out=D, config=cfg)
        torch.cuda.synchronize()
    finally:
        if unmasked:
            src_mod.gemm_sm90_source, ds._index_path = real, index
        ds.compiled_sm90.cache_clear()
        ds._PREPARED.clear()
    ref = A.double() @ B.double()
    bad = ((D.double() - ref).abs() > 0.05 * ref.abs().mean()) | ~torch.isfinite(D)
    grid = bad.reshape(m // 128, 128, n // 64, 64).float().mean(dim=(1, 3))
    return [[round(float(x), 2) for x in row] for row in grid]


def correctness(gen) -> list[dict]:
    rng = random.Random(12)
    shapes = [(1000, 1000, 1000), (136, 520, 200), (2048, 1536, 512), (8, 8, 8), (264, 392, 72),
              (128, 256, 64), (256, 264, 8), (1, 8, 16)]  # fmt: skip
    shapes += [tuple(8 * rng.randint(1, 160) for _ in range(3)) for _ in range(3)]
    rows = []
    for cfg in CLUSTERS + CLUSTERS_A:
        for am in ("K", "M"):
            for bm in ("K", "N"):
                for i, (m, n, k) in enumerate(shapes):
                    A, B = operand(m, k, am == "M", gen), operand(k, n, bm == "K", gen)
                    ref = A.double() @ B.double()
                    for out in (torch.bfloat16, torch.float32):  # TMA-store / regs epilogue
                        D = torch.full((m, n), float("nan"), dtype=out, device="cuda")
                        try:
                            gemm_sm90(A, B, out=D, config=cfg)
                        except LaunchError as exc:  # a TMA rule (16-byte strides) refuses it
                            rows.append({"config": cfg.name, "majors": am + bm, "mnk": (m, n, k),
                                         "refused": str(exc), "ok": True, "rel_err": 0.0})  # fmt: skip
                            continue
                        err = rel_err(D, ref)
                        rows.append({"config": cfg.name, "majors": am + bm, "mnk": (m, n, k),
                                     "out": str(out), "rel_err": err,
                                     "ok": bool(torch.isfinite(D).all()) and err < 1e-2})  # fmt: skip
                    if (
                        i == 1 and "refused" not in rows[-1]
                    ):  # alpha/beta with C (the register epilogue)
                        C = torch.randn((m, n), generator=gen, device="cuda").bfloat16()
                        D = gemm_sm90(A, B, C, alpha=0.5, beta=2.0, config=cfg)
                        err = rel_err(D, 0.5 * ref + 2.0 * C.double())
                        rows.append({"config": cfg.name, "majors": am + bm, "mnk": (m, n, k),
                                     "out": "bf16+C", "rel_err": err,
                                     "ok": bool(torch.isfinite(D).all()) and err < 1e-2})  # fmt: skip
    torch.cuda.synchronize()
    return rows


def speed(gen) -> dict:
    res_all = {}
    for s in (4096, 8192):
        for bm in ("N", "K"):
            A, B = operand(s, s, False, gen), operand(s, s, bm == "K", gen)
            D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
            cases = {"cublas": lambda A=A, B=B, D=D: torch.matmul(A, B, out=D)}
            for cfg in (Sm90Config(128, 256), Sm90Config(128, 256, cluster=2), CLUSTERS_A[0],
                        Sm90Config(128, 128), Sm90Config(128, 128, cluster=2)):  # fmt: skip
                cases[cfg.name] = lambda cfg=cfg, A=A, B=B, D=D: gemm_sm90(A, B, out=D, config=cfg)
            for fn in cases.values():
                fn()
            res = gpu_timing.rounds(cases, 2.0 * s**3)
            med = {name: round(statistics.median(v), 1) for name, v in res.items()}
            key = f"{s}^3 K{bm}"
            res_all[key] = {"tflops": med, "rounds": res,
                            "ratio": {n: round(v / med["cublas"], 3) for n, v in med.items()}}  # fmt: skip
            print(key, json.dumps(med), flush=True)
    return res_all


def main() -> None:
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    gen = torch.Generator(device="cuda").manual_seed(7)
    diag = {}
    for cfg in CLUSTERS:
        for unmasked in (True, False):
            name = f"{cfg.name} {'unmasked (the bug)' if unmasked else 'fixed'}"
            diag[name] = error_grid(cfg, gen, unmasked)
            print(name, "bad fraction per (M tile, 64-col block):", diag[name], flush=True)
    out["n_major_b_diagnostic"] = diag
    rows = correctness(gen)
    out["correctness"] = rows
    bad = [r for r in rows if not r["ok"]]
    print("cluster correctness:", len(rows) - len(bad), "/", len(rows),
          "worst rel err", max(r["rel_err"] for r in rows), flush=True)  # fmt: skip
    for r in bad[:20]:
        print("FAILED", r, flush=True)
    if "--no-speed" not in sys.argv:
        out["speed"] = speed(gen)
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    with open(args[0] if args else "gpu_sm90_cluster.json", "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
