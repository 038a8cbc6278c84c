"""Stream-K's aligned shares chunk-major (streamk.sk_block) against tile-major (the order
before): the CTAs on one k chunk of neighbouring tiles read the same lines of A or B, and
where they start side by side L2's request coalescer can serve one read to several
(raw/ncu-splitk-h200.csv: cuBLAS's split-K kernels have 27-58% of their sectors coalesced,
ours 8-28%). Each variant runs in its own process with its own kernel cache (the index
keys kernels by name): cuBLAS and stream-K configs whose shares are whole tiles' k chunks
on long-K calls of few tiles and on the sweeps' calls whose pick is such a config
(L2-flushed medians in turn), errors against cuBLAS, each config run twice for the same
bits; then both variants' times side by side.

    python bench/experiments/sk_chunk_major.py OUT.json [--draws 16] [--picks-only]
    python bench/experiments/sk_chunk_major.py run chunk|tile PART.json CALLS.json   # one variant

``--draws N`` adds N calls drawn at run time whose built-in pick shares whole tiles' k
chunks (the seed recorded); every call also times its pick in both variants;
``--picks-only``: the drawn calls' picks alone (a held-out A/B of the change).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

# long-K calls of few tiles (long_k_few_tiles.py's), then the sweeps' calls whose pick shares
# aligned k chunks (sweep-h200-1257457240.json, -926756499.json, calibrate-h200-big20.json)
SHAPES = [("bf16_bN", 300, 320, 45344), ("bf16_bK", 180, 400, 27456),
          ("bf16_bK", 568, 400, 25952), ("bf16_bK", 941, 368, 50896),
          ("bf16_bK", 381, 400, 45088), ("bf16_bN", 190, 368, 48032),
          ("bf16_bN", 1009, 2128, 35120), ("bf16_bN", 3090, 656, 17792),
          ("bf16_bK", 1058, 12288, 12288), ("bf16_bN", 303, 4608, 36864),
          ("bf16_bK", 3197, 16384, 2048), ("e4m3", 515, 6144, 16384)]  # fmt: skip
TILES = ((64, 128, 1), (128, 64, 2), (128, 128, 2), (128, 256, 2))
PICKS_ONLY = "--picks-only" in sys.argv  # (the calls' picks alone, no fixed calls)


def configs(combo: str) -> list:
    from cutemma.kernels.sm90.config import Sm90Config

    fp8 = {"promote": "split"} if combo == "e4m3" else {}
    out = []
    for bm, bn, c in TILES:
        for split in (16, 8):
            try:
                out.append(Sm90Config(bm, bn, consumers=c, stream_k=True, split=split, **fp8))
            except Exception:  # (a tile fp8's split promotion does not take)
                pass
    return out


def drawn(count: int, seed: int) -> list:
    """``count`` calls drawn at run time (bench/gemm_sweep.py's distribution) whose built-in
    pick shares whole tiles' k chunks (stream-K, ``sk_ctas`` a multiple of ``sk_tiles``)."""
    import random

    from gemm_sweep import draw_shapes
    from tree_ab import call_of

    from cutemma.kernels import pick
    from cutemma.kernels.cost import _tile_grid
    from cutemma.kernels.sm90.streamk import sk_split

    rng, found = random.Random(seed), []
    for m, n, k in draw_shapes(20000, seed):
        combo = rng.choice(("bf16_bK", "bf16_bN", "e4m3"))
        _, _, _, _, r16, major = call_of(combo, m, n, k)
        cfg, _ = pick.builtin(m, n, k, 1, combo[:4], 132, "h200", True, tuple(r16), major)
        if cfg.stream_k and cfg.kcluster == 1:
            tm, tn, kt = _tile_grid(cfg, m, n, k, combo[:4])
            sk, ctas = sk_split(tm, tn, kt, 132, cfg.split)
            if sk and ctas % sk == 0 and (sk == tm * tn or not PICKS_ONLY):
                found.append((combo, m, n, k))
        if len(found) == count:
            break
    return found


def run(variant: str, path: str, shapes: list) -> None:
    import torch
    from gemm_sweep import operands, reps_for, turns_ms

    import cutemma
    from cutemma.kernels.sm90 import source

    if variant == "tile":  # the order before: share b is CTA b's
        source.HELPERS_STREAMK = source.HELPERS_STREAMK.replace(
            "return (b % sk_tiles) * (sk_ctas / sk_tiles) + b / sk_tiles;", "return b;"
        )
    rows = []
    for combo, m, n, k in shapes:
        A, B, out, peer = operands(combo, m, n, k)
        calls = {"cublas": lambda p=peer, o=out: p(o),
                 "pick": lambda A=A, B=B, o=out: cutemma.gemm(A, B, out=o)}  # fmt: skip
        ref = peer(out).float()
        errors, same = {}, {}
        for cfg in [] if PICKS_ONLY else configs(combo):
            try:
                cutemma.gemm(A, B, out=out, config=cfg)
                first = out.clone()
                cutemma.gemm(A, B, out=out, config=cfg)
                same[cfg.name] = bool(torch.equal(first, out))
                errors[cfg.name] = float((out.float() - ref).norm() / ref.norm())
            except Exception as exc:
                errors[cfg.name] = f"{type(exc).__name__}: {exc}"[:160]
                continue
            calls[cfg.name] = lambda A=A, B=B, o=out, c=cfg: cutemma.gemm(A, B, out=o, config=c)
        reps = reps_for(calls["cublas"])
        us = {key: round(v * 1e3, 2) for key, v in turns_ms(calls, reps).items()}
        rows.append({"combo": combo, "m": m, "n": n, "k": k, "us": us, "errors": errors,
                     "same_bits": same})  # fmt: skip
        print(variant, combo, m, n, k, us, flush=True)
        with open(path, "w") as f:
            json.dump({"variant": variant, "rows": rows}, f, indent=1)
        torch.cuda.empty_cache()


def main(path: str, draws: int) -> None:
    import random

    seed = random.SystemRandom().randrange(2**32)
    shapes = ([] if PICKS_ONLY else SHAPES) + drawn(draws, seed)
    listed = tempfile.mktemp(suffix=".json")
    json.dump(shapes, open(listed, "w"))
    parts, caches = {}, {v: tempfile.mkdtemp(prefix=f"sk-{v}-") for v in ("tile", "chunk")}
    for variant in ("tile", "chunk", "tile", "chunk"):  # (twice each, in turn)
        part = tempfile.mktemp(suffix=".json")
        env = dict(os.environ, XDG_CACHE_HOME=caches[variant])  # (its own kernel index)
        flags = ["--picks-only"] if PICKS_ONLY else []
        cmd = [sys.executable, __file__, "run", variant, part, listed, *flags]
        subprocess.run(cmd, env=env, check=True)
        parts.setdefault(variant, []).append(json.load(open(part))["rows"])
    rows = []
    for i, (combo, m, n, k) in enumerate(shapes):
        row = {"combo": combo, "m": m, "n": n, "k": k, "vs_cublas": {}, "errors": {},
               "same_bits": {}}  # fmt: skip
        for variant, runs in parts.items():
            for r in runs:
                for name, t in r[i]["us"].items():
                    if name != "cublas":
                        ratio = r[i]["us"]["cublas"] / t
                        row["vs_cublas"].setdefault(name, {}).setdefault(variant, []).append(
                            round(ratio, 4)
                        )
                row["errors"][variant] = r[i]["errors"]
                row["same_bits"][variant] = r[i]["same_bits"]
        rows.append(row)
        print(
            combo,
            m,
            n,
            k,
            {name: {v: max(x) for v, x in d.items()} for name, d in row["vs_cublas"].items()},
        )
    with open(path, "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "seed": seed, "drawn": draws, "rows": rows,
                   "script": open(__file__).read()}, f, indent=1)  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], [tuple(c) for c in json.load(open(sys.argv[4]))])
    else:
        main(
            sys.argv[1],
            int(sys.argv[sys.argv.index("--draws") + 1]) if "--draws" in sys.argv else 16,
        )
