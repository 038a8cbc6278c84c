"""Split-K for decode-sized sm90 calls: K cut into S equal slices run as one batched launch of
the sm90 kernel (each slice a problem of the persistent grid, its partial sums stored in f32),
then a reduction kernel that adds the S partials in a fixed order (s = 0, 1, ..., S-1: the
same bits every run, no atomics) and writes D = alpha * sum in D's type.

Why: with M <= 64 tokens a GEMM is a stream of B, and the 128-row tiles of N alone are fewer
than the SMs ((N, K) = (10240, 8192): 80 tiles of 128 x 128 for 132 SMs, so 52 SMs read
nothing; bench/results/raw/inference-h100-run2.json: 0.77x cuBLAS at M = 1). S slices give
S times the tiles; :func:`split_count` picks S so that they fill one wave over the SMs.

The slices are views, no copies: A (M, K) with strides (a0, a1) read as (S, M, K/S) with
strides (K/S * a1, a0, a1), B (K, N) with strides (b0, b1) as (S, K/S, N) with strides
(K/S * b0, b0, b1) (:func:`split_views`); the batched kernel's rank-3 tensor maps walk them.

>>> split_count(1, 8192, 8192, 132, 2), split_count(512, 8192, 8192, 132, 2)
(2, 1)
"""

from __future__ import annotations

from functools import cache
from typing import Any

from cutemma.kernels.fastpath import _I32, _I64, _U64, BoxedLaunch

SPLIT_MAX_M = 64  # decode: the tokens fit one 128-row tile; above it the tiles fill the SMs
SPLITS = (2, 3, 4, 6, 8, 12, 16)
K_TILE_BYTES = 128  # an sm90 k tile is one 128-byte swizzle row of K (Sm90Config.block_k None)
MIN_K_TILES = 4  # a slice keeps the ring busy: at least 4 k tiles (the default ring depth)
TILE = 128  # the split's tile: 128 x 128 (Sm90Config(128, 128); fp8 promoted too)
REDUCE_THREADS = 256
# the f32 partials written and read back (8 * S * M * N bytes) against B's bytes (K * N * eb):
# past this share the extra traffic costs more than the idle SMs (run 3: S = 2 at M = 64 on
# (8192, 8192) e4m3, 12.5% extra, 0.78x vs 0.93x unsplit; 1.8-3.6% extra gained 10-30%)
PARTIAL_SHARE = 0.05


def split_count(m: int, n: int, k: int, sms: int, elem_bytes: int) -> int:
    """S, the K slices of an (m, n, k) GEMM (1: no split): the most slices whose tiles
    still fit one wave over ``sms`` SMs (S x tiles <= sms), each slice whole k tiles (at
    least MIN_K_TILES), the partials' traffic within PARTIAL_SHARE of B's bytes; only for
    m <= SPLIT_MAX_M and grids under one wave.

    Measured on the H100 (bench/results/raw/serve-splitk-run3.json, inference run 3): a
    grid under one wave split to fill it gained 10-30% ((N, K) = (8192, 28672), (8192, 8192):
    64 tiles, S = 2); splits past one wave lost ((57344, 8192): 448 tiles, S = 2, 0.83-0.86x
    vs 0.89-1.01x unsplit; (10240, 8192) e4m3, 80 tiles, S = 8: 0.63-0.77x vs 0.84-0.95x):
    there the grid streams B near the card's bandwidth already and a tail wave only adds.

    >>> split_count(16, 8192, 28672, 132, 2), split_count(16, 57344, 8192, 132, 2)
    (2, 1)
    """
    if m > SPLIT_MAX_M:
        return 1
    kt = K_TILE_BYTES // elem_bytes
    tiles = -(-m // TILE) * -(-n // TILE)
    best = 1
    for s in SPLITS:
        whole = k % (s * kt) == 0 and k // s >= MIN_K_TILES * kt
        if whole and s * tiles <= sms and 8 * s * m <= PARTIAL_SHARE * k * elem_bytes:
            best = s
    return best


def split_views(A: Any, B: Any, s: int) -> tuple[Any, Any]:
    """A (M, K) and B (K, N) as S problems of K/S: views (S, M, K/S) and (S, K/S, N).

    >>> import torch                                                   # doctest: +SKIP
    >>> A, B = torch.randn(3, 8), torch.randn(8, 5)                    # doctest: +SKIP
    >>> A3, B3 = split_views(A, B, 2)                                  # doctest: +SKIP
    >>> torch.allclose((A3 @ B3).sum(0), A @ B, atol=1e-6)             # doctest: +SKIP
    True
    """
    (m, k), n = A.shape, B.shape[1]
    ks = k // s
    a0, a1 = A.stride()
    b0, b1 = B.stride()
    A3 = A.as_strided((s, m, ks), (ks * a1, a0, a1), A.storage_offset())
    B3 = B.as_strided((s, ks, n), (ks * b0, b0, b1), B.storage_offset())
    return A3, B3


_OUT_C = {"bf16": "uint16_t", "f16": "uint16_t", "f32": "float"}


def reduce_source(out: str) -> str:
    """The reduction kernel for D of type ``out`` ('bf16', 'f16', 'f32'): one thread per
    column n of row m (grid: N / 256 x M), adding the S partials in order s = 0..S-1.

    >>> "for (int s = 0; s < S; ++s)" in reduce_source("bf16")
    True
    """
    from cutemma.cuda.source import FIXED_WIDTH_TYPES, FLOAT_CONVERSIONS, FROM_F32

    store = FROM_F32[out].format(x="alpha * acc")
    return f"""{FIXED_WIDTH_TYPES}
{FLOAT_CONVERSIONS}
// split-K: D[m, n] = alpha * (ws[0, m, n] + ws[1, m, n] + ... + ws[S-1, m, n]), in that order
extern "C" __global__ void __launch_bounds__({REDUCE_THREADS})
{reduce_name(out)}(const float* __restrict__ ws, {_OUT_C[out]}* __restrict__ d, int M, int N,
    int S, long long ldd_m, long long ldd_n, long long plane, float alpha) {{
  const int n = blockIdx.x * {REDUCE_THREADS} + threadIdx.x;
  const int m = blockIdx.y;
  if (n >= N || m >= M) return;
  const float* p = ws + (long long)m * N + n;
  float acc = 0.0f;
  for (int s = 0; s < S; ++s) acc += p[(long long)s * plane];
  d[(long long)m * ldd_m + (long long)n * ldd_n] = {store};
}}
"""


def reduce_name(out: str) -> str:
    return f"cutemma_splitk_reduce_{out}"


@cache
def reduce_kernel(out: str, arch: str) -> Any:
    """The reduction's DriverKernel for ``out`` on ``arch`` (NVRTC, disk-cached by source)."""
    from cutemma.cuda import compile
    from cutemma.kernels.fastlaunch import DriverKernel

    cubin = compile(reduce_source(out), arch)
    return DriverKernel(cubin.data, reduce_name(out), 0, REDUCE_THREADS)


class SplitKLaunch(BoxedLaunch):
    """A split call's two launches: the batched sm90 kernel into an f32 workspace (its own
    prepared launch, ``inner``), then the reduction into D. The workspace is taken from
    torch's allocator on each launch (under CUDA-graph capture: the graph's pool, so a
    replay writes memory the graph owns).

    ``sizes``: (M, N, S); the boxes written per call are D's pointer and strides and alpha
    (:meth:`write_out`, ``alpha``); the workspace pointer is boxed in both launches.
    """

    __slots__ = ("inner", "ws", "d", "ldd_m", "ldd_n", "shape", "empty", "device_str")

    def __init__(self, kern: Any, device: int, inner: Any, sizes: tuple[int, int, int]):
        m, n, s = sizes
        super().__init__(kern, device, -(-n // REDUCE_THREADS), m)
        self.inner, self.shape = inner, (s, m, n)
        self.ws, self.d = _U64(), _U64()
        self.ldd_m, self.ldd_n = _I64(), _I64()
        self.set_args([self.ws, self.d, _I32(m), _I32(n), _I32(s), self.ldd_m, self.ldd_n,
                       _I64(m * n), self.alpha])  # fmt: skip
        self.empty = None
        self.device_str = f"cuda:{device}"

    def write_out(self, ptr: int, st: tuple, out: Any) -> None:
        """D = ``out`` at ``ptr`` with element strides ``st`` (C is never read: beta is 0)."""
        self.d.value = ptr
        self.ldd_m.value, self.ldd_n.value = st

    def launch(self) -> None:
        """The batched kernel into a new workspace, then the reduction (one stream)."""
        if self.empty is None:
            import torch

            self.empty = torch.empty
        ws = self.empty(self.shape, dtype=_float32(), device=self.device_str)
        p = ws.data_ptr()
        inner = self.inner
        inner.c.value = inner.d.value = self.ws.value = p
        inner.launch()
        BoxedLaunch.launch(self)


@cache
def _float32() -> Any:
    import torch

    return torch.float32


def prepare_split(A: Any, B: Any, s: int, device: int, out_type: str, arch: str) -> SplitKLaunch:
    """The split launch of A @ B in ``s`` slices (2-D operands on the sm90 rules' side):
    the batched kernel's prepared launch over the slice views and an f32 workspace, and the
    reduction kernel into D of ``out_type``."""
    import torch

    from cutemma.kernels.sm90.config import BAT_A, BAT_B, Sm90Config
    from cutemma.kernels.sm90.host import _prepare, tma_major
    from cutemma.kernels.sm90.launch import PreparedLaunch

    (m, _), n = A.shape, B.shape[1]
    A3, B3 = split_views(A, B, s)
    ws = torch.empty((s, m, n), dtype=torch.float32, device=A.device)
    A3, a_major, lda = tma_major(A3, "A", ("K", "M"))
    B3, b_major, ldb = tma_major(B3, "B", ("K", "N"))
    kern, grid, map_a, map_b, sizes, dev, plan = _prepare(
        A3, B3, (a_major, lda, b_major, ldb), ws, ws, Sm90Config(TILE, TILE), True, s
    )
    inner = PreparedLaunch(kern, dev, grid, (map_a, map_b), sizes, plan, ws.dtype, ws.shape,
                           (s, BAT_A | BAT_B))  # fmt: skip
    inner.set_operands(ws, ws, 1.0, 0.0)
    return SplitKLaunch(reduce_kernel(out_type, arch), device, inner, (m, n, s))


# signatures whose split could not be prepared (why): not tried again in this process
_REFUSED: dict[tuple, str] = {}


def try_split(A: Any, B: Any, out: Any, alpha: float, sms: int, arch: str) -> Any:
    """The prepared split launch for D = alpha * A @ B into ``out`` (written and launched),
    or None when no split pays (or the split cannot be prepared here: the plain kernel
    runs)."""
    m, k = A.shape
    n = B.shape[1]
    s = split_count(m, n, k, sms, A.element_size())
    if s == 1:
        return None
    from cutemma.errors import LaunchError

    out_type = {"bfloat16": "bf16", "float16": "f16", "float32": "f32"}[str(out.dtype)[6:]]
    key = (A.shape, A.stride(), B.shape, B.stride(), A.dtype, s, out_type)
    if key in _REFUSED:
        return None
    try:
        p = prepare_split(A, B, s, A.device.index or 0, out_type, arch)
    except LaunchError as exc:  # e.g. a tensor map the driver refuses: the plain kernel
        if "captures the current stream" in str(exc):
            raise
        _REFUSED[key] = str(exc)
        return None
    p.write_out(out.data_ptr(), out.stride(), out)
    p.alpha.value = alpha
    p.launch()
    return p


def split_call(A: Any, B: Any, out: Any, out_dtype: Any, alpha: float, remember: Any) -> Any:
    """``cutemma.gemm``'s split: D = alpha * A @ B (2-D, sm90 rules met, no C) through a
    split launch when :func:`split_count` says it pays, kept for the fast path's repeats
    under ``remember``'s key; else None (the plain kernel runs; a wrong ``out`` is named
    there)."""
    import torch

    from cutemma.kernels.operands import _arch
    from cutemma.kernels.sm90.host import sm_count

    M, N = A.shape[0], B.shape[1]
    kt = K_TILE_BYTES // A.element_size()
    if M > SPLIT_MAX_M or A.shape[1] < 2 * MIN_K_TILES * kt or A.device.type != "cuda":
        return None  # no split can pay (asked before any device query)
    if out is None:
        out = torch.empty((M, N), dtype=out_dtype, device=A.device)
    elif tuple(out.shape) != (M, N) or out.dtype != out_dtype or out.device != A.device:
        return None
    device = A.device.index or 0
    p = try_split(A, B, out, float(alpha), sm_count(device), _arch(device))
    if p is None:
        return None
    if remember is not None:
        from cutemma.kernels.fastpath import remember as keep

        keep(A, B, out, *remember, p)
    return out
