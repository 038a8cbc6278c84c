"""Cold NVRTC compile time vs cached load time for a probe kernel.

    python bench/compile.py bench/results/compile-cpu.json [--repeats 5] [--arch sm_80]

Cold: NVRTC runs (cache bypassed). Cached: the cubin is read back from a disk
cache; "cached (new process)" times a fresh Python process that imports
cutemma and loads the cubin, which is what a second run of a program pays.
The figure that matters is the ratio, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "cuda"))

from cuda_probes import mma_sync_probe  # noqa: E402

from cutemma.cuda.compile import compile, nvrtc_version  # noqa: E402

_CHILD = """
import sys, time
t0 = time.perf_counter()
sys.path.insert(0, {tests!r})
from cuda_probes import mma_sync_probe
from cutemma.cuda.compile import compile
c = compile(mma_sync_probe(), {arch!r})
assert c.cache_hit, "expected a cache hit in the child process"
print(time.perf_counter() - t0)
"""


def _timed(fn, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def _child_seconds(arch: str, cache: str) -> float:
    env = {**os.environ, "CUTEMMA_CACHE_DIR": cache, "PYTHONPATH": str(REPO)}
    code = _CHILD.format(tests=str(REPO / "tests" / "cuda"), arch=arch)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return float(out.stdout.strip().splitlines()[-1])


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True)
    return done.stdout.decode().strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path, help="where to write the JSON result")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--arch", default="sm_80")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="cutemma-bench-") as cache:
        os.environ["CUTEMMA_CACHE_DIR"] = cache
        source = mma_sync_probe()
        compile(source, args.arch, cache=False)  # load libnvrtc once, outside the timing
        cold = _timed(lambda: compile(source, args.arch, cache=False), args.repeats)
        compile(source, args.arch)  # fill the cache
        cached = _timed(lambda: compile(source, args.arch), args.repeats)
        child = [_child_seconds(args.arch, cache) for _ in range(args.repeats)]

    cold_s, cached_s = statistics.median(cold), statistics.median(cached)
    result = {
        "bench": "compile",
        "device": f"{platform.machine()} CPU, {os.cpu_count()} cores (no GPU used)",
        "commit": _commit(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "nvrtc": ".".join(map(str, nvrtc_version())),
        "arch": args.arch,
        "kernel": "mma_sync_probe (one m16n8k16 f16 mma.sync)",
        "repeats": args.repeats,
        "cold_compile_s": cold_s,
        "cached_load_s": cached_s,
        "cached_new_process_s": statistics.median(child),
        "speedup": cold_s / cached_s,
        "cold_all_s": cold,
        "cached_all_s": cached,
    }
    print(
        f"NVRTC {result['nvrtc']} {args.arch}: cold compile {cold_s * 1e3:.1f} ms, "
        f"cached load {cached_s * 1e3:.2f} ms ({result['speedup']:.0f}x), "
        f"new process with cache {result['cached_new_process_s'] * 1e3:.0f} ms"
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
