"""A lean driver-API launch for the GEMM kernels: module loaded once per device, then
one ``cuLaunchKernel`` with ctypes argument boxes per call.

The general launcher (:mod:`cutemma.cuda.launch`) checks every argument on each call;
``cutemma.gemm`` has already checked its arguments, so it launches through this instead.
The driver itself is :mod:`cutemma.libcuda`'s (ctypes; the one module that talks to it):
this module loads through :func:`~cutemma.libcuda.load_function` and launches through the
function object :func:`~cutemma.libcuda.launcher` hands back (``cuLaunchKernel`` called
without argtypes) or :func:`~cutemma.libcuda.pdl_launcher`. Only when that launch fails (no
current context on this thread, an error) does :meth:`DriverKernel.launch_checked` make the
device's primary context current, launch again and name the driver's error.

>>> k = DriverKernel(b"\\x7fELF", "k", 0, 128)
>>> k.name, k.threads, k.image()
('k', 128, b'\\x7fELF')
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cutemma.libcuda as libcuda  # (not `from cutemma import`: that asks cutemma.__getattr__)
from cutemma.libcuda import ensure_context  # noqa: F401  (tma_maps and others import it here)

_LOAD_LOCK = threading.Lock()
_DEFAULT_SHARED_LIMIT = 48 * 1024  # what a kernel gets without raising its limit


@dataclass(eq=False)
class DriverKernel:
    """One kernel of a cubin, built at its first load and launched through libcuda
    (:mod:`cutemma.libcuda`). A family hands the runtime plain data: the kernel's symbol
    ``name``, dynamic ``shared`` bytes, ``threads`` per block, ``pdl`` (launched as a
    programmatic dependent launch: its source waits with ``griddepcontrol.wait``; only such
    kernels may be), and either the ``cubin`` (from a disk index) or the kernel text
    ``source`` for ``arch``, compiled at the first load (:meth:`image`); ``index``: where
    the compiled cubin is then kept beside the JSON launch ``record`` (or None).

    >>> k = DriverKernel(None, "k", 0, 128, source="__global__ void k() {}", arch="sm_90a")
    >>> k.name, k.threads, k.cubin is None
    ('k', 128, True)
    """

    cubin: bytes | None
    name: str
    shared: int
    threads: int
    pdl: bool = False
    source: str | None = None
    arch: str | None = None
    index: Path | None = None
    record: str | None = None
    _loaded: dict[int, tuple] = field(default_factory=dict, init=False, repr=False)
    _handles: dict[int, ctypes.c_void_p] = field(default_factory=dict, init=False, repr=False)

    def image(self) -> bytes:
        """The cubin: compiled by NVRTC (:func:`cutemma.cuda.compile`, disk-cached by its
        source) at the first ask when the family handed over the kernel text, and then kept
        in the disk index by name when the family named an entry (a read-only or full cache
        only makes the next process slower)."""
        if self.cubin is None:
            from cutemma.cuda import compile
            from cutemma.cuda.cache import store_entry

            cubin = compile(self.source, self.arch).data
            if self.index is not None:
                store_entry(self.index, cubin, self.record)
            self.cubin = cubin
        return self.cubin

    def _function(self, device: int) -> tuple:
        hit = self._loaded.get(device)
        if hit is not None:
            return hit
        cubin = self.image()  # (before the lock: other kernels load while this one compiles)
        with _LOAD_LOCK:  # threads launching a new kernel at once load its module once
            hit = self._loaded.get(device)
            return hit if hit is not None else self._load(device, cubin)

    def _load(self, device: int, cubin: bytes) -> tuple:
        from cutemma.kernels.runtime.capture import refuse_during_capture

        refuse_during_capture(f"loading kernel {self.name} on device {device}")
        ctx = libcuda.primary_context(device)
        shared = self.shared if self.shared > _DEFAULT_SHARED_LIMIT else None
        module, fn = libcuda.load_function(cubin, self.name, shared)
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
        f = libcuda.pdl_launcher() if self.pdl else libcuda.launcher()
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
        libcuda.set_current(ctx)
        libcuda.launch(
            fn, (grid, grid_y, 1), (self.threads, 1, 1), self.shared, stream, params,
            f"launching {self.name} (grid {grid}x{grid_y}, block {self.threads}, "
            f"{self.shared} B shared)",
            pdl=self.pdl,
        )  # fmt: skip
