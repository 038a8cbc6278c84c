"""One call of ``cutemma.gemm``, checked once: :func:`make_call` reads the arguments into a
:class:`Call` record, or raises the error that names what is wrong and what would be right.

Everything after it (the policy, the family, the runtime) reads the record and checks
nothing again: the operands' shapes, dtypes and devices, the batch (torch.matmul's
broadcasting), the output (given, or made here), C (cast and broadcast to D), the scalars
(alpha with the fp8 scales folded in), a design (its rules on this device) and the epilogue
(its tensors bound). A call with nothing to compute (an empty D, K = 0) is answered here.
The torch op's fake implementation runs the same checks (``fake=True``), so a traced call
refuses exactly what an eager one refuses.

>>> KERNEL_TYPES["float32"]
('tf32', ('float32',))
"""

from __future__ import annotations

import math
import numbers
import sys
from typing import Any

from cutemma.copy.banks import SECTOR_BYTES
from cutemma.errors import DesignError, LaunchError
from cutemma.hardware import arch_number
from cutemma.kernels.common.types import ELEM_BYTES

# torch input dtype -> (kernel element type, output dtypes it may write; the first is the default)
KERNEL_TYPES = {
    "float16": ("f16", ("float16", "float32")),
    "bfloat16": ("bf16", ("bfloat16", "float32")),
    "float32": ("tf32", ("float32",)),
    "int8": ("s8", ("int32",)),
    "float8_e4m3fn": ("e4m3", ("bfloat16", "float16", "float32")),
    "float8_e5m2": ("e5m2", ("bfloat16", "float16", "float32")),
}
# torch output / C dtype -> kernel output type
OUT_KINDS = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "int32": "s32"}
MAX_BATCH = 65535  # problems of one launch (the sm80 kernel's grid y)


class Call:
    """A checked ``cutemma.gemm`` call: what every later step reads.

    ``A``, ``B``: the operands as the kernel reads them (a batch of one is its 2-D matrices);
    ``given``: A and B as the caller passed them (the fast path's key); ``C``: None or C cast
    to D's dtype and broadcast to D's shape (beta 0 drops it); ``out``: what the call
    returns; ``D``: the view of ``out`` the kernel writes; ``alpha`` (scale_a and scale_b
    folded in), ``beta``; ``M, N, K`` (plain ints), ``batch`` (None for a 2-D problem),
    ``dtype`` (the kernel's element type), ``out_type``, ``c_type`` (kernel output types);
    ``a_major``, ``b_major``: 'K' or 'M' / 'N' by whether the operand's last mode is contiguous
    ('K' for 8- and 32-bit types, which every kernel reads K-major); ``rows16``: whether A's
    and B's rows sit half a 32-byte sector apart (:func:`rows16`); ``device``,
    ``arch``, ``sms`` (multiprocessors, read on sm_90 devices, else 0), ``gpu`` (its name there, else ""); ``epilogue`` (a bound :class:`~cutemma.kernels.epilogue.Bound` or None);
    ``design`` (checked) and ``config`` (asked for) or None; ``asked``: what the call asked
    for (the fast path's key slot); ``remember``: whether a repeat may reuse this call's
    launch; ``done``: the result of a call with nothing to compute, else None.

    >>> Call.__slots__[:4]
    ('A', 'B', 'given', 'C')
    """

    __slots__ = ("A", "B", "given", "C", "out", "D", "alpha", "beta", "M", "N", "K", "batch",
                 "dtype", "out_type", "c_type", "a_major", "b_major", "rows16", "device", "arch",
                 "sms", "gpu", "epilogue", "design", "config", "asked", "remember", "done")  # fmt: skip

    def __repr__(self) -> str:
        shape = (
            (self.M, self.N, self.K) if self.batch is None else (self.batch, self.M, self.N, self.K)
        )
        return f"Call({self.dtype} {shape} -> {self.out_type} on {self.arch})"


def make_call(
    A: Any,
    B: Any,
    C: Any = None,
    *,
    alpha: Any = 1.0,
    beta: Any = 0.0,
    out: Any = None,
    out_dtype: Any = None,
    config: Any = None,
    scale_a: Any = 1.0,
    scale_b: Any = 1.0,
    design: Any = None,
    tiled_mma: Any = None,
    epilogue: Any = None,
    tensors: dict[str, Any] | None = None,
    asked: Any = None,
    fake: bool = False,
) -> Call:
    """Check a ``cutemma.gemm`` call and read it into a :class:`Call` (the arguments are
    :func:`cutemma.gemm`'s; ``tensors`` the epilogue's by keyword; ``asked``: the fast
    path's key slot for what the call asked for (config, design or TiledMMA); ``fake``: the torch op's
    fake implementation, which makes D and computes nothing). Raises LaunchError or
    DesignError naming what is wrong and what would be accepted.

    >>> make_call([[1.0]], [[1.0]])
    Traceback (most recent call last):
    ...
    cutemma.errors.LaunchError: gemm: A must be a 2-D or 3-D (batch, rows, cols) torch tensor on a CUDA device, got a list (for numpy arrays on the CPU use cutemma.emulate.gemm)
    """
    tensors = {k: v for k, v in (tensors or {}).items() if v is not None}
    for what, v in (("alpha", alpha), ("beta", beta), ("scale_a", scale_a), ("scale_b", scale_b)):
        check_scalar(what, v)
    design = _as_design(design, tiled_mma, config)
    if design is not None:
        config = None
        epilogue = design.epilogue if epilogue is None and design.epilogue else epilogue
    elif config is not None and not _is_config(config):
        raise LaunchError(
            f"gemm: config={config!r}: a GemmConfig (sm80), an Sm90Config (sm90) or None"
        )
    ops = None
    if epilogue is not None or tensors:  # what needs no operand first: the op list
        from cutemma.kernels.epilogue import check_call

        ops, _ = check_call(epilogue, tensors)
    call = Call()
    call.given = (A, B)
    call.asked = asked
    repeatable = out_dtype is None and C is None and _unit(scale_a, scale_b)
    call.batch, call.dtype, outs = _operands(A, B)
    call.M, call.K = (int(x) for x in A.shape[-2:])
    call.N = int(B.shape[-1])
    call.device = A.device.index or 0
    call.arch = device_arch(call.device) if not fake else _traced_arch(call.device)
    call.sms = sm_count(call.device) if call.arch == "sm_90a" and not fake else 0
    call.gpu = gpu_name(call.device) if call.sms else ""  # the cost model's device kind
    import torch

    if out_dtype is not None and not isinstance(out_dtype, torch.dtype):
        raise LaunchError(
            f"gemm: out_dtype={out_dtype!r} is a {type(out_dtype).__name__}; give a torch dtype "
            f"({', '.join('torch.' + o for o in outs)}) or None"
        )
    given = getattr(out, "dtype", None)  # an out that is no tensor is named by _output
    out_dtype = out_dtype or (given if isinstance(given, torch.dtype) else getattr(torch, outs[0]))
    if _name(out_dtype) not in outs:
        raise LaunchError(
            f"gemm: out_dtype {_name(out_dtype)} for {_name(A.dtype)} inputs; choose "
            + " or ".join(outs)
        )
    call.alpha, call.beta = _scalars(call.dtype, alpha, beta, scale_a, scale_b)
    if ELEM_BYTES[call.dtype] == 1 and call.dtype != "s8" and _arch_number(call.arch) < 89:
        raise LaunchError(
            f"gemm: {_name(A.dtype)} x {_name(B.dtype)} needs an sm_89 or newer GPU (fp8 "
            f"mma.sync); device {call.device} is {call.arch} — convert the operands to "
            "bfloat16 there"
        )
    if design is not None:
        if design.dtype != call.dtype:
            raise DesignError(
                f"gemm: design {design.name} multiplies {design.dtype} ({design.atom_name}); "
                f"the operands are {_name(A.dtype)} ({call.dtype}): give a design of that type"
            )
        from cutemma.kernels.design import check

        if call.arch is not None:
            check(design, call.arch)
    call.design, call.config = design, config
    shape = (call.M, call.N) if call.batch is None else (call.batch, call.M, call.N)
    call.out = _output(out, shape, out_dtype, A, fake)
    call.C = _c_operand(C, call.beta, shape, call.out, A)
    if call.C is None:
        call.beta = 0.0
    call.out_type = OUT_KINDS[_name(call.out.dtype)]
    call.c_type = call.out_type
    call.remember = repeatable
    call.A, call.B, call.D, call.done = A, B, call.out, None
    batched = call.batch is not None  # (a batch of one is a batched call to the epilogue)
    empty = call.M == 0 or call.N == 0 or call.batch == 0 or call.K == 0
    if call.batch == 1 and not (fake or empty):  # one problem: the 2-D kernel on its matrices
        one = lambda t: t[0] if t.dim() == 3 else t  # noqa: E731
        call.A, call.B, call.D = one(A), one(B), call.out[0]
        call.C = None if call.C is None else call.C[0]
        call.batch, call.remember = None, False
    if ELEM_BYTES[call.dtype] == 2:  # the majors as laid out (the tuned table's key)
        call.a_major = "K" if A.stride(-1) == 1 else "M"
        call.b_major = "N" if B.stride(-1) == 1 else "K"
    else:  # 8- and 32-bit operands are read K-major
        call.a_major = call.b_major = "K"
    # (a traced call's fake tensors pick nothing: no guard on their strides)
    call.rows16 = (False, False) if fake else rows16(call)
    call.epilogue = None
    if ops:  # last: the epilogue stage binds its tensors (and answers an empty product)
        from cutemma.kernels.epilogue import bind

        bound = bind(epilogue, tensors, call.M, call.N, A.device, batched, call.dtype == "s8")
        call.epilogue = bound if bound.epilogue else None
    if empty and not fake:
        from cutemma.kernels.epilogue import empty_product

        call.done = empty_product(call.out, call.C, call.alpha, call.beta, call.epilogue)
    return call


def rows16(call: Call) -> tuple[bool, bool]:
    """Whether the rows of A and of B, as the sm90 kernel reads them (A's along M, B's along
    N for K-major operands), start half a 32-byte sector apart: a pitch that is an odd
    multiple of 16 bytes, which TMA reads at about half speed (the cost model's
    ``half_sector``; bench/results/raw/align-probe-h200.json). An operand the kernel reads
    from a K-major copy has the copy's pitch, its K.

    >>> class T:  # a row-major bf16 matrix (torch's stride() and element_size())
    ...     def __init__(self, rows, cols): self.shape = (rows, cols)
    ...     def stride(self, i): return (self.shape[1], 1)[i]
    ...     def element_size(self): return 2
    >>> class C:  # K = 8200: A's rows 16400 bytes apart; B N-major, 8192 wide
    ...     A, B, a_major, b_major = T(4, 8200), T(8200, 8192), "K", "N"
    >>> rows16(C())
    (True, False)
    """
    a_along = -1 if call.a_major == "K" else -2  # the mode the kernel reads contiguously
    b_along = -2 if call.b_major == "K" else -1
    return _rows16(call.A, a_along), _rows16(call.B, b_along)


def _rows16(t: Any, along: int) -> bool:
    other = -3 - along  # the other of the last two modes
    if t.shape[other] < 2:  # a single row: nothing to be apart
        return False
    pitch = t.stride(other) if t.stride(along) == 1 else t.shape[along]
    return half_sector_off(pitch * t.element_size())


def half_sector_off(pitch_bytes: int) -> bool:
    """Whether rows ``pitch_bytes`` apart start half a global-memory sector apart (TMA's
    16-byte multiples that are not whole sectors).

    >>> half_sector_off(16400), half_sector_off(16384)
    (True, False)
    """
    return pitch_bytes % SECTOR_BYTES == SECTOR_BYTES // 2


def _unit(scale_a: Any, scale_b: Any) -> bool:
    return type(scale_a) is float and type(scale_b) is float and scale_a == scale_b == 1.0


def check_scalar(what: str, v: Any) -> None:
    """A LaunchError unless ``v`` is a finite real number that fits a float."""
    ok = isinstance(v, numbers.Real) and not isinstance(v, bool)
    if ok:
        try:
            ok = math.isfinite(float(v))
        except (OverflowError, ValueError, TypeError):  # 2**2000, a numpy oddity
            ok = False
    if not ok:
        shown = f"a {type(v).__module__}.{type(v).__name__}" if hasattr(v, "shape") else repr(v)
        if len(shown) > 60:
            shown = shown[:40] + "..."
        raise LaunchError(
            f"gemm: {what}={shown} must be a finite real number within float range "
            "(a Python or numpy float or int)"
        )


def _scalars(dtype: str, alpha: Any, beta: Any, scale_a: Any, scale_b: Any) -> tuple:
    """(alpha with the scales folded in, beta) as floats; int8's rules."""
    if dtype == "s8" and (scale_a != 1.0 or scale_b != 1.0):
        raise LaunchError(
            f"gemm: scale_a={scale_a}, scale_b={scale_b} for int8 inputs; per-tensor "
            "scales are for float8 (and float) inputs — fold them into alpha for int8"
        )
    a = float(alpha) * float(scale_a) * float(scale_b)
    if not math.isfinite(a):
        raise LaunchError(
            f"gemm: alpha * scale_a * scale_b = {alpha} * {scale_a} * {scale_b} overflows a "
            "float; give smaller scales"
        )
    if dtype == "s8" and (a != int(a) or float(beta) != int(beta)):
        raise LaunchError(f"gemm: int8 takes whole-number alpha and beta, got {alpha}, {beta}")
    return a, float(beta)


def _operands(A: Any, B: Any) -> tuple[int | None, str, tuple[str, ...]]:
    """Shapes, then dtypes, then devices: each error names what would be accepted.

    Returns (batch, kernel dtype, allowed outputs): batch is the problem count of a 3-D
    call (torch.matmul's broadcasting: a 2-D operand or a batch of 1 is shared), None for
    a 2-D one.
    """
    for what, t in (("A", A), ("B", B)):
        if not hasattr(t, "dim") or not hasattr(t, "shape") or t.dim() not in (2, 3):
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
        batch = int(bb if ba == 1 else ba)
        if batch > MAX_BATCH:
            raise LaunchError(
                f"gemm: batch {batch} exceeds the {MAX_BATCH} problems one launch covers "
                "(grid y); split the batch"
            )
    dtype, outs = kernel_type(A, B)
    for what, t in (("A", A), ("B", B)):
        if t.device.type != "cuda":
            raise LaunchError(f"gemm: {what} is on {t.device}; move it to a CUDA device")
    if A.device != B.device:
        raise LaunchError(f"gemm: A on {A.device}, B on {B.device}; put both on one device")
    return batch, dtype, outs


def kernel_type(A: Any, B: Any) -> tuple[str, tuple[str, ...]]:
    """(kernel element type, allowed outputs) of A and B, or a LaunchError naming both.

    >>> class T:
    ...     def __init__(self, d): self.dtype = d
    >>> kernel_type(T("torch.float8_e4m3fn"), T("torch.float8_e5m2"))[0]
    'e4m3_e5m2'
    """
    a, b = _name(A.dtype), _name(B.dtype)
    if a == b and a in KERNEL_TYPES:
        return KERNEL_TYPES[a]
    if a in KERNEL_TYPES and b in KERNEL_TYPES:
        ka, kb = KERNEL_TYPES[a][0], KERNEL_TYPES[b][0]
        if f"{ka}_{kb}" in ELEM_BYTES:  # mixed e4m3 x e5m2: the catalog has both mixed atoms
            return f"{ka}_{kb}", KERNEL_TYPES[a][1]
    raise LaunchError(
        f"gemm: A is {a} and B is {b}; both must be one of {', '.join(KERNEL_TYPES)} "
        "(float32 runs as tf32, int8 accumulates in int32; A and B may mix the two float8 types)"
    )


def _output(out: Any, shape: tuple, out_dtype: Any, A: Any, fake: bool) -> Any:
    """D: ``out`` checked, or a new tensor."""
    if out is None:
        if fake:
            return A.new_empty(shape, dtype=out_dtype)
        import torch

        return torch.empty(shape, dtype=out_dtype, device=A.device)
    if not hasattr(out, "data_ptr") or not hasattr(out, "shape"):
        raise LaunchError(f"gemm: out is a {type(out).__name__}; give a torch tensor or None")
    if tuple(out.shape) != shape or out.device != A.device or out.dtype != out_dtype:
        raise LaunchError(
            f"gemm: out is {tuple(out.shape)} {out.dtype} on {out.device}; need {shape} "
            f"{out_dtype} on {A.device}"
        )
    if len(shape) == 3 and shape[0] > 1 and out.stride(0) == 0:
        raise LaunchError(
            f"gemm: out {tuple(out.shape)} has batch stride 0: its {shape[0]} problems "
            "would overwrite each other; give an output with a batch stride"
        )
    return out


def _c_operand(C: Any, beta: float, shape: tuple, out: Any, A: Any) -> Any:
    """C cast to D's dtype and broadcast to D's shape (zero strides kept), or None where
    beta is 0 or no C was given."""
    if C is None:
        return None
    if not hasattr(C, "dtype") or not hasattr(C, "expand") or not hasattr(C, "device"):
        raise LaunchError(f"gemm: C is a {type(C).__name__}; give a torch tensor or None")
    if C.is_complex() or _name(C.dtype) == "bool":
        raise LaunchError(
            f"gemm: C is {_name(C.dtype)}; give a real float or int tensor (it is cast to "
            f"D's {_name(out.dtype)})"
        )
    if beta == 0:
        return None
    if C.device != A.device:
        raise LaunchError(f"gemm: C on {C.device}, A on {A.device}; put both on one device")
    if C.dim() > len(shape):
        raise LaunchError(f"gemm: C {tuple(C.shape)} does not broadcast to {shape}")
    C = C if C.dtype == out.dtype else C.to(out.dtype)  # before expand: keeps 0 strides
    try:
        return C.expand(shape)
    except RuntimeError:
        raise LaunchError(f"gemm: C {tuple(C.shape)} does not broadcast to {shape}") from None


def _as_design(design: Any, tiled_mma: Any, config: Any) -> Any:
    """The design of a call: ``design``, ``GemmDesign(tiled_mma)``, or a design given as
    ``config=`` (what pick_config returns); None when the call names none."""
    as_config = _is_design(config)
    if design is None and tiled_mma is None and not as_config:
        return None
    if sum(x is not None for x in (design, tiled_mma, config)) > 1:
        raise LaunchError(
            "gemm: give one of config=, design= and tiled_mma= (a design holds its config)"
        )
    from cutemma.kernels.design import GemmDesign

    if tiled_mma is not None:
        return GemmDesign(tiled_mma)
    design = config if design is None else design
    if not isinstance(design, GemmDesign):
        raise DesignError(
            f"gemm: design= takes a cutemma.kernels.GemmDesign, got {type(design).__name__}"
        )
    return design


def _is_config(config: Any) -> bool:
    from cutemma.kernels.sm80.config import GemmConfig
    from cutemma.kernels.sm90.config import Sm90Config

    return isinstance(config, GemmConfig | Sm90Config)


def _is_design(config: Any) -> bool:
    """A GemmDesign given as config= (none exists before its module loads)."""
    mod = sys.modules.get("cutemma.kernels.design")
    return mod is not None and isinstance(config, mod.GemmDesign)


def _name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def _arch_number(arch: str | None) -> int:
    """90 for 'sm_90a'; a large number where the arch is unknown (a trace without a GPU:
    the eager call checks it)."""
    return 1 << 30 if arch is None else arch_number(arch)


def _traced_arch(device: int) -> str | None:
    """The device's compile target where a traced call can read it, else None (fake CUDA
    tensors on a machine without a GPU: the checks that need it run when the call does)."""
    try:
        return device_arch(device)
    except Exception:  # no driver, no device: nothing to ask
        return None


_ARCH: dict[int, str] = {}  # device -> compile target, read once per process


def device_arch(device: int) -> str:
    """The compile target of a CUDA device, read once: from torch's device properties when
    torch's CUDA is up (cached by torch; no driver call), else a driver query."""
    arch = _ARCH.get(device)
    if arch is None:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            from cutemma.cuda.compile import arch_target

            arch = arch_target(*torch.cuda.get_device_capability(device))
        else:
            from cutemma.cuda import device_arch as query

            arch = query(device)
        _ARCH[device] = arch
    return arch


_SMS: dict[int, int] = {}
_NAMES: dict[int, str] = {}


def gpu_name(device: int) -> str:
    """A CUDA device's name as torch reports it (read once), e.g. 'NVIDIA H200'."""
    name = _NAMES.get(device)
    if name is None:
        import torch

        name = _NAMES[device] = torch.cuda.get_device_properties(device).name
    return name


def sm_count(device: int) -> int:
    """Multiprocessors of a CUDA device (read once)."""
    n = _SMS.get(device)
    if n is None:
        import torch

        n = _SMS[device] = torch.cuda.get_device_properties(device).multi_processor_count
    return n
