"""Which kernels cuBLAS runs where it beats the pick: for given calls (the pick audit's rows
of 129-512 tokens and the sweep's worst, by default), the names of the CUDA kernels a
torch.matmul / torch._scaled_mm call launches (torch.profiler; cuBLAS's names carry its
tile, cluster and split-K or stream-K scheme), beside the pick and both times.

    python bench/experiments/peer_kernels.py OUT.json [AUDIT.json SWEEP.json]
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
RESULTS = os.path.join(HERE, "..", "results")


def cases(audit: str, sweep: str) -> list[tuple]:
    """(combo, m, n, k): the audit's calls of 129-512 rows, then the sweep's 8 worst per combo."""
    rows = json.load(open(audit))["rows"]
    found = [(r["combo"], r["m"], r["n"], r["k"]) for r in rows if 129 <= r["m"] <= 512]
    worst = sorted(json.load(open(sweep))["rows"], key=lambda r: r.get("ratio", 9))
    for combo in ("bf16_bK", "bf16_bN", "e4m3"):
        found += [(r["combo"], r["m"], r["n"], r["k"]) for r in worst if r["combo"] == combo][:8]
    return list(dict.fromkeys(found))


def kernels_of(fn) -> list[str]:
    """The CUDA kernels one call of ``fn`` launches, in order."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type.name == "CUDA"]


def row(combo: str, m: int, n: int, k: int) -> dict:
    """One call: the pick, cuBLAS's kernels, both times (L2-flushed, in turn)."""
    from gemm_sweep import operands, pair_ms, pick_of

    import cutemma

    A, B, out, peer = operands(combo, m, n, k)
    ours, theirs = pair_ms(lambda: cutemma.gemm(A, B, out=out), lambda: peer(out))
    return {"combo": combo, "m": m, "n": n, "k": k, "pick": pick_of(A, B),
            "peer_kernels": kernels_of(lambda: peer(out)), "cutemma_us": round(ours * 1e3, 2),
            "peer_us": round(theirs * 1e3, 2), "ratio": round(theirs / ours, 4)}  # fmt: skip


def main() -> None:
    audit = (
        sys.argv[2] if len(sys.argv) > 2 else os.path.join(RESULTS, "raw", "pick-audit-h200.json")
    )
    sweep = (
        sys.argv[3] if len(sys.argv) > 3 else os.path.join(RESULTS, "sweep-h200-2118826645.json")
    )
    rows = []
    for case in cases(audit, sweep):
        rows.append(row(*case))
        print(rows[-1], flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
