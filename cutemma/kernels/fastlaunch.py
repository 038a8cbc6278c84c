"""A lean driver-API launch for the GEMM kernels: module loaded once per device, then
one ``cuLaunchKernel`` with ctypes argument boxes per call.

The general launcher (:mod:`cutemma.cuda.launch`) checks every argument and queries
the driver on each call (tens of microseconds); ``cutemma.gemm`` has already checked
its arguments, so it launches through this instead. Every driver call here goes to
libcuda through ctypes (:mod:`cutemma.libcuda`: no ``cuda.bindings`` import, which alone
cost a new process's first call about 18 ms); the launch itself is ``cuLaunchKernel``
called without argtypes (:func:`launcher`). Only when that launch fails (no current
context on this thread, an error) does :meth:`DriverKernel.launch_checked` make the
device's primary context current, launch again and name the driver's error.

>>> k = DriverKernel(b"\\x7fELF", "k", 0, 128)
>>> k.name, k.threads
('k', 128)
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from typing import Any

import cutemma.libcuda as libcuda  # (not `from cutemma import`: that asks cutemma.__getattr__)
from cutemma.libcuda import ensure_context  # noqa: F401  (tma_maps and others import it here)

_LOAD_LOCK = threading.Lock()
_DEFAULT_SHARED_LIMIT = 48 * 1024  # what a kernel gets without raising its limit


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
    cu = libcuda.lib()
    return None if cu is None else cu.cuLaunchKernel


class DriverKernel:
    """One kernel of a cubin, loaded and launched through libcuda (:mod:`cutemma.libcuda`)."""

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
        ctx = libcuda.primary_context(device)
        shared = self.shared if self.shared > _DEFAULT_SHARED_LIMIT else None
        module, fn = libcuda.load_function(self.cubin, self.name, shared)
        hit = self._loaded[device] = (ctx, module, fn)
        return hit

    def handle(self, device: int) -> ctypes.c_void_p:
        """The kernel's CUfunction on ``device`` as a ctypes pointer box (module loaded)."""
        h = self._handles.get(device)
        if h is None:
            h = self._handles[device] = ctypes.c_void_p(self._function(device)[2])
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
        """The launch with the device's primary context made current first, a failure
        raised as a LaunchError naming the driver's status. ``params``: the address of the
        array of argument pointers."""
        ctx, _, fn = self._function(device)
        cu = libcuda.lib()
        libcuda.check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        status = cu.cuLaunchKernel(ctypes.c_void_p(fn), grid, grid_y, 1, self.threads, 1, 1,
                                   self.shared, ctypes.c_void_p(stream), ctypes.c_void_p(params),
                                   None)  # fmt: skip
        libcuda.check(
            status,
            f"launching {self.name} (grid {grid}x{grid_y}, block {self.threads}, {self.shared} B shared)",
        )
