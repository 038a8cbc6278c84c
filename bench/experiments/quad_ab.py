"""The pick with and without the 2 x 2 clusters (``space.quad_kernels``) on calls drawn at
run time, in one process: the calls they are offered on (fp8 e4m3 with K an odd multiple
of 16, so both operands' rows sit half a sector apart, of at least QUAD_MIN_M rows), each
timed as the pick without them, each quad kernel, and cuBLAS (``torch._scaled_mm``).

    python bench/experiments/quad_ab.py OUT.json [--count N] [--seed S] [--combo C] [--aligned]

Shapes: bench/gemm_sweep.py's distribution (models' (N, K) or log-uniform ones, M
log-uniform), kept where M >= QUAD_MIN_M, and K moved to the next odd multiple of 16 where
it is not one (a draw's K is a multiple of 16). The seed is drawn from the OS unless given.
``--combo`` bf16_bK / bf16_bN (K as drawn: their rows are never half a sector off) or
``--aligned`` e4m3 (K moved to an even multiple of 16): calls the space offers no quads,
timed to see whether they would win there (``chosen`` is then always the plain pick).
A row records which kernel the pick (with them) takes, so its ratio to cuBLAS and the
plain pick's come from the same timings.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)


def shapes(count: int, seed: int, odd: bool | None = True) -> list[tuple[int, int, int]]:
    """``count`` drawn calls of QUAD_MIN_M rows or more, K moved to an odd (``odd``) or even
    multiple of 16 (None: as drawn)."""
    from gemm_sweep import draw_shapes

    from cutemma.kernels.space import QUAD_MIN_M

    out, drawn = [], 0
    while len(out) < count:
        for m, n, k in draw_shapes(4 * count, seed + drawn):
            if m >= QUAD_MIN_M and len(out) < count:
                moved = odd is not None and (k // 16) % 2 == (0 if odd else 1)
                out.append((m, n, k + 16 if moved else k))
        drawn += 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--combo", default="e4m3", choices=("e4m3", "bf16_bK", "bf16_bN"))
    ap.add_argument("--aligned", action="store_true")
    args = ap.parse_args()
    odd = None if args.combo != "e4m3" else not args.aligned
    dtype = args.combo[:4]
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    import torch
    from gemm_sweep import operands, reps_for, turns_ms
    from pick_audit import calls_of, errors_of

    import cutemma.kernels.pick as pick
    from cutemma.kernels.dispatch import checked

    rows = []
    for m, n, k in shapes(args.count, seed, odd):
        A, B, out, peer = operands(args.combo, m, n, k)
        call, with_quads = checked(A, B, out=out)
        quads = pick._quad_kernels(m, dtype, 1, (True, True))  # (offered or not)
        if args.combo == "bf16_bN":  # (halves of whole swizzle atoms in B's N-major stage)
            quads = tuple(c for c in quads if c.block_n % 128 == 0)
        plain = pick._quad_kernels
        pick._quad_kernels = lambda *a: ()  # the pick without them
        pick._sm90_pick.cache_clear()
        _, without = checked(A, B, out=out)
        pick._quad_kernels = plain
        pick._sm90_pick.cache_clear()
        configs = {"plain": without.config, **{c.name: c for c in quads}}
        calls = calls_of(A, B, out, peer, configs)
        del calls["pick"]
        ref = peer(torch.empty_like(out)).float()
        errs = errors_of(calls, list(calls)[1:], out, ref)
        us = {
            key: round(v * 1e3, 2) for key, v in turns_ms(calls, reps_for(calls["plain"])).items()
        }
        chosen = "plain" if with_quads.config == without.config else with_quads.config.name
        r = {"m": m, "n": n, "k": k, "rows16": call.rows16, "plain": without.config.name,
             "chosen": chosen, "us": us, "errors": errs,
             "vs_cublas": {key: round(us["cublas"] / v, 3) for key, v in us.items()}}  # fmt: skip
        rows.append(r)
        print(
            json.dumps({x: r[x] for x in ("m", "n", "k", "plain", "chosen", "vs_cublas")}),
            flush=True,
        )
    moved = [r for r in rows if r["chosen"] != "plain"]
    summary = {
        "rows": len(rows),
        "moved": len(moved),
        "moved_vs_cublas": [(r["vs_cublas"][r["chosen"]], r["vs_cublas"]["plain"]) for r in moved],
    }
    print(json.dumps(summary))
    with open(args.out, "w") as f:
        src = open(__file__).read()
        json.dump({"what": __doc__.splitlines()[0], "seed": seed, "combo": args.combo,
                   "aligned": args.aligned, "summary": summary, "rows": rows,
                   "device": torch.cuda.get_device_name(),
                   "script": {"path": "bench/experiments/quad_ab.py", "source": src}}, f, indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
