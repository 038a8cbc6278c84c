"""The sm80 family's host side: compile (and cache) a variant, launch it for ``cutemma.gemm``
(:func:`gemm_sm80`), precompile the built-in variants.

>>> from cutemma.kernels.pick import BUILTIN_CONFIGS
>>> BUILTIN_CONFIGS["large"].name
'b128x128x32_w2x2_s4'
"""

from __future__ import annotations

from functools import cache
from typing import Any

from cutemma.errors import LaunchError
from cutemma.kernels.epilogue import NO_EPILOGUE, Bound, Epilogue, reference
from cutemma.kernels.fastlaunch import DriverKernel
from cutemma.kernels.fastpath import remember as _remember_launch
from cutemma.kernels.fastpath_epilogue import remember_epilogue
from cutemma.kernels.operands import _DTYPES, _arch, _batch_stride, _dtype, _major
from cutemma.kernels.pick import BUILTIN_CONFIGS, builtin_config
from cutemma.kernels.sm80.config import ELEM_BYTES, GemmConfig
from cutemma.kernels.sm80.launch import Sm80Launch
from cutemma.kernels.tuned import lookup_device as _tuned


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
    design: Any = None,
    epilogue: Epilogue = NO_EPILOGUE,
) -> tuple[Any, int, int]:
    """(Kernel, shared bytes, threads) for one variant; compiled once per process (disk-cached).
    ``design``: a custom GemmDesign (its TiledMMA, layouts, copies), else None; ``epilogue``:
    fused ops.

    Loading the kernel needs a GPU; the default config takes 64 KiB of shared memory:

    >>> args = (GemmConfig(), "bf16", "K", "N", "bf16", "bf16", True, True, "sm_90a")
    >>> kern, smem, threads = compiled_kernel(*args)  # doctest: +SKIP
    >>> smem, threads  # doctest: +SKIP
    (65536, 128)
    """
    from cutemma.cuda import compile, load_kernel
    from cutemma.kernels.sm80.plan import GemmPlan  # the generator: loaded when it compiles
    from cutemma.kernels.sm80.source import gemm_source, kernel_name, params

    args = (config, dtype, a_major, b_major, out, c_type, vec_a, vec_b, design, epilogue)
    src = gemm_source(*args)
    cubin = compile(src, arch)
    name = kernel_name(*args)
    plan = GemmPlan(config, dtype, a_major, b_major, design)
    kern = load_kernel(cubin, name, params(out, c_type, dtype, epilogue))
    kern.fast = DriverKernel(cubin.data, name, plan.shared_bytes, plan.threads)
    return kern, plan.shared_bytes, plan.threads


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


_FAST = {"ok": True, "why": None}  # the lean launch path works (else why not)


def _flat(t: Any) -> Any:
    """A 1-D contiguous view over the elements a strided (M, N) tensor spans (no copy).

    The kernel reads strides from its own parameters; the launcher wants dense arguments.
    """
    import torch

    span = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    return torch.as_strided(t, (span,), (1,), t.storage_offset())


def _compile_variant(key: tuple) -> str:
    from cutemma.cuda import compile
    from cutemma.kernels.sm80.source import gemm_source, kernel_name

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


def gemm_sm80(
    A: Any,
    B: Any,
    C: Any,
    *,
    alpha: float,
    beta: float,
    out: Any,
    out_dtype: Any,
    config: GemmConfig | None,
    batch: int | None,
    dtype: str,
    remember: tuple | None,
    design: Any = None,
    epilogue: Bound | None = None,
) -> Any:
    """The sm80 (``mma.sync``) half of :func:`cutemma.gemm`, after its checks: ``batch`` and
    ``dtype`` as :func:`cutemma.kernels.operands._check` read them, ``remember`` the
    fast-path key's slots (or None: not remembered), ``epilogue`` the fused ops bound to
    their tensors (:func:`cutemma.kernels.epilogue.bind`). Writes and returns ``out``.

    >>> import torch                                                  # doctest: +SKIP
    >>> A = torch.randn(64, 32, device="cuda", dtype=torch.float16)   # doctest: +SKIP
    >>> gemm_sm80(A, A.T, None, alpha=1.0, beta=0.0, out=None, out_dtype=torch.float16,
    ...           config=None, batch=None, dtype="f16", remember=None).shape  # doctest: +SKIP
    torch.Size([64, 64])
    """
    import torch

    M, K = A.shape[-2:]
    N = B.shape[-1]
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
    if K == 0 and epilogue is not None:  # the ops of a zero product (torch's own)
        zero = torch.zeros(shape, device=A.device)
        return out.copy_(reference(zero, epilogue.epilogue.ops, epilogue.named, alpha, beta, C))
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
    if design is not None:  # a design's smem layout fixes its operand's major: copy to it
        A, a_major, lda = _to_major(A, "A", a_major, lda, design_major(design, "A"))
        B, b_major, ldb = _to_major(B, "B", b_major, ldb, design_major(design, "B"))
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
    config = config or builtin_config(M, N, K, batch or 1, dtype)
    sa, sb = strides[:2] if strides else (0, 0)
    vec_a = _aligned(A, lda, M if a_major == "K" else K, sa)
    vec_b = _aligned(B, ldb, N if b_major == "K" else K, sb)
    arch = _arch(device)
    out_t, c_t = _DTYPES[_dtype(out)], _DTYPES[_dtype(C)]
    epi = epilogue.epilogue if epilogue is not None else NO_EPILOGUE
    kern, shared, threads = compiled_kernel(
        config, dtype, a_major, b_major, out_t, c_t, vec_a, vec_b, arch, design, epi
    )
    tiles = -(-M // config.block_m) * -(-N // config.block_n)
    if _FAST["ok"]:
        sa_sb = strides[:2] if strides else (0, 0)
        sc_sd = strides[2:] if strides else (0, 0)
        try:
            p = Sm80Launch(kern.fast, device, tiles, batch or 1, (A.data_ptr(), B.data_ptr()),
                           (M, N, K, lda, ldb), sa_sb, dtype == "s8", batch is not None)  # fmt: skip
            if epi:
                p.add_epilogue(epi.params())
                p.set_epilogue(epilogue.values)
            p.set_operands((C.data_ptr(), C.stride()), (out.data_ptr(), out.stride()),
                           float(alpha), float(beta), sc_sd)  # fmt: skip
            p.launch()
        except Exception as exc:  # fall back to the checked launcher, once and for all
            _FAST["ok"], _FAST["why"] = False, f"{type(exc).__name__}: {exc}"
        else:
            if remember is not None and C is out and A is A_in and B is B_in:
                if epilogue is None:
                    _remember_launch(A, B, out, *remember, p)  # for cutemma.gemm's next call
                elif epilogue.fast is not None:
                    remember_epilogue(A, B, out, *remember, p, epilogue.fast)
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
        *(_flat(a) if hasattr(a, "data_ptr") else a for a in (epilogue.args if epi else ())),
        grid=(tiles, batch or 1),
        block=threads,
        shared_mem=shared,
    )
    return out


def design_major(design: Any, which: str) -> str | None:
    """The major a design fixes for ``which`` (:meth:`GemmDesign.major`), None when the
    operand's own major is used."""
    return design.major(which)


def _to_major(t: Any, which: str, major: str, ld: int, want: str | None) -> tuple:
    """(tensor, major, leading stride) with ``t`` read ``want``-major (copied when its
    strides do not allow it); a mode of extent 1 takes any stride (never stepped along).
    ``want`` None: as given."""
    if want is None:
        return t, major, ld
    row_major = (want == "K") == (which == "A")  # A K-major, B N-major: rows contiguous
    rows, cols = t.shape[-2:]
    s0, s1 = t.stride()[-2:]
    if not ((s1 == 1 or cols == 1) if row_major else (s0 == 1 or rows == 1)):
        t = t.contiguous() if row_major else t.transpose(-1, -2).contiguous().transpose(-1, -2)
        s0, s1 = t.stride()[-2:]
    if row_major:
        return t, want, s0 if rows > 1 else max(cols, 1)
    return t, want, s1 if cols > 1 else max(rows, 1)
