"""Split-K decode calls on the GPU (issue 21): correctness, run-to-run identity, NaN rows,
CUDA graphs, and the time against the unsplit kernel and torch in the same process.

    python tests/kernels/gpu_splitk.py OUT.json [--small]

Every case goes through cutemma.gemm with no config (the split is the built-in choice for
M <= 64 when split_count says it pays) and is compared with torch.matmul in float64 on the
same operands (relative Frobenius error; bf16/f16 output 1e-2, fp8 inputs 6e-2). Whether the
split ran is read from the fast path's entry (a SplitKLaunch) after the call repeats.
--small: a few small shapes only (for compute-sanitizer).
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import subprocess
import sys
import traceback

import torch

import cutemma
from cutemma.kernels import fastpath
from cutemma.kernels.sm90 import splitk
from cutemma.kernels.sm90.config import Sm90Config

BF, F16, E4 = torch.bfloat16, torch.float16, torch.float8_e4m3fn
RESULT: dict = {"checks": {}, "failures": [], "timing": []}


def check(name: str, ok: bool, **info) -> None:
    RESULT["checks"][name] = {"ok": bool(ok), **info}
    if not ok:
        RESULT["failures"].append(name)
    print(f"{'ok  ' if ok else 'FAIL'} {name} {info}", flush=True)


def operands(m, n, k, dtype, a_col, b_col):
    def make(r, c, col):
        t = torch.randn(c, r, device="cuda") if col else torch.randn(r, c, device="cuda")
        t = t.to(dtype)
        return t.t() if col else t

    return make(m, k, a_col), make(k, n, b_col)


def rel_err(got, ref) -> float:
    return float((got.double() - ref).norm() / max(float(ref.norm()), 1e-30))


def split_ran(A, B, out) -> str:
    e = fastpath.find(A, B, out, None)
    return type(e.prepared).__name__ if e is not None else "none"


def one_case(m, n, k, dtype, a_col=False, b_col=False, out_given=True, out_dtype=None, alpha=1.0):
    A, B = operands(m, n, k, dtype, a_col, b_col)
    name = f"{str(dtype)[6:]}_m{m}_n{n}_k{k}_{'M' if a_col else 'K'}{'K' if b_col else 'N'}"
    name += ("_out" if out_given else "_new") + (f"_{str(out_dtype)[6:]}" if out_dtype else "")
    name += "" if alpha == 1.0 else f"_a{alpha}"
    s = splitk.split_count(m, n, k, 132, A.element_size())
    od = out_dtype or (BF if dtype == E4 else dtype)
    out = torch.empty(m, n, device="cuda", dtype=od) if out_given else None
    kw = {"alpha": alpha} if out_dtype is None else {"alpha": alpha, "out_dtype": out_dtype}
    runs = [cutemma.gemm(A, B, out=out, **kw).clone() for _ in range(5)]
    ref = alpha * torch.matmul(A.float().double(), B.float().double())
    err = rel_err(runs[0], ref)
    same = all(torch.equal(runs[0], r) for r in runs[1:])
    ran = split_ran(A, B, out) if out_dtype is None else "checked path"
    tol = 6e-2 if dtype == E4 else 1e-2
    check(name, err <= tol and same and (ran != "PreparedLaunch" or s == 1),
          split=s, err=err, identical_5_runs=same, launch=ran)  # fmt: skip
    return A, B


def nan_rows() -> None:
    """A NaN planted in A's row 3 makes D's row 3 NaN and no other row."""
    A, B = operands(16, 4096, 4096, BF, False, False)
    A[3, 100] = float("nan")
    D = cutemma.gemm(A, B)
    rows_nan = torch.isnan(D).any(dim=1).nonzero().flatten().tolist()
    ok = rows_nan == [3] and bool(torch.isnan(D[3]).all())
    ref = torch.matmul(A.double(), B.double())
    keep = torch.ones(16, dtype=torch.bool, device="cuda")
    keep[3] = False
    check("nan_row", ok and rel_err(D[keep], ref[keep]) < 1e-2, nan_rows=rows_nan,
          split=splitk.split_count(16, 4096, 4096, 132, 2))  # fmt: skip


def graph_replay() -> None:
    calls = []
    for m, n, k in ((1, 10240, 8192), (16, 4096, 14336), (64, 1024, 4096), (5, 8192, 8192)):
        A, B = operands(m, n, k, BF, False, False)
        out = torch.empty(m, n, device="cuda", dtype=BF)
        cutemma.gemm(A, B, out=out)
        calls.append((A, B, out))
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for A, B, out in calls:
            cutemma.gemm(A, B, out=out)
    worst, ok = 0.0, True
    for _ in range(3):
        for A, B, _ in calls:
            A.copy_(torch.randn_like(A))
            B.copy_(torch.randn_like(B))
        g.replay()
        torch.cuda.synchronize()
        for A, B, out in calls:
            got = out.clone()
            eager = cutemma.gemm(A, B, out=torch.empty_like(out))
            e = rel_err(got, torch.matmul(A.double(), B.double()))
            worst = max(worst, e)
            ok &= bool(torch.equal(got, eager)) and e < 1e-2
    check("graph_split_replays", ok, worst_err=worst, calls=len(calls), replays=3)


def median_us(fn) -> float:
    import triton.testing as tt

    return 1e3 * tt.do_bench(fn, warmup=25, rep=100, return_mode="median")


def timing() -> None:
    """Split (built-in) against the unsplit 128x128 kernel and torch.matmul, rounds in turn."""
    for m, n, k in ((1, 10240, 8192), (16, 8192, 28672), (16, 8192, 8192), (1, 57344, 8192)):
        A, B = operands(m, n, k, BF, False, False)
        out = torch.empty(m, n, device="cuda", dtype=BF)
        fns = {
            "split": lambda: cutemma.gemm(A, B, out=out),  # noqa: B023
            "unsplit": lambda: cutemma.gemm(A, B, out=out, config=Sm90Config(128, 128)),  # noqa: B023
            "torch": lambda: torch.matmul(A, B, out=out),  # noqa: B023
        }
        times = {key: [] for key in fns}
        for r in range(3):
            for key in list(fns) if r % 2 == 0 else list(fns)[::-1]:
                times[key].append(median_us(fns[key]))
        med = {key: statistics.median(v) for key, v in times.items()}
        row = {"m": m, "n": n, "k": k, "split": splitk.split_count(m, n, k, 132, 2),
               **{f"{key}_us": round(v, 2) for key, v in med.items()},
               "split_over_torch": round(med["torch"] / med["split"], 3),
               "unsplit_over_torch": round(med["torch"] / med["unsplit"], 3)}  # fmt: skip
        RESULT["timing"].append(row)
        print("timing", row, flush=True)


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "splitk.json"
    small = "--small" in sys.argv
    torch.manual_seed(0)
    steps = []
    if small:
        steps.append(("cases", lambda: [one_case(m, 1024, 2048, BF) for m in (1, 7)]))
        steps.append(("fp8", lambda: one_case(4, 1024, 4096, E4, b_col=True)))
    else:

        def cases():
            for m in (1, 3, 16, 64):
                for n, k in ((10240, 8192), (8192, 28672), (1024, 4096), (4096, 14336)):
                    one_case(m, n, k, BF)
            one_case(16, 8192, 8192, BF, b_col=True)
            one_case(16, 8192, 8192, BF, a_col=True)
            one_case(7, 4096, 4096, F16, out_given=False)
            one_case(7, 4096, 4096, BF, out_dtype=torch.float32)
            one_case(16, 4096, 4096, BF, alpha=0.5)
            for m in (1, 16, 64):
                one_case(m, 10240, 8192, E4, b_col=True)
            one_case(2, 4096, 4096, torch.float32, b_col=True)

        steps += [("cases", cases), ("nan", nan_rows), ("graph", graph_replay),
                  ("timing", timing)]  # fmt: skip
    for name, fn in steps:
        try:
            fn()
        except Exception:
            check(f"{name}_ran", False, error=traceback.format_exc()[-1500:])
    RESULT.update(
        device=torch.cuda.get_device_name(),
        torch=torch.__version__,
        commit=os.environ.get("CUTEMMA_COMMIT") or _git(),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        refused=dict((str(k), v) for k, v in splitk._REFUSED.items()),
        passed=sum(c["ok"] for c in RESULT["checks"].values()),
        total=len(RESULT["checks"]),
    )
    with open(out, "w") as f:
        json.dump(RESULT, f, indent=1, default=str)
    print(f"{RESULT['passed']} passed, {RESULT['total'] - RESULT['passed']} failed", flush=True)
    sys.exit(1 if RESULT["failures"] else 0)


def _git() -> str:
    try:
        return subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], text=True).strip()
    except Exception:
        return "unknown"


if __name__ == "__main__":
    main()
