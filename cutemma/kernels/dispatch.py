"""``gemm(A, B, C=None, *, alpha, beta, out, out_dtype, config, scale_a, scale_b)``:
``cutemma.gemm``, the one entry of both families.

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

from typing import Any

from cutemma.errors import LaunchError
from cutemma.kernels.fastpath import try_fast
from cutemma.kernels.operands import ELEM_BYTES, _check, _dtype, _dtype_name, _needs_fp8
from cutemma.kernels.sm80.host import gemm_sm80
from cutemma.kernels.sm80.plan import GemmConfig
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.sm90.host import gemm_sm90, sm90_refusal
from cutemma.kernels.tuned import lookup_device as _tuned


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
    return gemm_sm80(
        A, B, C, alpha=alpha, beta=beta, out=out, out_dtype=out_dtype, config=config,
        batch=batch, dtype=dtype, remember=remember,
    )  # fmt: skip


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
