"""``cutemma.gemm``: one path for every call, each step once.

1. A repeat of an earlier call with these operands takes its prepared launch (:func:`try_fast`,
   in the runtime's table :data:`cutemma.kernels.runtime.fastpath.FAST`).
2. While torch traces (``torch.compile``, export, fake tensors), the call is one node of
   the graph: the custom op (:mod:`cutemma.kernels.torch_op`).
3. :func:`~cutemma.kernels.call.make_call` checks the arguments once into a call record.
4. :func:`~cutemma.kernels.policy.choose` picks the kernel: family, config, operand views.
5. The family (:mod:`~cutemma.kernels.sm90.host`, :mod:`~cutemma.kernels.sm80.host`)
   prepares its launch: the compiled variant, argument boxes, grid.
6. The runtime keeps it for the call's repeats and launches it
   (:func:`cutemma.kernels.runtime.fastpath.run`).

The dispatcher hands each step its input and takes its answer; no step calls back into the
dispatcher, the call record's checks or the policy.

>>> from cutemma.kernels.pick import BUILTIN_CONFIGS
>>> GemmConfig() in BUILTIN_CONFIGS.values()
True
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from cutemma.errors import LaunchError
from cutemma.kernels.call import make_call
from cutemma.kernels.epilogue import ARGS as _EP  # the epilogue's tensor keywords, in order
from cutemma.kernels.policy import Choice, choose
from cutemma.kernels.runtime.fastpath import FAST, LAUNCH_LOCK, run
from cutemma.kernels.sm80 import host as sm80
from cutemma.kernels.sm80.config import GemmConfig
from cutemma.kernels.sm90 import host as sm90
from cutemma.kernels.sm90.config import Sm90Config

if TYPE_CHECKING:  # designs load with the first call that uses one (cold start)
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
    (:mod:`cutemma.kernels.runtime.fastpath`).

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
    asked = (
        config
        if design is None and tiled_mma is None
        else (design if design is not None else tiled_mma)
    )
    traced = _TRACING[0]()  # torch.compile traces this call
    if not traced and (
        C is None
        and out_dtype is None
        and scale_a.__class__ is float
        and scale_a == 1.0
        and (scale_b.__class__ is float and scale_b == 1.0)
    ):  # a repeat of a call with these operands: its prepared launch
        if epilogue is None and bias is None and bias_row is None and residual is None \
                and scale_row is None and scale_col is None:  # fmt: skip
            done = try_fast(A, B, out, alpha, asked)
        else:  # the epilogue's tensors in _EP order
            ep = (scale_row, scale_col, bias, bias_row, residual)
            done = try_fast_epilogue(A, B, out, alpha, asked, epilogue, ep)
        if done is not None:
            return done
    ep = (scale_row, scale_col, bias, bias_row, residual)
    if not traced and "torch" in sys.modules:  # fake tensors or a proxy trace outside dynamo
        traced = is_fake(A) or is_fake(B) or _dispatch_mode() is not None
    if traced:  # the call as one custom-op node of the graph
        from cutemma.kernels.torch_op import traced_gemm

        node = traced_gemm(A, B, C, alpha, beta, out, out_dtype, config, scale_a, scale_b,
                           design, tiled_mma, epilogue, ep)  # fmt: skip
        if node is not None:
            return node
    # (traced: an argument the op's schema cannot carry, which these checks name)
    call = make_call(A, B, C, alpha=alpha, beta=beta, out=out, out_dtype=out_dtype,
                     config=config, scale_a=scale_a, scale_b=scale_b, design=design,
                     tiled_mma=tiled_mma, epilogue=epilogue, tensors=dict(zip(_EP, ep)),
                     asked=asked, fake=traced)  # fmt: skip
    if traced:
        raise LaunchError("gemm: an argument is not a torch tensor where one belongs")
    if call.done is not None:
        return call.done
    choice = choose(call)
    family = sm90 if choice.family == "sm90" else sm80  # one interface: prepare(call, choice)
    prepared, keeps = family.prepare(call, choice)
    C = call.D if call.C is None else call.C
    kept = (*call.given, call.out, out is not None, asked) if keeps else None
    epilogue = call.epilogue if choice.epilogue is None else choice.epilogue  # (D^T's, swapped)
    run(prepared, C, call.D, call.alpha, call.beta, epilogue, kept)
    return call.out


def try_fast(A: Any, B: Any, out: Any, alpha: float, config: Any) -> Any:
    """D = alpha * A @ B through a prepared launch, or None when this signature has none
    (the caller takes the checked path, which prepares one). Written flat: every line
    here is host time of each repeated call.

    >>> try_fast(object(), object(), None, 1.0, None) is None  # not tensors: not here
    True
    """
    try:
        entries = FAST.get((A.data_ptr(), B.data_ptr(), out is not None, config))
        if entries is None:
            return None
        if out is None:
            for e in entries:
                if e.check(A, B):
                    break
            else:
                return None
            out = e.new(e.shape, dtype=e.dtype, device=e.device)
        else:
            for e in entries:
                if e.check(A, B, out):
                    break
            else:
                return None
        ptr = out.data_ptr()
    except (AttributeError, TypeError, RuntimeError):  # not tensors (or fake ones): the
        # checked path names the error (or hands a fake tensor to the torch op)
        return None
    p = e.prepared
    with LAUNCH_LOCK:
        if p.at is not e or p.ptr != ptr:  # out moved (or the boxes hold another call's)
            p.write_out(ptr, e.strides, out)
            p.at, p.ptr = e, ptr
        try:
            p.alpha.value = alpha
        except TypeError:  # e.g. alpha not a number: the checked path names it
            return None
        p.launch()
    return out


def try_fast_epilogue(
    A: Any, B: Any, out: Any, alpha: float, config: Any, names: Any, tensors: tuple
) -> Any:
    """D = epilogue(alpha * A @ B) through a prepared launch, or None (the caller takes the
    checked path, which prepares one). ``tensors``: the call's epilogue keywords in
    :data:`cutemma.kernels.epilogue.ARGS` order, None where not given.

    >>> from cutemma.kernels.runtime.fastpath import FAST, remember_epilogue
    >>> class T:  # a stand-in tensor: what the key and the guard ask
    ...     def __init__(self, ptr, shape, stride=None):
    ...         self.ptr, self.shape, self.dtype, self.device = ptr, shape, "bf16", "cuda:0"
    ...         self.st = stride or (shape[-1], 1)[-len(shape):]
    ...     def data_ptr(self): return self.ptr
    ...     def stride(self): return self.st
    ...     def get_device(self): return 0
    >>> import ctypes
    >>> class P:  # a stand-in prepared launch: its boxes and launches
    ...     at = ptr = None; alpha = ctypes.c_float(); epi = [ctypes.c_uint64()]; runs = []
    ...     def write_out(self, ptr, st, out): pass
    ...     def launch(self): self.runs.append(self.epi[0].value)
    >>> A, B, b1 = T(1 << 40, (64, 32)), T(2 << 40, (32, 16)), T(3 << 40, (16,), (1,))
    >>> from cutemma.kernels.epilogue import FastRecord
    >>> rec = FastRecord(("bias",), (True, True, False, True, True), (b1,), ((0, 0),))
    >>> D = T(4 << 40, (64, 16))
    >>> remember_epilogue(A, B, D, True, None, P(), rec)
    >>> b2 = T(5 << 40, (16,), (1,))  # another bias with the same metadata: its own address
    >>> t = (None, None, b2, None, None)
    >>> try_fast_epilogue(A, B, D, 1.0, None, ("bias",), t) is D, P.runs == [b2.ptr]
    (True, True)
    >>> try_fast_epilogue(A, B, D, 1.0, None, ("bias", "relu"), t) is None  # other ops
    True
    >>> short = (None, None, T(6 << 40, (8,), (1,)), None, None)  # another length: refused
    >>> try_fast_epilogue(A, B, D, 1.0, None, ("bias",), short) is None
    True
    >>> _ = FAST.clear()
    """
    try:
        absent = tuple(t is None for t in tensors)
        entries = FAST.get((A.data_ptr(), B.data_ptr(), out is not None, config, names, absent))
        if entries is None:
            return None
        given = [t for t in tensors if t is not None]
        if out is None:
            for e in entries:
                if e.check(A, B, *given):
                    break
            else:
                return None
            out = e.new(e.shape, dtype=e.dtype, device=e.device)
        else:
            for e in entries:
                if e.check(A, B, out, *given):
                    break
            else:
                return None
        ptr = out.data_ptr()
        ptrs = [(i, given[j].data_ptr()) for i, j in e.epi]
    except (AttributeError, TypeError):  # not tensors, unhashable ops: the checked path
        return None
    p = e.prepared
    with LAUNCH_LOCK:
        if p.at is not e or p.ptr != ptr:
            p.write_out(ptr, e.strides, out)
            p.at, p.ptr = e, ptr
        for i, v in ptrs:
            p.epi[i].value = v
        try:
            p.alpha.value = alpha
        except TypeError:
            return None
        p.launch()
    return out


def which_kernel(A: Any, B: Any, C: Any = None, **kwargs: Any) -> Choice:
    """The kernel ``cutemma.gemm(A, B, C, **kwargs)`` would run, without running it: the
    :class:`~cutemma.kernels.policy.Choice` (family, config, swap, why not sm90) of the
    checked call. Raises what the call would raise for its arguments.

    >>> import torch                                                      # doctest: +SKIP
    >>> A = torch.randn(16, 8192, device="cuda", dtype=torch.bfloat16)   # doctest: +SKIP
    >>> which_kernel(A, torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)).swap  # doctest: +SKIP
    True
    """
    return checked(A, B, C, **kwargs)[1]


def checked(A: Any, B: Any, C: Any = None, **kwargs: Any) -> tuple[Any, Choice]:
    """(the call record, the policy's choice) of ``cutemma.gemm(A, B, C, **kwargs)``, without
    running it: what :func:`which_kernel` answers, and what the autotuning front
    (:mod:`cutemma.kernels.autotune`) tunes a first call from.

    >>> checked.__name__
    'checked'
    """
    tensors = {k: kwargs.pop(k, None) for k in _EP}
    call = make_call(A, B, C, tensors=tensors, **kwargs)
    return call, choose(call)


def traced(A: Any, B: Any) -> bool:
    """Whether torch traces a call of ``A`` and ``B`` now (dynamo compiling, fake tensors or a
    proxy trace): what :func:`gemm` hands to the custom op.

    >>> traced(object(), object())
    False
    """
    if _TRACING[0]():
        return True
    return "torch" in sys.modules and (is_fake(A) or is_fake(B) or _dispatch_mode() is not None)


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


def is_fake(t: Any) -> bool:
    """Whether ``t`` is a torch fake tensor (bound to torch's own check on first use)."""
    from torch._subclasses.fake_tensor import is_fake as check

    globals()["is_fake"] = check
    return check(t)


def _dispatch_mode() -> Any:
    """torch's current dispatch mode (a proxy trace), or None."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    globals()["_dispatch_mode"] = _get_current_dispatch_mode
    return _get_current_dispatch_mode()
