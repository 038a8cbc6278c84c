"""The checked path of ``cutemma.gemm``: every call that the repeated-call fast path did not
serve. Checks shapes, devices and dtypes (:mod:`cutemma.kernels.operands`), then runs the
sm90 family where its rules hold (:func:`cutemma.kernels.sm90.host.sm90_refusal`) and the
sm80 family otherwise (:func:`cutemma.kernels.sm80.host.gemm_sm80`); the launch it prepares
is kept for the fast path's next hit (``remember``).

:func:`gemm_eager` is ``cutemma.gemm`` without the tracing branch: what the torch custom op
runs (:mod:`cutemma.kernels.torch_op`), here so that neither that module nor this one
imports :mod:`cutemma.kernels.dispatch`, which imports both.

>>> gemm_eager(object(), object())
Traceback (most recent call last):
...
cutemma.errors.LaunchError: gemm: A must be a 2-D or 3-D (batch, rows, cols) torch tensor on a CUDA device, got a object (for numpy arrays on the CPU use cutemma.emulate.gemm)
"""

from __future__ import annotations

from typing import Any

from cutemma.errors import LaunchError
from cutemma.kernels.fastpath import try_fast
from cutemma.kernels.operands import ELEM_BYTES, _check, _dtype, _dtype_name, _needs_fp8
from cutemma.kernels.sm80.config import GemmConfig
from cutemma.kernels.sm80.host import gemm_sm80
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.sm90.host import gemm_sm90, sm90_refusal
from cutemma.kernels.tuned import lookup_device as _tuned


def gemm_eager(
    A: Any,
    B: Any,
    C: Any = None,
    alpha: float = 1.0,
    beta: float = 0.0,
    out: Any = None,
    out_dtype: Any = None,
    config: Any = None,
    scale_a: float = 1.0,
    scale_b: float = 1.0,
) -> Any:
    """``cutemma.gemm`` on real tensors (the fast path, else :func:`gemm_checked`)."""
    remember = None
    if C is None and out_dtype is None and scale_a == 1.0 and scale_b == 1.0:
        done = try_fast(A, B, out, alpha, config)
        if done is not None:
            return done
        remember = (out is not None, config)
    return gemm_checked(A, B, C, alpha, beta, out, out_dtype, config, scale_a, scale_b, remember)


def gemm_checked(
    A: Any,
    B: Any,
    C: Any,
    alpha: float,
    beta: float,
    out: Any,
    out_dtype: Any,
    config: Any,
    scale_a: float,
    scale_b: float,
    remember: tuple | None,
) -> Any:
    """The checked call: what ``cutemma.gemm`` documents, for a call the fast path did not
    serve; ``remember`` is the fast-path key's (out given, config) under which the launch is
    kept, or None for a call that may not be repeated through it (C, out_dtype, scales)."""
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
    if why is None and chosen is None and batch is None and (C is None or beta == 0):
        done = _split(A, B, out, out_dtype, alpha, remember)  # decode: K slices fill the SMs
        if done is not None:
            return done
    if why is None:
        kw = {"alpha": alpha, "beta": beta, "out": out, "out_dtype": out_dtype}
        return gemm_sm90(A, B, C, config=chosen, _remember=remember, **kw)
    if isinstance(config, Sm90Config):
        raise LaunchError(f"gemm: config {config.name} is an sm90 config, but {why}")
    return gemm_sm80(
        A, B, C, alpha=alpha, beta=beta, out=out, out_dtype=out_dtype, config=config,
        batch=batch, dtype=dtype, remember=remember,
    )  # fmt: skip


def _split(A: Any, B: Any, out: Any, out_dtype: Any, alpha: float, remember: Any) -> Any:
    """D through the split-K launch (:mod:`cutemma.kernels.sm90.splitk`) when it pays for
    this shape, else None (the plain kernel runs; a wrong ``out`` is named there)."""
    import torch

    from cutemma.kernels.operands import _arch
    from cutemma.kernels.sm90.host import sm_count
    from cutemma.kernels.sm90.splitk import try_split

    M, N = A.shape[0], B.shape[1]
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
