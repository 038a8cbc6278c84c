"""Does a K-major operand's row pitch cost the sm90 kernels speed, and what buys it back?
(issue 33: on the sweeps, e4m3 rows whose K is not a multiple of 32 bytes ran about 0.77x
cuBLAS against 0.97x for the rest, bf16 rows whose pitch is not a multiple of 128 bytes
about 0.87x against 0.93x.)

    python bench/align_probe.py OUT.json

For each (combo, m, n, k) row of :data:`ROWS` (the same m and n, K or N stepped through
the pitch residues) it times, L2 flushed, in two passes (the second reversed): the peer,
cutemma's pick, the pick's kernel with clusters of 2 multicasting B or A (where the
family builds them), and the pick's kernel on operands copied into 128-byte-aligned rows
(a view of the copy: the kernel sees the same K, a pitch rounded up).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

ROWS = (
    [("e4m3", 4096, 8192, k) for k in (8192, 8208, 8224, 8256)]
    + [("e4m3", 1024, 16384, k) for k in (8192, 8208)]
    + [("bf16_bK", 4096, 8192, k) for k in (8192, 8200, 8208, 8224)]
    + [("bf16_bN", 4096, n, 8192) for n in (8192, 8200, 8224)]
)


def _aligned(t, rows_major: bool):
    """``t`` (2-D) copied into rows padded to 128 bytes, as a view of its own shape."""
    import torch

    if not rows_major:  # a column-major operand: pad its transpose's rows
        return _aligned(t.t(), True).t()
    r, c = t.shape
    step = 128 // t.element_size()
    buf = torch.empty(r, -(-c // step) * step, dtype=t.dtype, device=t.device)
    view = buf[:, :c]
    view.copy_(t)
    return view


def _variants(pick):
    from cutemma.errors import TiledMmaError

    base = replace(pick, stream_k=False, split=None, evict_first="", pdl=False)
    out = {"whole:" + base.name: base} if base != pick else {}
    for mc in ("B", "A"):
        for cfg in (base, replace(base, promote=True) if base.promote == "split" else None):
            if cfg is None:
                continue
            try:
                v = replace(cfg, cluster=2, multicast=mc)
            except TiledMmaError:
                continue
            out[f"x2{mc.lower()}:{v.name}"] = v
            break
    return out


def probe(combo: str, m: int, n: int, k: int) -> dict:
    import torch
    from gemm_sweep import flushed_ms, operands, reps_for

    import cutemma
    from cutemma.kernels.cost import device_kind
    from cutemma.kernels.pick import builtin_sm90_config

    A, B, out, peer = operands(combo, m, n, k)
    dtype = "e4m3" if combo == "e4m3" else "bf16"
    kind = device_kind(torch.cuda.get_device_name())
    pick = builtin_sm90_config(m, n, k, dtype, kind=kind, swap=True)
    ref = peer(torch.empty_like(out)).float()
    runs = {"peer": lambda: peer(out), "pick:" + pick.name: lambda: cutemma.gemm(A, B, out=out)}
    for name, cfg in _variants(pick).items():
        runs[name] = lambda c=cfg: cutemma.gemm(A, B, out=out, config=c)
    A2 = _aligned(A, True)
    B2 = _aligned(B, B.stride(1) == 1)
    runs["aligned_rows:" + pick.name] = lambda: cutemma.gemm(A2, B2, out=out, config=pick)
    row = {"combo": combo, "m": m, "n": n, "k": k, "errors": {}, "rel_err": {}}
    good = {}
    for name, fn in runs.items():
        try:
            out.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            row["rel_err"][name] = float((out.float() - ref).norm() / ref.norm())
            good[name] = fn
        except Exception as exc:
            row["errors"][name] = f"{type(exc).__name__}: {exc}"[:200]
    reps = reps_for(runs["peer"])
    times = {name: [] for name in good}
    for order in (list(good), list(good)[::-1]):
        for name in order:
            times[name].append(flushed_ms(good[name], reps) * 1e3)
    row["us"] = {name: round(statistics.fmean(v), 2) for name, v in times.items()}
    row["ratio"] = {name: round(row["us"]["peer"] / us, 4) for name, us in row["us"].items()}
    return row


def main() -> None:
    import torch

    path = sys.argv[1]
    rows = []
    for case in ROWS:
        rows.append(probe(*case))
        print(json.dumps({k: rows[-1][k] for k in ("combo", "m", "n", "k", "ratio")}), flush=True)
        with open(path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
