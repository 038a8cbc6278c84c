"""fp8 tiles fitted to few columns, promoted by N halves: the space's 128-row tiles as wide
as N's share (``space.fitted_kernels``, calls of at most 1536 columns with B K-major)
promote each k tile's whole batch (``promote=True``), where the plain fp8 tiles of 160-256
columns split it (``promote="split"``; the mid-size swapped ones too since this session,
1.5% faster over 34 kernels, raw/swap-fp8-split-h200.json). Widths an odd multiple of 8
split 8 columns apart (``config.split_widths``).

Calls: e4m3, M > 128, N <= 1536, drawn at run time (bench/gemm_sweep.py's distribution; the
seed recorded) whose fitted kernels are among the model's five cheapest. Each call: cuBLAS,
the pick, the fitted kernels among the model's five cheapest and each with
``promote="split"`` (L2-flushed medians in turn; errors against cuBLAS).

    python bench/experiments/fitted_fp8_split.py OUT.json [--draws 16] [--seed S]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

SMS = 132


def fitted(m: int, n: int, k: int) -> list:
    """The fitted fp8 kernels among the model's five cheapest of the call."""
    from cutemma.kernels.call import half_sector_off
    from cutemma.kernels.cost import predict
    from cutemma.kernels.space import candidates, fitted_kernels

    r16 = (half_sector_off(k), half_sector_off(k))
    mine = set(fitted_kernels(m, n, k, "e4m3"))
    found = candidates(m, n, k, "e4m3", 1, SMS, m <= 2048, r16)
    cheap = sorted(found, key=lambda c: predict(c, m, n, k, "e4m3", 1, "h200", 2, r16))[:5]
    return [c for c in cheap if c in mine]


def kernels(combo: str, m: int, n: int, k: int) -> dict:
    from swap_fp8_split import split_of

    out = {}
    for cfg in fitted(m, n, k):
        out[cfg.name] = cfg
        split = split_of(cfg)
        if split is not None:
            out[split.name] = split
    return out


def shapes(draws: int, seed: int) -> list[tuple]:
    from gemm_sweep import draw_shapes

    found = [("e4m3", m, n, k) for m, n, k in draw_shapes(400 * draws, seed)
             if m > 128 and n <= 1536 and fitted(m, n, k)]  # fmt: skip
    return found[:draws]


if __name__ == "__main__":
    from probe import main

    main(__file__, __doc__, shapes, kernels, draws=16)
