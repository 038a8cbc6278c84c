"""Which change to the decode calls' kernels wins the whole decode step (issue 33,
acceptance 2: every M <= 16 at >= 1.00x cuBLAS, weights read at >= 88% of the copy)?
bench/gemm_decode_graph.py's step (every layer's four projections, distinct weights, one
CUDA graph), captured once per variant of cutemma's kernels and once for cuBLAS, and all
the graphs replayed in turn for ROUNDS rounds (medians), so that drift over the run lands
on every variant alike. The variants change the built-in pick's config of every call:

- ``pick``: as it is;
- ``pdl``: programmatic dependent launch (``Sm90Config.pdl``: the first ring prefetched
  into L2 before ``griddepcontrol.wait``, the next kernel launched after the last load);
- ``rings2``: the ring twice as deep (at most MAX_STAGES, where shared memory holds it);
- ``pdl_rings2``: both;
- ``shallower``: the ring one stage shallower (at least 2);
- ``floor3``: a ring of 2 stages made 3;
- ``k256``: an fp8 swapped kernel on 128-byte k tiles (block_k None) made 256-byte ones
  with half the stages (at least ``space.RING_FLOOR``), the same bytes in flight;
- ``rankR``: the model's cheapest kernel of the call's R-th cheapest tile shape (the
  pick's: 1);
- ``NAME@P``: NAME on one projection of every layer (P: 0 QKV, 1 attention out, 2
  gate+up, 3 down), the pick on the rest.

VARIANTS (the fifth argument, comma-separated) picks some of them; ``pick`` always runs.
The environment's RING_FLOOR sets ``space.RING_FLOOR`` for the picks.

A variant that a call's config cannot take (a cluster for pdl, a ring that does not fit)
leaves that part of the call's config as it is (rings2: the deepest ring up to twice that fits). Each row also gives the first projection's error
against cuBLAS for every variant.

    python bench/experiments/decode_step_variants.py OUT.json [TOKENS [MODELS [DTYPES [VARIANTS]]]]
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

ROUNDS = 25


def ranked(cfg, rank: int, dtype: str, call: tuple[int, int, int]):
    """The cheapest kernel (by the model) of the call's ``rank``-th cheapest tile (rows,
    columns, swapped or not; the pick's tile is the first), or ``cfg`` where the space
    holds fewer tiles."""
    from cutemma.kernels.cost import predict
    from cutemma.kernels.space import candidates, swaps_call

    m, n, k = call
    found = candidates(m, n, k, dtype, 1, 132, swaps_call(m, dtype))
    order = sorted(found, key=lambda c: predict(c, m, n, k, dtype, 1, "h200"))
    tiles = {(cfg.block_m, cfg.block_n, cfg.swap_ab): cfg}
    for c in order:
        tiles.setdefault((c.block_m, c.block_n, c.swap_ab), c)
    rest = list(tiles.values())
    return rest[rank - 1] if len(rest) >= rank else cfg


def variant(cfg, name: str, dtype: str, call: tuple[int, int, int] = (1, 1, 1)):
    """``cfg`` (the pick of ``call``: m, n, k) changed as the variant ``name`` says, each
    change only where ``cfg`` takes it."""
    from cutemma.errors import TiledMmaError
    from cutemma.kernels.sm90.config import MAX_STAGES
    from cutemma.kernels.space import builds

    if name.startswith("rank"):
        return ranked(cfg, int(name[4:]), dtype, call)
    out = cfg
    if name == "shallower" and cfg.stages is not None and cfg.stages > 2:
        return replace(cfg, stages=cfg.stages - 1)
    if name == "floor3" and cfg.stages == 2:
        deeper = replace(cfg, stages=3)
        return deeper if builds(deeper, dtype) else cfg
    if name == "k256" and cfg.swap_ab and cfg.block_k is None and cfg.stages and dtype == "e4m3":
        from cutemma.kernels.sm90.config import SWIZZLE_ROW_BYTES
        from cutemma.kernels.space import FP8_BLOCK_K, RING_FLOOR

        same_bytes = cfg.stages * SWIZZLE_ROW_BYTES // FP8_BLOCK_K
        for s in range(max(RING_FLOOR, same_bytes), 1, -1):
            try:
                wider = replace(cfg, block_k=FP8_BLOCK_K, stages=s)
            except TiledMmaError:
                continue
            if builds(wider, dtype):
                return wider
        return cfg
    if "rings2" in name and cfg.stages is not None:
        for s in range(min(MAX_STAGES, 2 * cfg.stages), cfg.stages, -1):
            try:
                deeper = replace(out, stages=s)
            except TiledMmaError:
                continue
            if builds(deeper, dtype):
                out = deeper
                break
    if "pdl" in name:
        try:
            out = replace(out, pdl=True)
        except TiledMmaError:  # (clusters: the config says why)
            pass
    return out


def one_call(cfg, name: str, dtype: str, call: tuple[int, int, int], j: int):
    """The ``j``-th call's config under the variant ``name``; ``NAME@P``: NAME on each
    layer's projection P alone (0 QKV, 1 attention out, 2 gate+up, 3 down), the pick on
    the others."""
    name, _, only = name.partition("@")
    if only and j % PROJECTIONS != int(only):
        return cfg
    return variant(cfg, name, dtype, call)


PROJECTIONS = 4  # a layer's projections, in bench/gemm_sweep.py MODELS' order

VARIANTS = ["pick", "pdl", "rings2", "pdl_rings2"]


def row(model: str, dtype: str, m: int, ws: list, copy: float) -> dict:
    import torch
    from gemm_decode_graph import steps_s

    import cutemma
    from cutemma.kernels import pick
    from cutemma.kernels.space import swaps_call

    fp8 = dtype == "e4m3"
    one = torch.ones((), device="cuda")
    acts = [torch.randn(m, w.shape[1], device="cuda").to(w.dtype) for w in ws]
    outs = [torch.empty(m, w.shape[0], device="cuda", dtype=torch.bfloat16) for w in ws]
    kdt = "e4m3" if fp8 else "bf16"
    picks = [
        pick.builtin(m, w.shape[0], w.shape[1], 1, kdt, 132, "h200", swaps_call(m, kdt))[0]
        for w in ws
    ]
    calls = [(m, *w.shape) for w in ws]
    configs = {v: [one_call(c, v, kdt, mnk, j) for j, (c, mnk) in enumerate(zip(picks, calls))]
               for v in VARIANTS}  # fmt: skip

    def ours(i, v):
        cfg = configs[v][i]
        return lambda: cutemma.gemm(acts[i], ws[i].t(), out=outs[i], config=cfg)

    def theirs(i):
        if fp8:
            return lambda: torch._scaled_mm(acts[i], ws[i].t(), one, one, out_dtype=torch.bfloat16)
        return lambda: torch.matmul(acts[i], ws[i].t(), out=outs[i])

    ref = theirs(0)().float()
    errors = {}
    for v in VARIANTS:
        ours(0, v)()
        errors[v] = float((outs[0].float() - ref).norm() / ref.norm())
    calls = range(len(ws))
    times = steps_s(*[[ours(i, v) for i in calls] for v in VARIANTS], [theirs(i) for i in calls],
                    rounds=ROUNDS)  # fmt: skip
    peer = times[-1]
    nbytes = sum(w.numel() * w.element_size() for w in ws)
    out = {"model": model, "dtype": dtype, "m": m, "peer_us": round(peer * 1e6, 1),
           "peer_read_of_copy": round(nbytes / peer / 1e12 / copy, 4), "variants": {}}  # fmt: skip
    for v, t in zip(VARIANTS, times):
        out["variants"][v] = {
            "ratio": round(peer / t, 4),
            "read_of_copy": round(nbytes / t / 1e12 / copy, 4),
            "rel_err": errors[v],
            "configs": [c.name for c in configs[v][:PROJECTIONS]],
        }
    print(model, dtype, m, {v: d["ratio"] for v, d in out["variants"].items()}, flush=True)
    return out


def main() -> None:
    import gemm_decode_graph as g
    import torch

    out = sys.argv[1]
    tokens = [int(t) for t in (sys.argv[2] if len(sys.argv) > 2 else "1,4,16").split(",")]
    models = (sys.argv[3] if len(sys.argv) > 3 else ",".join(g.LAYERS)).split(",")
    dtypes = (sys.argv[4] if len(sys.argv) > 4 else "bf16,e4m3").split(",")
    if len(sys.argv) > 5:
        VARIANTS[:] = ["pick", *(v for v in sys.argv[5].split(",") if v != "pick")]
    if os.environ.get("RING_FLOOR"):  # the picks under another fp8 ring floor (before any)
        from cutemma.kernels import space

        space.RING_FLOOR = int(os.environ["RING_FLOOR"])
    copy = g.copy_tbps()
    rows = []
    for model in models:
        for dtype in dtypes:
            ws = g.weights(model, dtype)
            rows += [row(model, dtype, m, ws, copy) for m in tokens]
            del ws
            torch.cuda.empty_cache()
    with open(out, "w") as f:
        json.dump({"copy_tbps": round(copy, 3), "rounds": ROUNDS, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
