"""Interleaved timing rounds for the GPU scripts beside this file (imported by them).

The H100 is power/clock bound on large GEMMs and its clock drifts within a run, so every
script times its cases in rounds, each case once per round (triton's do_bench median,
L2 flushed), and compares medians over the rounds taken in the same process.
"""

from __future__ import annotations

from collections.abc import Callable


def rounds(cases: dict[str, Callable[[], object]], flop: float, n: int = 5) -> dict:
    """``{name: [TFLOP/s of round 0, round 1, ...]}``: ``n`` rounds over ``cases`` in turn.

    Needs triton and a GPU; ``flop`` is each call's floating-point operation count.
    """
    import triton.testing as tt

    out: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(n):
        for name, fn in cases.items():
            ms = tt.do_bench(fn, warmup=25, rep=60, return_mode="median")
            out[name].append(flop / ms / 1e9)
    return out
