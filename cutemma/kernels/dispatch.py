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

import sys
from typing import Any

from cutemma.kernels.checked import gemm_checked
from cutemma.kernels.fastpath import try_fast
from cutemma.kernels.sm80.config import GemmConfig
from cutemma.kernels.sm90.config import Sm90Config


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
    if _TRACING[0]():  # torch.compile / export traces this call: one custom-op node
        from cutemma.kernels.torch_op import traced_gemm

        return traced_gemm(A, B, C, alpha, beta, out, out_dtype, config, scale_a, scale_b)
    remember = None
    if C is None and out_dtype is None and scale_a == 1.0 and scale_b == 1.0:
        # a repeat of a call with these operands: its prepared launch (kernels/fastpath.py)
        done = try_fast(A, B, out, alpha, config)
        if done is not None:
            return done
        remember = (out is not None, config)  # the key of this call's repeats
    if _fake(A, B):  # a fake-tensor or proxy trace outside dynamo: the op node too
        from cutemma.kernels.torch_op import traced_gemm

        return traced_gemm(A, B, C, alpha, beta, out, out_dtype, config, scale_a, scale_b)
    return gemm_checked(A, B, C, alpha, beta, out, out_dtype, config, scale_a, scale_b, remember)


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
