"""Do wider runs of an N-major B (decode's weights, (K, N) with N contiguous) read faster
than the space's 128-row swapped tiles? A swapped CTA reads its tile's rows of B^T as one
contiguous run per k row: 256 bytes for 128 rows of 16-bit. Two ways to lengthen it:
``rows256``, tiles of 256 rows (512 bytes a run: the pick's with two warpgroups of 128 rows
and the deepest ring, whole and shared by stream-K); ``cluster``, pairs of 128-row CTAs
adjacent along the weights' rows sharing the activations by multicast, so that each pair
reads its two runs in step (``cluster=2, multicast="B"``; the TMA-store epilogue of swapped
kernels runs without clusters only, so these store from registers, and the pick with that
epilogue alone is timed too; pairs read without the evict-first hint, which clusters
do not take). For decode-sized calls (1-16 tokens, both B majors and e4m3)
it times cuBLAS, the pick and each variant, L2-flushed medians in turn, with each one's
error against cuBLAS.

    python bench/experiments/swap256_probe.py OUT.json [rows256|cluster]
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

CALLS = [(4, 32768, 8192), (2, 49152, 12288), (5, 16384, 16384), (3, 16032, 50272),
         (2, 11824, 42528), (8, 10112, 31440), (1, 25952, 19264), (16, 28672, 4096),
         (1, 14336, 4096), (8, 57344, 8192)]  # fmt: skip


def variants(pick, how: str) -> dict:
    """The configs timed beside the pick (a swapped one) for ``how``."""
    if how == "cluster":
        regs = replace(pick, epilogue="regs")
        return {"regs": regs, "pair": replace(regs, cluster=2, multicast="B", stream_k=False,
                                              split=None, evict_first="")}  # fmt: skip
    # two warpgroups of 128 rows, the ring as deep as fits
    wide = replace(pick, block_m=256, consumers=2, stages=None)
    return {"rows256": replace(wide, stream_k=False, split=None),
            "rows256_sk": replace(wide, stream_k=True)}  # fmt: skip


def row(combo: str, m: int, n: int, k: int, how: str = "rows256") -> dict:
    from gemm_sweep import operands
    from probe import timed_against_peer

    from cutemma.kernels.pick import builtin_sm90_config

    A, B, out, peer = operands(combo, m, n, k)
    major = "N" if combo == "bf16_bN" else "K"
    dtype = "e4m3" if combo == "e4m3" else "bf16"
    pick = builtin_sm90_config(m, n, k, dtype, swap=True, b_major=major)
    configs = {"pick": pick}
    if pick.swap_ab:
        configs |= variants(pick, how)
    got = {"combo": combo, "m": m, "n": n, "k": k, "pick": pick.name}
    return timed_against_peer(A, B, out, peer, configs, got)


def main() -> None:
    how = sys.argv[2] if len(sys.argv) > 2 else "rows256"
    if how not in ("rows256", "cluster"):
        sys.exit(f"swap256_probe: {how!r}; give rows256 or cluster")
    rows = []
    for m, n, k in CALLS:
        for combo in ("bf16_bN", "bf16_bK", "e4m3"):
            try:
                rows.append(row(combo, m, n, k, how))
            except Exception as exc:  # a config the family refuses: say which and why
                rows.append({"combo": combo, "m": m, "n": n, "k": k, "error": repr(exc)[:300]})
            print(json.dumps(rows[-1]), flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump({"rows": rows, "script": open(__file__).read()}, f, indent=1)


if __name__ == "__main__":
    main()
