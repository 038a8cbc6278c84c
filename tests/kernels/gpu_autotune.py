"""CUTEMMA_AUTOTUNE=1 on the GPU, end to end (a script).

    python tests/kernels/gpu_autotune.py OUT.json

In a fresh cache folder, for bf16 4096^3 (B row-major), bf16 (16, 8192, 8192) and e4m3
(16, 10240, 8192): the first cutemma.gemm call of the bucket tunes it (the cache file gains
its entry), its result matches float64 and its operands are unchanged; a second shape of the
class and a second process do not tune again; the tuned choice is no slower than the built-in
pick (both timed by tune's own cold-L2 timer, alternating, best of 3 rounds; the built-in's
two timings give the run-to-run spread the 3% margin must exceed). Then two threads on a new
bucket tune it once, and a call during CUDA-graph capture takes the built-in pick untuned.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading

import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

os.environ["CUTEMMA_CACHE_DIR"] = tempfile.mkdtemp()
os.environ["CUTEMMA_AUTOTUNE"] = "1"

import cutemma  # noqa: E402
from cutemma.kernels import autotune, timing, tuned  # noqa: E402
from cutemma.kernels.dispatch import which_kernel  # noqa: E402

CASES = [((4096, 4096, 4096), "bf16", "N"), ((16, 8192, 8192), "bf16", "N"),
         ((16, 10240, 8192), "e4m3", "K")]  # fmt: skip
CASES = CASES[: int(os.environ.get("AUTOTUNE_CASES", len(CASES)))]  # (a short device call: 1)
TORCH = {"bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn}
AGAIN = """
import sys, cutemma, torch
from cutemma.kernels import timing
def refuse(*a):
    raise SystemExit("tuned again")
timing.time_candidates = refuse
m, n, k, b_major = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
A = torch.randn(m, k, device="cuda").to(getattr(torch, sys.argv[5]))
B = torch.randn(n, k, device="cuda").t() if b_major == "K" else torch.randn(k, n, device="cuda")
cutemma.gemm(A, B.to(A.dtype)); torch.cuda.synchronize(); print("not tuned again")
"""


def operands(m: int, n: int, k: int, dt: str, b_major: str):
    A = torch.randn(m, k, device="cuda").to(TORCH[dt])
    B = torch.randn(n, k, device="cuda").t() if b_major == "K" else torch.randn(k, n, device="cuda")
    return A, B.to(TORCH[dt])


def rel_err(D, A, B) -> float:
    ref = A.double() @ B.double()
    return float((D.double() - ref).norm() / ref.norm())


def case(shape: tuple, dt: str, b_major: str) -> dict:
    m, n, k = shape
    A, B = operands(m, n, k, dt, b_major)
    A0, B0 = A.clone(), B.clone()
    builtin = autotune.builtin_config(which_kernel(A, B))  # before the bucket is tuned
    D = cutemma.gemm(A, B)  # the bucket's first call: tunes, then runs the winner
    torch.cuda.synchronize()
    key = tuned.entry_key(tuned.device_name(0), m, n, k, dt, "K", b_major)
    entries = json.loads(tuned.cache_path().read_text())["entries"]
    rec = entries.get(key, {})
    kept = bool(torch.equal(A, A0) and torch.equal(B, B0))
    err = rel_err(D, A, B)
    chosen = autotune.builtin_config(which_kernel(A, B))
    A2, B2 = operands(max(m - 3, 1), n - 8, k - 64, dt, b_major)  # the same class
    err2 = rel_err(cutemma.gemm(A2, B2), A2, B2)
    same = json.loads(tuned.cache_path().read_text())["entries"] == entries
    args = [str(x) for x in (m, n, k, b_major, str(TORCH[dt]).split(".")[1])]
    again = subprocess.run([sys.executable, "-c", AGAIN, *args], capture_output=True, text=True)
    timer = timing.event_timer(m, n, k, dt, "K", b_major, 0, 3, 10, cutemma.gemm)
    rounds = [(timer(chosen), timer(builtin)) for _ in range(3)]
    t_chosen, t_builtin = (min(ts) for ts in zip(*rounds))
    spread = abs(rounds[1][1] - rounds[2][1]) / min(rounds[1][1], rounds[2][1])
    ok = bool(rec) and kept and err < 2e-2 and err2 < 2e-2 and same
    ok &= again.returncode == 0 and t_chosen <= 1.02 * t_builtin
    print(dt, shape, rec.get("family"), chosen.name, f"{t_chosen * 1e6:.1f} us, built-in",
          builtin.name, f"{t_builtin * 1e6:.1f} us, spread {spread:.1%}", "ok" if ok else "FAILED")  # fmt: skip
    return {"shape": shape, "dtype": dt, "b_major": b_major, "entry": rec, "builtin": builtin.name,
            "chosen": chosen.name, "chosen_us": t_chosen * 1e6, "builtin_us": t_builtin * 1e6,
            "builtin_spread": spread, "operands_kept": kept, "rel_err": err, "rel_err_class": err2,
            "file_unchanged_by_class": same, "second_process": again.stdout.strip() or again.stderr[-500:],
            "ok": ok}  # fmt: skip


def threads_tune_once() -> dict:
    tunings = []
    tune = autotune._tune
    autotune._tune = lambda *a: (tunings.append(a[0].M), tune(*a))[1]
    pairs = [operands(1000, 3000, 1000, "bf16", "N") for _ in range(2)]
    outs = [None, None]

    def work(i):
        outs[i] = cutemma.gemm(*pairs[i])

    ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    autotune._tune = tune
    errs = [rel_err(outs[i], *pairs[i]) for i in range(2)]
    ok = len(tunings) == 1 and max(errs) < 2e-2
    print("two threads, one bucket: tunings", len(tunings), "ok" if ok else "FAILED")
    return {"tunings": len(tunings), "rel_err": errs, "ok": ok}


def capture_takes_builtin() -> dict:
    m, n, k = 300, 700, 500
    os.environ["CUTEMMA_AUTOTUNE"] = "0"
    cutemma.gemm(*operands(m, n, k, "bf16", "N"))  # loads the built-in kernel (no capture may)
    torch.cuda.synchronize()
    os.environ["CUTEMMA_AUTOTUNE"] = "1"
    A, B = operands(m, n, k, "bf16", "N")  # new addresses: the checked path, not a repeat
    D = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        cutemma.gemm(A, B, out=D)
    graph.replay()
    torch.cuda.synchronize()
    undecided = not tuned.decided(tuned.device_name(0), m, n, k, "bf16", "K", "N")
    ok = undecided and rel_err(D, A, B) < 2e-2
    print("capture: bucket untuned", undecided, "ok" if ok else "FAILED")
    return {"bucket_untuned": undecided, "ok": ok}


def main() -> None:
    path = sys.argv[1]
    tuned.reload()
    cases = [case(*c) for c in CASES]
    threads, capture = threads_tune_once(), capture_takes_builtin()
    ok = all(c["ok"] for c in cases) and threads["ok"] and capture["ok"]
    out = {"device": tuned.device_name(0), "margin": timing.MARGIN, "cases": cases,
           "threads": threads, "capture": capture, "ok": ok}  # fmt: skip
    json.dump(out, open(path, "w"), indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
