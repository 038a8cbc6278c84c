"""Timing a set of kernels per call against cuBLAS and the pick, shared by the experiments
that probe the space (big_tiles.py, swap_sk128.py): each script names its calls and, per
call, its kernels; this compiles them in parallel processes first (the disk cache, so the
timing process compiles nothing), then times each call (tiles192_probe.row: L2-flushed
medians in turn, errors against cuBLAS) with the model's price beside each kernel, and
writes the rows after each call (a run cut short keeps them).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

# (combo, m, n, k) -> {name: config}
KernelsOf = Callable[[str, int, int, int], dict]


def compile_shard(cases: list, kernels_of: KernelsOf, shard: int, shards: int) -> None:
    """Run this shard's (call, kernel) pairs once on uninitialised operands: a kernel's
    calls in one shard (it compiles once per B major), the picks spread."""
    import torch
    from gemm_sweep import operands

    import cutemma

    named: dict = {}
    for case in cases:
        for name, cfg in kernels_of(*case).items():
            named.setdefault(name, (cfg, []))[1].append(case)
    jobs = [(j, case, cfg) for j, (cfg, calls) in enumerate(named.values()) for case in calls]
    jobs += [(len(named) + i, case, None) for i, case in enumerate(cases)]
    for j, (combo, m, n, k), cfg in jobs:
        if j % shards != shard:
            continue
        A, B, out, _ = operands(combo, m, n, k, fill=False)
        try:
            cutemma.gemm(A, B, out=out, config=cfg)
            torch.cuda.synchronize()
        except Exception as exc:  # seen again (and recorded) when timed
            print(f"compile {cfg}: {type(exc).__name__}: {exc}"[:200], flush=True)
        del A, B, out
        torch.cuda.empty_cache()


def run(script: str, out: str, cases: list, kernels_of: KernelsOf, header: dict) -> None:
    """Compile (``script compile CASES I SHARDS`` in 14 processes: the script calls
    :func:`compile_shard`), then time every case and write ``header`` and the rows to
    ``out``."""
    shards = 14
    cmd = [sys.executable, script, "compile", json.dumps(cases)]
    for p in [subprocess.Popen([*cmd, str(i), str(shards)]) for i in range(shards)]:
        p.wait()
    import torch
    from tiles192_probe import row

    from cutemma.kernels.cost import predict

    rows = []
    for combo, m, n, k in cases:
        found = kernels_of(combo, m, n, k)
        r = row(combo, m, n, k, found)
        r["predicted_us"] = {name: round(predict(c, m, n, k, combo[:4], 1, "h200") * 1e6, 2)
                             for name, c in found.items()}  # fmt: skip
        r["vs_cublas"] = {key: round(r["us"]["cublas"] / v, 3) for key, v in r["us"].items()}
        rows.append(r)
        print(combo, m, n, k, r["pick"].get("config"), r["vs_cublas"], flush=True)
        with open(out, "w") as f:
            json.dump({**header, "rows": rows, "script": open(script).read()}, f, indent=1)
        torch.cuda.empty_cache()


def call_space(combo: str, m: int, n: int, k: int, swap: bool = False) -> tuple:
    """(dtype, B's major, rows16, the space's candidates) of a sweep combo's call on contiguous
    operands (``swap``: with the swapped kernels where the space offers them)."""
    from cutemma.kernels.call import half_sector_off
    from cutemma.kernels.space import candidates

    dtype = "e4m3" if combo == "e4m3" else "bf16"
    major = "N" if combo == "bf16_bN" else "K"
    eb = 1 if dtype == "e4m3" else 2
    r16 = (half_sector_off(k * eb), half_sector_off((n if major == "N" else k) * eb))
    return dtype, major, r16, candidates(m, n, k, dtype, 1, 132, swap, r16, major)


def cheapest_plain(combo: str, m: int, n: int, k: int, count: int = 3) -> tuple:
    """(dtype, B's major, the ``count`` unswapped kernels the model prices lowest)."""
    from cutemma.kernels.cost import predict

    dtype, major, r16, found = call_space(combo, m, n, k)
    price = lambda c: predict(c, m, n, k, dtype, 1, "h200", 2, r16)  # noqa: E731
    return dtype, major, sorted(found, key=price)[:count]


def pick_of_call(combo: str, m: int, n: int, k: int):
    """The config the built-in pick gives a sweep combo's call on contiguous operands whose
    rows sit aligned (swapped kernels allowed: a swapped pick has ``swap_ab``)."""
    from cutemma.kernels.pick import builtin

    b_major = "N" if combo == "bf16_bN" else "K"
    cfg, _ = builtin(m, n, k, 1, combo[:4], 132, "h200", True, (False, False), b_major, False)
    return cfg


def built(make: Callable, dtype: str, majors: tuple[str, str] = ("K", "K")):
    """The config ``make()`` gives (e.g. ``functools.partial(Sm90Config, ...)``), or None
    where the family's rules refuse it (its TiledMmaError) or its stages do not build for
    operands of ``majors`` (:func:`cutemma.kernels.space.builds`): the probes' kernels that
    can run."""
    from cutemma.errors import TiledMmaError
    from cutemma.kernels.space import builds

    try:
        cfg = make()
    except TiledMmaError:  # (a rule refuses the shape: not timed)
        return None
    return cfg if builds(cfg, dtype, majors) else None


def add_peer_kernels(out: str) -> None:
    """Each row of the probe's ``out`` with the names of the CUDA kernels cuBLAS launches
    for it (peer_kernels.kernels_of: torch.profiler)."""
    from gemm_sweep import operands
    from peer_kernels import kernels_of

    data = json.load(open(out))
    for r in data["rows"]:
        _, _, o, peer = operands(r["combo"], r["m"], r["n"], r["k"])
        r["peer_kernels"] = kernels_of(lambda p=peer, o=o: p(o))
    with open(out, "w") as f:
        json.dump(data, f, indent=1)


def main(script: str, doc: str, shapes: Callable, kernels_of: KernelsOf, draws: int) -> None:
    """A probe script's command line: ``OUT.json [--draws N] [--seed S]``, or the compile
    shards' ``compile CASES I SHARDS``; ``shapes(draws, seed)`` gives the calls."""
    import random

    args = sys.argv[1:]
    if args[0] == "compile":
        compile_shard([tuple(c) for c in json.loads(args[1])], kernels_of, *map(int, args[2:4]))
        return
    draws = int(args[args.index("--draws") + 1]) if "--draws" in args else draws
    seed = int(args[args.index("--seed") + 1]) if "--seed" in args else random.randrange(1 << 31)
    header = {"what": doc.splitlines()[0], "seed": seed}
    run(script, args[0], shapes(draws, seed), kernels_of, header)


def timed_against_peer(A, B, out, peer, configs: dict, got: dict, rounds: int = 3) -> dict:
    """``got`` with each config's error against cuBLAS (``err_NAME``; a config that fails
    to run: ``failed_NAME``, and it is not timed), then the L2-flushed medians of cuBLAS
    and each config in turn over ``rounds`` rounds (``us``) and cuBLAS's time over each
    (``vs_peer``): the timing of the one-call probes (swap256_probe.py, swap_pairs_mid.py,
    misaligned_x256.py)."""
    import torch
    from gemm_sweep import flushed_ms, reps_for

    import cutemma

    ref = peer(torch.empty_like(out)).float()
    reps = reps_for(lambda: peer(out))
    configs = dict(configs)
    for name, cfg in list(configs.items()):
        out.fill_(float("nan"))
        try:
            cutemma.gemm(A, B, out=out, config=cfg)
            torch.cuda.synchronize()
        except Exception as exc:  # (a config the family refuses at launch: say why)
            got[f"failed_{name}"] = repr(exc)[:200]
            del configs[name]
            continue
        got[f"err_{name}"] = float((out.float() - ref).norm() / ref.norm())
        got[f"config_{name}"] = cfg.name
    times = {"peer": []} | {name: [] for name in configs}
    for _ in range(rounds):
        times["peer"].append(flushed_ms(lambda: peer(out), reps) * 1e3)
        for name, cfg in configs.items():
            run = lambda c=cfg: cutemma.gemm(A, B, out=out, config=c)  # noqa: E731
            times[name].append(flushed_ms(run, reps) * 1e3)
    med = {name: sorted(v)[len(v) // 2] for name, v in times.items()}
    got["us"] = {name: round(v, 2) for name, v in med.items()}
    got["vs_peer"] = {name: round(med["peer"] / v, 4) for name, v in med.items() if name != "peer"}
    return got


def applied(pick, changes: dict, got: dict) -> dict:
    """{"pick": pick} and each of ``changes`` ({name: {field: value}}) applied to it; a
    change the family refuses goes into ``got`` as ``refused_NAME`` with its error."""
    from dataclasses import replace

    configs = {"pick": pick}
    for name, change in changes.items():
        try:
            configs[name] = replace(pick, **change)
        except Exception as exc:  # (a config rule: say which and why)
            got[f"refused_{name}"] = repr(exc)[:200]
    return configs


def drawn_off_rows(count: int, seed: int, rows: tuple[int, int], keep=None) -> list[tuple]:
    """``count`` (m, n, k) drawn as bench/gemm_sweep.py draws N and K, M log-uniform in
    ``rows``, K an odd multiple of 16 (an e4m3 call's rows half a sector apart), each kept
    where ``keep(m, n, k)`` holds (None: all)."""
    import math
    import random

    rng, out = random.Random(seed), []
    while len(out) < count:
        m = round(math.exp(rng.uniform(math.log(rows[0]), math.log(rows[1]))))
        n, k = (16 * round(math.exp(rng.uniform(math.log(256), math.log(65536))) / 16)
                for _ in range(2))  # fmt: skip
        if (k // 16) % 2 and (keep is None or keep(m, n, k)):
            out.append((m, n, k))
    return out


def write_rows(path: str, calls: list, row: Callable, script: str) -> None:
    """``row(*call)`` for each call (an exception: the call with its error), printed as it
    comes, then all of them written to ``path`` with the argv and the script's text."""
    rows = []
    for call in calls:
        try:
            rows.append(row(*call))
        except Exception as exc:
            rows.append({"call": list(call), "error": repr(exc)[:300]})
        print(json.dumps(rows[-1]), flush=True)
    with open(path, "w") as f:
        json.dump({"rows": rows, "argv": sys.argv[1:], "script": script}, f, indent=1)
