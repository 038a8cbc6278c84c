"""The inference table of bench/gemm.py (issue 21): transformer projection shapes at every
token count, cutemma.gemm against its peer in the same process, and the first call of a
new process.

Shapes (N, K) of a 70B-class model's projections: QKV (10240, 8192), the MLP's down
projection (8192, 28672), gate+up (57344, 8192), and the attention output projection
(8192, 8192); M (tokens) 1, 2, 4, ..., 8192. bf16 against torch.matmul (cuBLAS), e4m3
(B column-major, bf16 out) against torch._scaled_mm (cuBLASLt, per-tensor scales). Each
row names the family and config (schedule) cutemma ran. Rows with M <= 16 stream B: they
also report the bandwidth of reading B once (bytes of B over the time) for both sides,
beside the device-to-device copy bandwidth measured in the same run (bytes read + written
over the time of one large copy: the card's practical limit), and beside what a kernel that
only reads B's bytes reaches, timed the same ways (bench/read_ceiling.py).

Those rows are timed twice. As every row (L2 flushed before each call) the flush leaves
L2 full of dirty lines that the stream of B must write back first. And as a decode step
runs them (:func:`graph_read_us`): one CUDA graph of calls over distinct copies of the
weights, more bytes than L2 holds, nothing between the calls, as a model replays one layer
after another; the time of a call is the replay's over the number of calls.

Run alone (a 10-minute device call holds it):

    python bench/gemm.py --inference-only --out bench/results/inference-h100.json
"""

from __future__ import annotations

import math
import statistics
import subprocess
import sys

import torch

SHAPES_NK = [(10240, 8192), (8192, 28672), (57344, 8192), (8192, 8192)]
TOKENS = [2**i for i in range(14)]  # 1 .. 8192
STREAM_M = 16  # rows with M <= this report B's read bandwidth
GRAPH_WEIGHT_BYTES = 512 << 20  # a decode graph's weights: ten times the H100's 50 MB of L2
GRAPH_REPLAYS = 20
# rows from this many tokens up are power/clock bound and take more interleaved rounds:
# with 3, the same config's ratio moved by up to 9% between two runs (run 11 against
# session 12's run 3: (1024, 10240, 8192) 0.935 -> 1.021, (1024, 57344, 8192) 1.022 -> 0.938)
LARGE_M = 128
LARGE_ROUNDS = 7


def copy_bandwidth(median_ms, nbytes: int = 1 << 30) -> float:
    """TB/s of a device-to-device copy of ``nbytes`` (counting bytes read and written)."""
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src), 5, 20)
    return 2 * nbytes / (ms * 1e-3) / 1e12


def _config_of(A, B):
    """(family, config name, schedule) of what cutemma.gemm runs for these operands."""
    from cutemma.kernels import which_kernel

    c = which_kernel(A, B)
    if c.family == "sm80":
        return "sm80", c.config.name, "mma.sync"
    if c.swap:
        return (
            "sm90",
            c.config.name,
            "swap-AB" + (", stream-K" * c.config.stream_k) + " (cooperative)",
        )
    return "sm90", c.config.name, c.config.schedule


def _operand_b(dtype: str, n: int, k: int):
    if dtype == "e4m3":  # K-major (column-major B), as _scaled_mm and sm90 fp8 take it
        return torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
    return torch.randn(k, n, device="cuda", dtype=torch.bfloat16)


def one_row(
    dtype: str, m: int, B, measure_pair, rounds: int, copy_tbps: float, ceiling: dict | None = None
) -> dict:
    """One row: error against the peer, both times, and B's read bandwidth for M <= 16
    (beside ``ceiling``, :func:`read_ceiling.read_ceiling` of B's bytes, when given)."""
    import cutemma

    k, n = B.shape
    fp8 = dtype == "e4m3"
    A = torch.randn(m, k, device="cuda")
    A = A.to(torch.float8_e4m3fn) if fp8 else A.to(torch.bfloat16)
    one = torch.ones((), device="cuda")

    def peer_of(W, o):
        if fp8:
            return torch._scaled_mm(A, W, one, one, out_dtype=o.dtype)
        return torch.matmul(A, W, out=o)

    def peer(o):
        return peer_of(B, o)

    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    row = {"dtype": dtype, "m": m, "n": n, "k": k,
           "peer": "torch._scaled_mm" if fp8 else "torch.matmul"}  # fmt: skip
    try:
        ref = peer(torch.empty_like(out))
        cutemma.gemm(A, B, out=out)
        torch.cuda.synchronize()
        row["rel_err_vs_peer"] = float((out.float() - ref.float()).norm() / ref.float().norm())
        row["family"], row["config"], row["schedule"] = _config_of(A, B)
        ours, theirs = measure_pair(lambda: cutemma.gemm(A, B, out=out), lambda: peer(out), rounds)
    except Exception as exc:  # a peer that cannot run a case is noted, not fatal
        row["skipped"] = f"{type(exc).__name__}: {exc}"[:300]
        print(f"{dtype} {m} {n} {k}: skipped ({row['skipped']})", flush=True)
        return row
    flop = 2.0 * m * n * k
    row.update(cutemma_us=round(ours * 1e3, 2), peer_us=round(theirs * 1e3, 2),
               ratio=round(theirs / ours, 4), cutemma_tflops=round(flop / ours / 1e9, 1),
               peer_tflops=round(flop / theirs / 1e9, 1))  # fmt: skip
    bw = ""
    if m <= STREAM_M:
        b_bytes = n * k * B.element_size()
        row["b_read_tbps"] = round(b_bytes / (ours * 1e-3) / 1e12, 3)
        row["peer_b_read_tbps"] = round(b_bytes / (theirs * 1e-3) / 1e12, 3)
        row["b_read_of_copy"] = round(row["b_read_tbps"] / copy_tbps, 3)
        bw = f" B {row['b_read_tbps']:.2f} TB/s (peer {row['peer_b_read_tbps']:.2f})"
        ours_g, theirs_g = graph_read_us(A, B, out, peer_of)
        row["graph_cutemma_us"], row["graph_peer_us"] = round(ours_g, 2), round(theirs_g, 2)
        row["b_read_graph_tbps"] = round(b_bytes / (ours_g * 1e-6) / 1e12, 3)
        row["peer_b_read_graph_tbps"] = round(b_bytes / (theirs_g * 1e-6) / 1e12, 3)
        row["b_read_graph_of_copy"] = round(row["b_read_graph_tbps"] / copy_tbps, 3)
        bw += f", in a graph {row['b_read_graph_tbps']:.2f} (peer {row['peer_b_read_graph_tbps']:.2f})"
        if ceiling is not None:
            row["b_read_ceiling_of_copy"] = round(ceiling["read_tbps"] / copy_tbps, 3)
            row["b_read_graph_ceiling_of_copy"] = round(ceiling["read_graph_tbps"] / copy_tbps, 3)
    print(f"{dtype} {m:>5} {n:>6} {k:>6} {row['family']} {row['config']:<24} "
          f"{row['ratio']:.3f}{bw}", flush=True)  # fmt: skip
    return row


def captured(call, args) -> torch.cuda.CUDAGraph:
    """One CUDA graph of ``call(a)`` for each ``a`` in ``args`` (every launch warmed outside
    the capture first, on a side stream), replayed once."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for a in args:
            call(a)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for a in args:
            call(a)
    graph.replay()
    torch.cuda.synchronize()
    return graph


def replay_ms(graph: torch.cuda.CUDAGraph) -> float:
    """Milliseconds of one replay of ``graph``, between CUDA events."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def interleaved_replays_ms(graphs: list, rounds: int) -> list[float]:
    """Median milliseconds of one replay of each of ``graphs``, timed in ``rounds`` rounds
    that replay each graph once in turn: drift in the GPU's clocks and power over the run
    lands on every graph alike, not on whichever was timed last."""
    times = [[] for _ in graphs]
    for _ in range(rounds):
        for g, t in zip(graphs, times):
            t.append(replay_ms(g))
    return [statistics.median(t) for t in times]


def graph_call_us(call, args, replays: int = GRAPH_REPLAYS) -> float:
    """Median microseconds per call of ``call(a)`` for each ``a`` in ``args``, captured in one
    CUDA graph (:func:`captured`), replayed ``replays`` times."""
    graph = captured(call, args)
    return statistics.median(replay_ms(graph) for _ in range(replays)) * 1e3 / len(args)


def graph_read_us(A, B, out, peer_of) -> tuple[float, float]:
    """Microseconds per call of cutemma.gemm and of its peer (``peer_of(W, out)``) as a
    decode step runs them: :func:`graph_call_us` over R copies of the weights ``B`` (R
    copies hold at least GRAPH_WEIGHT_BYTES, at least 4)."""
    import cutemma

    reps = max(4, -(-GRAPH_WEIGHT_BYTES // (B.numel() * B.element_size())))
    weights = [B.clone() for _ in range(reps)]  # same strides (a dense view clones as is)
    ours = graph_call_us(lambda W: cutemma.gemm(A, W, out=out), weights)
    return ours, graph_call_us(lambda W: peer_of(W, out), weights)


def inference_rows(measure_pair, median_ms, rounds: int, dtypes=("bf16", "e4m3")) -> dict:
    """Every (dtype, (N, K), M) row; ``measure_pair(ours, theirs, rounds)`` -> (ms, ms),
    with ``rounds`` rounds below LARGE_M tokens and at least LARGE_ROUNDS from there."""
    copy_tbps = copy_bandwidth(median_ms)
    torch.cuda.empty_cache()
    print(f"device-to-device copy: {copy_tbps:.2f} TB/s (read + write)", flush=True)
    rows, ceilings = [], {}
    for dtype in dtypes:
        for n, k in SHAPES_NK:
            B = _operand_b(dtype, n, k)
            ceiling = _ceiling(B.numel() * B.element_size(), median_ms, ceilings)
            rows += [
                one_row(dtype, m, B, measure_pair, row_rounds(m, rounds), copy_tbps, ceiling)
                for m in TOKENS
            ]
            B = None
            torch.cuda.empty_cache()
    from ratio_bound import geomean_bounds

    summary = summarise(rows)
    for dtype, bound in geomean_bounds(rows, copy_tbps).items():
        summary[dtype]["geomean_ratio_bound"] = bound  # every row at the run's best rates
    return {
        "copy_tbps": round(copy_tbps, 3),
        "read_ceilings": list(ceilings.values()),
        "rows": rows,
        "summary": summary,
    }


def row_rounds(m: int, rounds: int) -> int:
    """Interleaved rounds of a row of ``m`` tokens.

    >>> row_rounds(16, 3), row_rounds(128, 3)
    (3, 7)
    """
    return max(rounds, LARGE_ROUNDS) if m >= LARGE_M else rounds


def _ceiling(nbytes: int, median_ms, known: dict) -> dict:
    """:func:`read_ceiling.read_ceiling` of ``nbytes`` (measured once per size), its graph
    over as many copies as a row's graph uses."""
    from read_ceiling import read_ceiling

    if nbytes not in known:
        replicas = max(4, -(-GRAPH_WEIGHT_BYTES // nbytes))
        known[nbytes] = read_ceiling(nbytes, median_ms, graph_call_us, replicas)
        torch.cuda.empty_cache()
        c = known[nbytes]
        print(f"read ceiling {nbytes >> 20} MB: {c['read_tbps']:.2f} TB/s flushed, "
              f"{c['read_graph_tbps']:.2f} in a graph", flush=True)  # fmt: skip
    return known[nbytes]


def summarise(rows: list[dict]) -> dict:
    """Per dtype: geometric mean of the ratios, the worst row, rows under 0.97, and B's read
    bandwidth as a fraction of the copy bandwidth (min over the M <= 16 rows), L2 flushed
    and in a decode graph, with the M <= 16 rows whose read ceiling (a kernel that only
    reads B) is itself under 85% of the copy, timed each way."""
    out = {}
    for dtype in sorted({r["dtype"] for r in rows}):
        rs = [r for r in rows if r["dtype"] == dtype and "ratio" in r]
        if not rs:
            continue
        worst = min(rs, key=lambda r: r["ratio"])
        stream = [r["b_read_of_copy"] for r in rs if "b_read_of_copy" in r]
        graph = [r["b_read_graph_of_copy"] for r in rs if "b_read_graph_of_copy" in r]
        out[dtype] = {
            "rows": len(rs),
            "geomean_ratio": round(math.exp(statistics.fmean(math.log(r["ratio"]) for r in rs)), 4),
            "worst": {k: worst[k] for k in ("m", "n", "k", "ratio", "config")},
            "rows_below_0.97": sum(r["ratio"] < 0.97 for r in rs),
            "min_b_read_of_copy": min(stream) if stream else None,
            "min_b_read_graph_of_copy": min(graph) if graph else None,
            "rows_whose_read_ceiling_is_below_0.85": {
                way: sum(r.get(f"b_read{tag}_ceiling_of_copy", 1.0) < 0.85 for r in rs)
                for way, tag in (("flushed", ""), ("graph", "_graph"))
            },
        }
    return out


_FIRST_CALL = """
import sys
import time
import torch
A = torch.randn(512, 1024, device="cuda", dtype=torch.bfloat16)
B = torch.randn(1024, 768, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
before = set(sys.modules)
t0 = time.perf_counter()
import cutemma
t1 = time.perf_counter()
D = cutemma.gemm(A, B)
torch.cuda.synchronize()
t2 = time.perf_counter()
ok = float((D.float() - (A.float() @ B.float())).norm() / (A.float() @ B.float()).norm()) < 1e-2
# after the timer: what compiling the sources of the cutemma modules the call imported takes
# (the time a process without their bytecode spends on top)
new = [m for m in set(sys.modules) - before if m.split(".")[0] == "cutemma"]
t3 = time.perf_counter()
for m in new:
    f = getattr(sys.modules[m], "__file__", None)
    if f and f.endswith(".py"):
        compile(open(f, encoding="utf-8").read(), f, "exec")
t4 = time.perf_counter()
print(f"{(t1 - t0) * 1e3:.2f} {(t2 - t1) * 1e3:.2f} {(t2 - t0) * 1e3:.2f} {int(ok)} "
      f"{(t4 - t3) * 1e3:.2f} {len(new)}")
"""


def _bytecode_env() -> tuple[dict, str]:
    """The environment of the first-call processes and what it does to Python's bytecode
    cache: cutemma's modules get their bytecode written by the first (filling) process and
    read by the others, as an installed package has it (pip compiles a wheel's modules at
    install); an environment that turns writing off (PYTHONDONTWRITEBYTECODE) would make every
    process compile cutemma's sources again, Python's cost rather than cutemma's: each run
    also reports that cost (compile_ms)."""
    import os
    import tempfile

    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    note = "written by the first process, read by the others"
    from importlib.util import find_spec

    pkg = os.path.dirname(find_spec("cutemma").origin)  # found, not imported: nothing warmed
    if not os.access(pkg, os.W_OK) and "PYTHONPYCACHEPREFIX" not in env:
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="cutemma-pyc-")
        note += " (under PYTHONPYCACHEPREFIX: the package folder is read-only)"
    return env, note


def first_call_ms(tries: int = 5, bytecode: bool = True) -> dict:
    """A new process (torch imported, CUDA started, inputs on the GPU) until its first
    cutemma.gemm result is ready, the kernel already in the disk cache: import cutemma, the
    call (dispatch, kernel from the cache, module load, tensor maps, launch) and their sum.
    The first try fills the cache (and cutemma's bytecode, :func:`_bytecode_env`; with
    ``bytecode`` False the processes run in this environment as it is); the median of the
    others is reported, with ``compile_ms``: compiling the sources of the cutemma modules the
    call imported, measured after the call in the same process."""
    import os
    from importlib.util import cache_from_source, find_spec

    env, note = _bytecode_env() if bytecode else (dict(os.environ), "as the environment has it")
    probe = cache_from_source(find_spec("cutemma.kernels.dispatch").origin)
    present = os.path.exists(probe)  # an earlier process left cutemma's bytecode here
    runs = []
    for _ in range(tries + 1):
        r = subprocess.run([sys.executable, "-c", _FIRST_CALL], capture_output=True, text=True,
                           env=env)  # fmt: skip
        if r.returncode:
            return {"error": r.stderr[-800:]}
        imp, call, total, ok, comp, mods = r.stdout.split()[-6:]
        runs.append({"import_ms": float(imp), "call_ms": float(call), "total_ms": float(total),
                     "correct": ok == "1", "compile_ms": float(comp), "modules": int(mods)})  # fmt: skip
    cached = runs[1:]
    med = {k: round(statistics.median(r[k] for r in cached), 2)
           for k in ("import_ms", "call_ms", "total_ms", "compile_ms")}  # fmt: skip
    return {"fill": runs[0], "cached_median": med, "cached_runs": cached,
            "all_correct": all(r["correct"] for r in runs), "bytecode": note,
            "env_dont_write_bytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
            "bytecode_present_at_start": present}  # fmt: skip
