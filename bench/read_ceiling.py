"""What a kernel that only reads B's bytes reaches: acceptance 2's ceiling, measured in the
inference table's own run (bench/gemm_inference.py) and timed the same two ways as its
rows with M <= 16 (L2 flushed before every call; in a CUDA graph over distinct copies).

A GEMM with a few tokens is a stream of B, so a kernel that reads B's bytes and does
nothing else shows how fast such a GEMM can be on this card. The readers are CUDA kernels
(grid-stride 16-byte non-coherent loads, several in flight per thread, 1-4 CTAs per SM),
each with and without an L2 evict-first policy; the ceiling is the best of them. Triton's
L2 flush (a zero_ of 256 MB) leaves L2 full of dirty lines, which a stream read after it
must write back first: timed that way, a short stream reads slower than in a graph. On an
H100 (bench/results/inference-h100.json, session 11): flushed, 0.76 of the 1 GiB copy at
64 MB, 0.80 at 80 MB, 0.85 at 128 MB, 0.97 at 896 MB; in a graph 0.94-1.05.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import torch

READ_SOURCE = r"""
// every thread reads UNROLL 16-byte words a grid stride apart per step, all in flight at
// once (the non-coherent path, no L1 allocation), and folds them into one word; EF: under
// an L2 evict-first policy (as the GEMM's decode loads of B are: pick.EVICT_FIRST_MAX_BYTES),
// so the lines a flush left dirty are not the ones L2 gives up
template <int UNROLL, bool EF>
__device__ void read_all(const uint4* __restrict__ x, long long n, unsigned* out) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long pol = 0;
  if (EF) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  unsigned acc = 0;
  for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
    uint4 v[UNROLL];
    #pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      if (EF)
        asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                     : "l"(x + i + u * stride), "l"(pol));
      else
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                     : "l"(x + i + u * stride));
    }
    #pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) { const uint4 v = x[i]; acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x9e3779b9u) out[0] = acc;  // keeps the loads (never true for the data used)
}
extern "C" __global__ void read_u4(const uint4* x, long long n, unsigned* out) { read_all<4, false>(x, n, out); }
extern "C" __global__ void read_u8(const uint4* x, long long n, unsigned* out) { read_all<8, false>(x, n, out); }
extern "C" __global__ void read_u4_ef(const uint4* x, long long n, unsigned* out) { read_all<4, true>(x, n, out); }
extern "C" __global__ void read_u8_ef(const uint4* x, long long n, unsigned* out) { read_all<8, true>(x, n, out); }
"""
# (CTAs per SM, threads per CTA, loads in flight per thread) of the CUDA read kernel
READ_SHAPES = [
    (b, t, u) for b in (1, 2, 4) for t in (256, 512, 1024) for u in (4, 8) if b * t <= 2048
]


def readers() -> dict[str, Callable[[torch.Tensor], None]]:
    """Name -> a call that reads every byte of a contiguous CUDA tensor (its size a multiple
    of 16 bytes), one per (CTAs per SM, threads, loads in flight) of :data:`READ_SHAPES`,
    each with and without an L2 evict-first policy (``_ef``)."""
    from cutemma.cuda import compile
    from cutemma.cuda.launch import load_kernel

    cubin = compile(READ_SOURCE, "sm_90a")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    sink = torch.zeros(1, dtype=torch.int32, device="cuda")
    calls = {}
    for (blocks, threads, unroll), ef in itertools.product(READ_SHAPES, ("", "_ef")):
        kern = load_kernel(cubin, f"read_u{unroll}{ef}")

        def call(x, kern=kern, grid=blocks * sms, threads=threads):
            kern(x, np.int64(x.numel() * x.element_size() // 16), sink, grid=grid, block=threads)

        calls[f"g{blocks}_t{threads}_u{unroll}{ef}"] = call
    return calls


def read_ceiling(nbytes: int, median_ms: Callable, graph_us: Callable, replicas: int) -> dict:
    """TB/s of the fastest reader of ``nbytes`` bytes, timed by ``median_ms(fn, warmup,
    reps)`` (ms; the table's L2-flushed timer) and by ``graph_us(call, args)`` (us per call
    of ``call(a)`` for each of ``replicas`` distinct copies, in one CUDA graph), with the
    reader that gave each."""
    x = torch.empty(nbytes // 4, dtype=torch.int32, device="cuda").random_(0, 1 << 20)
    copies = [x.clone() for _ in range(replicas)]
    flushed, graph = {}, {}
    for name, call in readers().items():
        call(x)
        flushed[name] = nbytes / (median_ms(lambda call=call: call(x), 5, 20) * 1e-3) / 1e12
        graph[name] = nbytes / (graph_us(call, copies) * 1e-6) / 1e12
    best, best_graph = max(flushed, key=flushed.get), max(graph, key=graph.get)
    return {
        "bytes": nbytes,
        "read_tbps": round(flushed[best], 3),
        "reader": best,
        "read_graph_tbps": round(graph[best_graph], 3),
        "reader_graph": best_graph,
    }
