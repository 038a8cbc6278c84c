"""The CUDA driver (libcuda) through ctypes: the one module of cutemma that talks to it.

Every driver call cutemma makes is here: make a device's primary context current, count
devices and read their compute capability, load a cubin's module and find its function,
raise its shared-memory limit, encode tensor maps, allocate a workspace, and launch
(``cuLaunchKernel``, or ``cuLaunchKernelEx`` for a programmatic dependent launch). The GEMM
runtime (:mod:`cutemma.kernels.runtime.driver`) and the general launcher
(:mod:`cutemma.cuda.launch`) call these functions; tests/test_one_driver.py keeps it so.

``cuda.bindings`` (cuda-python) wraps every driver entry point, but importing its driver
module costs about 18 ms in a new process on the H100's host
(bench/results/first-call-h100.json), more than the rest of a cached kernel's first call;
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
COMPUTE_CAPABILITY_MAJOR, COMPUTE_CAPABILITY_MINOR = 75, 76  # CUdevice_attributes (cuda.h)

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


def device_count() -> int:
    """How many CUDA devices the driver sees (``cuInit``, then ``cuDeviceGetCount``); a
    LaunchError naming why where there is no driver or it cannot start (no GPU: the driver's
    CUDA_ERROR_NO_DEVICE).

    >>> device_count() >= 1  # doctest: +SKIP
    True
    """
    cu = _need()
    check(cu.cuInit(0), "cuInit")
    count = ctypes.c_int()
    check(cu.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
    return count.value


def compute_capability(ordinal: int) -> tuple[int, int]:
    """(major, minor) compute capability of device ``ordinal`` (``cuDeviceGetAttribute``).

    >>> compute_capability(0)  # doctest: +SKIP
    (9, 0)
    """
    cu = _need()
    dev = device(ordinal)
    found = []
    for attr, what in ((COMPUTE_CAPABILITY_MAJOR, "major"), (COMPUTE_CAPABILITY_MINOR, "minor")):
        value = ctypes.c_int()
        check(cu.cuDeviceGetAttribute(ctypes.byref(value), attr, dev),
              f"read the compute capability ({what}) of device {ordinal}")  # fmt: skip
        found.append(value.value)
    return found[0], found[1]


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


def set_current(ctx: ctypes.c_void_p | int) -> None:
    """Make context ``ctx`` (from :func:`primary_context`) current on this thread.

    >>> set_current(primary_context(0))  # doctest: +SKIP
    """
    ctx = ctx if isinstance(ctx, ctypes.c_void_p) else ctypes.c_void_p(ctx)
    check(_need().cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


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
        raise_shared_limit(fn.value, max_dynamic_shared)
    return module.value, fn.value


def raise_shared_limit(fn: int, nbytes: int) -> None:
    """Let CUfunction ``fn`` take ``nbytes`` of dynamic shared memory (past the 48 KiB a
    kernel gets without asking: ``cuFuncSetAttribute``).

    >>> raise_shared_limit(fn, 100 * 1024)  # doctest: +SKIP
    """
    attr = FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES
    check(_need().cuFuncSetAttribute(ctypes.c_void_p(fn), attr, int(nbytes)),
          f"raise the shared-memory limit to {int(nbytes)} bytes")  # fmt: skip


def launcher() -> Any:
    """libcuda's cuLaunchKernel through ctypes with no argtypes, or None where libcuda
    cannot be opened: the function object itself, which a hot path keeps and calls with
    pre-boxed arguments (no wrapper call per launch). The caller passes pointers as
    ``c_void_p`` boxes and the unsigned ints as small Python ints (C ints in the platform's
    calling convention): about half the time of declared argtypes (ctypes' from_param per
    argument), and a tenth of the ``cuda.bindings`` call (its argument objects and checks).

    >>> f = launcher()
    >>> f is None or f.restype is ctypes.c_int
    True
    """
    cu = lib()
    return None if cu is None else cu.cuLaunchKernel


# cuLaunchKernelEx's launch attribute that lets a kernel start before the previous one in its
# stream ends (the kernel then orders itself with griddepcontrol.wait): CUlaunchAttributeID
# CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION in cuda.h
PROGRAMMATIC_STREAM_SERIALIZATION = 6


class LaunchAttribute(ctypes.Structure):
    """cuda.h's CUlaunchAttribute: an id, padding to 8 bytes, a 64-byte value union."""

    _fields_ = [("id", ctypes.c_uint), ("pad", ctypes.c_uint), ("value", ctypes.c_ubyte * 64)]


class LaunchConfig(ctypes.Structure):
    """cuda.h's CUlaunchConfig: grid, block, dynamic shared bytes, stream, attributes."""

    _fields_ = [
        *[(f, ctypes.c_uint) for f in ("gridDimX", "gridDimY", "gridDimZ")],
        *[(f, ctypes.c_uint) for f in ("blockDimX", "blockDimY", "blockDimZ")],
        ("sharedMemBytes", ctypes.c_uint),
        ("hStream", ctypes.c_void_p),
        ("attrs", ctypes.POINTER(LaunchAttribute)),
        ("numAttrs", ctypes.c_uint),
    ]


class PdlLauncher:
    """Called as libcuda's ``cuLaunchKernel`` is (function, grid, block, shared bytes,
    stream, parameters, extra), it launches through ``cuLaunchKernelEx`` of ``cu`` (the
    CDLL, or a stand-in) with programmatic stream serialization allowed (a programmatic
    dependent launch: ``Sm90Config.pdl``). One launcher per caller: it rewrites its own
    config on every call.

    >>> cfg = PdlLauncher(None).config
    >>> cfg.numAttrs, cfg.attrs[0].id, cfg.attrs[0].value[0]
    (1, 6, 1)
    """

    def __init__(self, cu: Any) -> None:
        self.launch_ex = None if cu is None else cu.cuLaunchKernelEx
        self.attr = LaunchAttribute(PROGRAMMATIC_STREAM_SERIALIZATION)
        self.attr.value[0] = 1  # programmaticStreamSerializationAllowed (an int, little-endian)
        self.config = LaunchConfig(attrs=ctypes.pointer(self.attr), numAttrs=1)
        self.config_ref = ctypes.byref(self.config)

    def __call__(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra) -> int:
        c = self.config
        c.gridDimX, c.gridDimY, c.gridDimZ, c.blockDimX, c.blockDimY, c.blockDimZ = (
            gx, gy, gz, bx, by, bz,
        )  # fmt: skip
        c.sharedMemBytes = shared
        c.hStream = stream.value if isinstance(stream, ctypes.c_void_p) else stream
        return self.launch_ex(self.config_ref, fn, params, extra)


def pdl_launcher() -> PdlLauncher | None:
    """A :class:`PdlLauncher` on libcuda, or None where libcuda cannot be opened.

    >>> pdl_launcher() is None or pdl_launcher().launch_ex is not None
    True
    """
    cu = lib()
    return None if cu is None else PdlLauncher(cu)


def launch(
    fn: int,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared: int,
    stream: int,
    params: int,
    what: str,
    pdl: bool = False,
) -> None:
    """A checked launch of CUfunction ``fn`` in the current context: ``grid`` and ``block``
    (x, y, z), ``shared`` dynamic bytes, CUstream ``stream`` (an int), ``params`` the address
    of the array of argument pointers; ``pdl``: a programmatic dependent launch. A failure
    raises a LaunchError naming ``what`` and the driver's status.

    >>> launch(fn, (1, 1, 1), (32, 1, 1), 0, 0, params, "launching k")  # doctest: +SKIP
    """
    cu = _need()
    f = PdlLauncher(cu) if pdl else cu.cuLaunchKernel
    status = f(ctypes.c_void_p(fn), *grid, *block, int(shared), ctypes.c_void_p(stream),
               ctypes.c_void_p(params), None)  # fmt: skip
    check(status, what)


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
