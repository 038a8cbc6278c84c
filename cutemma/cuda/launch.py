"""Launch a compiled kernel on GPU tensors (PyTorch, CuPy, any DLPack) and scalars.

Arguments are checked before anything touches the GPU, so a CPU tensor, a
wrong dtype or a strided view gives a :class:`LaunchError` that says what would
be right. The launch goes through ``cuda.core`` (1.x, or 0.x's
``cuda.core.experimental``) and falls back to the ``cuda.bindings`` driver API
where cuda.core cannot do what is asked.

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


def _from_dlpack(obj: Any, device: tuple[str, int]) -> TensorArg:
    """Read a DLPack-only tensor (JAX, ...) through cuda.core's StridedMemoryView."""
    try:
        from cuda.core.utils import StridedMemoryView
    except ImportError:
        from cuda.core.experimental.utils import StridedMemoryView
    view = (
        StridedMemoryView.from_dlpack(obj, stream_ptr=-1)
        if hasattr(StridedMemoryView, "from_dlpack")
        else StridedMemoryView(obj, stream_ptr=-1)
    )
    strides = view.strides
    return TensorArg(
        ptr=int(view.ptr),
        shape=tuple(view.shape),
        strides=None if strides is None else tuple(strides),
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


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError as exc:
        raise LaunchError(
            f"cannot import cuda.bindings.driver ({exc}); pip install 'cutemma[cuda]'"
        ) from exc
    return driver


def _drv(result: Any, what: str) -> tuple:
    """Unwrap a driver (status, values...) result; raise LaunchError on failure."""
    status, *values = result if isinstance(result, tuple) else (result,)
    if int(status) != 0:
        raise LaunchError(f"{what} failed: {status!r}")
    return tuple(values)


def gpu_unavailable_reason() -> str | None:
    """Why no kernel can be launched here (no driver, no GPU), or None.

    >>> gpu_unavailable_reason() is None or "GPU" in gpu_unavailable_reason()
    True
    """
    try:
        driver = _driver()
        _drv(driver.cuInit(0), "cuInit")
        (count,) = _drv(driver.cuDeviceGetCount(), "cuDeviceGetCount")
    except (LaunchError, RuntimeError, OSError) as exc:
        return f"no NVIDIA GPU usable here ({exc})"
    return None if count > 0 else "no NVIDIA GPU usable here (the driver reports 0 devices)"


def device_count() -> int:
    """Number of CUDA devices; 0 without a GPU or driver (never raises).

    >>> device_count() >= 0
    True
    """
    if gpu_unavailable_reason() is not None:
        return 0
    return int(_drv(_driver().cuDeviceGetCount(), "cuDeviceGetCount")[0])


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
    driver = _driver()
    (dev,) = _drv(driver.cuDeviceGet(device), f"cuDeviceGet({device})")
    attr = driver.CUdevice_attribute
    (major,) = _drv(
        driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "major"
    )
    (minor,) = _drv(
        driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "minor"
    )
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


# --- the two launch paths ------------------------------------------------------------


def _core_module():
    import cuda.core

    if hasattr(cuda.core, "launch"):
        return cuda.core
    import cuda.core.experimental

    return cuda.core.experimental


def _launch_core(kernel: Kernel, device: int, grid, block, shared: int, stream: int, values):
    core = _core_module()
    dev = core.Device(device)
    dev.set_current()
    loaded = kernel._loaded.get(("core", device))
    if loaded is None:
        code = core.ObjectCode.from_cubin(kernel.data)
        # Keep the ObjectCode with its Kernel so the module outlives every launch.
        loaded = kernel._loaded[("core", device)] = (code, code.get_kernel(kernel.name))
    handle = loaded[1]
    config = core.LaunchConfig(grid=grid, block=block, shmem_size=shared)
    # Handle 0 is the legacy default stream, which cuda.core names rather than wraps.
    legacy = getattr(core, "LEGACY_DEFAULT_STREAM", None)
    target = legacy if stream == 0 and legacy is not None else core.Stream.from_handle(stream)
    core.launch(target, config, handle, *values)


def _launch_driver(kernel: Kernel, device: int, grid, block, shared: int, stream: int, values):
    driver = _driver()
    (dev,) = _drv(driver.cuDeviceGet(device), "cuDeviceGet")
    (ctx,) = _drv(driver.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    _drv(driver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    fn = kernel._loaded.get(("driver", device))
    if fn is None:
        (module,) = _drv(driver.cuModuleLoadData(kernel.data), "cuModuleLoadData")
        (fn,) = _drv(driver.cuModuleGetFunction(module, kernel.name.encode()), "get " + kernel.name)
        kernel._loaded[("driver", device)] = fn
    if shared > _DEFAULT_SHARED_LIMIT:
        attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        _drv(driver.cuFuncSetAttribute(fn, attr, shared), "raise the shared-memory limit")
    # The driver wants void**: an array of addresses, one per argument value.
    boxes = [_CTYPES[type(v)](v.item()) for v in values]
    pointers = (ctypes.c_void_p * max(1, len(boxes)))(*[ctypes.addressof(b) for b in boxes])
    _drv(
        driver.cuLaunchKernel(
            fn, *grid, *block, shared, driver.CUstream(stream), ctypes.addressof(pointers), 0
        ),
        f"launching {kernel.name}",
    )


_BACKENDS = {"core": _launch_core, "driver": _launch_driver}


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
        backend: str = "core",
    ) -> None:
        """Launch asynchronously on ``stream`` (default: the tensors' framework's current one).

        >>> Kernel(b"\\x7fELF", "k")(np.zeros(1), grid=1)  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        LaunchError: argument 0 is a float64 tensor on cpu
        """
        grid3, block3 = _dim3(grid, "grid"), _dim3(block, "block")
        if backend not in _BACKENDS:
            raise LaunchError(f"backend={backend!r}: choose one of {', '.join(_BACKENDS)}")
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
        # cuda.core cannot raise a kernel's shared-memory limit the same way in every version.
        if shared_mem > _DEFAULT_SHARED_LIMIT:
            backend = "driver"
        try:
            _BACKENDS[backend](self, device, grid3, block3, shared_mem, handle, values)
        except LaunchError:
            raise
        except Exception as exc:  # cuda.core / driver errors, named with the launch shape
            raise LaunchError(
                f"launching {self.name} on device {device} (grid {grid3}, block {block3}, "
                f"{shared_mem} B shared memory) through the {backend} backend failed: {exc}"
            ) from exc


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
