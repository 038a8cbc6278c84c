"""Calibrate the cost model (cutemma/kernels/cost.py) for one device kind (issue 33).

    python bench/calibrate.py measure --out FILE [--shapes N] [--seed S] [--shards P]   # GPU
                                      [--rows LO HI]
    python bench/calibrate.py measure --out FILE --set named|small|longk|mid|skinny|decode|decode-ends   # GPU
    python bench/calibrate.py fit FILE [FILE ...] --kind h200 [--write]                # CPU
    python bench/calibrate.py picks FILE [FILE ...] --kind h200                        # CPU
    python bench/calibrate.py bias FILE [FILE ...] --kind h200                         # CPU

``measure`` draws N shapes (bench/gemm_sweep.py's distribution, calibration seed S, never a
sweep's; ``--rows``: only those whose M lies in LO..HI) and, for each of bf16 with B K-major,
bf16 with B N-major and e4m3, times every kernel of the space the call's pick chooses from
(:func:`cutemma.kernels.space.candidates` with the call's B major and where its rows sit),
cutemma's own pick and the peer, each as an L2-flushed median. The kernels compile first in
``--shards`` processes.
``fit`` fits the model's constants (per-SM rates stay the datasheet's; the tile classes'
efficiencies, the load and DRAM bandwidths and the fixed costs are fitted) to the log of
the measured times by robust least squares, on the even-numbered shapes, and reports the
odd ones: the model's error and what its picks would have run at against the peer.
``--write`` stores the constants in cutemma/kernels/devices/<kind>.json. ``picks`` reports,
per measured file and combo, what the model's choices among the timed kernels ran at
against the peer, beside the best timed kernel (run it on two trees to compare models).
``bias`` reports measured over predicted time by kind of kernel (whole, stream-K aligned
or not, swapped or not): where the model is biased for or against a kind.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from dataclasses import asdict, replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

KERNEL_DTYPE = {"bf16_bK": "bf16", "bf16_bN": "bf16", "e4m3": "e4m3"}
ANY_ROWS = (1, 1 << 30)  # ``--rows`` unset: every drawn M


def _configs(m: int, n: int, k: int, combo: str) -> list:
    """The space's kernels of the call as the pick sees it: its B major and where its rows
    sit (:func:`_rows16`)."""
    from cutemma.kernels.space import candidates

    r16 = _rows16({"combo": combo, "m": m, "n": n, "k": k})
    major = "N" if combo == "bf16_bN" else "K"
    return list(candidates(m, n, k, KERNEL_DTYPE[combo], rows16=r16, b_major=major))


# ``--set named``: the named table's rows that the old fitted rules ran whole-wave tiles on
# (the inference table's projections at 128, 1024 and 8192 tokens, the squares), each as
# bench/compare_trees.py runs it: bf16 with B N-major, e4m3 (count -1)
NAMED_NK = [(10240, 8192), (8192, 28672), (57344, 8192), (8192, 8192)]
NAMED = [(m, n, k) for n, k in NAMED_NK for m in (128, 1024, 8192)] + [
    (s, s, s) for s in (1024, 2048, 4096)
]


# ``--set small``: small calls of few tiles (the sweeps' worst swapped whole-tile rows,
# sweep-h200-953108650.json and -393741802.json), where stream-K's fix-up decides (count -2)
SMALL = [(21, 592, 3904), (56, 1024, 1024), (22, 432, 3344), (47, 2048, 2048), (26, 2048, 2048),
         (47, 784, 1552), (56, 3072, 2048), (43, 1408, 672), (24, 4672, 1920), (27, 3920, 1568),
         (12, 4096, 1024), (8, 3632, 10304), (2, 2352, 15696), (5, 1440, 40928), (94, 688, 9408),
         (150, 1536, 4096)]  # fmt: skip


# ``--set longk``: few tiles over a long K, where a tile's k iterations are shared by many
# CTAs (the sweeps' worst stream-K rows, sweep-h200-3008391727.json and -393741802.json)
# and the fix-up's cost decides (count -3)
LONG_K = [(513, 576, 22000), (279, 1248, 31952), (145, 1088, 6608), (126, 368, 41392),
          (850, 336, 24944), (227, 368, 18352), (264, 1120, 9712), (1179, 288, 26000),
          (3, 448, 61792), (10, 352, 47424), (180, 1600, 6400), (129, 6144, 16384)]  # fmt: skip
# ``--set mid``: calls of 257-2048 rows, where tiles of 128 rows leave up to a third of a
# tile row idle and the swapped kernels' token tiles of several widths fit closer (an even
# spread by M of the sweeps' rows there, sweep-h200-2634963452.json and -2503642630.json)
# (count -4)
MID = [(257, 5120, 17920), (304, 2048, 8192), (368, 7680, 5120), (413, 8288, 608),
       (450, 15200, 14528), (548, 2688, 1744), (607, 3072, 8192), (690, 23488, 9440),
       (863, 18960, 608), (907, 544, 2240), (1029, 35840, 5120), (1235, 288, 560),
       (1330, 8192, 32768), (1530, 18432, 16384), (1733, 9104, 432), (1899, 10144, 928)]  # fmt: skip
# ``--set skinny``: calls of 1024+ rows by at most 1536 columns, where the space's widths
# leave part of the last tile column idle and few tiles share a long K (an even spread by N
# of such rows of every committed H200 sweep) (count -5)
SKINNY = [(1426, 256, 2192), (4436, 288, 37584), (2130, 352, 28768), (1281, 416, 1184),
          (3458, 464, 496), (1157, 560, 60624), (4838, 640, 5824), (2514, 720, 416),
          (1676, 896, 1520), (1207, 1024, 1024), (5450, 1040, 3856), (9177, 1184, 35216),
          (6300, 1280, 832), (4620, 1328, 624)]  # fmt: skip
# ``--set decode``: the decode-step graph's projections (bench/gemm_decode_graph.py: an
# 8B- and a 70B-class model) at 32 and 64 tokens, where the graph ran the swapped kernels
# faster than the model's unswapped picks (bench/results/raw/decode-pick-ab-h200.json)
# (count -6)
DECODE = [(m, n, k) for m in (32, 64) for n, k in
          [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336),
           (10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)]]  # fmt: skip
# ``--set decode-ends``: the 8B-class model's projections at the decode graph's other token
# counts (1, 16, 128, 256), where a model change moved picks that no set had measured
# (bench/gemm_decode_graph.py; count -7)
DECODE_ENDS = [(m, n, k) for m in (1, 16, 128, 256) for _, n, k in DECODE[:4]]
SETS = {
    "named": -1, "small": -2, "longk": -3, "mid": -4, "skinny": -5, "decode": -6,
    "decode-ends": -7,
}  # fmt: skip
SHAPE_SETS = {
    -2: SMALL,
    -3: LONG_K,
    -4: MID,
    -5: SKINNY,
    -6: DECODE,
    -7: DECODE_ENDS,
}  # the sets every combo runs (NAMED: two of them)


def _cases(count: int, seed: int, rows: tuple[int, int] = ANY_ROWS) -> list[tuple]:
    """The calls to time: a named set (``count`` < 0) or ``count`` drawn shapes whose M lies
    in ``rows`` (drawn as the sweep draws, those outside skipped), each in every combo."""
    from gemm_sweep import COMBOS, draw_shapes

    if count == -1:
        return [(combo, *shape) for shape in NAMED for combo in ("bf16_bN", "e4m3")]
    if count in SHAPE_SETS:
        return [(combo, *shape) for shape in SHAPE_SETS[count] for combo in COMBOS]
    lo, hi = rows
    drawn = [s for s in draw_shapes(200 * count, seed) if lo <= s[0] <= hi][:count]
    return [(combo, m, n, k) for (m, n, k) in drawn for combo in COMBOS]


def compile_shard(
    count: int, seed: int, shard: int, shards: int, rows: tuple[int, int] = ANY_ROWS
) -> None:
    """Run each distinct (combo, config) once on its first shape: the disk cache then holds
    its kernel for the timing process."""
    import torch
    from gemm_sweep import operands

    import cutemma

    seen, mine = set(), []
    for combo, m, n, k in _cases(count, seed, rows):
        for cfg in _configs(m, n, k, combo):
            if (combo, cfg) not in seen:
                seen.add((combo, cfg))
                if len(seen) % shards == shard:
                    mine.append((combo, m, n, k, cfg))
    for combo, m, n, k, cfg in mine:
        A, B, out, _ = operands(
            combo, min(m, 512), n if cfg.swap_ab else min(n, 1024), min(k, 2048)
        )
        try:
            cutemma.gemm(A, B, out=out, config=cfg)
            torch.cuda.synchronize()
        except Exception as exc:  # seen again (and recorded) when timed
            print(f"compile {combo} {cfg.name}: {type(exc).__name__}: {exc}"[:300], flush=True)


def measure(
    count: int, seed: int, shards: int, path: str, rows: tuple[int, int] = ANY_ROWS
) -> dict:
    import torch
    from gemm_sweep import COMBOS

    band = [str(r) for r in rows]
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "compile", str(count), str(seed), str(i), str(shards),
             *band]
        )
        for i in range(shards)
    ]  # fmt: skip
    for p in procs:
        p.wait()
    cases, timed = _cases(count, seed, rows), []
    if 0 < count and len(cases) < len(COMBOS) * count:  # (a narrow band draws few shapes)
        print(f"rows {rows[0]}..{rows[1]}: {len(cases) // len(COMBOS)} of {count} shapes drawn")
    for i, case in enumerate(cases):
        timed.append(_case(*case))
        torch.cuda.empty_cache()
        with open(path, "w") as f:  # as it goes: a run cut short keeps its rows
            json.dump({"seed": seed, "shapes": count, "m_band": rows, "rows": timed}, f)
        good = [v for v in timed[-1]["times_us"].values() if isinstance(v, float)]
        print(f"[{i}] {case}: peer {timed[-1]['peer_us']:.1f} pick {timed[-1]['pick_us']:.1f} "
              f"best {min(good) if good else float('nan'):.1f} us", flush=True)  # fmt: skip
    device = torch.cuda.get_device_name()
    return {"seed": seed, "shapes": count, "m_band": rows, "device": device, "rows": timed}


def _case(combo: str, m: int, n: int, k: int) -> dict:
    """One case: the peer, cutemma's pick and every kernel of the space, each checked
    against the peer (NaN-poisoned output first) and timed."""
    import torch
    from gemm_sweep import flushed_ms, operands, pick_of, reps_for

    import cutemma

    A, B, out, peer = operands(combo, m, n, k)
    reps = reps_for(lambda: peer(out))
    row = {"combo": combo, "m": m, "n": n, "k": k}
    row["peer_us"] = flushed_ms(lambda: peer(out), reps) * 1e3
    ref = peer(torch.empty_like(out)).float()
    row["pick"] = pick_of(A, B)
    row["pick_us"] = flushed_ms(lambda: cutemma.gemm(A, B, out=out), reps) * 1e3
    times, errs = {}, {}
    configs = _configs(m, n, k, combo)
    for cfg in configs:
        try:
            out.fill_(float("nan"))
            cutemma.gemm(A, B, out=out, config=cfg)
            errs[cfg.name] = float((out.float() - ref).norm() / ref.norm())
        except Exception as exc:
            times[cfg.name] = f"{type(exc).__name__}: {exc}"[:200]
    # two passes, the second in reverse order: a large GEMM heats the card and slows
    # whatever runs after it, so a fixed order would favour the first kernels
    runs = [c for c in configs if c.name not in times]
    passes: dict[str, list[float]] = {c.name: [] for c in runs}
    for order in (runs, runs[::-1]):
        for cfg in order:
            run = lambda c=cfg: cutemma.gemm(A, B, out=out, config=c)  # noqa: E731
            passes[cfg.name].append(flushed_ms(run, reps) * 1e3)
    times |= {name: statistics.fmean(v) for name, v in passes.items()}
    row["times_us"], row["rel_err"] = times, errs
    bad = {name: e for name, e in errs.items() if not e < 2e-2}
    if bad:
        print(f"WRONG {combo} {m} {n} {k}: {bad}", flush=True)
    return row


# -------------------------------------------------------------------------------- fit


def _rows16(r: dict) -> tuple[bool, bool]:
    """Whether a measured row's A and B rows sat half a sector off (as
    cutemma.kernels.call.rows16 reads gemm_sweep's operands: A K-major, B K-major but for
    'bf16_bN', whose rows are N long)."""
    from cutemma.kernels.call import half_sector_off

    eb = 1 if r["combo"] == "e4m3" else 2
    b_pitch = r["n"] if r["combo"] == "bf16_bN" else r["k"]
    return half_sector_off(r["k"] * eb), half_sector_off(b_pitch * eb)


def _points(rows: list[dict]) -> list[tuple]:
    """(config, m, n, k, dtype, measured us, rows16) of every timed kernel."""
    from cutemma.kernels.space import candidates

    pts = []
    for r in rows:
        dtype, r16 = KERNEL_DTYPE[r["combo"]], _rows16(r)
        by_name = {c.name: c for c in candidates(r["m"], r["n"], r["k"], dtype, rows16=r16)}
        for name, us in r["times_us"].items():
            if isinstance(us, float) and name in by_name:
                pts.append((by_name[name], r["m"], r["n"], r["k"], dtype, us, r16))
    return pts


# the fitted constants after the tile classes' efficiencies: (name, first guess, low, high)
FITTED = (
    ("load_gbps", 75.0, 5, 1000),
    ("dram_gbps", 3000.0, 500, 10000),
    ("tile_us", 1.0, 0, 50),
    ("fixup_us", 1.0, 0, 50),
    ("together_us", 2.0, 0, 50),
    ("launch_us", 4.0, 0, 30),
    ("reread", 0.1, 0, 1),
    ("sharpness", 4.0, 1, 16),
)


def _device(base, x, classes):
    # classes no calibration set times (the fused calls' pingpong tiles) keep their rates
    eff = base.eff | dict(zip(classes, x[: len(classes)]))
    rest = dict(zip((f[0] for f in FITTED), x[len(classes) :]))
    return replace(base, eff=eff, **rest)


def fit(rows: list[dict], kind: str):
    import numpy as np
    from scipy.optimize import least_squares

    from cutemma.kernels.cost import device, price, shape_free, tile_class

    base = device(kind)
    train = [r for i, r in enumerate(rows) if (i // 3) % 2 == 0]  # whole shapes (3 combos)
    pts = _points(train)
    classes = sorted({tile_class(p[0], p[4]) for p in pts})
    x0 = [0.7] * len(classes) + [f[1] for f in FITTED]
    lo = [0.05] * len(classes) + [f[2] for f in FITTED]
    hi = [1.0] * len(classes) + [f[3] for f in FITTED]  # a share of the datasheet rate

    def residuals(x):
        dev = _device(base, x, classes)
        res = [
            math.log(price(shape_free(c, d, dev), c, m, n, k, d, 1, dev, 2, r16) * 1e6 / us)
            for c, m, n, k, d, us, r16 in pts
        ]
        return np.array(res)

    sol = least_squares(
        residuals, np.array(x0), bounds=(lo, hi), loss="soft_l1", f_scale=0.1, diff_step=1e-3
    )
    return _device(base, sol.x, classes)


def evaluate(rows: list[dict], dev) -> dict:
    """On the held-out (odd) shapes: the model's median absolute error, and the ratios to
    the peer of (its pick, cutemma's own pick, the best measured kernel)."""
    from cutemma.kernels.cost import price, shape_free
    from cutemma.kernels.space import candidates

    test = [r for i, r in enumerate(rows) if (i // 3) % 2 == 1]
    errs, out = [], {}
    for r in test:
        dtype, r16 = KERNEL_DTYPE[r["combo"]], _rows16(r)
        found = candidates(r["m"], r["n"], r["k"], dtype, rows16=r16)
        timed = {c: r["times_us"].get(c.name) for c in found}
        timed = {c: us for c, us in timed.items() if isinstance(us, float)}
        if not timed:
            continue
        mnk = r["m"], r["n"], r["k"]
        pred = {c: price(shape_free(c, dtype, dev), c, *mnk, dtype, 1, dev, 2, r16) * 1e6
                for c in timed}  # fmt: skip
        errs += [abs(pred[c] / us - 1) for c, us in timed.items()]
        chosen = min(pred, key=pred.get)
        d = out.setdefault(r["combo"], {"model": [], "pick": [], "best": []})
        d["model"].append(r["peer_us"] / timed[chosen])
        d["pick"].append(r["peer_us"] / r["pick_us"])
        d["best"].append(r["peer_us"] / min(timed.values()))

    def gm(v):
        return round(math.exp(statistics.fmean(math.log(x) for x in v)), 4)

    report = {"median_abs_error": round(statistics.median(errs), 4) if errs else None}
    for combo, d in out.items():
        report[combo] = {
            k: {
                "geomean": gm(v),
                "min": round(min(v), 3),
                "share_0.97": round(sum(x >= 0.97 for x in v) / len(v), 3),
            }
            for k, v in d.items()
        }
    return report


def timed_kernels(r: dict) -> tuple[str, tuple[bool, bool], dict]:
    """(dtype, rows16, {config: measured us}) of a ``measure`` row: the kernels of this
    tree's space for the call (its B major, where its rows sit) that the row timed."""
    from cutemma.kernels.space import candidates

    dtype, r16 = KERNEL_DTYPE[r["combo"]], _rows16(r)
    major = "N" if r["combo"] == "bf16_bN" else "K"
    found = candidates(r["m"], r["n"], r["k"], dtype, rows16=r16, b_major=major)
    timed = {c: r["times_us"].get(c.name) for c in found}
    return dtype, r16, {c: us for c, us in timed.items() if isinstance(us, float)}


def picks(path: str, kind: str) -> dict:
    """Over every row of a ``measure`` file: per combo, the geomean ratio to the peer of the
    kernel the model (this tree's cutemma/kernels/cost.py, device ``kind``) picks among the
    timed ones, and of the best timed one (what the space holds)."""
    from cutemma.kernels.cost import device, price, shape_free

    dev, out = device(kind), {}
    for r in json.load(open(path))["rows"]:
        dtype, r16, timed = timed_kernels(r)
        if not timed:
            continue
        mnk = r["m"], r["n"], r["k"]
        chosen = min(
            timed, key=lambda c: price(shape_free(c, dtype, dev), c, *mnk, dtype, 1, dev, 2, r16)
        )
        d = out.setdefault(r["combo"], {"model": [], "best": []})
        d["model"].append(math.log(r["peer_us"] / timed[chosen]))
        d["best"].append(math.log(r["peer_us"] / min(timed.values())))
    return {
        c: {k: round(math.exp(statistics.fmean(v)), 4) for k, v in d.items()}
        for c, d in out.items()
    }


def kernel_kind(cfg, m: int, n: int, k: int, dtype: str, sms: int = 132) -> str:
    """What a timed kernel is on its shape, as the model's terms split it: 'plain' or
    'swapped' (its tokens one tile column) or 'swapped-tiles' (several), then 'whole',
    'no-share' (stream-K that shares nothing), 'aligned' (every shared tile cut into the
    same k chunks, cost._aligned) or 'unaligned'."""
    from cutemma.kernels.cost import _aligned, _tile_grid
    from cutemma.kernels.sm90.streamk import sk_split

    tm, tn, kt = _tile_grid(cfg, m, n, k, dtype)
    side = ("swapped" if tn == 1 else "swapped-tiles") if cfg.swap_ab else "plain"
    if not cfg.stream_k:
        return f"{side} whole"
    sk, ctas = sk_split(tm, tn, kt, sms, cfg.split)
    share = "no-share" if not sk else "aligned" if _aligned(ctas, sk, cfg.split) else "unaligned"
    return f"{side} {share}"


def bias(paths: list[str], kind: str) -> dict:
    """Measured over predicted time of every timed kernel in ``measure`` files, by
    :func:`kernel_kind`: how many, and the quartiles (above 1: the model prices that kind
    too cheap, below: too dear). Where one kind's quartiles sit off the others', the pick
    favours or shuns it (this split found aligned unswapped stream-K at 0.86 against whole
    tiles' 1.02-1.08, notes/kernels-journal.md)."""
    from cutemma.kernels.cost import device, price, shape_free

    dev, ratios = device(kind), {}
    for path in paths:
        for c, m, n, k, d, us, r16 in _points(json.load(open(path))["rows"]):
            predicted = price(shape_free(c, d, dev), c, m, n, k, d, 1, dev, 2, r16) * 1e6
            ratios.setdefault(kernel_kind(c, m, n, k, d, dev.sms), []).append(us / predicted)
    out = {}
    for what, v in sorted(ratios.items()):
        q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
        out[what] = {"kernels": len(v), "p25": round(q[0], 3), "median": round(q[1], 3),
                     "p75": round(q[2], 3)}  # fmt: skip
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "compile":
        nums = [int(v) for v in sys.argv[2:]]
        compile_shard(*nums[:4], tuple(nums[4:6]) or ANY_ROWS)
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("measure", "fit", "picks", "bias"))
    ap.add_argument("files", nargs="*")
    ap.add_argument("--out")
    ap.add_argument("--shapes", type=int, default=60)
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--shards", type=int, default=max(1, (os.cpu_count() or 4) - 2))
    ap.add_argument(
        "--set",
        choices=tuple(SETS),
        help="NAMED, SMALL, LONG_K, MID, SKINNY or DECODE, not drawn rows",
    )
    ap.add_argument(
        "--rows", type=int, nargs=2, default=ANY_ROWS, metavar=("LO", "HI"),
        help="measure: only drawn shapes whose M lies in LO..HI (a band the sweeps lose in)",
    )  # fmt: skip
    ap.add_argument("--kind", default="h200")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    lo, hi = args.rows
    if not 1 <= lo <= hi:
        ap.error(f"--rows {lo} {hi}: give the band of M to draw as LO HI with 1 <= LO <= HI")
    if args.mode == "measure":
        count = SETS.get(args.set, args.shapes)
        result = measure(count, args.seed, args.shards, args.out, tuple(args.rows))
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
        return
    if args.mode == "picks":
        print(json.dumps({path: picks(path, args.kind) for path in args.files}, indent=1))
        return
    if args.mode == "bias":
        print(json.dumps(bias(args.files, args.kind), indent=1))
        return
    rows = [r for path in args.files for r in json.load(open(path))["rows"]]
    dev = fit(rows, args.kind)
    print(json.dumps({"fitted": asdict(dev), "held_out": evaluate(rows, dev)}, indent=1))
    if args.write:
        path = os.path.join(HERE, "..", "cutemma", "kernels", "devices", f"{args.kind}.json")
        data = asdict(dev) | {"note": f"fitted by bench/calibrate.py on {', '.join(args.files)}"}
        with open(path, "w") as f:
            json.dump(data, f, indent=1)


if __name__ == "__main__":
    main()
