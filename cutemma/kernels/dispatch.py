"""``gemm(A, B, C=None, *, alpha, beta, out, out_dtype, config)`` on 2-D torch tensors.

Checks shapes, devices and dtypes, reads each operand's major from its strides,
picks a config, and launches the sm80 kernel compiled (and cached, in memory
and on disk) for that (config, dtype, majors, output, alignment).

>>> GemmConfig() in BUILTIN_CONFIGS.values()
True
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

from cutemma.errors import LaunchError
from cutemma.kernels.fastlaunch import DriverKernel
from cutemma.kernels.gemm_sm80 import gemm_source, kernel_name, params
from cutemma.kernels.plan import GemmConfig, GemmPlan

BUILTIN_CONFIGS = {
    "large": GemmConfig(128, 128, 32, (2, 2), 4),
    "wide": GemmConfig(128, 256, 32, (2, 4), 3),
    "small": GemmConfig(64, 64, 32, (2, 2), 4),
    "skinny": GemmConfig(32, 32, 64, (2, 2), 4),
}
_DTYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "int32": "s32"}
# input dtype -> (kernel element type, output dtypes it may write; the first is the default)
_INPUTS = {
    "float16": ("f16", ("float16", "float32")),
    "bfloat16": ("bf16", ("bfloat16", "float32")),
    "float32": ("tf32", ("float32",)),
    "int8": ("s8", ("int32",)),
}


def _dtype(t: Any) -> str:
    return str(t.dtype).replace("torch.", "")


def pick_config(m: int, n: int, k: int) -> GemmConfig:
    """The built-in config for a problem shape: smaller tiles when big ones leave SMs idle.

    >>> pick_config(1024, 1024, 64).name, pick_config(8192, 8192, 8192).name
    ('b64x64x32_w2x2_s4', 'b128x128x32_w2x2_s4')
    >>> pick_config(16, 4096, 4096).name
    'b32x32x64_w2x2_s4'
    """
    for name in ("large", "small"):
        cfg = BUILTIN_CONFIGS[name]
        if -(-m // cfg.block_m) * -(-n // cfg.block_n) >= 132:  # H100: 132 SMs
            return cfg
    return BUILTIN_CONFIGS["skinny"]


@cache
def compiled_kernel(config, dtype, a_major, b_major, out, c_type, vec_a, vec_b, arch):
    """(Kernel, shared bytes, threads) for one variant; compiled once per process (disk-cached)."""
    from cutemma.cuda import compile, load_kernel

    src = gemm_source(config, dtype, a_major, b_major, out, c_type, vec_a, vec_b)
    cubin = compile(src, arch)
    name = kernel_name(config, dtype, a_major, b_major, out, c_type, vec_a, vec_b)
    plan = GemmPlan(config, dtype, a_major, b_major)
    kern = load_kernel(cubin, name, params(out, c_type, dtype))
    kern.fast = DriverKernel(cubin.data, name, plan.shared_bytes, plan.threads)
    return kern, plan.shared_bytes, plan.threads


def _major(t: Any, what: str, names: tuple[str, str]) -> tuple[Any, str, int]:
    """(tensor, major, leading stride): 'K'-contiguous or the other mode contiguous."""
    r, c = t.shape
    s0, s1 = t.stride()
    inner, outer = names
    if s1 == 1 or c == 1:
        major, ld = (inner if what == "A" else outer), s0 if r > 1 else max(c, 1)
    elif s0 == 1 or r == 1:
        major, ld = (outer if what == "A" else inner), s1 if c > 1 else max(r, 1)
    else:
        t = t.contiguous()
        return _major(t, what, names)
    return t, major, ld


def _aligned(t: Any, ld: int, extent_outer: int) -> bool:
    """16-byte cp.async chunks stay aligned: pointer and leading stride (elements) allow it."""
    return t.data_ptr() % 16 == 0 and (ld % (16 // t.element_size()) == 0 or extent_outer == 1)


def _check(A: Any, B: Any) -> None:
    """Shapes, then dtypes, then devices: each error names what would be accepted."""
    for what, t in (("A", A), ("B", B)):
        if not hasattr(t, "dim") or t.dim() != 2:
            shape = tuple(getattr(t, "shape", ())) or type(t).__name__
            raise LaunchError(f"gemm: {what} must be a 2-D torch tensor, got {shape}")
    if A.shape[1] != B.shape[0]:
        raise LaunchError(
            f"gemm: A is {tuple(A.shape)} and B is {tuple(B.shape)}; A's columns ({A.shape[1]}) "
            f"must equal B's rows ({B.shape[0]})"
        )
    if A.dtype != B.dtype or _dtype(A) not in _INPUTS:
        raise LaunchError(
            f"gemm: A is {_dtype(A)} and B is {_dtype(B)}; both must be one of "
            f"{', '.join(_INPUTS)} (float32 runs as tf32, int8 accumulates in int32)"
        )
    for what, t in (("A", A), ("B", B)):
        if t.device.type != "cuda":
            raise LaunchError(f"gemm: {what} is on {t.device}; move it to a CUDA device")
    if A.device != B.device:
        raise LaunchError(f"gemm: A on {A.device}, B on {B.device}; put both on one device")


def gemm(
    A: Any,
    B: Any,
    C: Any = None,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    out: Any = None,
    out_dtype: Any = None,
    config: GemmConfig | None = None,
) -> Any:
    """D = alpha * A @ B + beta * C with an sm80 mma.sync kernel; returns D.

    A (M, K) and B (K, N) are float16 or bfloat16 (any row/column-major strides),
    float32 (multiplied as tf32) or int8 (int32 result; alpha and beta whole numbers),
    on one CUDA device; C broadcasts to (M, N); D is ``out`` or a new (M, N) tensor of
    ``out_dtype`` (default: A's dtype for 16-bit inputs, float32 for tf32, int32 for int8).
    tf32 and int8 operands are read K-major (A row-major, B column-major); others are
    copied to that order first.
    """
    import torch

    _check(A, B)
    M, K = A.shape
    N = B.shape[1]
    dtype, outs = _INPUTS[_dtype(A)]
    out_dtype = out_dtype or (out.dtype if out is not None else getattr(torch, outs[0]))
    if _dtype_name(out_dtype) not in outs:
        raise LaunchError(
            f"gemm: out_dtype {_dtype_name(out_dtype)} for {_dtype(A)} inputs; choose "
            + " or ".join(outs)
        )
    if dtype == "s8" and (float(alpha) != int(alpha) or float(beta) != int(beta)):
        raise LaunchError(f"gemm: int8 takes whole-number alpha and beta, got {alpha}, {beta}")
    if out is None:
        out = torch.empty((M, N), dtype=out_dtype, device=A.device)
    if tuple(out.shape) != (M, N) or out.device != A.device or out.dtype != out_dtype:
        raise LaunchError(
            f"gemm: out is {tuple(out.shape)} {out.dtype} on {out.device}; need ({M}, {N}) "
            f"{out_dtype} on {A.device}"
        )
    if M == 0 or N == 0:
        return out
    if K == 0:
        return out.copy_(
            beta * C.expand(M, N) if C is not None and beta != 0 else torch.zeros_like(out)
        )
    if dtype in ("tf32", "s8"):  # ldmatrix reads 32/8-bit elements only K-major
        A = A if A.stride(1) == 1 or K == 1 else A.contiguous()
        B = B if B.stride(0) == 1 or K == 1 else B.t().contiguous().t()
        a_major, lda = "K", A.stride(0) if M > 1 else K
        b_major, ldb = "K", B.stride(1) if N > 1 else K
    else:
        A, a_major, lda = _major(A, "A", ("K", "M"))
        B, b_major, ldb = _major(B, "B", ("K", "N"))
    if C is None or beta == 0:
        C, beta = out, 0.0
    else:
        if C.device != A.device:
            raise LaunchError(f"gemm: C on {C.device}, A on {A.device}; put both on one device")
        if C.dtype != out.dtype:
            C = C.to(out.dtype)  # before expand: a broadcast C keeps its zero strides
        try:
            C = C.expand(M, N)
        except RuntimeError:
            raise LaunchError(
                f"gemm: C {tuple(C.shape)} does not broadcast to ({M}, {N})"
            ) from None
    config = config or pick_config(M, N, K)
    vec_a = _aligned(A, lda, M if a_major == "K" else K)
    vec_b = _aligned(B, ldb, N if b_major == "K" else K)
    arch = _arch(A.device.index or 0)
    out_t, c_t = _DTYPES[_dtype(out)], _DTYPES[_dtype(C)]
    kern, shared, threads = compiled_kernel(
        config, dtype, a_major, b_major, out_t, c_t, vec_a, vec_b, arch
    )
    tiles = -(-M // config.block_m) * -(-N // config.block_n)
    if _FAST["ok"]:
        try:
            _launch_fast(kern.fast, A, B, C, out, (M, N, K, lda, ldb), alpha, beta, tiles)
            return out
        except Exception as exc:  # fall back to the checked launcher, once and for all
            _FAST["ok"], _FAST["why"] = False, f"{type(exc).__name__}: {exc}"
    kern(
        _flat(A),
        _flat(B),
        _flat(C),
        _flat(out),
        M,
        N,
        K,
        lda,
        ldb,
        C.stride(0),
        C.stride(1),
        out.stride(0),
        out.stride(1),
        float(alpha),
        float(beta),
        grid=tiles,
        block=threads,
        shared_mem=shared,
    )
    return out


_FAST = {"ok": True, "why": None}  # the lean launch path works (else why not)
_I32, _I64, _F32, _U64 = ctypes.c_int32, ctypes.c_int64, ctypes.c_float, ctypes.c_uint64


def _launch_fast(fast, A, B, C, out, sizes, alpha, beta, tiles) -> None:
    """The same arguments as the checked path, boxed by hand, on torch's current stream."""
    import torch

    M, N, K, lda, ldb = sizes
    device = A.device.index or 0
    args = [
        _U64(A.data_ptr()),
        _U64(B.data_ptr()),
        _U64(C.data_ptr()),
        _U64(out.data_ptr()),
        _I32(M),
        _I32(N),
        _I32(K),
        _I64(lda),
        _I64(ldb),
        _I64(C.stride(0)),
        _I64(C.stride(1)),
        _I64(out.stride(0)),
        _I64(out.stride(1)),
        _F32(alpha),
        _F32(beta),
    ]
    fast.launch(device, tiles, torch.cuda.current_stream(device).cuda_stream, args)


@cache
def _arch(device: int) -> str:
    """The compile target of a device (read once: it is a driver query)."""
    from cutemma.cuda import device_arch

    return device_arch(device)


def _flat(t: Any) -> Any:
    """A 1-D contiguous view over the elements a strided (M, N) tensor spans (no copy).

    The kernel reads strides from its own parameters; the launcher wants dense arguments.
    """
    import torch

    span = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    return torch.as_strided(t, (span,), (1,), t.storage_offset())


def _dtype_name(d: Any) -> str:
    return str(d).replace("torch.", "")


def _compile_variant(key: tuple) -> str:
    from cutemma.cuda import compile

    config, dtype, a_major, b_major, out, c_type, vec_a, vec_b, arch = key
    compile(gemm_source(config, dtype, a_major, b_major, out, c_type, vec_a, vec_b), arch)
    return kernel_name(config, dtype, a_major, b_major, out, c_type, vec_a, vec_b)


def precompile(
    arch: str,
    configs: tuple[GemmConfig, ...] | None = None,
    dtypes: tuple[str, ...] = ("f16", "bf16"),
    outs: tuple[str, ...] = ("same", "f32"),
    processes: int | None = None,
) -> int:
    """Fill the disk cache with every variant (majors, alignments, outputs) of ``configs``.

    Compiles in ``processes`` forked workers (call it before the process touches CUDA);
    returns the number of variants. Later ``gemm`` calls then only load cubins.
    """
    import multiprocessing as mp
    from itertools import product

    configs = configs or tuple(BUILTIN_CONFIGS.values())
    keys = []
    for cfg, dt, (am, bm), (va, vb), out in product(
        configs,
        dtypes,
        [("K", "K"), ("K", "N"), ("M", "K"), ("M", "N")],
        [(True, True), (True, False), (False, True), (False, False)],
        outs,
    ):
        o = dt if out == "same" else out
        keys.append((cfg, dt, am, bm, o, o, va, vb, arch))
    with mp.get_context("fork").Pool(processes) as pool:
        pool.map(_compile_variant, keys, chunksize=1)
    return len(keys)
