"""Launch a compiled kernel on GPU tensors (PyTorch, CuPy, any DLPack) and scalars.

Arguments are checked before anything touches the GPU, so a CPU tensor, a
wrong dtype or a strided view gives a :class:`LaunchError` that says what would
be right. The module load and the launch go through :mod:`cutemma.libcuda` (the one
module that talks to the CUDA driver: ctypes, no ``cuda.bindings`` or ``cuda.core``).

>>> from cutemma.cuda.source import Param
>>> k = load_kernel(b"\\x7fELF", "k", [Param("float*", "d"), Param("int", "n")])
>>> k.name, [p.name for p in k.params]
('k', ['d', 'n'])
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import cutemma.libcuda as libcuda  # (not `from cutemma import`: that asks cutemma.__getattr__)
from cutemma.cuda.compile import Cubin
from cutemma.cuda.source import Param
from cutemma.errors import LaunchError

# Pointer parameter element type -> tensor dtypes it accepts. Unsigned words are
# raw bits (NVRTC has no half type without headers), so they take any dtype of
# the same width; named types take only themselves; void takes anything.
_FLOAT_BITS = {1: ("float8_e4m3fn", "float8_e5m2", "float8_e4m3", "float8_e8m0fnu")}
_POINTEE_DTYPES: dict[str, tuple[str, ...]] = {
    "float": ("float32",),
    "double": ("float64",),
    "half": ("float16",),
    "__half": ("float16",),
    "__nv_bfloat16": ("bfloat16",),
    "bool": ("bool",),
    "int": ("int32",),
    "int32_t": ("int32",),
    "int64_t": ("int64",),
    "long long": ("int64",),
    "int16_t": ("int16",),
    "short": ("int16",),
    "int8_t": ("int8",),
    "signed char": ("int8",),
    "uint8_t": ("uint8", "int8", "bool", *_FLOAT_BITS[1]),
    "unsigned char": ("uint8", "int8", "bool", *_FLOAT_BITS[1]),
    "uint16_t": ("uint16", "int16", "float16", "bfloat16"),
    "unsigned short": ("uint16", "int16", "float16", "bfloat16"),
    "uint32_t": ("uint32", "int32", "float32"),
    "unsigned": ("uint32", "int32", "float32"),
    "unsigned int": ("uint32", "int32", "float32"),
    "uint64_t": ("uint64", "int64", "float64"),
    "unsigned long long": ("uint64", "int64", "float64"),
}

# Scalar parameter C type -> the numpy type its bytes are passed as.
_SCALAR_NUMPY: dict[str, type] = {
    "float": np.float32,
    "double": np.float64,
    "bool": np.bool_,
    "int": np.int32,
    "int32_t": np.int32,
    "unsigned": np.uint32,
    "unsigned int": np.uint32,
    "uint32_t": np.uint32,
    "int64_t": np.int64,
    "long long": np.int64,
    "uint64_t": np.uint64,
    "unsigned long long": np.uint64,
    "int16_t": np.int16,
    "uint16_t": np.uint16,
    "int8_t": np.int8,
    "uint8_t": np.uint8,
}

# numpy scalar type -> ctypes type, for the driver API's void* array.
_CTYPES = {
    np.float32: ctypes.c_float,
    np.float64: ctypes.c_double,
    np.bool_: ctypes.c_bool,
    np.int8: ctypes.c_int8,
    np.uint8: ctypes.c_uint8,
    np.int16: ctypes.c_int16,
    np.uint16: ctypes.c_uint16,
    np.int32: ctypes.c_int32,
    np.uint32: ctypes.c_uint32,
    np.int64: ctypes.c_int64,
    np.uint64: ctypes.c_uint64,
}

# DLPack device types (dlpack.h): which of them a kernel can read directly.
_DLPACK_DEVICES = {1: "cpu", 2: "cuda", 3: "cuda_host", 13: "cuda_managed"}
_GPU_READABLE = {"cuda", "cuda_managed"}

# Shared memory a kernel gets without raising its limit (CUDA programming guide).
_DEFAULT_SHARED_LIMIT = 48 * 1024


@dataclass(frozen=True)
class TensorArg:
    """What a launch needs to know of a tensor: address, shape, strides, dtype, device.

    >>> t = TensorArg(ptr=4096, shape=(2, 3), strides=(3, 1), dtype="float32", device=("cuda", 0))
    >>> t.is_contiguous
    True
    """

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None  # in elements; None means row-major contiguous
    dtype: str
    device: tuple[str, int]

    @property
    def is_contiguous(self) -> bool:
        if self.strides is None:
            return True
        expected = 1
        for extent, stride in zip(reversed(self.shape), reversed(self.strides)):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True


def _dtype_name(obj: Any) -> str:
    """'float16' for torch.float16, numpy/cupy dtype('float16') and jax's float16."""
    return str(getattr(obj, "dtype", "?")).removeprefix("torch.")


def _dlpack_device(obj: Any) -> tuple[str, int] | None:
    if not hasattr(obj, "__dlpack_device__"):
        return None
    kind, index = obj.__dlpack_device__()
    return (_DLPACK_DEVICES.get(int(kind), f"dlpack device type {int(kind)}"), int(index))


def _from_torch_like(obj: Any) -> TensorArg:
    device = obj.device
    return TensorArg(
        ptr=int(obj.data_ptr()),
        shape=tuple(obj.shape),
        strides=tuple(obj.stride()),
        dtype=_dtype_name(obj),
        device=(device.type, device.index or 0),
    )


def _from_cuda_array_interface(obj: Any, device: tuple[str, int] | None) -> TensorArg:
    cai = obj.__cuda_array_interface__
    itemsize = np.dtype(cai["typestr"]).itemsize
    strides = cai.get("strides")
    return TensorArg(
        ptr=int(cai["data"][0]),
        shape=tuple(cai["shape"]),
        strides=None if strides is None else tuple(s // itemsize for s in strides),
        dtype=_dtype_name(obj) if hasattr(obj, "dtype") else np.dtype(cai["typestr"]).name,
        device=device or ("cuda", 0),
    )


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    """dlpack.h's DLTensor, the first member of the DLManagedTensor a "dltensor" capsule holds."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


# a private function object (not ctypes.pythonapi's shared one, whose argtypes others may set)
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)


def _dlpack_capsule(obj: Any) -> Any:
    """``obj.__dlpack__()`` asking the producer not to synchronise any stream (-1: the
    launch is ordered by the stream it goes to); producers that take no stream (CPU ones)
    are asked plainly."""
    try:
        return obj.__dlpack__(stream=-1)
    except (TypeError, ValueError, RuntimeError, BufferError):
        return obj.__dlpack__()


def _from_dlpack(obj: Any, device: tuple[str, int]) -> TensorArg:
    """Read a DLPack-only tensor (JAX, ...): address, shape and strides from the DLTensor in
    its capsule, which is left unconsumed (its destructor returns it to the producer; the
    memory stays ``obj``'s)."""
    capsule = _dlpack_capsule(obj)
    try:
        address = _capsule_pointer(capsule, b"dltensor")
    except ValueError as exc:  # a versioned or used capsule: not the layout read below
        raise LaunchError(
            f"cannot read a {type(obj).__name__} through DLPack ({exc}): give a PyTorch or "
            "CuPy tensor, or one whose __dlpack__() returns a 'dltensor' capsule"
        ) from exc
    t = _DLTensor.from_address(address)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
    return TensorArg(
        ptr=(t.data or 0) + t.byte_offset,
        shape=shape,
        strides=strides,
        dtype=_dtype_name(obj),
        device=device,
    )


def describe_tensor(obj: Any) -> TensorArg:
    """Address, shape, strides, dtype and device of a tensor-like argument.

    Reads PyTorch tensors directly, then ``__cuda_array_interface__`` (CuPy,
    Numba), then DLPack. The device is checked first so a CPU tensor is named
    as such instead of failing deep inside an interface.

    >>> describe_tensor(np.zeros(3, np.float32)).device
    ('cpu', 0)
    """
    device = _dlpack_device(obj)
    if device is None and hasattr(obj, "__array_interface__"):
        device = ("cpu", 0)
    if device is not None and device[0] not in _GPU_READABLE:
        return TensorArg(0, tuple(getattr(obj, "shape", ())), None, _dtype_name(obj), device)
    if all(hasattr(obj, a) for a in ("data_ptr", "stride", "device", "shape")):
        return _from_torch_like(obj)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cuda_array_interface(obj, device)
    if device is not None:
        return _from_dlpack(obj, device)
    raise LaunchError(
        f"cannot pass a {type(obj).__name__} to a kernel: give a GPU tensor (DLPack or "
        "__cuda_array_interface__: PyTorch, CuPy, JAX), a Python/numpy scalar, or an int address"
    )


def _check_tensor(arg: TensorArg, param: Param | None, position: int) -> None:
    where = f"argument {position}" + (f" ({param.declaration})" if param else "")
    if arg.device[0] not in _GPU_READABLE:
        raise LaunchError(
            f"{where} is a {arg.dtype} tensor on {arg.device[0]}: kernels read GPU memory; "
            "move it first (torch: .cuda(), CuPy: cupy.asarray)"
        )
    if not arg.is_contiguous:
        raise LaunchError(
            f"{where} has shape {arg.shape} and strides {arg.strides}: kernels index it as a "
            "dense row-major array; pass a contiguous tensor (.contiguous())"
        )
    if param is None or not param.is_pointer:
        return
    accepted = _POINTEE_DTYPES.get(param.pointee)
    if param.pointee != "void" and accepted is not None and arg.dtype not in accepted:
        raise LaunchError(
            f"{where} expects a tensor of {' or '.join(accepted)}, got {arg.dtype}; "
            f"convert the tensor or declare the parameter with the matching type"
        )


def _scalar(value: Any, param: Param | None, position: int) -> np.generic:
    """A scalar as the numpy type of its parameter (default int32 / float32)."""
    if isinstance(value, np.generic) and param is None:
        return value
    if param is not None and param.is_pointer:
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return np.uint64(value)  # a raw device address
        raise LaunchError(
            f"argument {position} ({param.declaration}) is a pointer: give a GPU tensor or an "
            f"int address, not {type(value).__name__}"
        )
    default = np.float32 if isinstance(value, (float, np.floating)) else np.int32
    kind = _SCALAR_NUMPY.get(param.ctype.strip(), None) if param else default
    if kind is None:
        raise LaunchError(
            f"argument {position} ({param.declaration}): scalar C type {param.ctype!r} is not "
            f"one of {', '.join(_SCALAR_NUMPY)}; pass a numpy scalar of the exact type"
        )
    if np.issubdtype(kind, np.integer):
        if isinstance(value, (float, np.floating)):
            raise LaunchError(
                f"argument {position} = {value} is a float but the parameter is "
                f"{np.dtype(kind).name}; pass an int"
            )
        info = np.iinfo(kind)
        if not info.min <= int(value) <= info.max:
            raise LaunchError(
                f"argument {position} = {value} does not fit {np.dtype(kind).name} "
                f"({info.min}..{info.max})"
            )
    return kind(value)


def marshal(
    args: Sequence[Any], params: Sequence[Param] | None
) -> list[tuple[np.generic, TensorArg | None]]:
    """Check every argument against its parameter; return (value, tensor or None) pairs.

    A tensor becomes its address as uint64; a scalar becomes a numpy scalar of
    its parameter's C type.

    >>> [str(v.dtype) for v, _ in marshal([3, 2.5], None)]
    ['int32', 'float32']
    """
    if params is not None and len(params) != len(args):
        names = ", ".join(p.declaration for p in params)
        raise LaunchError(f"kernel takes {len(params)} arguments ({names}), got {len(args)}")
    out = []
    for i, value in enumerate(args):
        param = params[i] if params is not None else None
        is_scalar = isinstance(value, (bool, int, float, np.generic))
        if is_scalar:
            out.append((_scalar(value, param, i), None))
            continue
        tensor = describe_tensor(value)
        _check_tensor(tensor, param, i)
        out.append((np.uint64(tensor.ptr), tensor))
    return out


# --- devices and streams -------------------------------------------------------------


def gpu_unavailable_reason() -> str | None:
    """Why no kernel can be launched here (no driver, no GPU), or None.

    >>> gpu_unavailable_reason() is None or "GPU" in gpu_unavailable_reason()
    True
    """
    try:
        count = libcuda.device_count()
    except LaunchError as exc:
        return f"no NVIDIA GPU usable here ({exc})"
    return None if count > 0 else "no NVIDIA GPU usable here (the driver reports 0 devices)"


def device_count() -> int:
    """Number of CUDA devices; 0 without a GPU or driver (never raises).

    >>> device_count() >= 0
    True
    """
    if gpu_unavailable_reason() is not None:
        return 0
    return libcuda.device_count()


def device_arch(device: int = 0) -> str:
    """The compile target for GPU ``device``: sm_80, sm_89, sm_90a, sm_100a, ...

    A cubin runs only on GPUs of its own major architecture (an sm_80 cubin
    does not load on an H100), so probes are compiled for the GPU present. From
    sm_90 on, the 'a' target is chosen so wgmma / tcgen05 are available.

    >>> device_arch() if device_count() else "sm_90a"  # doctest: +ELLIPSIS
    'sm_...'
    """
    from cutemma.layout.checks import as_int

    if as_int(device) is None or as_int(device) < 0:
        raise LaunchError(f"device={device!r}: a device is a GPU index 0, 1, ... (an int)")
    device = as_int(device)
    if (reason := gpu_unavailable_reason()) is not None:
        raise LaunchError(f"cannot read the architecture of device {device}: {reason}")
    major, minor = libcuda.compute_capability(device)
    from cutemma.cuda.compile import arch_target

    return arch_target(major, minor)


def _current_stream_of(objs: Sequence[Any], device: int) -> int:
    """The calling framework's current stream for ``device`` (0, the default, if none)."""
    for obj in objs:
        top = type(obj).__module__.split(".")[0]
        if top == "torch" and "torch" in sys.modules:
            return int(sys.modules["torch"].cuda.current_stream(device).cuda_stream)
        if top == "cupy" and "cupy" in sys.modules:
            return int(sys.modules["cupy"].cuda.get_current_stream().ptr)
    return 0


def stream_handle(stream: Any) -> int:
    """The CUstream address of a stream given as int, torch/CuPy/cuda.core stream.

    >>> stream_handle(0)
    0
    """
    if isinstance(stream, int):
        return stream
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise LaunchError(
        f"cannot use a {type(stream).__name__} as a stream: give an int CUstream, a "
        "torch.cuda.Stream, a cupy.cuda.Stream or a cuda.core Stream"
    )


def _dim3(value: int | Sequence[int], what: str) -> tuple[int, int, int]:
    dims = (value,) if isinstance(value, int) else tuple(value)
    if not 1 <= len(dims) <= 3 or any(not isinstance(d, int) or d < 1 for d in dims):
        raise LaunchError(f"{what}={value!r}: give 1 to 3 positive ints, e.g. 128 or (4, 2)")
    return (*dims, *(1,) * (3 - len(dims)))


# --- the launch ----------------------------------------------------------------------


def _launch(kernel: Kernel, device: int, grid, block, shared: int, stream: int, values) -> None:
    loaded = kernel._loaded.get(device)
    if loaded is None:
        ctx = libcuda.primary_context(device)  # retained once per device, made current
        _, fn = libcuda.load_function(kernel.data, kernel.name, None)
        loaded = kernel._loaded[device] = (ctx, fn)
    ctx, fn = loaded
    libcuda.set_current(ctx)
    if shared > _DEFAULT_SHARED_LIMIT:  # per launch: each may ask for another amount
        libcuda.raise_shared_limit(fn, shared)
    # The driver wants void**: an array of addresses, one per argument value.
    boxes = [_CTYPES[type(v)](v.item()) for v in values]
    pointers = (ctypes.c_void_p * max(1, len(boxes)))(*[ctypes.addressof(b) for b in boxes])
    what = (f"launching {kernel.name} on device {device} (grid {grid}, block {block}, "
            f"{shared} B shared memory)")  # fmt: skip
    libcuda.launch(fn, grid, block, shared, stream, ctypes.addressof(pointers), what)


@dataclass
class Kernel:
    """A kernel in a cubin, found by its (extern "C") name; loaded on first launch.

    ``params`` (from cutemma.cuda.source) let each launch check dtypes and
    convert scalars to the declared C types.

    >>> Kernel(b"\\x7fELF", "k").params is None
    True
    """

    data: bytes
    name: str
    params: Sequence[Param] | None = None
    _loaded: dict = field(default_factory=dict, repr=False)

    def __call__(
        self,
        *args: Any,
        grid: int | Sequence[int] = 1,
        block: int | Sequence[int] = 32,
        shared_mem: int = 0,
        stream: Any = None,
        device: int | None = None,
    ) -> None:
        """Launch asynchronously on ``stream`` (default: the tensors' framework's current one).

        >>> Kernel(b"\\x7fELF", "k")(np.zeros(1), grid=1)  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        LaunchError: argument 0 is a float64 tensor on cpu
        """
        grid3, block3 = _dim3(grid, "grid"), _dim3(block, "block")
        marshalled = marshal(args, self.params)
        tensors = [t for _, t in marshalled if t is not None]
        devices = sorted({t.device[1] for t in tensors})
        if len(devices) > 1 or (device is not None and devices and devices != [device]):
            raise LaunchError(
                f"tensors are on devices {devices}"
                + (f" but device={device}" if device is not None else "")
                + "; put every tensor on the one device the kernel runs on"
            )
        device = device if device is not None else (devices[0] if devices else 0)
        if (reason := gpu_unavailable_reason()) is not None:
            raise LaunchError(
                f"cannot launch {self.name}: {reason}. Compiling and reading SASS work without "
                "a GPU; launching needs one with its driver (libcuda.so.1)"
            )
        handle = (
            stream_handle(stream)
            if stream is not None
            else _current_stream_of([a for a in args if hasattr(a, "shape")], device)
        )
        values = [v for v, _ in marshalled]
        _launch(self, device, grid3, block3, shared_mem, handle, values)


def load_kernel(cubin: Cubin | bytes, name: str, params: Sequence[Param] | None = None) -> Kernel:
    """A launchable :class:`Kernel` named ``name`` in ``cubin`` (nothing loads until called).

    >>> load_kernel(b"\\x7fELF", "probe").name
    'probe'
    """
    from cutemma.cuda.sass import _cubin_bytes

    data = _cubin_bytes(cubin)  # refuses what is not a cubin (no ELF magic) now, not at launch
    return Kernel(data, name, list(params) if params is not None else None)


def launch(
    cubin: Cubin | bytes,
    name: str,
    *args: Any,
    grid: int | Sequence[int] = 1,
    block: int | Sequence[int] = 32,
    params: Sequence[Param] | None = None,
    **kwargs: Any,
) -> None:
    """Load ``name`` from ``cubin`` and launch it once: ``launch(cubin, "k", out, 5, block=32)``.

    >>> launch(b"\\x7fELF", "k", np.zeros(2))  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    LaunchError: argument 0 is a float64 tensor on cpu
    """
    load_kernel(cubin, name, params)(*args, grid=grid, block=block, **kwargs)
