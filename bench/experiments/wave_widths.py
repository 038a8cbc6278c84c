"""Plain tiles whose width fills one wave: for a call of m rows, tiles of 64 or 128 rows and
the narrowest width (a multiple of 8 or 16) for which the tiles number at most the SMs (or
two waves of them), against the pick and cuBLAS.

Why: on (763, 1040, 5280) bf16 a 64x104 tile ran 0.90 of cuBLAS where the pick's 64x128
ran 0.76 (bench/results/raw/ncu-mid-ring-h200.json): 120 tiles of 104 columns against 108
of 128, one wave either way, each CTA a fifth less work. cuBLAS runs such widths there
(128x80, 128x104, 256x120, 128x144 in raw/ncu-mid-times-h200.json). The space fits widths
only to N (space.fitted_widths, N <= 1536), not to the wave.

    python bench/experiments/wave_widths.py OUT.json SWEEP.json [ROWS]

Takes the sweep's rows of 65..2048 tokens: its worst ROWS (default 36) and ROWS / 3 of
those at 0.97 or better, the three combos in turn.
"""

from __future__ import annotations

import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

SMS = 132
WIDTH_MIN = 48  # narrower plain tiles load more operand bytes than they compute on


def wave_widths(m: int, n: int, rows: int, waves: int, step: int) -> int | None:
    """The narrowest width, a multiple of ``step`` up to 256, whose tiles of ``rows`` rows
    number at most ``waves`` waves of the SMs (None if no width does).

    >>> wave_widths(763, 1040, 64, 1, 8)
    96
    """
    tm = -(-m // rows)
    cols = waves * SMS // tm
    if cols < 1:
        return None
    share = -(-n // cols)  # each tile's columns
    width = -(-share // step) * step
    return width if step <= width <= 256 else None


def variants(m: int, n: int, dtype: str) -> dict:
    """Wave-fitted plain tiles (the space's tile classes' rows, whole, fp8 promoted as the
    space promotes its widths) that build."""
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.space import ROWS, builds, fits

    fp8 = dtype in ("e4m3", "e5m2")
    out = {}
    for rows in (64, 128):
        for waves in (1, 2):
            for step in (8, 16):
                w = wave_widths(m, n, rows, waves, step)
                if w is None or w < WIDTH_MIN or (fp8 and w % 16):
                    continue
                promote = ("overlap" if w <= 128 else "split") if fp8 else False
                kw = (
                    {"consumers": ROWS[rows], "promote": promote}
                    if fp8
                    else {"consumers": ROWS[rows]}
                )
                try:
                    cfg = Sm90Config(rows, w, **kw)
                except Exception:
                    continue
                if fits(cfg, dtype) and builds(cfg, dtype):
                    out.setdefault(f"{rows}x{w}", cfg)
    return out


def cases(sweep: str, rows: int) -> list[tuple]:
    found = [r for r in json.load(open(sweep))["rows"] if 65 <= r["m"] <= 2048 and r.get("ratio")]
    worst = sorted(found, key=lambda r: r["ratio"])
    good = [r for r in found if r["ratio"] >= 0.97][:: max(1, len(found) // max(1, rows))]
    picked = worst[:rows] + good[: rows // 3]
    return [(r["combo"], r["m"], r["n"], r["k"]) for r in picked]


def compile_shard(sweep: str, rows_n: int, shard: int, shards: int) -> None:
    """Run this shard's kernels once on uninitialised operands: they land in the disk cache,
    so the timing process compiles nothing."""
    import torch
    from gemm_sweep import operands

    import cutemma

    for i, (combo, m, n, k) in enumerate(cases(sweep, rows_n)):
        if i % shards != shard:
            continue
        A, B, out, _ = operands(combo, m, n, k, fill=False)
        for cfg in [None, *variants(m, n, combo[:4]).values()]:
            try:
                cutemma.gemm(A, B, out=out, config=cfg)
                torch.cuda.synchronize()
            except Exception as exc:  # seen again (and recorded) when timed
                print(f"compile {cfg}: {type(exc).__name__}: {exc}"[:200])


def precompile(sweep: str, rows_n: int, shards: int = 14) -> None:
    import subprocess

    cmd = [sys.executable, __file__, "compile", sweep, str(rows_n)]
    procs = [subprocess.Popen([*cmd, str(i), str(shards)]) for i in range(shards)]
    for p in procs:
        p.wait()


def main() -> None:
    if sys.argv[1] == "compile":
        compile_shard(sys.argv[2], *map(int, sys.argv[3:6]))
        return
    import torch
    from gemm_sweep import operands, reps_for, turns_ms
    from pick_audit import calls_of, errors_of

    from cutemma.kernels.dispatch import checked

    out_path, sweep = sys.argv[1], sys.argv[2]
    rows_n = int(sys.argv[3]) if len(sys.argv) > 3 else 36
    precompile(sweep, rows_n)
    rows = []
    for combo, m, n, k in cases(sweep, rows_n):
        A, B, out, peer = operands(combo, m, n, k)
        _, choice = checked(A, B, out=out)
        found = {key: c for key, c in variants(m, n, combo[:4]).items() if c != choice.config}
        calls = calls_of(A, B, out, peer, found)
        ref = peer(torch.empty_like(out)).float()
        errs = errors_of(calls, list(calls)[1:], out, ref)
        us = {key: round(v * 1e3, 2) for key, v in turns_ms(calls, reps_for(calls["pick"])).items()}
        ours = {key: v for key, v in us.items() if key != "cublas"}
        best = min(ours, key=ours.get)
        r = {"combo": combo, "m": m, "n": n, "k": k, "pick": choice.config.name,
             "configs": {key: c.name for key, c in found.items()}, "us": us, "errors": errs,
             "pick_vs_cublas": round(us["cublas"] / us["pick"], 4),
             "best": best, "best_vs_cublas": round(us["cublas"] / ours[best], 4)}  # fmt: skip
        rows.append(r)
        print(json.dumps(r), flush=True)

    def gm(key: str) -> float:
        return round(math.exp(sum(math.log(r[key]) for r in rows) / len(rows)), 4)

    summary = {"rows": len(rows), "pick_vs_cublas": gm("pick_vs_cublas"),
               "best_vs_cublas": gm("best_vs_cublas"),
               "wave_best": sum(r["best"] != "pick" for r in rows)}  # fmt: skip
    with open(out_path, "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "sweep": sweep, "summary": summary,
                   "rows": rows, "script": {"path": "bench/experiments/wave_widths.py",
                                            "source": open(__file__).read()}}, f, indent=1)  # fmt: skip
    print(summary)


if __name__ == "__main__":
    main()
