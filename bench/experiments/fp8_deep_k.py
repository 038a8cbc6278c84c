"""e4m3 kernels with 256-byte k tiles (two swizzle rows a stage) against the pick's 128,
on shapes drawn at run time, where rows sit half a sector apart (K an odd multiple of 16)
and where they do not. A row's 128 bytes then span two L2 lines, each line asked for in
two stages; a 256-byte stage asks for both halves of the line it splits at once.

    python bench/experiments/fp8_deep_k.py plan PLAN.json [--rows R] [--seed S]    # CPU
    python bench/experiments/fp8_clusters.py time PLAN.json OUT.json               # GPU

For each call: the pick, the pick with ``block_k`` 256 (where the family builds it), and
lone 128x128 / 128x192 tiles with 256-byte k tiles (promoted 'split').
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from fp8_clusters import fields  # noqa: E402
from tree_ab import call_of  # noqa: E402

SMS, KIND = 132, "h200"


def deep(cfg):
    """``cfg`` with 256-byte k tiles, or None where the family does not build it."""
    from cutemma.kernels.space import builds

    try:
        out = replace(cfg, block_k=256, stages=None)
    except Exception:
        return None
    return out if builds(out, "e4m3") else None


def plan(path: str, rows: int, seed: int | None) -> None:
    from gemm_sweep import draw_shapes

    from cutemma.kernels import pick
    from cutemma.kernels.cost import predict
    from cutemma.kernels.sm90.config import Sm90Config

    seed = seed if seed is not None else random.SystemRandom().randrange(2**32)
    kept, want = [], {True: rows // 2, False: rows - rows // 2}
    for m, n, k in draw_shapes(4000, seed):
        off = (k // 16) % 2 == 1
        if m < 129 or want[off] == 0:  # (mid and large calls: the tiles are 128 rows)
            continue
        call = call_of("e4m3", m, n, k)
        r16 = tuple(call[4])
        cfg, t = pick.builtin(m, n, k, 1, "e4m3", SMS, KIND, True, r16, "K")
        alts = {}
        for key, c in (("deep_pick", deep(cfg)),
                       *((f"deep_128x{bn}", deep(Sm90Config(128, bn, promote="split")))
                         for bn in (128, 192))):  # fmt: skip
            if c is not None and c.name != cfg.name:
                alts[key] = fields(c, predict(c, m, n, k, "e4m3", 1, KIND, rows16=r16))
        kept.append({"call": call, "off": off, "pick": fields(cfg, t), "alts": alts})
        want[off] -= 1
        if not any(want.values()):
            break
    out = {"seed": seed, "rows": kept,
           "tree": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                  text=True, cwd=HERE).stdout.strip()}  # fmt: skip
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"seed {seed}: {len(kept)} calls")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("plan",))
    ap.add_argument("path")
    ap.add_argument("--rows", type=int, default=24)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args()
    plan(args.path, args.rows, args.seed)


if __name__ == "__main__":
    main()
