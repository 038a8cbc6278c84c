"""The CUDA driver (libcuda) through ctypes: the few calls a GEMM kernel's first launch makes.

A cached kernel's first call in a new process makes a handful of driver calls: make the
device's primary context current, load the cubin's module, find its function, raise its
shared-memory limit, encode the tensor maps. ``cuda.bindings`` (cuda-python) wraps every
driver entry point, but importing its driver module costs about 18 ms in a new process on
the H100's host (bench/results/first-call-h100.json), more than the rest of such a call;
here each call goes straight to libcuda's exported symbol, and a failure raises a
:class:`~cutemma.errors.LaunchError` naming the driver's status (``cuGetErrorName``).

Nothing here runs at import; without a driver (a CPU machine) :func:`lib` is None.

>>> lib() is None or hasattr(lib(), "cuInit")
True
>>> status_name(1) if lib() is not None else "CUDA_ERROR_INVALID_VALUE"
'CUDA_ERROR_INVALID_VALUE'
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

from cutemma.errors import LaunchError

LIBRARY = "libcuda.so.1"
FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8  # a CUfunction_attribute (cuda.h)

_LOCK = threading.Lock()
_lib: Any = None  # the CDLL, or False once it could not be opened


def lib() -> Any:
    """libcuda as a ``ctypes.CDLL`` (opened once), or None where it cannot be opened.

    >>> lib() is lib()
    True
    """
    global _lib
    if _lib is None:
        with _LOCK:
            if _lib is None:
                try:
                    _lib = ctypes.CDLL(LIBRARY)
                except OSError:
                    _lib = False
    return _lib or None


def _need() -> Any:
    cu = lib()
    if cu is None:
        raise LaunchError(
            f"the CUDA driver ({LIBRARY}) cannot be opened: this machine has no NVIDIA "
            "driver; run on a GPU machine"
        )
    return cu


def status_name(status: int) -> str:
    """The driver's name of a ``CUresult`` (``cuGetErrorName``), or the number as text.

    >>> status_name(0) if lib() is not None else "CUDA_SUCCESS"
    'CUDA_SUCCESS'
    """
    cu = lib()
    name = ctypes.c_char_p()
    if cu is None or cu.cuGetErrorName(int(status), ctypes.byref(name)) != 0 or not name.value:
        return f"CUresult {int(status)}"
    return name.value.decode()


def check(status: int, what: str) -> None:
    """Raise a LaunchError naming ``what`` and the driver's status unless it is 0.

    >>> check(0, "cuInit")
    """
    if status != 0:
        raise LaunchError(f"{what} failed: {status_name(status)} ({int(status)})")


def device(ordinal: int) -> int:
    """The ``CUdevice`` of a device ordinal (the driver initialised first).

    >>> device(0) >= 0  # doctest: +SKIP
    True
    """
    cu = _need()
    check(cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(dev), int(ordinal)), f"cuDeviceGet({ordinal})")
    return dev.value


def primary_context(ordinal: int) -> ctypes.c_void_p:
    """The device's primary context (retained; torch uses the same one), made current on
    this thread.

    >>> bool(primary_context(0).value)  # doctest: +SKIP
    True
    """
    cu = _need()
    ctx = ctypes.c_void_p()
    dev = device(ordinal)
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx


def ensure_context(ordinal: int) -> None:
    """Make the device's primary context current on this thread if no context is.

    The driver keeps the current context per thread: a thread that has not touched CUDA
    yet (a new thread whose first call is cutemma.gemm) has none, and the driver calls that
    need one (``cuTensorMapEncodeTiled``) fail there with CUDA_ERROR_INVALID_CONTEXT.
    Without a driver (a CPU machine), or before the driver can be initialised, it returns:
    the call that needed a context reports the missing driver itself.

    >>> ensure_context(0)  # doctest: +SKIP
    """
    cu = lib()
    if cu is None or cu.cuInit(0) != 0:
        return
    ctx = ctypes.c_void_p()
    check(cu.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
    if not ctx.value:
        primary_context(ordinal)


def load_function(cubin: bytes, name: str, max_dynamic_shared: int | None) -> tuple[int, int]:
    """(CUmodule, CUfunction) of kernel ``name`` in ``cubin``, loaded into the current
    context; its dynamic shared-memory limit raised to ``max_dynamic_shared`` bytes unless
    None.

    >>> from cutemma.cuda import compile                                 # doctest: +SKIP
    >>> cubin = compile('extern "C" __global__ void k() {}', "sm_90a")  # doctest: +SKIP
    >>> module, fn = load_function(cubin.data, "k", None)               # doctest: +SKIP
    """
    cu = _need()
    module, fn = ctypes.c_void_p(), ctypes.c_void_p()
    check(cu.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(cubin)), "cuModuleLoadData")
    check(cu.cuModuleGetFunction(ctypes.byref(fn), module, name.encode()), f"get {name}")
    if max_dynamic_shared is not None:
        attr = FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES
        check(cu.cuFuncSetAttribute(fn, attr, int(max_dynamic_shared)),
              "raise the shared-memory limit")  # fmt: skip
    return module.value, fn.value


def encode_tiled(
    data_type: int,
    rank: int,
    address: int,
    dims: tuple[int, ...],
    strides: tuple[int, ...],
    box: tuple[int, ...],
    element_strides: tuple[int, ...],
    interleave: int,
    swizzle: int,
    l2_promotion: int,
    oob_fill: int,
    map_bytes: int,
    map_align: int,
) -> tuple[int, bytes]:
    """(status, the ``map_bytes`` bytes of the map) of ``cuTensorMapEncodeTiled``, the map
    written at a ``map_align``-byte aligned address (the driver's rule,
    :data:`cutemma.copy.tma_map.TMA_RULES`); the arguments as plain ints and tuples of ints
    (``strides`` in bytes, dims 1 .. rank-1). A (64, 64) bf16 tile of a 64 x 64 matrix:

    >>> status, raw = encode_tiled(9, 2, 0x7F0000000000, (64, 64), (128,), (64, 64), (1, 1),
    ...                            0, 3, 3, 0, 128, 64)                  # doctest: +SKIP
    >>> status, len(raw)                                                 # doctest: +SKIP
    (0, 128)
    """
    cu = _need()
    f = cu.cuTensorMapEncodeTiled
    u32, u64 = ctypes.c_uint32, ctypes.c_uint64
    buf = ctypes.create_string_buffer(map_bytes + map_align)
    aligned = -(-ctypes.addressof(buf) // map_align) * map_align
    status = f(
        ctypes.c_void_p(aligned),
        ctypes.c_int(data_type),
        u32(rank),
        ctypes.c_void_p(address),
        (u64 * len(dims))(*dims),
        (u64 * max(len(strides), 1))(*strides),
        (u32 * len(box))(*box),
        (u32 * len(element_strides))(*element_strides),
        ctypes.c_int(interleave),
        ctypes.c_int(swizzle),
        ctypes.c_int(l2_promotion),
        ctypes.c_int(oob_fill),
    )
    return status, ctypes.string_at(aligned, map_bytes)


CAPTURE_MODE_RELAXED = 2  # a CUstreamCaptureMode (cuda.h)


def alloc_zeroed(ordinal: int, size: int, zeroed: int, stream: int) -> int:
    """``size`` bytes of device memory (``cuMemAlloc``; never freed here), the first
    ``zeroed`` of them set to zero on CUstream ``stream`` (``cuMemsetD8Async``: under a
    stream capture a memset node of the graph). During a capture in global mode an
    allocation counts as unsafe, so this thread relaxes its capture mode around it, as
    torch's allocator does for its own.

    >>> alloc_zeroed(0, 1 << 20, 64, 0) > 0  # doctest: +SKIP
    True
    """
    cu = _need()
    before = ctypes.c_void_p()
    check(cu.cuCtxGetCurrent(ctypes.byref(before)), "cuCtxGetCurrent")
    primary_context(ordinal)  # the memory is the device's (this thread may hold another's)
    try:
        return _alloc_zeroed(cu, size, zeroed, stream)
    finally:
        if before.value:
            cu.cuCtxSetCurrent(before)


def _alloc_zeroed(cu: Any, size: int, zeroed: int, stream: int) -> int:
    mode = ctypes.c_int(CAPTURE_MODE_RELAXED)
    check(cu.cuThreadExchangeStreamCaptureMode(ctypes.byref(mode)), "relax the capture mode")
    ptr = ctypes.c_uint64()
    try:
        status = cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(size))
    finally:
        cu.cuThreadExchangeStreamCaptureMode(ctypes.byref(mode))  # the mode it had
    check(status, f"cuMemAlloc of {size} bytes")
    check(
        cu.cuMemsetD8Async(
            ptr, ctypes.c_ubyte(0), ctypes.c_size_t(zeroed), ctypes.c_void_p(stream)
        ),
        f"cuMemsetD8Async of {zeroed} bytes",
    )
    return ptr.value
