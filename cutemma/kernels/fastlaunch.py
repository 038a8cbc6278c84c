"""A lean driver-API launch for the GEMM kernels: module loaded once per device, then
one ``cuLaunchKernel`` with ctypes argument boxes per call.

The general launcher (:mod:`cutemma.cuda.launch`) checks every argument and queries
the driver on each call (tens of microseconds); ``cutemma.gemm`` has already checked
its arguments, so it launches through this instead and falls back to the general
path if this one cannot start.

>>> k = DriverKernel(b"\\x7fELF", "k", 0, 128)
>>> k.name, k.threads
('k', 128)
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

from cutemma.errors import LaunchError

_DEFAULT_SHARED_LIMIT = 48 * 1024  # what a kernel gets without raising its limit


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

    def _function(self, device: int) -> tuple:
        hit = self._loaded.get(device)
        if hit is not None:
            return hit
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

    def launch(
        self,
        device: int,
        grid: int,
        stream: int,
        args: Sequence[ctypes._SimpleCData],
        grid_y: int = 1,
    ):
        """Launch on ``grid`` x ``grid_y`` blocks of ``threads`` on CUstream ``stream`` (an int).

        ``grid_y`` counts the problems of a batched GEMM (at most 65535).
        """
        driver, ctx, _, fn = self._function(device)
        _ok(driver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        ptrs = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
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
                ctypes.addressof(ptrs),
                0,
            ),
            f"launching {self.name} (grid {grid}x{grid_y}, block {self.threads}, {self.shared} B shared)",
        )
