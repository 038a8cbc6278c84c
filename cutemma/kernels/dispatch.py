"""``gemm(A, B, C=None, *, alpha, beta, out, out_dtype, config, scale_a, scale_b,
epilogue, bias, bias_row, residual, scale_row, scale_col)``: ``cutemma.gemm``, the one
entry of both families.

2-D or batched 3-D torch tensors; fp16, bf16, tf32, int8 and fp8 (e4m3/e5m2) inputs.

Checks shapes, devices and dtypes (:mod:`cutemma.kernels.operands`), takes the repeated-call
fast path when it can (:mod:`cutemma.kernels.fastpath`), then the sm90 family where its
rules hold (:func:`cutemma.kernels.sm90.host.sm90_refusal`) and the sm80 family otherwise
(:func:`cutemma.kernels.sm80.host.gemm_sm80`).

>>> from cutemma.kernels.pick import BUILTIN_CONFIGS
>>> GemmConfig() in BUILTIN_CONFIGS.values()
True
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from cutemma.errors import DesignError, LaunchError
from cutemma.kernels.fastpath import try_fast
from cutemma.kernels.fastpath_epilogue import try_fast_epilogue
from cutemma.kernels.operands import (
    ELEM_BYTES,
    _arch,
    _check,
    _check_options,
    _dtype,
    _dtype_name,
    _needs_fp8,
)
from cutemma.kernels.sm80.config import GemmConfig
from cutemma.kernels.sm80.host import gemm_sm80
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.sm90.host import gemm_sm90, sm90_refusal
from cutemma.kernels.tuned import lookup_device as _tuned

if TYPE_CHECKING:  # designs and epilogues load with the first call that uses one (cold start)
    from cutemma.kernels.design import GemmDesign


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
    design: GemmDesign | None = None,
    tiled_mma: Any = None,
    epilogue: Any = None,
    bias: Any = None,
    bias_row: Any = None,
    residual: Any = None,
    scale_row: Any = None,
    scale_col: Any = None,
) -> Any:
    """D = alpha * scale_a * scale_b * A @ B + beta * C on the GPU; returns D.

    ``epilogue``: ops fused into the kernel, applied in order to each value before the
    output cast, D = cast(ops(alpha * A @ B + beta * C)), with their tensors as keywords:
    ``bias`` (N,) per column, ``bias_row`` (M,), ``scale_row`` (M,), ``scale_col`` (N,)
    (float32, bfloat16 or float16), ``residual`` (M, N); activations 'relu', 'gelu',
    'gelu_tanh', 'silu' (:mod:`cutemma.kernels.epilogue`, docs/gemm.md). 2-D float calls;
    a repeat takes the prepared launch like a plain call, every tensor read at its address
    (:mod:`cutemma.kernels.fastpath_epilogue`).

    ``design`` (a :class:`cutemma.kernels.GemmDesign`) runs your own kernel: its TiledMMA's
    atom picks the family (``mma.sync`` atoms sm80, GMMA atoms sm90) and its rules are
    checked before anything compiles (a DesignError names the broken one); ``tiled_mma=``
    (a TiledMMA or an atom name) is the shorthand ``design=GemmDesign(tiled_mma)``.

    On an sm_90 device a 2-D or batched 3-D call of float16, bfloat16 (either major) or
    float32 (tf32, K-major) operands whose base pointers, leading strides and batch strides
    are 16-byte aligned runs the Hopper kernel (wgmma + TMA, :mod:`cutemma.kernels.sm90.source`;
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
    extras = (design, tiled_mma, epilogue, bias, bias_row, residual, scale_row, scale_col)
    given = config is None or isinstance(config, _CONFIGS)  # else a design (or a mistake)
    plain = given and extras.count(None) == len(extras)
    if plain and _TRACING[0]():  # torch.compile / export traces this call: one custom-op node
        from cutemma.kernels.torch_op import traced_gemm

        return traced_gemm(A, B, C, alpha, beta, out, out_dtype, config, scale_a, scale_b)
    if design is not None or tiled_mma is not None or (not given and _is_design(config)):
        design, config = _as_design(design, tiled_mma, config), None
        if epilogue is None and design.epilogue:  # the design's own fused ops
            epilogue = design.epilogue
    asked = config if design is None else design  # what the repeated-call key holds
    if (
        C is None
        and out_dtype is None
        and scale_a.__class__ is float
        and scale_a == 1.0
        and (scale_b.__class__ is float and scale_b == 1.0)
    ):
        # a repeat of a call with these operands: its prepared launch (kernels/fastpath.py)
        if epilogue is None and bias is None and bias_row is None and residual is None \
                and scale_row is None and scale_col is None:  # fmt: skip
            done = try_fast(A, B, out, alpha, asked)
        else:  # the epilogue's tensors in epilogue.ARGS order
            ep = (scale_row, scale_col, bias, bias_row, residual)
            done = try_fast_epilogue(A, B, out, alpha, asked, epilogue, ep)
        if done is not None:
            return done
        remember = (out is not None, asked)  # the key of this call's repeats
    else:
        remember = None
    _check_options(alpha, beta, scale_a, scale_b, config)
    if plain and _fake(A, B):  # a fake-tensor or proxy trace outside dynamo: the op node too
        from cutemma.kernels.torch_op import traced_gemm

        return traced_gemm(A, B, C, alpha, beta, out, out_dtype, config, scale_a, scale_b)
    tensors = {"bias": bias, "bias_row": bias_row, "residual": residual,
               "scale_row": scale_row, "scale_col": scale_col}  # fmt: skip
    fused = epilogue is not None or any(t is not None for t in tensors.values())
    if fused:  # before the operands: what needs no GPU
        from cutemma.kernels.epilogue import bind, check_call

        check_call(epilogue, tensors)
    batch, dtype, outs = _check(A, B)  # before torch: a numpy array is named as one
    import torch

    M, K = A.shape[-2:]
    N = B.shape[-1]
    bound = None
    if fused:
        bound = bind(epilogue, tensors, M, N, A.device, batch is not None, dtype == "s8")
        bound = bound if bound.epilogue else None
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
    custom = None
    if design is not None:
        if design.dtype != dtype:
            raise DesignError(
                f"gemm: design {design.name} multiplies {design.dtype} ({design.atom_name}); "
                f"the operands are {_dtype(A)} ({dtype}): give a design of that type"
            )
        from cutemma.kernels.design import check

        check(design, _arch(A.device.index or 0))
        config, custom = design.config, (design if design.custom else None)
    # Hopper: the wgmma + TMA kernel when its rules hold (2-D and batched calls)
    why = sm90_refusal(A, B, config)
    chosen = config
    if why is None and config is None and batch is None:  # cutemma.tune's winner, if any
        chosen = _tuned_2d(A, B, M, N, K, dtype)
        if isinstance(chosen, Sm90Config) and chosen.swap_ab and bound is not None:
            chosen = None  # a swapped kernel takes no fused epilogue: the built-in one
        if isinstance(chosen, GemmConfig):  # sm80 won the tuning
            why, config = "cutemma.tune found the sm80 kernel faster", chosen
    if why is None and chosen is None and batch is None and bound is None and custom is None \
            and (C is None or beta == 0):  # fmt: skip
        from cutemma.kernels.sm90.decode import swap_call  # decode: swap-AB + stream-K

        done = swap_call(A, B, out, out_dtype, alpha, remember)
        if done is not None:
            return done
    if why is None:
        kw = {"alpha": alpha, "beta": beta, "out": out, "out_dtype": out_dtype}
        return gemm_sm90(A, B, C, config=chosen, _remember=remember, _epilogue=bound, **kw)
    if isinstance(config, Sm90Config):
        raise LaunchError(f"gemm: config {config.name} is an sm90 config, but {why}")
    return gemm_sm80(
        A, B, C, alpha=alpha, beta=beta, out=out, out_dtype=out_dtype, config=config,
        batch=batch, dtype=dtype, remember=remember, design=custom, epilogue=bound,
    )  # fmt: skip


def _as_design(design: Any, tiled_mma: Any, config: Any) -> GemmDesign:
    """The design of a call: ``design``, ``GemmDesign(tiled_mma)``, or a design given as
    ``config=`` (what pick_config returns); one of them only."""
    from cutemma.kernels.design import GemmDesign

    if sum(x is not None for x in (design, tiled_mma, config)) > 1:
        raise LaunchError(
            "gemm: give one of config=, design= and tiled_mma= (a design holds its config)"
        )
    if tiled_mma is not None:
        return GemmDesign(tiled_mma)
    design = config if design is None else design
    if not isinstance(design, GemmDesign):
        raise DesignError(
            f"gemm: design= takes a cutemma.kernels.GemmDesign, got {type(design).__name__}"
        )
    return design


def _tuned_2d(A: Any, B: Any, M: int, N: int, K: int, dtype: str) -> Any:
    """The tuned config (either family) of a 2-D call's shape class and majors, or None;
    no work at all while nothing was tuned. Not memoised: a cache keyed by the operands
    kept every tensor ever passed alive (tensors hash by identity), and repeats of a call
    take the prepared launch before this runs."""
    from cutemma.kernels import tuned

    if not (tuned._TABLE if tuned._TABLE is not None else tuned.table()):
        return None
    a_major = "K" if A.stride(-1) == 1 else "M"
    b_major = "N" if B.stride(-1) == 1 else "K"
    am, bm = tuned.kernel_majors(dtype, a_major, b_major) if dtype in ELEM_BYTES else ("K", "K")
    return _tuned(A.device.index or 0, M, N, K, dtype, am, bm)


_CONFIGS = (GemmConfig, Sm90Config)  # a config a call may give besides a design


def _is_design(config: Any) -> bool:
    """A GemmDesign given as config= (none exists before its module loads)."""
    mod = sys.modules.get("cutemma.kernels.design")
    return mod is not None and isinstance(config, mod.GemmDesign)


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
    """A or B is a fake tensor, or a torch dispatch mode (a proxy trace) is active (never
    where torch is not in use: a numpy array goes on to the checks that name it)."""
    if "torch" not in sys.modules:
        return False
    from torch._subclasses.fake_tensor import is_fake
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    return is_fake(A) or is_fake(B) or _get_current_dispatch_mode() is not None
