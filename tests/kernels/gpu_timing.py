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


def e4m3_square(size: int, variants: dict, gen, n: int = 5, fast_peer: bool = False) -> dict:
    """Promoted-fp8 variants against torch._scaled_mm at ``size``^3 (e4m3, K-major B,
    bf16 out, per-tensor scales of 1; with ``fast_peer`` also its fast accumulation):
    ``{"size", "rounds", "median"}`` of :func:`rounds`, the ratios printed."""
    import statistics

    import torch

    from cutemma.kernels.dispatch import gemm as gemm_sm90

    one = torch.ones((), device="cuda")
    A = torch.randn((size, size), generator=gen, device="cuda").to(torch.float8_e4m3fn)
    B = torch.randn((size, size), generator=gen, device="cuda").to(torch.float8_e4m3fn).t()
    D = torch.empty((size, size), dtype=torch.bfloat16, device="cuda")

    def peer(fast: bool) -> Callable[[], object]:
        return lambda: torch._scaled_mm(
            A, B, one, one, out_dtype=torch.bfloat16, use_fast_accum=fast
        )

    cases = {"scaled_mm": peer(False)} | ({"scaled_mm_fastacc": peer(True)} if fast_peer else {})
    for name, cfg in variants.items():
        cases[name] = lambda cfg=cfg: gemm_sm90(A, B, out=D, config=cfg)
    got = rounds(cases, 2.0 * size**3, n)
    med = {k: statistics.median(v) for k, v in got.items()}
    base = med["scaled_mm"]
    print(f"e4m3 {size}^3: " + ", ".join(f"{k} {v:.0f} ({v / base:.3f})" for k, v in med.items()),
          flush=True)  # fmt: skip
    return {"size": size, "rounds": got, "median": med}
