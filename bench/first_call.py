"""A new process's first cutemma.gemm call with its kernel in the disk cache (issue 21, item 5):
where the time goes.

Each measurement is a fresh ``python`` that imports torch, puts bf16 A (512x1024) and B
(1024x768) on the GPU and synchronizes before its timer starts (torch and CUDA are the
caller's, not cutemma's); then ``import cutemma`` and the first ``cutemma.gemm(A, B)`` until
its result is ready. The first process fills the disk cache; the others find the kernel there.

- runs: :func:`gemm_inference.first_call_ms` (what bench/gemm.py reports): import, call, total
  per run and their medians;
- phases: one process timing the call's steps one after another (importing the call path,
  the device's architecture and SM count, the kernel from the disk index, the module load,
  the rest of the call: tensor maps and the launch);
- profile: one process under cProfile, the 40 functions of largest cumulative time and the 25
  of largest own time; and the modules the call imports, by ``-X importtime``.

    python bench/first_call.py --out bench/results/first-call-h100.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from gemm_inference import _FIRST_CALL, _bytecode_env, first_call_ms  # noqa: E402

_SETUP = """
import time
import torch
A = torch.randn(512, 1024, device="cuda", dtype=torch.bfloat16)
B = torch.randn(1024, 768, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
"""

_PHASES = (
    _SETUP
    + """
ms = {}
def lap(name, t=[time.perf_counter()]):
    now = time.perf_counter()
    ms[name] = round((now - t[0]) * 1e3, 2)
    t[0] = now
import cutemma
lap("import_cutemma")
from cutemma.kernels import dispatch
from cutemma.kernels.sm90 import host
lap("import_call_path")
from cutemma.kernels.call import device_arch as _arch
arch = _arch(0)
lap("arch")
from cutemma.kernels.call import sm_count
sms = sm_count(0)
lap("sm_count")
from cutemma.kernels.pick import builtin_sm90_config
cfg = builtin_sm90_config(512, 768, 1024, "bf16", sms=sms)
lap("config")
kern, launch = host.compiled_sm90(host.kernel_key(cfg, "bf16", "K", "N", "bf16", "bf16"), arch)
lap("kernel_from_index")
kern.handle(0)
lap("module_load")
D = cutemma.gemm(A, B)
torch.cuda.synchronize()
lap("maps_and_launch")
ms["total"] = round(sum(ms.values()), 2)
print("PHASES", __import__("json").dumps(ms))
"""
)

_PROFILE = (
    _SETUP
    + """
import cProfile, io, pstats
pr = cProfile.Profile()
pr.enable()
import cutemma
D = cutemma.gemm(A, B)
torch.cuda.synchronize()
pr.disable()
for key, n in (("cumulative", 40), ("tottime", 25)):
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats(key).print_stats(n)
    print(s.getvalue())
"""
)


def _python(code: str, *flags: str) -> subprocess.CompletedProcess:
    env = _bytecode_env()[0]  # as first_call_ms's processes run (cutemma's bytecode cached)
    return subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True,
                          env=env)  # fmt: skip


def phases() -> dict:
    """The call's steps, timed one after another in a new process (cache already filled)."""
    r = _python(_PHASES)
    if r.returncode:
        return {"error": r.stderr[-800:]}
    line = next(x for x in r.stdout.splitlines() if x.startswith("PHASES "))
    return json.loads(line[len("PHASES ") :])


def profile() -> str:
    """cProfile of one cached first call (import cutemma + gemm + synchronize)."""
    r = _python(_PROFILE)
    return r.stdout if not r.returncode else r.stderr[-2000:]


def import_times(min_us: int = 300) -> list[str]:
    """``-X importtime`` lines (cumulative >= ``min_us``) of the modules imported after torch:
    what ``import cutemma`` and the first call import."""
    r = _python(_FIRST_CALL, "-X", "importtime")
    lines = [x for x in r.stderr.splitlines() if x.startswith("import time:")]
    last_torch = max((i for i, x in enumerate(lines) if x.rstrip().endswith("| torch")), default=-1)
    keep = []
    for x in lines[last_torch + 1 :]:
        cols = x.split("|")
        if len(cols) == 3 and cols[1].strip().isdigit() and int(cols[1]) >= min_us:
            keep.append(x[len("import time:") :].rstrip())
    return keep


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--tries", type=int, default=5)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument(
        "--as-environment",
        action="store_true",
        help="first the same runs in this environment as it is (its bytecode setting kept)",
    )
    args = ap.parse_args()
    import torch

    as_env = None
    if args.as_environment:  # first: the bytecode runs below write what these would read
        as_env = first_call_ms(args.tries, bytecode=False)
        print(f"as the environment: {json.dumps(as_env.get('cached_median', as_env))}")
    runs = first_call_ms(args.tries)  # fills the cache first
    print(f"first call: {json.dumps(runs.get('cached_median', runs))}", flush=True)
    steps = phases()
    print(f"phases: {json.dumps(steps)}", flush=True)
    result = {
        "device": torch.cuda.get_device_name(),
        "commit": os.environ.get("CUTEMMA_COMMIT", ""),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "method": "fresh processes: torch imported and bf16 A (512x1024), B (1024x768) on the "
        "GPU, synchronized, before the timer; then import cutemma and the first cutemma.gemm "
        "+ synchronize; the first process fills the disk cache, the median of the others "
        "(bench/gemm_inference.first_call_ms)",
        "first_call_new_process": runs,
        "phases_ms": steps,
        "python": {
            "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE"),
            "dont_write_bytecode": sys.flags.dont_write_bytecode,
            "executable": sys.executable,
            "version": sys.version.split()[0],
        },
    }
    if as_env is not None:
        result["first_call_as_environment"] = as_env
    if not args.no_profile:
        prof, imports = profile(), import_times()
        print(prof, flush=True)
        print("\n".join(imports), flush=True)
        result["import_times_after_torch"] = imports
        result["profile"] = prof.splitlines()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
