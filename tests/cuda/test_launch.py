"""Launch argument checks (CPU, with stand-in GPU tensors) and real launches (gpu)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cuda_probes import AXPY_PARAMS
from cuda_skips import needs_nvrtc

from cutemma.cuda.launch import (
    Kernel,
    describe_tensor,
    device_arch,
    gpu_unavailable_reason,
    marshal,
    stream_handle,
)
from cutemma.cuda.source import Param
from cutemma.errors import LaunchError

NO_GPU = gpu_unavailable_reason()
needs_gpu = pytest.mark.skipif(NO_GPU is not None, reason=f"needs an NVIDIA GPU: {NO_GPU}")


class FakeGpuTensor:
    """Looks like a CuPy array on a GPU: DLPack device plus __cuda_array_interface__."""

    def __init__(self, shape, typestr="<f4", strides=None, device=0, ptr=0x7F0000000000):
        self.shape = shape
        self._device = device
        self.__cuda_array_interface__ = {
            "data": (ptr, False),
            "shape": shape,
            "typestr": typestr,
            "strides": strides,
            "version": 3,
        }

    def __dlpack_device__(self):
        return (2, self._device)


KERNEL = Kernel(b"\x7fELF", "axpy", AXPY_PARAMS)


def test_describe_stand_in_gpu_tensor():
    t = describe_tensor(FakeGpuTensor((4, 8), "<f2", strides=(16, 2)))
    assert (t.ptr, t.shape, t.strides, t.dtype, t.device) == (
        0x7F0000000000,
        (4, 8),
        (8, 1),
        "float16",
        ("cuda", 0),
    )
    assert t.is_contiguous
    assert not describe_tensor(FakeGpuTensor((4, 8), strides=(4, 16))).is_contiguous


def test_cpu_array_is_refused_with_the_fix():
    with pytest.raises(
        LaunchError, match=r"argument 0 \(float\* __restrict__ y\).*on cpu.*\.cuda\(\)"
    ):
        KERNEL(np.zeros(8, np.float32), FakeGpuTensor((8,)), 2.0, 8)


def test_dtype_mismatch_names_expected_and_actual():
    with pytest.raises(LaunchError, match="argument 1 .*expects a tensor of float32, got float16"):
        KERNEL(FakeGpuTensor((8,)), FakeGpuTensor((8,), "<f2"), 2.0, 8)


def test_non_contiguous_input_is_refused():
    transposed = FakeGpuTensor((4, 8), strides=(4, 16))
    with pytest.raises(LaunchError, match=r"strides \(1, 4\).*\.contiguous\(\)"):
        KERNEL(FakeGpuTensor((32,)), transposed, 2.0, 32)


def test_tensors_on_two_devices_are_refused():
    with pytest.raises(LaunchError, match=r"devices \[0, 1\]"):
        KERNEL(FakeGpuTensor((8,)), FakeGpuTensor((8,), device=1), 2.0, 8)
    with pytest.raises(LaunchError, match=r"devices \[1\] but device=0"):
        KERNEL(FakeGpuTensor((8,), device=1), FakeGpuTensor((8,), device=1), 2.0, 8, device=0)


def test_argument_count_and_scalar_range():
    with pytest.raises(LaunchError, match="takes 4 arguments"):
        KERNEL(FakeGpuTensor((8,)), 2.0, 8)
    with pytest.raises(LaunchError, match="does not fit int32"):
        KERNEL(FakeGpuTensor((8,)), FakeGpuTensor((8,)), 2.0, 2**31)
    with pytest.raises(LaunchError, match="is a float but the parameter is int32"):
        KERNEL(FakeGpuTensor((8,)), FakeGpuTensor((8,)), 2.0, 8.0)
    with pytest.raises(LaunchError, match="is a pointer"):
        KERNEL(1.5, FakeGpuTensor((8,)), 2.0, 8)


def test_raw_bit_pointers_take_same_width_dtypes():
    bits = [Param("const uint16_t*", "a"), Param("void*", "anything")]
    values = marshal([FakeGpuTensor((8,), "<f2"), FakeGpuTensor((8,), "<i8")], bits)
    assert [v.dtype.name for v, _ in values] == ["uint64", "uint64"]
    with pytest.raises(LaunchError, match="uint16 or int16 or float16 or bfloat16, got float32"):
        marshal([FakeGpuTensor((8,)), FakeGpuTensor((8,))], bits)


def test_scalars_take_their_parameter_types():
    params = [Param("unsigned", "u"), Param("double", "x"), Param("uint64_t*", "p")]
    values = [v for v, _ in marshal([7, 1, 0x1000], params)]
    assert [v.dtype.name for v in values] == ["uint32", "float64", "uint64"]
    assert [type(v) for v, _ in marshal([np.int8(3), True], None)] == [np.int8, np.int32]


def test_unknown_argument_type_is_named():
    with pytest.raises(LaunchError, match="cannot pass a dict"):
        marshal([{}], None)


def test_launch_shape_is_checked():
    with pytest.raises(LaunchError, match="grid=0"):
        KERNEL(FakeGpuTensor((8,)), FakeGpuTensor((8,)), 2.0, 8, grid=0)
    with pytest.raises(LaunchError, match=r"block=\(1, 2, 3, 4\)"):
        KERNEL(FakeGpuTensor((8,)), FakeGpuTensor((8,)), 2.0, 8, block=(1, 2, 3, 4))


def test_stream_handles():
    class TorchLike:
        cuda_stream = 1234

    class Protocol:
        def __cuda_stream__(self):
            return (0, 99)

    assert [stream_handle(s) for s in (5, TorchLike(), Protocol())] == [5, 1234, 99]
    with pytest.raises(LaunchError, match="cannot use a str as a stream"):
        stream_handle("default")


@pytest.mark.skipif(NO_GPU is None, reason="a GPU is present: the no-GPU error cannot occur")
def test_no_gpu_gives_launch_error_after_arguments_pass():
    with pytest.raises(LaunchError, match="no NVIDIA GPU.*Compiling and reading SASS work"):
        KERNEL(FakeGpuTensor((8,)), FakeGpuTensor((8,)), 2.0, 8)
    with pytest.raises(LaunchError, match="cannot read the architecture of device 0"):
        device_arch()


# ---- on a GPU (each check in a child process: see gpu_checks.py) ----------------------

GPU_CHECKS = [
    ("axpy_runs_on_torch_tensors",),
    ("launch_follows_torch_current_stream",),
    ("real_tensor_errors",),
    ("mma_sync_probe_sums_ones",),
    ("large_dynamic_shared_memory_launch",),
]


@pytest.mark.gpu
@needs_gpu
@needs_nvrtc
@pytest.mark.parametrize("check", GPU_CHECKS, ids="-".join)
def test_gpu_check(check, private_cache):
    # find_spec, not import: torch is imported only in the child (see gpu_checks.py).
    if importlib.util.find_spec("torch") is None:
        pytest.skip("the GPU checks feed torch tensors; torch is not installed")
    here = Path(__file__).parent
    env = {
        **os.environ,
        "CUTEMMA_CACHE_DIR": str(private_cache),
        "PYTHONPATH": os.pathsep.join([str(here.parents[1]), str(here)]),
    }
    done = subprocess.run(
        [sys.executable, str(here / "gpu_checks.py"), *check],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{check} failed:\n{done.stdout}\n{done.stderr}"
    assert "PASSED" in done.stdout
