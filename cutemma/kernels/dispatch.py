"""``gemm(A, B, C=None, *, alpha, beta, out, out_dtype, config, scale_a, scale_b)``.

2-D or batched 3-D torch tensors; fp16, bf16, tf32, int8 and fp8 (e4m3/e5m2) inputs.

Checks shapes, devices and dtypes, reads each operand's major from its strides,
picks a config, and launches the sm80 kernel compiled (and cached, in memory
and on disk) for that (config, dtype, majors, output, alignment).

>>> GemmConfig() in BUILTIN_CONFIGS.values()
True
"""

from __future__ import annotations

import sys
from functools import cache
from typing import Any

from cutemma.errors import LaunchError, TiledMmaError
from cutemma.kernels.fastlaunch import DriverKernel
from cutemma.kernels.fastpath import remember as _remember_launch
from cutemma.kernels.fastpath import try_fast
from cutemma.kernels.fastpath_sm80 import Sm80Launch
from cutemma.kernels.gemm_sm80 import gemm_source, kernel_name, params
from cutemma.kernels.plan import ELEM_BYTES, GemmConfig, GemmPlan
from cutemma.kernels.plan_sm90 import Sm90Config
from cutemma.kernels.tune import lookup_device as _tuned

BUILTIN_CONFIGS = {
    "large": GemmConfig(128, 128, 32, (2, 2), 4),
    "wide": GemmConfig(128, 256, 32, (2, 4), 3),
    "small": GemmConfig(64, 64, 32, (2, 2), 4),
    "skinny": GemmConfig(32, 32, 64, (2, 2), 4),
}
# fp8 on sm_90a: ptxas turns each m16n8k32 fp8 mma.sync into F2FP conversions + two HMMA
# + FADDs, whose temporaries make the 4-warp 128x128 tile spill; 8 warps halve the
# accumulators per thread and spill nothing (SASS checked in tests/kernels).
FP8_LARGE = GemmConfig(128, 128, 32, (4, 2), 4)
_DTYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "int32": "s32"}
_FP8 = {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
# input dtype -> (kernel element type, output dtypes it may write; the first is the default)
_INPUTS = {
    "float16": ("f16", ("float16", "float32")),
    "bfloat16": ("bf16", ("bfloat16", "float32")),
    "float32": ("tf32", ("float32",)),
    "int8": ("s8", ("int32",)),
    "float8_e4m3fn": ("e4m3", ("bfloat16", "float16", "float32")),
    "float8_e5m2": ("e5m2", ("bfloat16", "float16", "float32")),
}
_MAX_BATCH = 65535  # gridDim.y


def _dtype(t: Any) -> str:
    return str(t.dtype).replace("torch.", "")


def pick_config(m: int, n: int, k: int, batch: int = 1, dtype: str = "bf16") -> GemmConfig:
    """The built-in config for a problem shape: smaller tiles when big ones leave SMs idle.

    ``batch`` problems of (m, n, k) fill the SMs together; ``dtype`` is the kernel's
    element type ('bf16', 'e4m3', ...: fp8 takes an 8-warp large tile).

    >>> pick_config(1024, 1024, 64).name, pick_config(8192, 8192, 8192).name
    ('b64x64x32_w2x2_s4', 'b128x128x32_w2x2_s4')
    >>> pick_config(16, 4096, 4096).name, pick_config(1024, 1024, 64, batch=8).name
    ('b32x32x64_w2x2_s4', 'b128x128x32_w2x2_s4')
    >>> pick_config(8192, 8192, 8192, dtype="e4m3").name
    'b128x128x32_w4x2_s4'
    """
    from cutemma.layout.checks import as_int

    for what, v in (("m", m), ("n", n), ("k", k), ("batch", batch)):
        if as_int(v) is None or as_int(v) < 1:
            raise TiledMmaError(f"pick_config: {what}={v!r} must be a whole number >= 1")
    if dtype not in ELEM_BYTES:
        raise TiledMmaError(f"pick_config: dtype {dtype!r}; choose one of {', '.join(ELEM_BYTES)}")
    m, n, batch = as_int(m), as_int(n), as_int(batch)
    for name in ("large", "small"):
        cfg = BUILTIN_CONFIGS[name]
        if -(-m // cfg.block_m) * -(-n // cfg.block_n) * batch >= 132:  # H100: 132 SMs
            return FP8_LARGE if name == "large" and dtype in ELEM_BYTES and dtype[0] == "e" else cfg
    return BUILTIN_CONFIGS["skinny"]


@cache
def compiled_kernel(
    config: GemmConfig,
    dtype: str,
    a_major: str,
    b_major: str,
    out: str,
    c_type: str,
    vec_a: bool,
    vec_b: bool,
    arch: str,
) -> tuple[Any, int, int]:
    """(Kernel, shared bytes, threads) for one variant; compiled once per process (disk-cached).

    Loading the kernel needs a GPU; the default config takes 64 KiB of shared memory:

    >>> args = (GemmConfig(), "bf16", "K", "N", "bf16", "bf16", True, True, "sm_90a")
    >>> kern, smem, threads = compiled_kernel(*args)  # doctest: +SKIP
    >>> smem, threads  # doctest: +SKIP
    (65536, 128)
    """
    from cutemma.cuda import compile, load_kernel

    src = gemm_source(config, dtype, a_major, b_major, out, c_type, vec_a, vec_b)
    cubin = compile(src, arch)
    name = kernel_name(config, dtype, a_major, b_major, out, c_type, vec_a, vec_b)
    plan = GemmPlan(config, dtype, a_major, b_major)
    kern = load_kernel(cubin, name, params(out, c_type, dtype))
    kern.fast = DriverKernel(cubin.data, name, plan.shared_bytes, plan.threads)
    return kern, plan.shared_bytes, plan.threads


def _major(t: Any, what: str, names: tuple[str, str]) -> tuple[Any, str, int]:
    """(tensor, major, leading stride) of the last two modes: 'K'-contiguous or the other.

    Neither mode contiguous: the operand is copied (a 3-D one as a whole).
    """
    r, c = t.shape[-2:]
    s0, s1 = t.stride()[-2:]
    inner, outer = names
    if s1 == 1 or c == 1:
        major, ld = (inner if what == "A" else outer), s0 if r > 1 else max(c, 1)
    elif s0 == 1 or r == 1:
        major, ld = (outer if what == "A" else inner), s1 if c > 1 else max(r, 1)
    else:
        t = t.contiguous()
        return _major(t, what, names)
    return t, major, ld


def _k_major(A: Any, B: Any, M: int, N: int, K: int) -> tuple[Any, Any, int, int]:
    """A row-major, B column-major (copies where not): how ldmatrix reads 8- and 32-bit types."""
    A = A if A.stride(-1) == 1 or K == 1 else A.contiguous()
    B = B if B.stride(-2) == 1 or K == 1 else B.transpose(-1, -2).contiguous().transpose(-1, -2)
    return A, B, (A.stride(-2) if M > 1 else K), (B.stride(-1) if N > 1 else K)


def _aligned(t: Any, ld: int, extent_outer: int, batch_stride: int = 0) -> bool:
    """16-byte cp.async chunks stay aligned: pointer, leading and batch strides allow it."""
    vec = 16 // t.element_size()
    return (
        t.data_ptr() % 16 == 0 and (ld % vec == 0 or extent_outer == 1) and batch_stride % vec == 0
    )


def _kernel_dtype(A: Any, B: Any) -> tuple[str, tuple[str, ...]]:
    """(kernel element type, allowed outputs) of A and B, or a LaunchError naming both."""
    a, b = _dtype(A), _dtype(B)
    if a == b and a in _INPUTS:
        return _INPUTS[a]
    if a in _FP8 and b in _FP8:  # mixed e4m3 x e5m2: the catalog has both mixed atoms
        mixed = f"{_FP8[a]}_{_FP8[b]}"
        if mixed in ELEM_BYTES:
            return mixed, _INPUTS[a][1]
    raise LaunchError(
        f"gemm: A is {a} and B is {b}; both must be one of {', '.join(_INPUTS)} "
        "(float32 runs as tf32, int8 accumulates in int32; A and B may mix the two float8 types)"
    )


def _check(A: Any, B: Any) -> tuple[int | None, str, tuple[str, ...]]:
    """Shapes, then dtypes, then devices: each error names what would be accepted.

    Returns (batch, kernel dtype, allowed outputs): batch is the problem count of a 3-D
    call (torch.matmul's broadcasting of the batch mode: a 2-D operand or a batch of 1
    is shared), None for a 2-D one.
    """
    for what, t in (("A", A), ("B", B)):
        if not hasattr(t, "dim") or t.dim() not in (2, 3):
            kind = f"{type(t).__module__}.{type(t).__name__}".removeprefix("builtins.")
            shape = tuple(getattr(t, "shape", ()))
            got = f"a {kind} of shape {shape}" if hasattr(t, "shape") else f"a {kind}"
            raise LaunchError(
                f"gemm: {what} must be a 2-D or 3-D (batch, rows, cols) torch tensor on a CUDA "
                f"device, got {got} (for numpy arrays on the CPU use cutemma.emulate.gemm)"
            )
    if A.shape[-1] != B.shape[-2]:
        raise LaunchError(
            f"gemm: A is {tuple(A.shape)} and B is {tuple(B.shape)}; A's columns ({A.shape[-1]}) "
            f"must equal B's rows ({B.shape[-2]})"
        )
    batch = None
    if A.dim() == 3 or B.dim() == 3:
        ba = A.shape[0] if A.dim() == 3 else 1
        bb = B.shape[0] if B.dim() == 3 else 1
        if ba != bb and ba != 1 and bb != 1:
            raise LaunchError(
                f"gemm: A is {tuple(A.shape)} and B is {tuple(B.shape)}; their batch sizes "
                f"{ba} and {bb} must be equal, or one of them 1 (or the operand 2-D) to broadcast"
            )
        batch = bb if ba == 1 else ba
        if batch > _MAX_BATCH:
            raise LaunchError(
                f"gemm: batch {batch} exceeds the {_MAX_BATCH} problems one launch covers "
                "(grid y); split the batch"
            )
    types = _kernel_dtype(A, B)
    for what, t in (("A", A), ("B", B)):
        if t.device.type != "cuda":
            raise LaunchError(f"gemm: {what} is on {t.device}; move it to a CUDA device")
    if A.device != B.device:
        raise LaunchError(f"gemm: A on {A.device}, B on {B.device}; put both on one device")
    return batch, *types


def _batch_stride(t: Any) -> int:
    """Elements between the problems of a 3-D operand; 0 (shared) for 2-D or a batch of 1."""
    return t.stride(0) if t.dim() == 3 and t.shape[0] > 1 else 0


def gemm(
    A: Any,
    B: Any,
    C: Any = None,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    out: Any = None,
    out_dtype: Any = None,
    config: GemmConfig | Sm90Config | None = None,
    scale_a: float = 1.0,
    scale_b: float = 1.0,
) -> Any:
    """D = alpha * scale_a * scale_b * A @ B + beta * C on the GPU; returns D.

    On an sm_90 device a 2-D or batched 3-D call of float16, bfloat16 (either major) or
    float32 (tf32, K-major) operands whose base pointers, leading strides and batch strides
    are 16-byte aligned runs the Hopper kernel (wgmma + TMA, :mod:`cutemma.kernels.gemm_sm90`;
    float8 K-major too, its k-tile sums promoted into f32); everything else runs the sm80
    ``mma.sync`` kernel.
    ``config`` picks the family: an ``Sm90Config`` (an error when the sm90 rules fail) or
    a ``GemmConfig`` (sm80).

    A (M, K) and B (K, N) are float16 or bfloat16 (any row/column-major strides),
    float32 (multiplied as tf32), int8 (int32 result; alpha and beta whole numbers) or
    float8 (``float8_e4m3fn`` / ``float8_e5m2``, A and B may differ; sm_89 or newer;
    fp32 accumulation; ``scale_a`` and ``scale_b`` are their per-tensor scales, folded
    into alpha), on one CUDA device. C broadcasts to (M, N); D is ``out`` or a new (M, N)
    tensor of ``out_dtype`` (default: A's dtype for 16-bit inputs, float32 for tf32,
    int32 for int8, bfloat16 for float8; float8 may also write float16 or float32).
    tf32, int8 and float8 operands are read K-major (A row-major, B column-major);
    others are copied to that order first.

    Batched: A (batch, M, K) and/or B (batch, K, N) give D (batch, M, N), with
    torch.matmul's broadcasting (a 2-D operand, a batch of 1 or a batch stride of 0 is
    shared by every problem; C broadcasts to (batch, M, N)). One launch covers the
    batch, up to 65535 problems: on sm90 a persistent grid walks every problem's tiles
    (rank-3 TMA maps, the batch outermost; a shared operand keeps a rank-2 map), on sm80
    grid y holds the problems.

    The config is ``config``, else one :func:`cutemma.tune` cached for this GPU and
    shape class, else a built-in one (:func:`pick_config`).

    >>> import torch, cutemma                                           # doctest: +SKIP
    >>> A = torch.randn(4, 300, 200, device="cuda", dtype=torch.bfloat16)  # doctest: +SKIP
    >>> B = torch.randn(200, 100, device="cuda", dtype=torch.bfloat16)     # doctest: +SKIP
    >>> cutemma.gemm(A, B).shape                                        # doctest: +SKIP
    torch.Size([4, 300, 100])
    >>> A8, B8 = A.to(torch.float8_e4m3fn), B.to(torch.float8_e5m2)      # doctest: +SKIP
    >>> cutemma.gemm(A8, B8, scale_a=0.5, out_dtype=torch.float32).dtype  # doctest: +SKIP
    torch.float32
    """
    if _TRACING[0]():  # torch.compile / export traces this call: one custom-op node
        from cutemma.kernels.torch_op import traced_gemm

        return traced_gemm(A, B, C, alpha, beta, out, out_dtype, config, scale_a, scale_b)
    if C is None and out_dtype is None and scale_a == 1.0 and scale_b == 1.0:
        # a repeat of a call with these operands: its prepared launch (kernels/fastpath.py)
        done = try_fast(A, B, out, alpha, config)
        if done is not None:
            return done
        remember = (out is not None, config)  # the key of this call's repeats
    else:
        remember = None
    batch, dtype, outs = _check(A, B)  # before torch: a numpy array is named as one
    import torch

    if _fake(A, B):  # a fake-tensor or proxy trace outside dynamo: the op node too
        from cutemma.kernels.torch_op import traced_gemm

        return traced_gemm(A, B, C, alpha, beta, out, out_dtype, config, scale_a, scale_b)

    M, K = A.shape[-2:]
    N = B.shape[-1]
    out_dtype = out_dtype or (out.dtype if out is not None else getattr(torch, outs[0]))
    if _dtype_name(out_dtype) not in outs:
        raise LaunchError(
            f"gemm: out_dtype {_dtype_name(out_dtype)} for {_dtype(A)} inputs; choose "
            + " or ".join(outs)
        )
    if scale_a != 1.0 or scale_b != 1.0:
        if dtype == "s8":
            raise LaunchError(
                f"gemm: scale_a={scale_a}, scale_b={scale_b} for int8 inputs; per-tensor "
                "scales are for float8 (and float) inputs — fold them into alpha for int8"
            )
        alpha = float(alpha) * float(scale_a) * float(scale_b)
    if dtype == "s8" and (float(alpha) != int(alpha) or float(beta) != int(beta)):
        raise LaunchError(f"gemm: int8 takes whole-number alpha and beta, got {alpha}, {beta}")
    if ELEM_BYTES[dtype] == 1 and dtype != "s8":
        _needs_fp8(A.device.index or 0, _dtype(A), _dtype(B))
    # Hopper: the wgmma + TMA kernel when its rules hold (2-D and batched calls)
    from cutemma.kernels.dispatch_sm90 import gemm_sm90, sm90_refusal

    why = sm90_refusal(A, B, config)
    chosen = config
    if why is None and config is None and batch is None:  # cutemma.tune's winner, if any
        chosen = _tuned_2d(A, B, M, N, K, dtype)
        if isinstance(chosen, GemmConfig):  # sm80 won the tuning
            why, config = "cutemma.tune found the sm80 kernel faster", chosen
    if why is None:
        kw = {"alpha": alpha, "beta": beta, "out": out, "out_dtype": out_dtype}
        return gemm_sm90(A, B, C, config=chosen, _remember=remember, **kw)
    if isinstance(config, Sm90Config):
        raise LaunchError(f"gemm: config {config.name} is an sm90 config, but {why}")
    shape = (M, N) if batch is None else (batch, M, N)
    if out is None:
        out = torch.empty(shape, dtype=out_dtype, device=A.device)
    if tuple(out.shape) != shape or out.device != A.device or out.dtype != out_dtype:
        raise LaunchError(
            f"gemm: out is {tuple(out.shape)} {out.dtype} on {out.device}; need {shape} "
            f"{out_dtype} on {A.device}"
        )
    if M == 0 or N == 0 or batch == 0:
        return out
    if K == 0:
        return out.copy_(
            beta * C.expand(shape) if C is not None and beta != 0 else torch.zeros_like(out)
        )
    A_in, B_in = A, B  # a launch is remembered only for operands used as given (no copy)
    if ELEM_BYTES[dtype] != 2:  # ldmatrix reads 32/8-bit elements only K-major
        A, B, lda, ldb = _k_major(A, B, M, N, K)
        a_major = b_major = "K"
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
            C = C.expand(shape)
        except RuntimeError:
            raise LaunchError(f"gemm: C {tuple(C.shape)} does not broadcast to {shape}") from None
    device = A.device.index or 0
    strides = None
    if batch is not None:
        strides = (_batch_stride(A), _batch_stride(B), _batch_stride(C), out.stride(0))
    if config is None:
        tuned = _tuned(device, M, N, K, dtype, a_major, b_major)
        config = tuned if isinstance(tuned, GemmConfig) else None  # an sm90 winner: not here
    config = config or pick_config(M, N, K, batch or 1, dtype)
    sa, sb = strides[:2] if strides else (0, 0)
    vec_a = _aligned(A, lda, M if a_major == "K" else K, sa)
    vec_b = _aligned(B, ldb, N if b_major == "K" else K, sb)
    arch = _arch(device)
    out_t, c_t = _DTYPES[_dtype(out)], _DTYPES[_dtype(C)]
    kern, shared, threads = compiled_kernel(
        config, dtype, a_major, b_major, out_t, c_t, vec_a, vec_b, arch
    )
    tiles = -(-M // config.block_m) * -(-N // config.block_n)
    if _FAST["ok"]:
        sa_sb = strides[:2] if strides else (0, 0)
        sc_sd = strides[2:] if strides else (0, 0)
        try:
            p = Sm80Launch(kern.fast, device, tiles, batch or 1, (A.data_ptr(), B.data_ptr()),
                           (M, N, K, lda, ldb), sa_sb, dtype == "s8", batch is not None)  # fmt: skip
            p.set_operands((C.data_ptr(), C.stride()), (out.data_ptr(), out.stride()),
                           float(alpha), float(beta), sc_sd)  # fmt: skip
            p.launch()
        except Exception as exc:  # fall back to the checked launcher, once and for all
            _FAST["ok"], _FAST["why"] = False, f"{type(exc).__name__}: {exc}"
        else:
            if remember is not None and C is out and A is A_in and B is B_in:
                _remember_launch(A, B, out, *remember, p)  # for cutemma.gemm's next call
            return out
    sc, sd = (strides[2], strides[3]) if strides else (0, 0)
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
        C.stride(-2),
        C.stride(-1),
        out.stride(-2),
        out.stride(-1),
        float(alpha),
        float(beta),
        sa,
        sb,
        sc,
        sd,
        grid=(tiles, batch or 1),
        block=threads,
        shared_mem=shared,
    )
    return out


def _bind_tracing() -> bool:
    """The first call's check: binds ``torch.compiler.is_compiling`` (dynamo answers it
    True while tracing) into :data:`_TRACING`; without torch nothing traces."""
    try:
        import torch
    except ImportError:
        return False
    _TRACING[0] = torch.compiler.is_compiling
    return _TRACING[0]()


# whether torch traces the call now: is_compiling once bound (0.1 us a call); bound at
# import when torch is in use already (a first call under dynamo then mutates nothing)
_torch = sys.modules.get("torch")
_TRACING = [_torch.compiler.is_compiling if _torch is not None else _bind_tracing]


def _fake(A: Any, B: Any) -> bool:
    """A or B is a fake tensor, or a torch dispatch mode (a proxy trace) is active."""
    from torch._subclasses.fake_tensor import is_fake
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    return is_fake(A) or is_fake(B) or _get_current_dispatch_mode() is not None


def _needs_fp8(device: int, a: str, b: str) -> None:
    """float8 mma.sync exists from sm_89 on: refuse older GPUs before compiling."""
    arch = _arch(device)
    if int(arch[3:].rstrip("a")) < 89:
        raise LaunchError(
            f"gemm: {a} x {b} needs an sm_89 or newer GPU (fp8 mma.sync); device {device} is "
            f"{arch} — convert the operands to bfloat16 there"
        )


_FAST = {"ok": True, "why": None}  # the lean launch path works (else why not)


def _tuned_2d(A: Any, B: Any, M: int, N: int, K: int, dtype: str) -> Any:
    """The tuned config (either family) of a 2-D call's shape class and majors, or None;
    no work at all while nothing was tuned. Not memoised: a cache keyed by the operands
    kept every tensor ever passed alive (tensors hash by identity), and repeats of a call
    take the prepared launch before this runs."""
    from cutemma.kernels import tune

    if not (tune._TABLE if tune._TABLE is not None else tune.table()):
        return None
    a_major = "K" if A.stride(-1) == 1 else "M"
    b_major = "N" if B.stride(-1) == 1 else "K"
    am, bm = tune.kernel_majors(dtype, a_major, b_major) if dtype in ELEM_BYTES else ("K", "K")
    return _tuned(A.device.index or 0, M, N, K, dtype, am, bm)


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

    One config and dtype: 4 major pairs x 4 alignments x 1 output (16 NVRTC compiles):

    >>> small = (BUILTIN_CONFIGS["small"],)
    >>> precompile("sm_90a", small, dtypes=("bf16",), outs=("same",))  # doctest: +SKIP
    16
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
