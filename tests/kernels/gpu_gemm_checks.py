"""GPU correctness of cutemma.gemm against torch in float64 (run as a script; imports torch first).

    python tests/kernels/gpu_gemm_checks.py [OUT.json]

Fresh random inputs per check; the output is poisoned with NaN before each run and
must come back fully written; error is ||D - ref|| / ||ref|| on upcast inputs, within
the output format's bound. Exits 1 if any check fails.
"""

from __future__ import annotations

import json
import os
import sys
import time

import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

from cutemma.kernels import BUILTIN_CONFIGS, gemm
from cutemma.kernels.sm80.host import precompile

# ||D - ref|| / ||ref||: f32 accumulation of exact products, then one rounding to the output
BOUND = {torch.float32: 1e-5, torch.float16: 1.5e-3, torch.bfloat16: 1e-2}
SHAPES = [
    (1, 1, 1),
    (1, 37, 5),
    (13, 1, 7),
    (2, 3, 1),
    (7, 11, 13),
    (31, 17, 9),
    (127, 129, 65),
    (257, 131, 97),
    (509, 1021, 263),
    (64, 64, 64),
    (128, 128, 32),
    (200, 72, 8),
    (1000, 999, 1001),
    (1024, 1024, 1024),
    (4099, 257, 640),
]


def _random(shape, dtype, gen) -> torch.Tensor:
    if dtype == torch.int8:
        return torch.randint(-128, 128, shape, generator=gen, device="cuda", dtype=torch.int8)
    return torch.randn(shape, generator=gen, device="cuda").to(dtype)


def operand(rows: int, cols: int, major_rows: bool, dtype, gen) -> torch.Tensor:
    """(rows, cols) with rows contiguous (column-major) when major_rows, else row-major."""
    if major_rows:
        return _random((cols, rows), dtype, gen).t()
    return _random((rows, cols), dtype, gen)


def bound(in_dtype, out_dtype) -> float:
    """tf32 keeps 10 mantissa bits (truncated as the tensor core reads fp32); int8 is exact."""
    if in_dtype == torch.int8:
        return 0.0
    return 3e-3 if in_dtype == torch.float32 else BOUND[out_dtype]


def check(m, n, k, dtype, a_col, b_col, out_dtype=None, beta=0.0, alpha=1.0, config=None, gen=None):
    A = operand(m, k, a_col, dtype, gen)
    B = operand(k, n, b_col, dtype, gen)
    default_out = {torch.int8: torch.int32, torch.float32: torch.float32}.get(dtype, dtype)
    out_dtype = out_dtype or default_out
    C = _random((m, n), out_dtype, gen) if beta else None
    poison = -(2**31) if out_dtype == torch.int32 else float("nan")
    out = torch.full((m, n), poison, dtype=out_dtype, device="cuda")
    gemm(A, B, C, alpha=alpha, beta=beta, out=out, config=config)
    torch.cuda.synchronize()
    ref = alpha * (A.double() @ B.double())
    if C is not None:
        ref += beta * C.double()
    if out.dtype == torch.int32:
        written = bool((out != poison).all()) or bool((ref == poison).any())
    else:
        written = bool(torch.isfinite(out).all())
    err = float((out.double() - ref).norm() / ref.norm().clamp_min(1e-30))
    ok = written and err <= bound(dtype, out.dtype)
    return {
        "m": m,
        "n": n,
        "k": k,
        "dtype": str(dtype)[6:],
        "out": str(out.dtype)[6:],
        "a_major": "M" if a_col else "K",
        "b_major": "K" if b_col else "N",
        "alpha": alpha,
        "beta": beta,
        "config": config.name if config else None,
        "rel_err": err,
        "fully_written": written,
        "ok": ok,
    }


def _compare(case: dict, out, ref, out_bound: float) -> dict:
    """rel err of a result against its float64 reference; every element written (finite)."""
    written = bool(torch.isfinite(out.double()).all())
    err = float((out.double() - ref).norm() / ref.norm().clamp_min(1e-30))
    return {**case, "rel_err": err, "fully_written": written, "ok": written and err <= out_bound}


def batched_rows(gen) -> list[dict]:
    """3-D A/B with torch.matmul broadcasting (batch 1, 2-D operand, stride-0 expand), C
    broadcast to (batch, M, N), column-major batched operands; one launch per call."""
    rows = []
    cases = [  # A shape, B shape, C shape (None: no C), A column-major, B expanded from 1
        ((3, 67, 45), (3, 45, 70), None, False, False),
        ((5, 129, 33), (1, 33, 17), (5, 129, 17), True, False),
        ((4, 31, 64), (64, 40), (40,), False, False),
        ((4, 200, 96), (4, 96, 72), (4, 1, 72), True, True),
        ((2, 1, 1), (2, 1, 1), None, False, False),
        ((7, 300, 257), (7, 257, 130), None, False, False),
    ]
    for dtype in (torch.bfloat16, torch.float16, torch.float32, torch.int8):
        out_dtype = {torch.int8: torch.int32}.get(dtype, dtype)
        for a_shape, b_shape, c_shape, a_col, b_expand in cases:
            A = _random(a_shape, dtype, gen)
            if a_col:  # same values, column-major storage per problem
                A = A.transpose(-1, -2).contiguous().transpose(-1, -2)
            B = _random(b_shape, dtype, gen)
            if b_expand:  # one B shared through a stride-0 batch mode
                B = B[:1].expand(b_shape)
            C = _random(c_shape, out_dtype, gen) if c_shape else None
            beta = (2.0 if dtype == torch.int8 else 0.5) if C is not None else 0.0
            batch = max(a_shape[0], b_shape[0] if len(b_shape) == 3 else 1)
            shape = (batch, a_shape[-2], b_shape[-1])
            poison = -(2**31) if out_dtype == torch.int32 else float("nan")
            out = torch.full(shape, poison, dtype=out_dtype, device="cuda")
            gemm(A, B, C, beta=beta, out=out)
            torch.cuda.synchronize()
            ref = torch.matmul(A.double(), B.double())
            if C is not None:
                ref = ref + beta * C.double()
            case = {"case": "batched", "a": a_shape, "b": b_shape, "c": c_shape,
                    "dtype": str(dtype)[6:], "a_col": a_col, "b_expand": b_expand}  # fmt: skip
            row = _compare(case, out, ref, bound(dtype, out_dtype))
            if out_dtype == torch.int32:
                row["fully_written"] = bool((out != poison).all()) or bool((ref == poison).any())
                row["ok"] = row["fully_written"] and row["rel_err"] <= bound(dtype, out_dtype)
            rows.append(row)
    return rows


def fp8_rows(gen) -> list[dict]:
    """e4m3/e5m2 in every pairing, fp32 accumulation, bf16/f16/f32 out, per-tensor scales."""
    rows = []
    f8 = (torch.float8_e4m3fn, torch.float8_e5m2)
    shapes = [(1, 1, 1), (67, 70, 45), (257, 131, 97), (1000, 999, 1001)]
    for ta in f8:
        for tb in f8:
            for out_dtype in (torch.bfloat16, torch.float16, torch.float32):
                more = out_dtype == torch.bfloat16  # other outputs: one shape, one layout
                for m, n, k in shapes if more else shapes[2:3]:
                    for a_col, b_col in (
                        ((False, True), (True, False)) if more else ((False, True),)
                    ):
                        A = operand(m, k, a_col, torch.float32, gen).to(ta)
                        B = operand(k, n, b_col, torch.float32, gen).to(tb)
                        sa, sb, alpha = 0.5, 3.0, 1.5
                        out = torch.full((m, n), float("nan"), dtype=out_dtype, device="cuda")
                        gemm(A, B, alpha=alpha, scale_a=sa, scale_b=sb, out=out)
                        torch.cuda.synchronize()
                        ref = alpha * sa * sb * (A.float().double() @ B.float().double())
                        case = {"case": "fp8", "m": m, "n": n, "k": k, "a": str(ta)[6:],
                                "b": str(tb)[6:], "out": str(out_dtype)[6:], "a_col": a_col,
                                "b_col": b_col}  # fmt: skip
                        rows.append(_compare(case, out, ref, BOUND[out_dtype]))
    # a batched fp8 call with a broadcast bias (default output: bfloat16)
    A = torch.randn(3, 100, 64, device="cuda", generator=gen).to(torch.float8_e4m3fn)
    B = torch.randn(64, 48, device="cuda", generator=gen).to(torch.float8_e4m3fn)
    bias = torch.randn(48, device="cuda", generator=gen).bfloat16()
    D = gemm(A, B, bias, beta=1.0, scale_b=0.25)
    ref = 0.25 * torch.matmul(A.float().double(), B.float().double()) + bias.double()
    row = _compare({"case": "fp8 batched bias", "dtype": str(D.dtype)}, D, ref, BOUND[D.dtype])
    row["ok"] = row["ok"] and D.dtype == torch.bfloat16 and tuple(D.shape) == (3, 100, 48)
    rows.append(row)
    return rows


def tune_rows(gen) -> list[dict]:
    """cutemma.tune times two candidates on this GPU, writes its JSON cache, and gemm then
    picks the winner for every shape of the class."""
    import tempfile

    from cutemma.kernels import tune as tuning
    from cutemma.kernels import tuned
    from cutemma.kernels.tuned import lookup_device as _tuned

    with tempfile.TemporaryDirectory() as tmp:
        old = os.environ.get("CUTEMMA_CACHE_DIR")
        os.environ["CUTEMMA_CACHE_DIR"] = tmp
        tuned.reload()
        try:
            cands = [BUILTIN_CONFIGS["small"], BUILTIN_CONFIGS["skinny"]]
            best = tuning.tune(300, 260, 200, torch.bfloat16, "K", "N", candidates=cands)
            entries = json.loads((tuned.cache_path()).read_text())["entries"]
            picked = _tuned(0, 257, 511, 129, "bf16", "K", "N")  # same class (512, 512, 256)
            row = check(290, 500, 150, torch.bfloat16, False, False, gen=gen)
        finally:
            if old is None:
                os.environ.pop("CUTEMMA_CACHE_DIR")
            else:
                os.environ["CUTEMMA_CACHE_DIR"] = old
            tuned.reload()
    ok = best in cands and picked == best and len(entries) == 1 and row["ok"]
    return [{"case": "tune", "best": best.name, "entries": list(entries), "ok": ok}]


def main(path: str | None) -> int:
    if arch := os.environ.get("CUTEMMA_PRECOMPILE_ARCH"):  # before CUDA starts: forks compilers
        t = time.perf_counter()
        n = precompile(arch, tuple(BUILTIN_CONFIGS.values()))
        print(f"precompiled {n} variants for {arch} in {time.perf_counter() - t:.1f} s", flush=True)
    gen = torch.Generator(device="cuda").manual_seed(2026)
    rows = []
    for dtype in (torch.float16, torch.bfloat16):
        for m, n, k in SHAPES:
            for a_col in (False, True):
                for b_col in (False, True):
                    rows.append(check(m, n, k, dtype, a_col, b_col, gen=gen))
        for cfg in BUILTIN_CONFIGS.values():
            for m, n, k in [(300, 260, 200), (1, 513, 77), (256, 256, 256)]:
                rows.append(check(m, n, k, dtype, False, False, config=cfg, gen=gen))
                rows.append(check(m, n, k, dtype, True, True, config=cfg, gen=gen))
        for out_dtype in (torch.float32,):
            rows.append(check(333, 444, 555, dtype, False, True, out_dtype=out_dtype, gen=gen))
        rows.append(check(300, 200, 100, dtype, True, False, alpha=0.5, beta=-2.0, gen=gen))
        rows.append(
            check(
                300,
                200,
                100,
                dtype,
                False,
                False,
                out_dtype=torch.float32,
                alpha=2.0,
                beta=1.0,
                gen=gen,
            )
        )
    # tf32 (float32 inputs) and int8 -> int32: operands are read K-major (others copied first)
    for dtype in (torch.float32, torch.int8):
        for m, n, k in [
            (1, 1, 1),
            (67, 70, 45),
            (257, 131, 97),
            (1000, 999, 1001),
            (512, 512, 512),
        ]:
            for a_col in (False, True):
                for b_col in (False, True):
                    rows.append(check(m, n, k, dtype, a_col, b_col, gen=gen))
        beta = 3.0 if dtype == torch.int8 else 0.5
        rows.append(check(300, 200, 100, dtype, False, True, alpha=2.0, beta=beta, gen=gen))
    # views whose rows are not 16-byte aligned take the element-wise load path
    big = torch.randn(300, 301, device="cuda", generator=gen).half()
    A, B = big[3:200, 5:150], big[1:146, 7:300]
    out = torch.full((197, 293), float("nan"), dtype=torch.half, device="cuda")
    gemm(A, B, out=out)
    ref = A.double() @ B.double()
    err = float((out.double() - ref).norm() / ref.norm())
    rows.append(
        {
            "m": 197,
            "n": 293,
            "k": 145,
            "dtype": "float16",
            "case": "unaligned views",
            "rel_err": err,
            "fully_written": bool(torch.isfinite(out).all()),
            "ok": bool(torch.isfinite(out).all()) and err <= BOUND[torch.float16],
        }
    )
    # a bias row vector broadcast along M (C strides (0, 1)), f32 output
    A = torch.randn(150, 70, device="cuda", generator=gen).bfloat16()
    B = torch.randn(70, 90, device="cuda", generator=gen).bfloat16()
    bias = torch.randn(90, device="cuda", generator=gen)
    D = gemm(A, B, bias, beta=1.0, out_dtype=torch.float32)
    ref = A.double() @ B.double() + bias.double()
    err = float((D.double() - ref).norm() / ref.norm())
    rows.append({"case": "broadcast bias", "rel_err": err, "ok": err <= BOUND[torch.float32]})
    # NaN in A propagates to its row of D only
    A = torch.randn(64, 48, device="cuda", generator=gen).half()
    A[5, 7] = float("nan")
    B = torch.randn(48, 40, device="cuda", generator=gen).half()
    D = gemm(A, B)
    nan_rows = torch.isnan(D).any(dim=1).nonzero().flatten().tolist()
    rows.append(
        {
            "case": "nan propagation",
            "nan_rows": nan_rows,
            "ok": nan_rows == [5] and bool(torch.isnan(D[5]).all()),
        }
    )
    rows += batched_rows(gen)
    rows += fp8_rows(gen)
    rows += tune_rows(gen)
    bad = [r for r in rows if not r["ok"]]
    worst = max((r.get("rel_err", 0) for r in rows), default=0)
    print(f"gemm checks: {len(rows) - len(bad)}/{len(rows)} passed; worst rel err {worst:.3g}")
    for r in bad[:20]:
        print("FAIL", r)
    if path:
        with open(path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
