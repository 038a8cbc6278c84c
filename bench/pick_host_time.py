"""Host time of the built-in sm90 pick for a shape the process has not seen (issue 33,
acceptance 4: at most 20 us, and a repeated call no slower than before).

Draws ``--shapes`` distinct random shapes (M log-uniform in 1..16384, N and K multiples of
16 log-uniform in 256..65536, dtype bf16 or e4m3), each new to the process, and times one
:func:`cutemma.kernels.pick.builtin` call per shape with ``swap =
space.swaps_call(M, dtype)`` as the policy passes it. In the same run and on the same
shapes it times the reference definition, ``cost.best(space.candidates(...))``, so the two
figures share the machine's load; then a repeated call of each shape. The pick runs on every timed shape before the reference runs
on any (the reference fills caches the pick would otherwise build). Medians and 90th and
99th percentiles in microseconds; ``--profile`` adds the pick's cProfile (top functions by
own time). ``--steady N`` (default 10,000) then picks N more new shapes untimed and times
``--shapes`` new ones after them: a long-running process's new shape, its shape-free caches
(swapped classes, fitted and wave widths) filled. ``pricer`` records whether the pick priced
with the compiled pricer (:mod:`cutemma.kernels.native_cheapest`) or in Python
(``CUTEMMA_NATIVE_PRICER=0``).

    python bench/pick_host_time.py --out bench/results/pick-host-cpu.json [--before OLD.json ...]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import platform
import pstats
import random
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cutemma.kernels import native_cheapest, pick  # noqa: E402
from cutemma.kernels.cost import best  # noqa: E402
from cutemma.kernels.space import candidates, swaps_call  # noqa: E402

KIND, SMS = "h200", 132


def shapes(count: int, seed: int) -> list[tuple[int, int, int, str]]:
    """``count`` distinct (m, n, k, dtype) drawn as the module doc says."""
    rng = random.Random(seed)

    def log_uniform(lo: int, hi: int) -> float:
        return math.exp(rng.uniform(math.log(lo), math.log(hi)))

    seen: dict[tuple, None] = {}
    while len(seen) < count:
        m = max(1, round(log_uniform(1, 16384)))
        n, k = (max(16, round(log_uniform(256, 65536) / 16) * 16) for _ in range(2))
        seen[(m, n, k, rng.choice(("bf16", "e4m3")))] = None
    return list(seen)


def reference(m: int, n: int, k: int, dtype: str, swap: bool):
    return best(candidates(m, n, k, dtype, 1, SMS, swap), m, n, k, dtype, 1, KIND)


def fast(m: int, n: int, k: int, dtype: str, swap: bool):
    return pick.builtin(m, n, k, 1, dtype, SMS, KIND, swap)


def time_us(fn, todo) -> list[float]:
    out = []
    clock = time.perf_counter_ns
    for m, n, k, dtype in todo:
        swap = swaps_call(m, dtype)
        t0 = clock()
        fn(m, n, k, dtype, swap)
        out.append((clock() - t0) / 1e3)
    return out


def summary(us: list[float]) -> dict:
    ordered = sorted(us)
    return {
        "median_us": round(statistics.median(ordered), 2),
        "p90_us": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
        "p99_us": round(ordered[int(0.99 * (len(ordered) - 1))], 2),
        "calls": len(ordered),
    }


def profile(fn, todo, top: int = 15) -> str:
    prof = cProfile.Profile()
    prof.enable()
    for m, n, k, dtype in todo:
        fn(m, n, k, dtype, swaps_call(m, dtype))
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument(
        "--steady",
        type=int,
        default=10000,
        help="then the pick of this many more new shapes, untimed, and of --shapes new ones "
        "after them, timed: a long-running process's new shape (0: not measured)",
    )
    ap.add_argument(
        "--before", type=Path, nargs="*", default=[], help="this script's results of an older tree"
    )
    args = ap.parse_args()

    # the shape-free caches (tiles, variants, swapped kernels, device constants) fill on
    # warm-up shapes that the timed ones never repeat
    todo = shapes(2 * args.shapes + args.steady + 200, args.seed)
    warm, timed, spare = todo[:100], todo[100 : 100 + args.shapes], todo[100 + args.shapes :]
    later, spare = spare[: args.steady + args.shapes], spare[args.steady + args.shapes :]
    for m, n, k, dtype in warm:  # (the pick alone: see below)
        fast(m, n, k, dtype, swaps_call(m, dtype))
    # the pick first, on every timed shape: the reference fills the space's caches (swapped
    # classes, fitted groups) that the pick would otherwise build, so a reference call on
    # any shape before it would hide part of what a new shape costs
    new_us = time_us(fast, timed)
    ref_us = time_us(reference, timed)
    # the same shapes again: what a repeated call pays
    again_us = time_us(fast, timed)
    # a long-running process: the space's shape-free caches (swapped classes, fitted and
    # wave widths) filled by many shapes before, each timed shape still new
    steady_us = None
    if args.steady:
        for m, n, k, dtype in later[: args.steady]:
            fast(m, n, k, dtype, swaps_call(m, dtype))
        steady_us = time_us(fast, later[args.steady :])
    result = {
        "what": "host time of pick.builtin for a shape new to the process (issue 33, acc. 4)",
        "kind": KIND,
        "sms": SMS,
        "seed": args.seed,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
        ).stdout.strip(),
        "machine": f"{platform.processor() or platform.machine()}, python {platform.python_version()}",
        "pricer": native_cheapest.status(),
        "reference_best_of_candidates": summary(ref_us),
        "builtin_new_shape": summary(new_us),
        "builtin_repeated_shape": summary(again_us),
    }
    if steady_us:
        result[f"builtin_new_shape_after_{args.steady}"] = summary(steady_us)
    # the older tree's runs, each with its own in-process reference (the machine is shared:
    # compare each run's builtin with its own reference, not across runs)
    result["before"] = [json.loads(f.read_text()) for f in args.before]
    print(json.dumps(result, indent=1))
    if args.profile:
        print(profile(fast, spare))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
