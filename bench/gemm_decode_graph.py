"""A decode step as a server runs it (issue 33): the projections of several layers of a
model, distinct weights far larger than L2, captured in one CUDA graph and replayed.

    python bench/gemm_decode_graph.py --out FILE [--models llama-3-8b,llama-3-70b]
                                      [--tokens 1,2,4,...] [--dtypes bf16,e4m3]

Each layer has its four projections (QKV, attention out, gate+up, down) with nn.Linear
weights (B K-major: ``x @ W.t()``); the graph runs every layer's four in order, each on
its own activation, cutemma.gemm against torch.matmul (bf16) or torch._scaled_mm (e4m3,
per-tensor scales, bf16 out); the two graphs are replayed in turn, ROUNDS rounds, medians.
A row: the model, dtype, tokens (M), the ratio (cuBLAS time over cutemma's), and the
weights' bytes read per second over the device-to-device copy bandwidth of the same run
(bytes read + written over the time of one 1 GiB copy).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from gemm_inference import captured, graph_call_us, interleaved_replays_ms  # noqa: E402
from gemm_sweep import MODELS  # noqa: E402

TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
# layers per model: enough that the weights are ~3.5 GB (70x the H200's 60 MB of L2)
LAYERS = {"llama-3-8b": 8, "llama-3-70b": 2}
REPLAYS = 10
# a row's rounds: each replays cutemma's graph and then cuBLAS's (interleaved_replays_ms).
# Timed one after the other, the same kernel's graph moved by up to 10% between two runs
# minutes apart (bench/results/raw/decode-graph-vs-flushed-h200.json)
ROUNDS = 20


def copy_tbps() -> float:
    """TB/s of a 1 GiB device-to-device copy, counting bytes read and written."""
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)
    times = []
    for _ in range(10):  # eager, between CUDA events (a graph's one memcpy node ran at
        # 2.7 TB/s against the 4.3 of an eager copy: bench/results/decode-graph-h200.json)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        dst.copy_(src)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e-3)
    return 2 * src.numel() / (sorted(times)[len(times) // 2] * 1e12)


def replayed_s(calls, replays: int = REPLAYS) -> float:
    """Median seconds of one replay of a CUDA graph of ``calls`` (each warmed outside it):
    bench/gemm_inference.py's graph timing, per replay."""
    return graph_call_us(lambda c: c(), calls, replays) * len(calls) * 1e-6


def steps_s(*call_lists, rounds: int = ROUNDS) -> list[float]:
    """Median seconds of one replay of each list of calls' CUDA graph, the graphs replayed
    in turn for ``rounds`` rounds (gemm_inference.interleaved_replays_ms)."""
    graphs = [captured(lambda c: c(), calls) for calls in call_lists]
    return [ms * 1e-3 for ms in interleaved_replays_ms(graphs, rounds)]


def weights(model: str, dtype: str) -> list:
    """Every layer's projection weights, (N, K) row-major (nn.Linear), random."""
    out = []
    for _ in range(LAYERS[model]):
        for n, k in MODELS[model]:
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
            out.append(w.to(torch.float8_e4m3fn) if dtype == "e4m3" else w)
    return out


def step(model: str, dtype: str, m: int, ws: list, copy: float) -> dict:
    """One row: the decode step of ``m`` tokens, cutemma's graph against cuBLAS's."""
    import cutemma

    fp8 = dtype == "e4m3"
    one = torch.ones((), device="cuda")
    acts = [torch.randn(m, w.shape[1], device="cuda").to(w.dtype) for w in ws]
    outs = [torch.empty(m, w.shape[0], device="cuda", dtype=torch.bfloat16) for w in ws]

    def ours(i):
        return lambda: cutemma.gemm(acts[i], ws[i].t(), out=outs[i])

    def theirs(i):
        if fp8:
            return lambda: torch._scaled_mm(acts[i], ws[i].t(), one, one, out_dtype=torch.bfloat16)
        return lambda: torch.matmul(acts[i], ws[i].t(), out=outs[i])

    ref = theirs(0)()
    ours(0)()
    err = float((outs[0].float() - ref.float()).norm() / ref.float().norm())
    calls = range(len(ws))
    t_ours, t_peer = steps_s([ours(i) for i in calls], [theirs(i) for i in calls])
    nbytes = sum(w.numel() * w.element_size() for w in ws)
    row = {"model": model, "dtype": dtype, "m": m, "ratio": round(t_peer / t_ours, 4),
           "cutemma_us": round(t_ours * 1e6, 1), "peer_us": round(t_peer * 1e6, 1),
           "weight_bytes": nbytes, "weight_read_tbps": round(nbytes / t_ours / 1e12, 3),
           "weight_read_of_copy": round(nbytes / t_ours / 1e12 / copy, 4),
           "peer_weight_read_of_copy": round(nbytes / t_peer / 1e12 / copy, 4),
           "rel_err_vs_peer": err}  # fmt: skip
    print(f"{model} {dtype} m={m:>3}: {row['ratio']:.3f}x, weights at "
          f"{row['weight_read_of_copy']:.3f} of copy (peer {row['peer_weight_read_of_copy']:.3f})",
          flush=True)  # fmt: skip
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(LAYERS))
    ap.add_argument("--tokens", default=",".join(map(str, TOKENS)))
    ap.add_argument("--dtypes", default="bf16,e4m3")
    args = ap.parse_args()
    copy = copy_tbps()
    print(f"copy bandwidth {copy:.3f} TB/s (read + write)", flush=True)
    rows = []
    for model in args.models.split(","):
        for dtype in args.dtypes.split(","):
            ws = weights(model, dtype)
            rows += [step(model, dtype, int(m), ws, copy) for m in args.tokens.split(",")]
            del ws
            torch.cuda.empty_cache()
    result = {"device": torch.cuda.get_device_name(), "copy_tbps": round(copy, 3),
              "layers": LAYERS, "rounds": ROUNDS, "rows": rows}  # fmt: skip
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
