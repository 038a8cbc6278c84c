"""Few output tiles, long K: does sharing each tile among fewer CTAs beat the whole grid?

The worst rows of the sweeps (bench/results/sweep-h200-*.json: (4, 464, 12656) at 0.25x,
(47, 304, 44480) e4m3 at 0.19x) have a handful of output tiles and thousands of k
iterations. Stream-K shares those tiles' k iterations over every SM, and the owner of
each tile then adds its peers' partials one after the other: 16 or more per tile. This
probe caps the CTAs that share one tile (the kernel takes ``sk_ctas`` as a parameter, so
the cap changes the host's split only) and times each cap against the peer, L2 flushed.

    python bench/experiments/sk_split_cap.py OUT.json
"""

from __future__ import annotations

import json
import sys

sys.path.insert(0, "bench")
import torch  # noqa: E402
from gemm_sweep import operands, pair_ms  # noqa: E402

import cutemma  # noqa: E402
from cutemma.kernels import policy as streamk  # noqa: E402  (the policy computes stream-K's work)
from cutemma.kernels.runtime import fastpath  # noqa: E402
from cutemma.kernels.sm90 import host  # noqa: E402
from cutemma.kernels.space import candidates  # noqa: E402

SHAPES = [(4, 464, 12656), (10, 320, 8496), (23, 896, 8160), (47, 304, 44480),
          (166, 592, 22208), (285, 1088, 45616), (4, 368, 49744)]  # fmt: skip
CAPS = (None, 16, 8, 4, 2)
REAL = streamk.sk_split


def capped(cap):
    def split(tm, tn, kt, grid):
        sk, ctas = REAL(tm, tn, kt, grid)
        if cap is not None and sk and ctas > sk * cap:
            ctas = sk * cap
        return sk, ctas

    return split


def call(A, B, out, config=None):
    """cutemma.gemm of these operands (with ``config``) as a thunk to time."""
    return lambda: cutemma.gemm(A, B, out=out, config=config)


def call_peer(peer, out):
    return lambda: peer(out)


def main(path: str) -> None:
    rows = []
    for m, n, k in SHAPES:
        for combo in ("bf16_bK", "e4m3"):
            dt = combo[:4]
            A, B, out, peer = operands(combo, m, n, k)
            ref = peer(torch.empty_like(out)).float()
            found = [c for c in candidates(m, n, k, dt) if c.stream_k]
            row = {"combo": combo, "m": m, "n": n, "k": k, "times": {}}
            which = cutemma.kernels.which_kernel(A, B)
            row["pick"] = which.config.name
            t_pick, t_peer = pair_ms(call(A, B, out), call_peer(peer, out))
            row["times"]["pick"], row["peer_us"] = t_pick * 1e3, t_peer * 1e3
            for cfg in found:
                for cap in CAPS:
                    streamk.sk_split = capped(cap)
                    host._PREPARED.clear()
                    fastpath.FAST.clear()
                    c = cfg
                    try:
                        cutemma.gemm(A, B, out=out, config=c)
                        torch.cuda.synchronize()
                        err = float((out.float() - ref).norm() / ref.norm())
                        t, _ = pair_ms(call(A, B, out, c), call_peer(peer, out), rounds=1)
                        row["times"][f"{c.name}|{cap}"] = round(t * 1e3, 2)
                        row.setdefault("errs", {})[f"{c.name}|{cap}"] = err
                    except Exception as exc:  # recorded, not fatal
                        row["times"][f"{c.name}|{cap}"] = f"{type(exc).__name__}: {exc}"[:200]
                    streamk.sk_split = REAL
            best = min((v, key) for key, v in row["times"].items() if isinstance(v, float))
            row["best"] = best[1]
            row["best_ratio"] = round(row["peer_us"] / best[0], 3)
            row["pick_ratio"] = round(row["peer_us"] / row["times"]["pick"], 3)
            print(json.dumps({x: row[x] for x in ("combo", "m", "n", "k", "pick", "pick_ratio",
                                                  "best", "best_ratio")}), flush=True)  # fmt: skip
            rows.append(row)
            host._PREPARED.clear()
            fastpath.FAST.clear()
            torch.cuda.empty_cache()
    with open(path, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
