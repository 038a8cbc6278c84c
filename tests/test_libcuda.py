"""cutemma.libcuda, the one module that talks to the CUDA driver, on a CPU: a stand-in CDLL
records what each function asks the driver, so the calls of libcuda, of the GEMM runtime's
checked launch (DriverKernel) and of the general launcher (cutemma.cuda.launch) are checked
without a GPU. The real launches are GPU tests: tests/cuda/test_launch.py (marked gpu) and the
kernels' gpu_*.py scripts."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import cutemma.libcuda as libcuda
from cutemma.cuda.launch import (
    Kernel,
    describe_tensor,
    device_arch,
    device_count,
    gpu_unavailable_reason,
)
from cutemma.cuda.source import Param
from cutemma.errors import LaunchError
from cutemma.kernels.runtime.driver import DriverKernel

NAMES = {0: b"CUDA_SUCCESS", 100: b"CUDA_ERROR_NO_DEVICE", 700: b"CUDA_ERROR_ILLEGAL_ADDRESS"}


def _out(ref, value):
    """Write ``value`` where a ``ctypes.byref`` argument points (a driver out-parameter)."""
    ref._obj.value = value


class FakeCu:
    """libcuda's entry points as the calls above make them: each call recorded, out-parameters
    written, statuses as set (``fail``: entry point -> status)."""

    def __init__(self, count=2, capability=(9, 0), fail=None):
        self.calls, self.count, self.capability, self.fail = [], count, capability, fail or {}
        self.args, self.copied = 0, []

    def _call(self, name, *args):
        self.calls.append((name, *args))
        return self.fail.get(name, 0)

    def cuGetErrorName(self, status, ref):  # noqa: N802 (the driver's names)
        _out(ref, NAMES.get(status))
        return 0 if status in NAMES else 1

    def cuInit(self, flags):  # noqa: N802
        return self._call("cuInit", flags)

    def cuDeviceGetCount(self, ref):  # noqa: N802
        _out(ref, self.count)
        return self._call("cuDeviceGetCount")

    def cuDeviceGet(self, ref, ordinal):  # noqa: N802
        _out(ref, 10 + ordinal)
        return self._call("cuDeviceGet", ordinal)

    def cuDeviceGetAttribute(self, ref, attr, dev):  # noqa: N802
        _out(ref, {75: self.capability[0], 76: self.capability[1]}[attr])
        return self._call("cuDeviceGetAttribute", attr, dev)

    def cuDevicePrimaryCtxRetain(self, ref, dev):  # noqa: N802
        _out(ref, 0xC0 + dev)
        return self._call("cuDevicePrimaryCtxRetain", dev)

    def cuCtxSetCurrent(self, ctx):  # noqa: N802
        return self._call("cuCtxSetCurrent", ctx.value)

    def cuModuleLoadData(self, ref, image):  # noqa: N802
        _out(ref, 0x40)
        return self._call("cuModuleLoadData", image.value[:4])

    def cuModuleGetFunction(self, ref, module, name):  # noqa: N802
        _out(ref, 0xF0)
        return self._call("cuModuleGetFunction", module.value, name)

    def cuFuncSetAttribute(self, fn, attr, value):  # noqa: N802
        return self._call("cuFuncSetAttribute", fn.value, attr, value)

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):  # noqa: N802
        # the argument values as the driver copies them, during the call (``args``: how many)
        ptrs = (ctypes.c_void_p * self.args).from_address(params.value) if self.args else ()
        self.copied = [ctypes.string_at(p, 8) for p in ptrs]
        return self._call("cuLaunchKernel", fn.value, (gx, gy, gz), (bx, by, bz), shared,
                          stream.value)  # fmt: skip

    def cuLaunchKernelEx(self, config_ref, fn, params, extra):  # noqa: N802
        c = ctypes.cast(config_ref, ctypes.POINTER(libcuda.LaunchConfig)).contents
        return self._call("cuLaunchKernelEx", fn.value, (c.gridDimX, c.gridDimY), c.blockDimX,
                          c.sharedMemBytes, c.hStream, c.attrs[0].id)  # fmt: skip


@pytest.fixture
def fake(monkeypatch):
    cu = FakeCu()
    monkeypatch.setattr(libcuda, "_lib", cu)
    return cu


@pytest.fixture
def no_driver(monkeypatch):
    monkeypatch.setattr(libcuda, "_lib", False)


def test_device_count_and_capability(fake):
    assert libcuda.device_count() == 2 and device_count() == 2
    assert libcuda.compute_capability(1) == (9, 0) and device_arch(1) == "sm_90a"
    assert ("cuDeviceGetAttribute", 75, 11) in fake.calls
    assert ("cuDeviceGetAttribute", 76, 11) in fake.calls
    fake.capability = (8, 6)
    assert device_arch(0) == "sm_86"


def test_no_device_is_named_by_the_driver(fake):
    fake.fail = {"cuInit": 100}
    with pytest.raises(LaunchError, match=r"cuInit failed: CUDA_ERROR_NO_DEVICE \(100\)"):
        libcuda.device_count()
    assert "CUDA_ERROR_NO_DEVICE" in gpu_unavailable_reason()
    assert device_count() == 0
    fake.fail, fake.count = {}, 0
    assert gpu_unavailable_reason() == "no NVIDIA GPU usable here (the driver reports 0 devices)"


def test_no_driver_is_named(no_driver):
    assert "libcuda.so.1" in gpu_unavailable_reason() and device_count() == 0
    with pytest.raises(LaunchError, match="cannot read the architecture of device 0"):
        device_arch()
    with pytest.raises(LaunchError, match="libcuda.so.1.*cannot be opened"):
        libcuda.launch(1, (1, 1, 1), (1, 1, 1), 0, 0, 0, "launching k")


def test_checked_launch_plain_and_pdl(fake):
    libcuda.launch(0xF0, (4, 2, 1), (128, 1, 1), 1024, 0x5, 0x77, "launching k")
    assert fake.calls[-1] == ("cuLaunchKernel", 0xF0, (4, 2, 1), (128, 1, 1), 1024, 0x5)
    libcuda.launch(0xF0, (4, 2, 1), (128, 1, 1), 1024, 0x5, 0x77, "launching k", pdl=True)
    assert fake.calls[-1] == ("cuLaunchKernelEx", 0xF0, (4, 2), 128, 1024, 0x5,
                              libcuda.PROGRAMMATIC_STREAM_SERIALIZATION)  # fmt: skip
    fake.fail = {"cuLaunchKernel": 700}
    with pytest.raises(LaunchError, match=r"launching k failed: CUDA_ERROR_ILLEGAL_ADDRESS"):
        libcuda.launch(0xF0, (1, 1, 1), (32, 1, 1), 0, 0, 0x77, "launching k")


def test_hot_path_gets_the_bound_function_itself(fake):
    # fastpath keeps what launcher() returns and calls it per launch: no wrapper between
    assert libcuda.launcher() == fake.cuLaunchKernel
    assert libcuda.pdl_launcher().launch_ex == fake.cuLaunchKernelEx


def test_driver_kernel_checked_launch_goes_through_libcuda(fake):
    k = DriverKernel(b"\x7fELF", "gemm", 200 * 1024, 384, pdl=True)
    k.launch_checked(0, 132, 2, 0x9, 0x1000)
    names = [c[0] for c in fake.calls]
    assert names[:3] == ["cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain"]
    assert ("cuFuncSetAttribute", 0xF0, libcuda.FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            200 * 1024) in fake.calls  # fmt: skip
    assert fake.calls[-2:] == [
        ("cuCtxSetCurrent", 0xC0 + 10),
        ("cuLaunchKernelEx", 0xF0, (132, 2), 384, 200 * 1024, 0x9, 6),
    ]
    fake.fail = {"cuLaunchKernelEx": 700}
    with pytest.raises(LaunchError, match=r"launching gemm \(grid 132x2, block 384"):
        k.launch_checked(0, 132, 2, 0x9, 0x1000)


class StandInGpuTensor:
    """A CuPy-like array on device 0 (``__cuda_array_interface__``)."""

    def __init__(self, n, ptr):
        self.shape = (n,)
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (n,), "typestr": "<f4",
                                         "strides": None, "version": 3}  # fmt: skip

    def __dlpack_device__(self):
        return (2, 0)


def test_general_launcher_goes_through_libcuda(fake):
    params = [Param("float*", "y"), Param("int", "n")]
    k = Kernel(b"\x7fELF-probe", "axpy", params)
    fake.args = 2
    k(StandInGpuTensor(8, 0x7F00), 8, grid=2, block=(64, 2), shared_mem=64 * 1024, stream=0x33)
    assert ("cuModuleLoadData", b"\x7fELF") in fake.calls
    assert ("cuModuleGetFunction", 0x40, b"axpy") in fake.calls
    assert ("cuFuncSetAttribute", 0xF0, 8, 64 * 1024) in fake.calls  # past the 48 KiB default
    assert fake.calls[-1] == ("cuLaunchKernel", 0xF0, (2, 1, 1), (64, 2, 1), 64 * 1024, 0x33)
    y, n = fake.copied
    assert int.from_bytes(y, "little") == 0x7F00 and int.from_bytes(n[:4], "little") == 8
    # the second launch reuses the module and makes the context current again
    k(StandInGpuTensor(8, 0x7F00), 8, stream=0x33)
    assert [c[0] for c in fake.calls].count("cuModuleLoadData") == 1
    assert fake.calls[-2] == ("cuCtxSetCurrent", 0xC0 + 10)
    fake.fail = {"cuLaunchKernel": 700}
    with pytest.raises(LaunchError, match=r"launching axpy on device 0 \(grid \(1, 1, 1\)"):
        k(StandInGpuTensor(8, 0x7F00), 8, stream=0x33)


def test_dlpack_only_tensor_is_read_without_cuda_core():
    class DlpackOnly:  # what JAX hands over: DLPack, no CUDA array interface
        def __init__(self, array, device):
            self.array, self.device, self.dtype = array, device, array.dtype

        def __dlpack__(self, stream=None):
            return self.array.__dlpack__(max_version=self.version)

        version = None

        def __dlpack_device__(self):
            return self.device

    a = np.arange(12, dtype=np.float32).reshape(3, 4)[1:]
    t = describe_tensor(DlpackOnly(a, (2, 0)))
    assert (t.ptr, t.shape, t.strides, t.dtype, t.device) == (
        a.ctypes.data,
        (2, 4),
        (4, 1),
        "float32",
        ("cuda", 0),
    )
    t = describe_tensor(DlpackOnly(a.T, (2, 1)))
    assert (t.shape, t.strides, t.device, t.is_contiguous) == ((4, 2), (1, 4), ("cuda", 1), False)
    versioned = DlpackOnly(a, (2, 0))
    versioned.version = (1, 0)  # a DLManagedTensorVersioned: another layout, refused by name
    with pytest.raises(LaunchError, match="cannot read a DlpackOnly through DLPack"):
        describe_tensor(versioned)
