"""The arguments of ``cutemma.gemm`` as both families read them: torch dtypes to kernel
element types, shapes and batch broadcasting, each operand's major and leading stride, the
device's compile target. No family imports another's host code for these: they live here.

>>> _INPUTS["float32"]
('tf32', ('float32',))
"""

from __future__ import annotations

import math
import sys
from typing import Any

from cutemma.errors import LaunchError
from cutemma.kernels.sm80.config import ELEM_BYTES

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


# torch input dtype -> (kernel dtype, output dtypes it may write; the first is the default)
SM90_DTYPES = {
    "float16": ("f16", ("float16", "float32")),
    "bfloat16": ("bf16", ("bfloat16", "float32")),
    "float32": ("tf32", ("float32",)),
    "float8_e4m3fn": ("e4m3", ("bfloat16", "float16", "float32")),
    "float8_e5m2": ("e5m2", ("bfloat16", "float16", "float32")),
}


_MAX_BATCH = 65535  # gridDim.y


def _dtype(t: Any) -> str:
    return str(t.dtype).replace("torch.", "")


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


def _check_options(alpha: Any, beta: Any, scale_a: Any, scale_b: Any, config: Any) -> None:
    """LaunchErrors for gemm's scalars (finite real numbers, not tensors) and its config.

    >>> _check_options(1.0, 0.0, float("nan"), 1.0, None)
    Traceback (most recent call last):
    ...
    cutemma.errors.LaunchError: gemm: scale_a=nan must be a finite real number (a Python or numpy float or int)
    """
    import numbers

    from cutemma.kernels.sm80.config import GemmConfig  # not sm80.plan: the generator
    from cutemma.kernels.sm90.config import Sm90Config

    for what, v in (("alpha", alpha), ("beta", beta), ("scale_a", scale_a), ("scale_b", scale_b)):
        if not isinstance(v, numbers.Real) or isinstance(v, bool) or not math.isfinite(v):
            shown = f"a {type(v).__module__}.{type(v).__name__}" if hasattr(v, "shape") else repr(v)
            raise LaunchError(
                f"gemm: {what}={shown} must be a finite real number (a Python or numpy float or int)"
            )
    if config is not None and not isinstance(config, GemmConfig | Sm90Config):
        raise LaunchError(
            f"gemm: config={config!r}: a GemmConfig (sm80), an Sm90Config (sm90) or None"
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


def _needs_fp8(device: int, a: str, b: str) -> None:
    """float8 mma.sync exists from sm_89 on: refuse older GPUs before compiling."""
    arch = _arch(device)
    if int(arch[3:].rstrip("a")) < 89:
        raise LaunchError(
            f"gemm: {a} x {b} needs an sm_89 or newer GPU (fp8 mma.sync); device {device} is "
            f"{arch} — convert the operands to bfloat16 there"
        )


_ARCH: dict[int, str] = {}  # device -> compile target, read once per process


def _arch(device: int) -> str:
    """The compile target of a device, read once: from torch's device properties when
    torch's CUDA is up (cached by torch; no driver call), else a driver query."""
    arch = _ARCH.get(device)
    if arch is None:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            from cutemma.cuda.compile import arch_target

            arch = arch_target(*torch.cuda.get_device_capability(device))
        else:
            from cutemma.cuda import device_arch

            arch = device_arch(device)
        _ARCH[device] = arch
    return arch


def _dtype_name(d: Any) -> str:
    return str(d).replace("torch.", "")
