"""A lean driver-API launch for the GEMM kernels: module loaded once per device, then
one ``cuLaunchKernel`` with ctypes argument boxes per call.

The general launcher (:mod:`cutemma.cuda.launch`) checks every argument and queries
the driver on each call (tens of microseconds); ``cutemma.gemm`` has already checked
its arguments, so it launches through this instead and falls back to the general
path if this one cannot start. The launch itself is libcuda's ``cuLaunchKernel`` called
through ctypes without argtypes (:func:`launcher`); only when that cannot run (no
libcuda through ctypes, no current context on this thread, an error) does a launch go
through ``cuda.bindings``, which makes the device's primary context current and names
the driver's error.

>>> k = DriverKernel(b"\\x7fELF", "k", 0, 128)
>>> k.name, k.threads
('k', 128)
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from typing import Any

from cutemma.errors import LaunchError

_LOAD_LOCK = threading.Lock()
_DEFAULT_SHARED_LIMIT = 48 * 1024  # what a kernel gets without raising its limit
_libcuda: Any = None  # libcuda's cuLaunchKernel (ctypes, no argtypes), or False


def launcher() -> Any:
    """libcuda's cuLaunchKernel through ctypes with no argtypes, or None where libcuda
    cannot be opened. The caller passes pointers as ``c_void_p`` boxes and the unsigned
    ints as small Python ints (C ints in the platform's calling convention): about half
    the time of declared argtypes (ctypes' from_param per argument), and a tenth of the
    ``cuda.bindings`` call (its argument objects and checks).

    >>> f = launcher()
    >>> f is None or f.restype is ctypes.c_int
    True
    """
    global _libcuda
    if _libcuda is None:
        try:
            f = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
            f.restype = ctypes.c_int
            _libcuda = f
        except (OSError, AttributeError):
            _libcuda = False
    return _libcuda or None


def ensure_context(device: int) -> None:
    """Make ``device``'s primary context current on this thread if no context is.

    The driver keeps the current context per thread: a thread that has not touched CUDA
    yet (a new thread whose first call is cutemma.gemm) has none, and the driver calls that
    need one (``cuTensorMapEncodeTiled``) fail there with CUDA_ERROR_INVALID_CONTEXT.
    torch uses the same primary context, so making it current changes nothing for torch.
    Without a driver (a CPU machine) there is no context to make: it returns, and the call
    that needed one reports the missing driver itself.

    >>> ensure_context(0)  # doctest: +SKIP
    """
    try:
        from cuda.bindings import driver

        status = driver.cuInit(0)[0]
    except (ImportError, RuntimeError):  # no cuda-bindings, or no libcuda to load
        return
    if int(status) != 0 or int(_ok(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")):
        return
    dev = _ok(driver.cuDeviceGet(device), "cuDeviceGet")
    ctx = _ok(driver.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    _ok(driver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


def _ok(result, what: str):
    status, *values = result if isinstance(result, tuple) else (result,)
    if int(status) != 0:
        raise LaunchError(f"{what} failed: {status!r}")
    return values[0] if len(values) == 1 else tuple(values)


class DriverKernel:
    """One kernel of a cubin, launched through ``cuda.bindings.driver``."""

    def __init__(self, cubin: bytes, name: str, shared: int, threads: int):
        self.cubin, self.name, self.shared, self.threads = cubin, name, shared, threads
        self._loaded: dict[int, tuple] = {}
        self._handles: dict[int, ctypes.c_void_p] = {}  # device -> CUfunction, boxed

    def _function(self, device: int) -> tuple:
        hit = self._loaded.get(device)
        if hit is not None:
            return hit
        with _LOAD_LOCK:  # threads launching a new kernel at once load its module once
            hit = self._loaded.get(device)
            return hit if hit is not None else self._load(device)

    def _load(self, device: int) -> tuple:
        from cutemma.kernels.capture import refuse_during_capture

        refuse_during_capture(f"loading kernel {self.name} on device {device}")
        from cuda.bindings import driver

        _ok(driver.cuInit(0), "cuInit")
        dev = _ok(driver.cuDeviceGet(device), "cuDeviceGet")
        ctx = _ok(driver.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
        _ok(driver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        module = _ok(driver.cuModuleLoadData(self.cubin), "cuModuleLoadData")
        fn = _ok(driver.cuModuleGetFunction(module, self.name.encode()), f"get {self.name}")
        if self.shared > _DEFAULT_SHARED_LIMIT:
            attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _ok(driver.cuFuncSetAttribute(fn, attr, self.shared), "raise the shared-memory limit")
        hit = self._loaded[device] = (driver, ctx, module, fn)
        return hit

    def handle(self, device: int) -> ctypes.c_void_p:
        """The kernel's CUfunction on ``device`` as a ctypes pointer box (module loaded)."""
        h = self._handles.get(device)
        if h is None:
            h = self._handles[device] = ctypes.c_void_p(int(self._function(device)[3]))
        return h

    def launch(
        self,
        device: int,
        grid: int,
        stream: int,
        args: Sequence[ctypes._SimpleCData],
        grid_y: int = 1,
    ) -> None:
        """Launch on ``grid`` x ``grid_y`` blocks of ``threads`` on CUstream ``stream`` (an int).

        ``grid_y`` counts the problems of a batched GEMM (at most 65535). ``args``: one
        ctypes box per kernel parameter, in order.
        """
        ptrs = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        f = launcher()
        if f is not None:
            h = self._handles.get(device) or self.handle(device)
            status = f(h, grid, grid_y, 1, self.threads, 1, 1, self.shared,
                       ctypes.c_void_p(stream), ptrs, None)  # fmt: skip
            if status == 0:
                return
        self.launch_checked(device, grid, grid_y, stream, ctypes.addressof(ptrs))

    def launch_checked(self, device: int, grid: int, grid_y: int, stream: int, params: int) -> None:
        """The launch through ``cuda.bindings``: the device's primary context made current
        first, a failure raised as a LaunchError naming the driver's status. ``params``:
        the address of the array of argument pointers."""
        driver, ctx, _, fn = self._function(device)
        _ok(driver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        _ok(
            driver.cuLaunchKernel(
                fn,
                grid,
                grid_y,
                1,
                self.threads,
                1,
                1,
                self.shared,
                driver.CUstream(stream),
                params,
                0,
            ),
            f"launching {self.name} (grid {grid}x{grid_y}, block {self.threads}, {self.shared} B shared)",
        )
