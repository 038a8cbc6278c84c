"""Fused epilogues on the GPU (issue 20, acceptance 5): every op and two compositions on
both kernel families against torch, then the fused call's speed on the bench's
transformer shapes against the unfused torch sequence and cuBLASLt's fused bias + GELU
(``torch._addmm_activation``), as ratios measured in this one process.

Usage: python tests/kernels/gpu_epilogue.py OUT.json [--quick]

Checks: fresh random inputs per case (never zeros), the output poisoned with NaN before
the call; ``||D - ref|| / ||ref||`` against :func:`cutemma.kernels.epilogue.reference`
of the float32 product of the same (rounded) inputs, and no NaN. Shapes include 1 row,
primes and non-multiples of the tiles; bf16 in/out, bf16 in/f32 out, fp8 e4m3 with row
and column scales (bf16 out). Also: alpha, beta and C with an epilogue (D =
epi(alpha * acc + beta * C)); a residual that is D itself; repeated calls whose bias
changes (another tensor, then in place) and calls alternating with and without an
epilogue on the same operands (no stale result from the repeated-call path).

Timing: bench/gemm.py's median_ms (do_bench medians, L2 flushed) of each contender in
rounds, the order rotated every round, the median of the rounds.
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import subprocess
import sys
import time

import torch  # before cutemma's CUDA modules

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

import cutemma  # noqa: E402
from cutemma.kernels import GemmConfig, Sm90Config  # noqa: E402
from cutemma.kernels.epilogue import OPS, reference  # noqa: E402

FAMILIES = {"sm80": GemmConfig(128, 128, 32, (2, 2), 4), "sm90": Sm90Config(128, 128),
            "sm90_pingpong": Sm90Config(128, 128, schedule="pingpong")}  # fmt: skip
# fp8 mma.sync: 8 warps (4 spill, dispatch.FP8_LARGE)
FP8_SM80 = GemmConfig(128, 128, 32, (4, 2), 4)
SHAPES = [
    (1, 72, 48),
    (257, 384, 128),
    (300, 200, 144),
    (1031, 1000, 528),
    (131, 259, 80),
]  # fp8 TMA: K % 16; an odd N
COMPOSITIONS = [("bias", "gelu_tanh"), ("scale_row", "scale_col", "bias", "silu", "residual")]
# the built-in pick (config None) on calls of at most 256 rows: swapped kernels run the chain
# as D^T's (epilogue.transposed); each row records whether it ran swapped
SWAP_SHAPES = [(1, 4096, 1024), (16, 2048, 1024), (77, 1000, 528), (200, 3072, 512)]
# 16-bit calls of few columns past SWAP_MAX_M, which may run swapped on token tiles fitted to
# whole waves (space.wave_tokens); each row records whether it ran swapped
FEW_COLS_SHAPES = [(5798, 528, 2688), (8064, 432, 2384), (4364, 320, 10976)]
# fused fp8 calls past the swapped kernels' rows (space.fused_kernels): a narrow stream-K
# split over a long K, a grid's last partial wave shared, whole 160-wide tiles
FUSED_FP8_SHAPES = [(300, 368, 41392), (1031, 1000, 528), (2048, 4096, 4096)]
# fused fp8 calls whose pick is a swapped tile wider than 160 tokens (several token tiles,
# whole and stream-K): the chain as D^T's on the tiles the unswapped fused space leaves out
FUSED_FP8_SWAP_SHAPES = [(515, 6144, 16384), (700, 4096, 4096), (1500, 6144, 4096)]
# the built-in pick on 16-bit calls whose pick is a 64-row tile as wide as fills a wave
# (space.wave_kernels: 64x96, 64x160, 64x192), plain and with both compositions
WAVE_SHAPES = [(763, 1040, 5280), (730, 1600, 1600), (456, 3072, 1024)]
SWAP_CHAINS = [("bias", "gelu_tanh"), ("scale_row", "scale_col", "bias_row", "silu"),
               ("bias_row", "relu"), ("scale_col", "bias")]  # fmt: skip
TOL = {torch.bfloat16: 8e-3, torch.float32: 2e-3}


def operands(M, N, K, dtype):
    """A (M, K) row-major, B (K, N) column-major (K-major: what fp8 needs)."""
    if dtype.is_floating_point and dtype.itemsize == 1:
        A = (torch.randn(M, K, device="cuda") * 0.5).to(dtype)
        B = (torch.randn(N, K, device="cuda") * 0.5).to(dtype).t()
    else:
        A = torch.randn(M, K, device="cuda", dtype=dtype)
        B = torch.randn(N, K, device="cuda", dtype=dtype).t()
    return A, B


def tensors_for(ops, M, N, out_dtype, vec_dtype=torch.bfloat16):
    t = {}
    for n in ops:
        op = OPS[n]
        if op.arg is None:
            continue
        shape = {"M": (M,), "N": (N,), "MN": (M, N)}[op.shape]
        v = torch.randn(shape, device="cuda")
        if op.kind == "scale":
            v = v.abs() + 0.25
            t[op.arg] = v.float()
        elif op.shape == "MN":
            t[op.arg] = v.to(out_dtype)
        else:
            t[op.arg] = v.to(vec_dtype)
    return t


def rel_err(got, ref):
    if torch.isnan(got.float()).any():
        return float("nan")
    return float((got.float() - ref.float()).norm() / max(ref.float().norm(), 1e-30))


def check(results, family, ops, M, N, K, dtype, out_dtype, alpha=1.0, beta=0.0, vec=None):
    A, B = operands(M, N, K, dtype)
    tens = tensors_for(ops, M, N, out_dtype, vec or torch.bfloat16)
    C = torch.randn(M, N, device="cuda", dtype=out_dtype) if beta else None
    out = torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
    cfg = FP8_SM80 if family == "sm80" and dtype.itemsize == 1 else FAMILIES.get(family)
    cutemma.gemm(A, B, C, alpha=alpha, beta=beta, out=out, config=cfg,
                 epilogue=ops, **tens)  # fmt: skip
    acc = A.float() @ B.float()
    ref = reference(acc, ops, tens, alpha, beta, C, out_dtype)
    err = rel_err(out, ref)
    ok = err == err and err < TOL[out_dtype]
    results.append({"family": family, "ops": list(ops), "shape": [M, N, K],
                    "dtype": str(dtype)[6:], "out": str(out_dtype)[6:], "alpha": alpha,
                    "beta": beta, "rel_err": err, "ok": ok})  # fmt: skip
    if family == "builtin":
        seen = cutemma.kernels.which_kernel(A, B, C, alpha=alpha, beta=beta, epilogue=ops, **tens)
        results[-1]["swapped"] = bool(seen.swap)
        results[-1]["config"] = getattr(getattr(seen, "config", None), "name", None)
    if not ok:
        print("FAIL", results[-1], flush=True)
    return ok


def special_checks(results, family):
    """Residual = D (in place), repeated calls with a changing bias, with/without epilogue."""
    cfg = FAMILIES[family]
    M, N, K = 300, 200, 144
    A, B = operands(M, N, K, torch.bfloat16)
    acc = A.float() @ B.float()
    out = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
    r0 = out.clone()
    cutemma.gemm(A, B, out=out, config=cfg, epilogue=("residual",), residual=out)
    ok = [rel_err(out, (acc + r0.float()).bfloat16()) < TOL[torch.bfloat16]]
    b1 = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    b2 = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    wide = torch.randn(2 * N, device="cuda", dtype=torch.bfloat16)
    seq = []
    # (an offset view: a bias one element past a 4-byte boundary, after an aligned one of
    # the same shape, which the repeated-call path reuses the launch for: the kernel reads
    # it a value at a time, not a word per two columns)
    kinds = ["plain", "b1", "b2", "b2 changed in place", "plain", "b1", "strided view",
             "strided view changed in place", "b1 into out", "b2 into out", "offset view",
             "b1", "offset view changed in place"]  # fmt: skip
    given = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    for kind in kinds:
        if kind == "b2 changed in place":
            b2.mul_(-3.0).add_(1.0)
        if kind.endswith("view changed in place"):
            wide.mul_(2.0)
        if kind == "plain":
            got, ref = cutemma.gemm(A, B, config=cfg), acc
        else:
            b = {"b1": b1, "b2": b2}.get(kind[:2], wide[::2])
            b = wide[1 : N + 1] if kind.startswith("offset view") else b
            out = given if kind.endswith("into out") else None
            got = cutemma.gemm(A, B, config=cfg, out=out, epilogue=("bias", "relu"), bias=b)
            ref = (acc + b.float()).clamp_min(0)
        e = rel_err(got, ref.bfloat16())
        seq.append([kind, e])
        ok.append(e < TOL[torch.bfloat16])
    results.append({"family": family, "special": "residual=D, repeated calls", "steps": seq,
                    "ok": all(ok)})  # fmt: skip
    if not all(ok):
        print("FAIL", results[-1], flush=True)


def correctness(quick):
    results = []
    shapes = SHAPES[:2] if quick else SHAPES
    for family in FAMILIES:
        if family == "sm90_pingpong":  # the schedule whose epilogue overlaps a mainloop
            for ops in COMPOSITIONS:
                for M, N, K in shapes[1:3]:
                    check(results, family, ops, M, N, K, torch.bfloat16, torch.bfloat16)
            special_checks(results, family)
            continue
        for name in OPS:
            for M, N, K in shapes:
                check(results, family, (name,), M, N, K, torch.bfloat16, torch.bfloat16)
        for ops in COMPOSITIONS:
            for M, N, K in shapes:
                check(results, family, ops, M, N, K, torch.bfloat16, torch.bfloat16)
                check(results, family, ops, M, N, K, torch.bfloat16, torch.float32,
                      vec=torch.float32)  # fmt: skip
        for M, N, K in shapes:  # fp8 dequantisation: row and column scales, then bias, gelu
            check(results, family, ("scale_row", "scale_col", "bias", "gelu"), M, N, K,
                  torch.float8_e4m3fn, torch.bfloat16)  # fmt: skip
        check(results, family, ("bias", "relu"), 300, 200, 144, torch.bfloat16,
              torch.bfloat16, alpha=0.5, beta=2.0)  # fmt: skip
        special_checks(results, family)
    for ops in SWAP_CHAINS:
        for M, N, K in SWAP_SHAPES[:2] if quick else SWAP_SHAPES:
            check(results, "builtin", ops, M, N, K, torch.bfloat16, torch.bfloat16)
            check(results, "builtin", ops, M, N, K, torch.float8_e4m3fn, torch.bfloat16)
    for ops in SWAP_CHAINS[:2]:
        for M, N, K in FEW_COLS_SHAPES[:1] if quick else FEW_COLS_SHAPES:
            check(results, "builtin", ops, M, N, K, torch.bfloat16, torch.bfloat16)
    for M, N, K in FUSED_FP8_SHAPES:  # the built-in pick of the fused fp8 space, unswapped
        check(results, "builtin", COMPOSITIONS[1], M, N, K, torch.float8_e4m3fn, torch.bfloat16)
    for M, N, K in FUSED_FP8_SWAP_SHAPES[:1] if quick else FUSED_FP8_SWAP_SHAPES:
        for ops in COMPOSITIONS:
            check(results, "builtin", ops, M, N, K, torch.float8_e4m3fn, torch.bfloat16)
    for M, N, K in WAVE_SHAPES[:1] if quick else WAVE_SHAPES:
        for ops in ((), *COMPOSITIONS):
            check(results, "builtin", ops, M, N, K, torch.bfloat16, torch.bfloat16)
        check(results, "builtin", COMPOSITIONS[0], M, N, K, torch.bfloat16, torch.bfloat16,
              alpha=0.5, beta=2.0)  # fmt: skip
    return results


def speed_row(M, N, K, rounds):
    """One transformer shape: bias + GELU (tanh) fused in cutemma.gemm against the torch
    sequence (matmul, add, gelu), cuBLASLt's fused bias + GELU, and cutemma without it."""
    from gemm import median_ms

    F = torch.nn.functional
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    W = torch.randn(N, K, device="cuda", dtype=torch.bfloat16).t()  # nn.Linear's weight.t()
    b = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    ep = ("bias", "gelu_tanh")
    pp = Sm90Config(128, 128, schedule="pingpong")
    contenders = {
        "fused": lambda: cutemma.gemm(x, W, out=out, epilogue=ep, bias=b),
        "fused_pingpong": lambda: cutemma.gemm(x, W, out=out, epilogue=ep, bias=b, config=pp),
        "cutemma_plain": lambda: cutemma.gemm(x, W, out=out),
        "torch_unfused": lambda: F.gelu(torch.matmul(x, W) + b, approximate="tanh"),
        "torch_addmm_act": lambda: torch._addmm_activation(b, x, W, use_gelu=True),
    }
    ref = F.gelu(x.float() @ W.float() + b.float(), approximate="tanh")
    err = rel_err(contenders["fused"](), ref)
    err_lt = rel_err(contenders["torch_addmm_act"](), ref)
    for fn in contenders.values():
        fn()
    torch.cuda.synchronize()
    names = list(contenders)
    times = {k: [] for k in names}
    for r in range(rounds):  # the order rotated: each contender leads once per 5 rounds
        for k in names[r % len(names) :] + names[: r % len(names)]:
            times[k].append(median_ms(contenders[k], 3, 20))
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"m": M, "n": N, "k": K, "epilogue": list(ep), "rel_err": err,
            "rel_err_addmm_activation": err_lt, "ms": med, "rounds": rounds,
            "torch_unfused_over_fused": med["torch_unfused"] / med["fused"],
            "addmm_activation_over_fused": med["torch_addmm_act"] / med["fused"],
            "plain_over_fused": med["cutemma_plain"] / med["fused"],
            "pingpong_over_fused": med["fused_pingpong"] / med["fused"]}  # fmt: skip


def speed(quick):
    from gemm import TRANSFORMER

    rows = []
    for M, N, K in TRANSFORMER[:3] if quick else TRANSFORMER:
        row = speed_row(M, N, K, 3 if quick else 5)
        rows.append(row)
        print(f"{M:>6} {N:>6} {K:>6}  fused {row['ms']['fused']:.4f} ms  vs unfused torch "
              f"{row['torch_unfused_over_fused']:.3f}x  vs _addmm_activation "
              f"{row['addmm_activation_over_fused']:.3f}x  plain/fused "
              f"{row['plain_over_fused']:.3f}  pingpong/fused {row['pingpong_over_fused']:.3f}"
              f"  err {row['rel_err']:.1e}", flush=True)  # fmt: skip
    return rows


def main():
    out_path = sys.argv[1]
    quick = "--quick" in sys.argv
    t0 = time.time()
    checks = correctness(quick)
    passed = sum(r["ok"] for r in checks)
    print(f"correctness: {passed}/{len(checks)} in {time.time() - t0:.0f} s", flush=True)
    rows = speed(quick)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()  # fmt: skip
    result = {
        "device": torch.cuda.get_device_name(),
        # a carried tree (no .git of its own) would report the enclosing checkout's commit
        "commit": os.environ.get("CUTEMMA_COMMIT") or commit or "unknown",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "method": "do_bench medians (L2 flushed) per contender, 5 rounds with the order "
        "rotated, median of rounds; ratios = contender ms / fused ms (> 1: fused is faster)",
        "checks_passed": passed,
        "checks": len(checks),
        "failures": [r for r in checks if not r["ok"]],
        "max_rel_err": max((r["rel_err"] for r in checks if "rel_err" in r), default=None),
        "check_rows": checks,
        "speed": rows,
    }
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {out_path}; {passed}/{len(checks)} checks", flush=True)
    sys.exit(0 if passed == len(checks) else 1)


if __name__ == "__main__":
    main()
