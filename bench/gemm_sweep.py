"""The generalisation sweep of bench/gemm.py (issue 33): shapes nobody named, drawn at run time.

    python bench/gemm.py --sweep N [--seed S] [--out FILE]

Distribution (documented here, drawn by :func:`draw_shapes`):

- M (tokens) log-uniform in 1..16384;
- (N, K): half the draws a projection of a public transformer model (:data:`MODELS`,
  uniform over the list's (N, K) pairs), half N and K each log-uniform in 256..65536,
  rounded to a multiple of 16.

Each shape runs three ways: bf16 with B K-major (nn.Linear weights, ``x @ W.t()``) and with
B N-major (a (K, N) weight), both against ``torch.matmul``; e4m3 with B K-major, bf16 out,
against ``torch._scaled_mm`` with per-tensor scales. A row is the median of L2-flushed
times (:func:`flushed_ms`) over interleaved rounds, cutemma and the peer taking turns to go
first; ``ratio`` is peer time over cutemma's (above 1: cutemma faster). Every row names the
kernel cutemma chose and, where the cost model (:mod:`cutemma.kernels.cost`) priced it, the
predicted time, so the summary can give the model's error.

The seed is drawn from the OS at run time unless ``--seed`` is given, and is recorded.
"""

from __future__ import annotations

import math
import random
import statistics

try:  # the shape distribution (draw_shapes, MODELS) is read without torch (CI's CPU tests)
    import torch
except ImportError:
    torch = None

# (N, K) of each projection, from the models' published configs (hidden size, MLP width,
# heads x head dim, KV heads): QKV fused, attention out, gate+up fused, down.
MODELS = {
    "llama-3-8b": [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336)],
    "llama-3-70b": [(10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)],
    "llama-3.1-405b": [(18432, 16384), (16384, 16384), (106496, 16384), (16384, 53248)],
    "llama-3.2-1b": [(3072, 2048), (2048, 2048), (16384, 2048), (2048, 8192)],
    "llama-3.2-3b": [(5120, 3072), (3072, 3072), (16384, 3072), (3072, 8192)],
    "llama-2-7b": [(12288, 4096), (22016, 4096), (4096, 11008)],
    "llama-2-13b": [(15360, 5120), (5120, 5120), (27648, 5120), (5120, 13824)],
    "qwen2.5-7b": [(4608, 3584), (3584, 3584), (37888, 3584), (3584, 18944)],
    "qwen2.5-14b": [(7168, 5120), (27648, 5120), (5120, 13824)],
    "qwen2.5-72b": [(59136, 8192), (8192, 29568)],
    "gemma-2-9b": [(8192, 3584), (3584, 4096), (28672, 3584), (3584, 14336)],
    "gemma-2-27b": [(8192, 4608), (4608, 4096), (73728, 4608), (4608, 36864)],
    "deepseek-v3-mla": [(1536, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384)],
    "deepseek-v3-dense": [(36864, 7168), (7168, 18432)],
    "deepseek-v3-expert": [(4096, 7168), (7168, 2048)],
    "mixtral-8x22b": [(8192, 6144), (6144, 6144), (32768, 6144), (6144, 16384)],
    "phi-3-mini": [(9216, 3072), (16384, 3072), (3072, 8192)],
    "phi-3-medium": [(7680, 5120), (35840, 5120), (5120, 17920)],
    "falcon-40b": [(9216, 8192), (32768, 8192), (8192, 32768)],
    "yi-34b": [(9216, 7168), (7168, 7168), (40960, 7168), (7168, 20480)],
    "gpt-3-175b": [(36864, 12288), (12288, 12288), (49152, 12288), (12288, 49152)],
    "gpt-2-xl": [(4800, 1600), (1600, 1600), (6400, 1600), (1600, 6400)],
    "bert-large": [(3072, 1024), (1024, 1024), (4096, 1024), (1024, 4096)],
    "whisper-large": [(3840, 1280), (1280, 1280), (5120, 1280), (1280, 5120)],
}
PROJECTIONS = sorted({nk for pairs in MODELS.values() for nk in pairs})
M_RANGE = (1, 16384)
NK_RANGE = (256, 65536)
COMBOS = ("bf16_bK", "bf16_bN", "e4m3")
FLUSH_BYTES = 256 << 20  # more than L2 (50 MB on the H100, 60 on the H200)


def _log_uniform(rng: random.Random, lo: int, hi: int) -> float:
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def draw_shapes(count: int, seed: int) -> list[tuple[int, int, int]]:
    """``count`` (M, N, K) shapes of the documented distribution, reproducible by ``seed``.

    >>> draw_shapes(3, 1) == draw_shapes(3, 1) and len(draw_shapes(3, 1)) == 3
    True
    """
    rng = random.Random(seed)
    shapes = []
    for i in range(count):
        m = min(M_RANGE[1], max(M_RANGE[0], round(_log_uniform(rng, *M_RANGE))))
        if i % 2 == 0:
            n, k = rng.choice(PROJECTIONS)
        else:
            n, k = (max(16, round(_log_uniform(rng, *NK_RANGE) / 16) * 16) for _ in range(2))
        shapes.append((m, n, k))
    return shapes


def operands(combo: str, m: int, n: int, k: int, fill: bool = True):
    """(A, B, out, peer) for one way of running (m, n, k): fresh random inputs (never zero),
    B K-major for 'bf16_bK' and 'e4m3', N-major for 'bf16_bN'; ``peer(out)`` runs cuBLAS.
    ``fill=False`` leaves them uninitialised (to compile a call's kernel, not to time it)."""
    make = torch.randn if fill else torch.empty
    if combo == "e4m3":
        A = make(m, k, device="cuda").to(torch.float8_e4m3fn)
        B = make(n, k, device="cuda").to(torch.float8_e4m3fn).t()
        one = torch.ones((), device="cuda")

        def peer(o):
            return torch._scaled_mm(A, B, one, one, out_dtype=torch.bfloat16)

    else:
        A = make(m, k, device="cuda", dtype=torch.bfloat16)
        B = make(n, k, device="cuda", dtype=torch.bfloat16)
        B = B.t() if combo == "bf16_bK" else B.reshape(k, n)

        def peer(o):
            return torch.matmul(A, B, out=o)

    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    return A, B, out, peer


_FLUSH = {}


def flushed_ms(fn, reps: int, warmup: int = 2) -> float:
    """Median ms of ``fn`` over ``reps`` calls, L2 flushed (a write of more than L2) before
    each, timed by CUDA events around the call alone."""
    buf = _FLUSH.get("buf")
    if buf is None:
        buf = _FLUSH["buf"] = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        buf.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def turns_ms(calls: dict, reps: int, turns: int = 3) -> dict:
    """Each named call's median over ``turns`` rounds of :func:`flushed_ms` (ms), the calls
    taking turns, their order reversed every other round: a card that heats up over a
    round slows the calls at its end alike.

    >>> turns_ms({}, 5)
    {}
    """
    times: dict = {name: [] for name in calls}
    for turn in range(turns):
        for name in list(calls) if turn % 2 == 0 else list(calls)[::-1]:
            times[name].append(flushed_ms(calls[name], reps))
    return {name: statistics.median(v) for name, v in times.items()}


def reps_for(fn) -> int:
    """Repetitions for a median: about 30 ms of calls, 5..25 of them."""
    fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    return max(5, min(25, int(30 / max(s.elapsed_time(e), 1e-3))))


def pair_ms(ours, theirs, rounds: int = 3) -> tuple[float, float]:
    """Medians over ``rounds`` interleaved rounds (the first to run alternating)."""
    reps = reps_for(ours)
    mine, peer = [], []
    for r in range(rounds):
        if r % 2 == 0:
            mine.append(flushed_ms(ours, reps))
            peer.append(flushed_ms(theirs, reps))
        else:
            peer.append(flushed_ms(theirs, reps))
            mine.append(flushed_ms(ours, reps))
    return statistics.median(mine), statistics.median(peer)


def pick_of(A, B) -> dict:
    """What cutemma.gemm runs for these operands, and the cost model's prediction (s)."""
    from cutemma.kernels.dispatch import which_kernel

    c = which_kernel(A, B)
    pick = {"family": c.family, "config": c.config.name, "swap": bool(c.swap)}
    predicted = getattr(c, "predicted_s", None)
    if predicted is not None:
        pick["predicted_us"] = round(predicted * 1e6, 2)
    return pick


def sweep_row(combo: str, m: int, n: int, k: int) -> dict:
    """One measured row: cutemma against its peer on fresh operands, checked first."""
    import cutemma

    A, B, out, peer = operands(combo, m, n, k)
    row = {"combo": combo, "dtype": combo[:4], "m": m, "n": n, "k": k}
    try:
        ref = peer(torch.empty_like(out))
        cutemma.gemm(A, B, out=out)
        torch.cuda.synchronize()
        err = float((out.float() - ref.float()).norm() / ref.float().norm())
        row["rel_err_vs_peer"] = err
        row["pick"] = pick_of(A, B)
        ours, theirs = pair_ms(lambda: cutemma.gemm(A, B, out=out), lambda: peer(out))
    except Exception as exc:  # recorded, so a row that cannot run is seen, not dropped
        row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        return row
    row.update(cutemma_us=round(ours * 1e3, 2), peer_us=round(theirs * 1e3, 2),
               ratio=round(theirs / ours, 4))  # fmt: skip
    if "predicted_us" in row["pick"]:
        row["model_error"] = round(row["pick"]["predicted_us"] / row["cutemma_us"] - 1, 4)
    return row


def _geomean(v: list[float]) -> float:
    return round(math.exp(statistics.fmean(math.log(x) for x in v)), 4)


def summarise(rows: list[dict]) -> dict:
    """Per combo: rows, geomean, share of rows >= 0.97, min, the worst 10 with their picks,
    and the cost model's median absolute error (predicted over measured, minus 1)."""
    out = {}
    for combo in COMBOS:
        got = [r for r in rows if r["combo"] == combo and "ratio" in r]
        if not got:
            continue
        ratios = [r["ratio"] for r in got]
        errs = [abs(r["model_error"]) for r in got if "model_error" in r]
        worst = sorted(got, key=lambda r: r["ratio"])[:10]
        out[combo] = {
            "rows": len(got),
            "failed": sum(1 for r in rows if r["combo"] == combo and "error" in r),
            "geomean": _geomean(ratios),
            "share_at_least_0.97": round(sum(x >= 0.97 for x in ratios) / len(ratios), 4),
            "min": min(ratios),
            "model_error": round(statistics.median(errs), 4) if errs else None,
            "worst": [{k: r[k] for k in ("m", "n", "k", "ratio", "pick")} for r in worst],
        }
    return out


def compile_shard(count: int, seed: int, shard: int, shards: int) -> None:
    """Run this shard's calls once (uninitialised operands): their kernels land in the disk
    cache, so the timing process compiles nothing. ``count`` -1: :func:`named_shapes`."""
    import cutemma

    shapes = named_shapes() if count < 0 else draw_shapes(count, seed)  # -1: the named ones
    for i, (m, n, k) in enumerate(shapes):
        for j, combo in enumerate(COMBOS):
            if (3 * i + j) % shards != shard:
                continue
            try:
                A, B, out, _ = operands(combo, m, n, k, fill=False)
                cutemma.gemm(A, B, out=out)
                torch.cuda.synchronize()
            except Exception as exc:  # seen again (and recorded) when timed
                print(f"compile {combo} {m} {n} {k}: {type(exc).__name__}: {exc}"[:300])
            torch.cuda.empty_cache()


def precompile(count: int, seed: int, shards: int) -> None:
    """:func:`compile_shard` in ``shards`` processes side by side."""
    import subprocess
    import sys

    cmd = [sys.executable, __file__, "compile", str(count), str(seed)]
    procs = [subprocess.Popen([*cmd, str(i), str(shards)]) for i in range(shards)]
    for p in procs:
        p.wait()


def named_shapes() -> list[tuple[int, int, int]]:
    """The shapes bench/gemm.py names: the inference table's (N, K) at M = 1..8192 and the
    squares 1024^3..8192^3 (``--named``)."""
    from gemm_inference import SHAPES_NK, TOKENS

    return [(m, n, k) for n, k in SHAPES_NK for m in TOKENS] + [
        (s, s, s) for s in (1024, 2048, 3072, 4096, 6144, 8192)
    ]


def run_sweep(
    count: int,
    seed: int,
    combos=COMBOS,
    shards: int = 8,
    shapes: list | None = None,
) -> dict:
    """The sweep's rows and summary (see the module doc), its kernels compiled first in
    ``shards`` processes; ``shapes``: :func:`named_shapes` instead of drawn ones."""
    if shards > 1:
        precompile(-1 if shapes is not None else count, seed, shards)
    shapes = shapes if shapes is not None else draw_shapes(count, seed)
    rows = []
    for i, (m, n, k) in enumerate(shapes):
        for combo in combos:
            row = sweep_row(combo, m, n, k)
            rows.append(row)
            torch.cuda.empty_cache()
            tag = f"{row['ratio']:.3f} {row['pick']['config']}" if "ratio" in row else row["error"]
            print(f"[{i + 1}/{len(shapes)}] {combo:<8} {m:>6} {n:>6} {k:>6} {tag}", flush=True)
    return {"seed": seed, "shapes": len(shapes), "rows": rows, "summary": summarise(rows)}


if __name__ == "__main__":
    import os
    import sys

    # a compile shard is its own process: cutemma from this checkout, as its parent found it
    # (without it every shard failed to import and the parent compiled every kernel alone)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if sys.argv[1:2] == ["compile"]:
        compile_shard(*map(int, sys.argv[2:6]))
