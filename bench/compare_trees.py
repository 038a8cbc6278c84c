"""Two source trees of cutemma on one GPU, in one run: the same rows timed by each, each
against its peer in the same process, rounds alternating between the trees (issue 32,
acceptance 6: the rebuilt call path keeps the built-in speed).

    python bench/compare_trees.py OLD_TREE NEW_TREE OUT.json [--rounds 2]

Rows: the inference table's projections (N, K) of a 70B-class model at M = 1, 16, 128,
1024, 8192 and the squares 1024..8192, bf16 against torch.matmul and e4m3 (B column-major,
bf16 out) against torch._scaled_mm; each ratio is the peer's time over cutemma's (triton's
do_bench medians, L2 flushed before every call). Also each tree's host time per repeated
call (the fast path: sm90, sm80 with a config, a swapped decode call, a fused epilogue).
The summary gives, per dtype, the geometric mean of new ratio / old ratio and its worst
row: a rebuild that changed no kernel should sit within the run's noise of 1.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time

NK = [(10240, 8192), (8192, 28672), (57344, 8192), (8192, 8192)]
TOKENS = [1, 16, 128, 1024, 8192]
SQUARES = [1024, 2048, 4096, 8192]

CHILD = r"""
import json, sys, time
import torch, triton
import cutemma
rows = json.loads(sys.argv[1])
gen = torch.Generator(device="cuda").manual_seed(0)
def mats(m, n, k, dt):
    a = torch.randn(m, k, device="cuda", generator=gen)
    b = torch.randn(n, k, device="cuda", generator=gen)
    if dt == "bf16":
        return a.bfloat16(), b.bfloat16().t().contiguous()
    return a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn).t()
one = torch.ones((), device="cuda")
out = []
for m, n, k, dt in rows:
  try:
    A, B = mats(m, n, k, dt)
    D = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    if dt == "bf16":
        ours, peer = (lambda: cutemma.gemm(A, B, out=D)), (lambda: torch.matmul(A, B, out=D))
    else:
        ours = lambda: cutemma.gemm(A, B, out=D)
        peer = lambda: torch._scaled_mm(A, B, one, one, out_dtype=torch.bfloat16)
    ours(); peer(); torch.cuda.synchronize()
    t_o = triton.testing.do_bench(ours, warmup=10, rep=40, return_mode="median")
    t_p = triton.testing.do_bench(peer, warmup=10, rep=40, return_mode="median")
    out.append({"m": m, "n": n, "k": k, "dtype": dt, "us": t_o * 1e3, "peer_us": t_p * 1e3,
                "ratio": t_p / t_o})
  except Exception as exc:  # a peer that cannot run a row: noted, the row left out
    out.append({"m": m, "n": n, "k": k, "dtype": dt, "skipped": repr(exc)[:200]})
def host_us(fn, calls=3000):
    # the host time of each call alone: the queue is drained every 50 calls, so a launch
    # never waits for the GPU (a full queue would time the kernels instead)
    for _ in range(200): fn()
    torch.cuda.synchronize(); total = 0.0
    for i in range(calls):
        t = time.perf_counter(); fn(); total += time.perf_counter() - t
        if i % 50 == 49: torch.cuda.synchronize()
    torch.cuda.synchronize(); return total / calls * 1e6
from cutemma.kernels import GemmConfig
a, b = torch.randn(128, 128, device="cuda").bfloat16(), torch.randn(128, 128, device="cuda").bfloat16()
d = torch.empty(128, 128, device="cuda", dtype=torch.bfloat16)
x, w = torch.randn(16, 256, device="cuda").bfloat16(), torch.randn(256, 512, device="cuda").bfloat16()
y = torch.empty(16, 512, device="cuda", dtype=torch.bfloat16)
bias = torch.randn(128, device="cuda")
host = {"sm90": host_us(lambda: cutemma.gemm(a, b, out=d)),
        "sm90_new_out": host_us(lambda: cutemma.gemm(a, b)),
        "sm80_config": host_us(lambda: cutemma.gemm(a, b, out=d, config=GemmConfig(64, 64, 32))),
        "decode_swap": host_us(lambda: cutemma.gemm(x, w, out=y)),
        "epilogue": host_us(lambda: cutemma.gemm(a, b, out=d, epilogue="bias", bias=bias)),
        "torch_matmul": host_us(lambda: torch.matmul(a, b, out=d))}
print("RESULT", json.dumps({"rows": out, "host_us": host}))
"""


def rows() -> list[tuple]:
    r = [(m, n, k, dt) for dt in ("bf16", "e4m3") for n, k in NK for m in TOKENS]
    return r + [(s, s, s, dt) for dt in ("bf16", "e4m3") for s in SQUARES]


def run_tree(tree: str, todo: list) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, PYTHONUNBUFFERED="1")
    p = subprocess.run([sys.executable, "-c", CHILD, json.dumps(todo)], env=env,
                       capture_output=True, text=True, cwd=tree)  # fmt: skip
    line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    if p.returncode or not line:
        raise SystemExit(f"{tree}: rc {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return json.loads(line[-1][7:])


def summary(old: list, new: list) -> dict:
    """Per dtype: the geometric mean of new/old ratio over the rows, and the worst row."""
    out = {}
    for dt in ("bf16", "e4m3"):
        pairs = [
            (o, n) for o, n in zip(old, new) if o["dtype"] == dt and "ratio" in o and "ratio" in n
        ]
        rel = [n["ratio"] / o["ratio"] for o, n in pairs]
        worst = min(range(len(rel)), key=rel.__getitem__)
        o, n = pairs[worst]
        out[dt] = {
            "rows": len(rel),
            "geomean_new_over_old": round(math.exp(sum(map(math.log, rel)) / len(rel)), 4),
            "worst": {"m": o["m"], "n": o["n"], "k": o["k"], "new_over_old": round(rel[worst], 4),
                      "old_ratio": round(o["ratio"], 4), "new_ratio": round(n["ratio"], 4)},
            "geomean_ratio_old": round(math.exp(sum(math.log(o["ratio"]) for o, _ in pairs)
                                                / len(pairs)), 4),
            "geomean_ratio_new": round(math.exp(sum(math.log(n["ratio"]) for _, n in pairs)
                                                / len(pairs)), 4),
        }  # fmt: skip
    return out


def main() -> None:
    old_tree, new_tree, path = sys.argv[1:4]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 2
    todo = rows()
    results = {"old": [], "new": []}
    t0 = time.time()
    run_tree(new_tree, todo)  # compile every kernel (both trees: one cubin cache) and warm up
    for r in range(rounds):  # alternate which tree goes first
        order = (("old", old_tree), ("new", new_tree))[:: 1 if r % 2 == 0 else -1]
        for name, tree in order:
            results[name].append(run_tree(tree, todo))
            print(f"round {r} {name} done at {time.time() - t0:.0f} s", flush=True)

    def best(runs):  # per row, the median over rounds of the ratio and of the times
        merged = []
        for i, row in enumerate(runs[0]["rows"]):
            if any("ratio" not in run["rows"][i] for run in runs):
                merged.append(row)
                continue
            ratios = sorted(run["rows"][i]["ratio"] for run in runs)
            us = statistics.median(run["rows"][i]["us"] for run in runs)
            merged.append(dict(row, ratio=statistics.median(ratios), ratios=ratios, us=us))
        return merged

    old, new = best(results["old"]), best(results["new"])
    host = {name: {k: round(statistics.median(run["host_us"][k] for run in results[name]), 2)
                   for k in results[name][0]["host_us"]} for name in results}  # fmt: skip
    import torch

    doc = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "old_tree": _rev(old_tree),
        "new_tree": _rev(new_tree),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "method": f"{rounds} rounds per tree, alternating which goes first, after a warm-up "
        "process; do_bench medians, L2 flushed; ratio = peer time / cutemma time; per row the "
        "median ratio over rounds; host us: each call timed alone (queue drained every 50 "
        "calls), the median over rounds",
        "summary": summary(old, new),
        "host_us_per_repeated_call": host,
        "rows": [{"old": o, "new": n} for o, n in zip(old, new)],
    }
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print(json.dumps(doc["summary"], indent=1))
    print(json.dumps(host))


def _rev(tree: str) -> str:
    try:
        return subprocess.check_output(["git", "-C", tree, "rev-parse", "--short", "HEAD"],
                                       text=True).strip()  # fmt: skip
    except Exception:
        return os.environ.get("CUTEMMA_TREE_REV_" + os.path.basename(tree.rstrip("/")), "unknown")


if __name__ == "__main__":
    main()
