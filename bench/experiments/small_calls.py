"""Where small calls lose: for calls that cuBLAS runs in under ~12 us, the L2-flushed event
time of cuBLAS, the pick and a few of the space's other kernels, beside the time their
kernels spend on the GPU (torch.profiler, the same flushed calls): is the gap inside our
kernels, or between the call's events and its kernel (launch)?

    python bench/experiments/small_calls.py OUT.json [--draws N] [--seed S]

The calls: the committed sweeps' rows whose peer ran under 12 us and the pick under 0.97 of
it, and ``--draws`` more drawn by the sweep's distribution, kept where cuBLAS (timed once)
runs under 12 us. Per call and kernel: ``event_us`` (median of flushed event times),
``kernel_us`` (median of the summed durations of the kernels one call launches, flushed
before each), ``kernels`` (their names, once).
"""

from __future__ import annotations

import glob
import json
import os
import random
import statistics
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
RESULTS = os.path.join(HERE, "..", "results")
PEER_MAX_US = 12.0


def sweep_losers(keep, limit: int, seed: int, last: int | None = None) -> list[tuple]:
    """(combo, m, n, k) of the committed sweeps' rows that ``keep(row)`` takes (of the
    ``last`` files by name, or all), each once, shuffled by ``seed``, at most ``limit``."""
    found = []
    for path in sorted(glob.glob(os.path.join(RESULTS, "sweep-h200-*.json")))[-(last or 0) :]:
        for r in json.load(open(path))["rows"]:
            if keep(r):
                found.append((r["combo"], r["m"], r["n"], r["k"]))
    found = list(dict.fromkeys(found))
    random.Random(seed).shuffle(found)
    return found[:limit]


def losers_and_drawn(keep, draws: int, seed: int, pool: int) -> list[tuple]:
    """(combo, m, n, k): half of ``draws`` from the committed sweeps' rows under 0.9 of cuBLAS
    whose (m, n, k) ``keep`` takes, the rest from ``pool`` calls drawn by the sweep's
    distribution that ``keep`` takes, shuffled by ``seed``, the combos in turn."""
    from gemm_sweep import draw_shapes

    lost = sweep_losers(
        lambda r: keep(r["m"], r["n"], r["k"]) and r["ratio"] < 0.9, draws // 2, seed
    )
    drawn = [s for s in draw_shapes(pool, seed) if keep(*s)]
    random.Random(seed).shuffle(drawn)
    combos = ("bf16_bK", "bf16_bN", "e4m3")
    drawn = [(combos[i % 3], *s) for i, s in enumerate(drawn)]
    return list(dict.fromkeys(lost + drawn))[:draws]


def sweep_cases(limit: int) -> list[tuple]:
    """(combo, m, n, k) of the committed sweeps' small calls that the pick lost."""
    lost = lambda r: r.get("ratio", 9) < 0.97 and r.get("peer_us", 99) < PEER_MAX_US  # noqa: E731
    return sweep_losers(lost, limit, 1, last=6)


def drawn_small(draws: int, seed: int, max_us: float, pool: int, rows=(1, 1 << 62)) -> list:
    """(combo, m, n, k) of up to ``draws`` of ``pool`` calls drawn by the sweep's distribution
    (the combos in turn), of ``rows`` = (least, most) rows, whose pick the model prices under
    ``max_us`` (a CPU test: compile shards see the same list)."""
    from gemm_sweep import draw_shapes

    from cutemma.kernels.pick import builtin

    combos = ("bf16_bK", "bf16_bN", "e4m3")
    extra = []
    for i, (m, n, k) in enumerate(draw_shapes(pool, seed)):
        if len(extra) >= draws:
            break
        combo = combos[i % 3]
        if not rows[0] <= m <= rows[1]:
            continue
        b_major = "N" if combo == "bf16_bN" else "K"
        _, t = builtin(m, n, k, 1, combo[:4], 132, "h200", True, (False, False), b_major, False)
        if t * 1e6 < max_us:
            extra.append((combo, m, n, k))
    return extra


def alternatives(combo: str, m: int, n: int, k: int, A, B) -> dict:
    """The pick, the pick in a cluster of one, and the model's three next kernels of other
    tiles or schedules (their names)."""
    from cutemma.kernels.call import half_sector_off
    from cutemma.kernels.cost import predict
    from cutemma.kernels.dispatch import which_kernel
    from cutemma.kernels.space import candidates

    c = which_kernel(A, B)
    pick = replace(c.config, swap_ab=True) if c.swap else c.config
    found = {"pick": pick}
    if pick.cluster == 2:
        try:
            found["pick_c1"] = replace(pick, cluster=1)
        except Exception as exc:  # (some tiles need their pair)
            print("no c1:", type(exc).__name__, str(exc)[:120])
    dtype = combo[:4]
    eb = 1 if dtype == "e4m3" else 2
    b_pitch = n if combo == "bf16_bN" else k
    r16 = (half_sector_off(k * eb), half_sector_off(b_pitch * eb))
    major = "N" if combo == "bf16_bN" else "K"
    cands = candidates(m, n, k, dtype, rows16=r16, b_major=major)
    ranked = sorted(cands, key=lambda x: predict(x, m, n, k, dtype, 1, "h200", 2, r16))
    seen = {(pick.block_m, pick.block_n, pick.swap_ab, pick.stream_k, pick.kcluster)}
    for cfg in ranked:
        key = (cfg.block_m, cfg.block_n, cfg.swap_ab, cfg.stream_k, cfg.kcluster)
        if key not in seen and len(found) < 6:
            seen.add(key)
            found[cfg.name] = cfg
    return found


def kernel_us(fn, reps: int) -> tuple[float, list[str]]:
    """Median over ``reps`` flushed calls of the GPU time of the kernels one call launches."""
    import torch
    from gemm_sweep import _FLUSH, flushed_ms
    from torch.profiler import ProfilerActivity, profile

    flushed_ms(fn, 1)  # (the flush buffer, warm)
    buf = _FLUSH["buf"]
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            buf.zero_()
            fn()
        torch.cuda.synchronize()
    calls, names, current = [], None, None
    for e in sorted(
        (e for e in prof.events() if e.device_type.name == "CUDA"), key=lambda e: e.time_range.start
    ):
        if "fill" in e.name.lower() or "zero" in e.name.lower() or "memset" in e.name.lower():
            if current is not None:
                calls.append(current)
            current = [0.0, []]
            continue
        if current is not None:
            current[0] += e.time_range.elapsed_us()
            current[1].append(e.name[:90])
    if current is not None:
        calls.append(current)
    if calls:
        names = calls[-1][1]
    return statistics.median(c[0] for c in calls) if calls else float("nan"), names or []


def row(combo: str, m: int, n: int, k: int) -> dict:
    import torch
    from gemm_sweep import flushed_ms, operands, reps_for

    import cutemma

    A, B, out, peer = operands(combo, m, n, k)
    runs = {"cublas": lambda: peer(out)}
    for name, cfg in alternatives(combo, m, n, k, A, B).items():
        runs[name] = lambda c=cfg: cutemma.gemm(A, B, out=out, config=c)
    ref = peer(torch.empty_like(out)).float()
    errors = {}
    for name, fn in list(runs.items()):
        try:
            out.fill_(float("nan"))
            fn()
            errors[name] = float((out.float() - ref).norm() / ref.norm())
        except Exception as exc:
            errors[name] = f"{type(exc).__name__}: {exc}"[:160]
            del runs[name]
    reps = max(15, reps_for(runs["cublas"]))
    event = {name: [] for name in runs}
    for turn in range(3):
        for name in list(runs) if turn % 2 == 0 else list(runs)[::-1]:
            event[name].append(flushed_ms(runs[name], reps) * 1e3)
    out_row = {"combo": combo, "m": m, "n": n, "k": k, "errors": errors, "event_us": {},
               "kernel_us": {}, "kernels": {}}  # fmt: skip
    for name, fn in runs.items():
        out_row["event_us"][name] = round(statistics.median(event[name]), 2)
        ku, names = kernel_us(fn, reps)
        out_row["kernel_us"][name] = round(ku, 2)
        out_row["kernels"][name] = names
    return out_row


def all_cases(draws: int, seed: int) -> list[tuple]:
    """The floor (64^3), the sweeps' small losers, then drawn calls whose pick the model
    prices under PEER_MAX_US (a CPU test: the compile shards must see the same list)."""
    floor = [(c, 64, 64, 64) for c in ("bf16_bK", "bf16_bN", "e4m3")]
    return floor + sweep_cases(14) + drawn_small(draws, seed, PEER_MAX_US, 2000)


def compile_shard(cases: list, shard: int, shards: int) -> None:
    """Run this shard's calls' kernels once (the disk cache), uninitialised operands."""
    import torch
    from gemm_sweep import operands

    import cutemma

    for j, case in enumerate(cases):
        if j % shards != shard:
            continue
        A, B, out, peer = operands(*case, fill=False)
        for cfg in alternatives(*case, A, B).values():
            try:
                cutemma.gemm(A, B, out=out, config=cfg)
            except Exception as exc:
                print("compile", cfg.name, type(exc).__name__, str(exc)[:120], flush=True)
        torch.cuda.synchronize()


def main() -> None:
    import subprocess

    import torch

    args = sys.argv[1:]
    if args[0] == "compile":
        compile_shard(json.loads(args[1]), int(args[2]), int(args[3]))
        return
    out = args[0]
    draws = int(args[args.index("--draws") + 1]) if "--draws" in args else 12
    seed = (int(args[args.index("--seed") + 1]) if "--seed" in args
            else random.SystemRandom().randrange(1 << 31))  # fmt: skip
    cases = all_cases(draws, seed)
    shards = 14
    cmd = [sys.executable, __file__, "compile", json.dumps(cases)]
    for p in [subprocess.Popen([*cmd, str(i), str(shards)]) for i in range(shards)]:
        p.wait()
    rows = []
    for case in cases:
        try:
            rows.append(row(*case))
        except Exception as exc:
            rows.append({"case": case, "error": f"{type(exc).__name__}: {exc}"[:300]})
        print(json.dumps(rows[-1])[:400], flush=True)
        with open(out, "w") as f:
            json.dump({"what": __doc__.splitlines()[0], "seed": seed, "rows": rows,
                       "script": open(__file__).read()}, f, indent=1)  # fmt: skip
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
