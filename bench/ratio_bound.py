"""How far the inference table's ratios could go: each row's peer time over the least time
the row could take at the best rates measured in the same run (issue 21's acceptance 1).

A row moves at least A, B and D once and does 2 M N K flops. The best read rate of its
(N, K) is the fastest stream of that B in the run, flushed: cutemma's, the peer's, or the
kernel that only reads B (bench/read_ceiling.py), over the M <= 16 rows. The best compute
rate is the most TFLOPS any kernel, cutemma's or the peer's, reached in that dtype's
table. A row can take no less than the longer of its bytes at that read rate and its
flops at that compute rate, so no kernel beats its peer there by more than

    bound = peer time / max(bytes / best read rate, flops / best compute rate)

(or the ratio already measured, if it is higher: the rates are the run's best, not the
card's). The geometric mean of the bounds is the most the table's geometric mean could
be with every row at the roofline of the run's own best rates at once, which no kernel
reaches on mid-size rows.

Print the bounds of a result file (no GPU needed):

    python bench/ratio_bound.py bench/results/inference-h100.json
"""

from __future__ import annotations

import json
import math
import sys

from cutemma.kernels.sm90.config import ATOMS_SM90  # (atom, element bytes, ...) per dtype

OUT_BYTES = 2  # both peers write bf16


def row_bounds(rows: list[dict], copy_tbps: float) -> list[float | None]:
    """Each row's bound (None for a skipped row), in the order of ``rows``.

    >>> us = ((1000 + 1000 * 1000) * 2 + 1000 * 2) / 1e12 * 1e6  # A, B, D bytes at 1 TB/s
    >>> rows = [dict(dtype="bf16", m=1, n=1000, k=1000, ratio=1.0, peer_us=us,
    ...              cutemma_tflops=1.0, peer_tflops=1.0, b_read_tbps=1.0, peer_b_read_tbps=1.0,
    ...              b_read_ceiling_of_copy=0.5)]
    >>> row_bounds(rows, 2.0)  # the peer streams at the run's best read rate already
    [1.0]
    """
    best_tflops: dict[str, float] = {}
    best_read: dict[tuple, float] = {}
    for r in rows:
        if "ratio" not in r:
            continue
        d = r["dtype"]
        best_tflops[d] = max(best_tflops.get(d, 0.0), r["cutemma_tflops"], r["peer_tflops"])
        if "b_read_tbps" in r:
            key = (d, r["n"], r["k"])
            ceiling = r.get("b_read_ceiling_of_copy", 0.0) * copy_tbps
            rate = max(r["b_read_tbps"], r["peer_b_read_tbps"], ceiling)
            best_read[key] = max(best_read.get(key, 0.0), rate)
    out: list[float | None] = []
    for r in rows:
        if "ratio" not in r:
            out.append(None)
            continue
        d, m, n, k = r["dtype"], r["m"], r["n"], r["k"]
        eb = ATOMS_SM90[d][1]
        least_us = 2.0 * m * n * k / (best_tflops[d] * 1e12) * 1e6
        rate = best_read.get((d, n, k))
        if rate:
            nbytes = (m * k + k * n) * eb + m * n * OUT_BYTES
            least_us = max(least_us, nbytes / (rate * 1e12) * 1e6)
        out.append(max(r["peer_us"] / least_us, r["ratio"]))
    return out


def geomean_bounds(rows: list[dict], copy_tbps: float) -> dict[str, float]:
    """Per dtype, the geometric mean of :func:`row_bounds` (4 decimals).

    >>> us = 2 * 4096**3 / 600e12 * 1e6  # 4096^3 at 600 TFLOPS, the best in this table
    >>> rows = [dict(dtype="bf16", m=4096, n=4096, k=4096, ratio=ours / peer, peer_us=us * 600 / peer,
    ...              cutemma_tflops=ours, peer_tflops=peer) for ours, peer in ((300, 600), (600, 150))]
    >>> geomean_bounds(rows, 3.0)  # bounds 1.0 (the peer at the best rate) and 4.0
    {'bf16': 2.0}
    """
    bounds = row_bounds(rows, copy_tbps)
    out = {}
    for d in sorted({r["dtype"] for r in rows}):
        logs = [math.log(b) for r, b in zip(rows, bounds) if r["dtype"] == d and b is not None]
        if logs:
            out[d] = round(math.exp(sum(logs) / len(logs)), 4)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python bench/ratio_bound.py RESULT.json (an inference table)")
        return 2
    with open(argv[0], encoding="utf-8") as f:
        res = json.load(f)
    if not isinstance(res, dict) or not {"rows", "copy_tbps", "summary"} <= res.keys():
        print(f"ratio_bound: {argv[0]} is not an inference table (bench/gemm.py "
              "--inference-only writes one: rows, copy_tbps, summary)")  # fmt: skip
        return 2
    rows = res["rows"]
    for r, b in zip(rows, row_bounds(rows, res["copy_tbps"])):
        if b is not None:
            print(f"{r['dtype']} {r['m']:>5} {r['n']:>6} {r['k']:>6} ratio {r['ratio']:.3f} "
                  f"bound {b:.3f}")  # fmt: skip
    for d, g in geomean_bounds(rows, res["copy_tbps"]).items():
        print(f"{d}: geometric mean {res['summary'][d]['geomean_ratio']:.4f}, bound {g:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
