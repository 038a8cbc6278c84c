"""GPU checks for the launcher, run in a child process by test_launch.py.

Each check imports torch before cutemma, as a user's program does, in a fresh
process: on the H100, importing torch inside the pytest process after the CUDA
tests had loaded cuda.core, the driver and NVRTC failed in torch's own import
(custom_op schema parsing), and a crashing kernel would poison the test process.

    python tests/cuda/gpu_checks.py axpy_runs_on_torch_tensors
"""

from __future__ import annotations

import sys

import pytest  # for pytest.raises only
import torch  # before cutemma, so before cutemma's driver calls (libcuda) start
from cuda_probes import AXPY_PARAMS, axpy_probe, mma_sync_probe

from cutemma.cuda.launch import device_arch, load_kernel
from cutemma.cuda.source import Param
from cutemma.errors import LaunchError


def _axpy():
    from cutemma.cuda.compile import compile

    # A cubin loads only on its own major architecture: build for the GPU present.
    return load_kernel(compile(axpy_probe(), device_arch()), "axpy", AXPY_PARAMS)


def check_axpy_runs_on_torch_tensors() -> None:
    n = 1000
    x = torch.arange(n, device="cuda", dtype=torch.float32)
    y = torch.ones(n, device="cuda", dtype=torch.float32)
    _axpy()(y, x, 2.0, n, grid=(n + 127) // 128, block=128)
    torch.cuda.synchronize()
    assert torch.equal(y, 2 * torch.arange(n, device="cuda", dtype=torch.float32) + 1)


def check_launch_follows_torch_current_stream() -> None:
    n = 1 << 20
    x = torch.ones(n, device="cuda")
    y = torch.zeros(n, device="cuda")
    side = torch.cuda.Stream()
    kernel = _axpy()
    # Warm up first: loading a module (ours at its first launch, torch's reduction at the
    # first y.sum(): CUDA's lazy loading) synchronizes the whole context, which would make
    # the read below wait for the side stream whatever stream the kernels went to.
    kernel(y, x, 0.0, n, grid=n // 256, block=256)
    assert float(y.sum()) == 0.0
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(2_000_000_000)  # ~1 s of GPU cycles ahead of the kernels
        for _ in range(3):
            kernel(y, x, 1.0, n, grid=n // 256, block=256)
    # Read on the default stream while the side stream still sleeps: had the
    # kernels gone to the default stream, this read would be ordered after them.
    assert float(y.sum()) == 0.0, "kernel did not run on the current (side) stream"
    side.synchronize()
    assert float(y.min()) == 3.0 and float(y.max()) == 3.0
    kernel(y, x, 1.0, n, grid=n // 256, block=256, stream=side)
    side.synchronize()
    assert float(y[0]) == 4.0


def check_real_tensor_errors() -> None:
    kernel = _axpy()
    good = torch.zeros(16, device="cuda")
    with pytest.raises(LaunchError, match="on cpu"):
        kernel(good, torch.zeros(16), 1.0, 16)
    with pytest.raises(LaunchError, match="expects a tensor of float32, got bfloat16"):
        kernel(good, torch.zeros(16, device="cuda", dtype=torch.bfloat16), 1.0, 16)
    with pytest.raises(LaunchError, match="contiguous"):
        kernel(good, torch.zeros(4, 4, device="cuda").t(), 1.0, 16)


def check_mma_sync_probe_sums_ones() -> None:
    from cutemma.cuda.compile import compile

    ones_f16x2 = 0x3C003C00  # two f16 ones packed in one 32-bit register
    a = torch.full((32 * 4,), ones_f16x2, device="cuda", dtype=torch.int64).to(torch.int32)
    b = torch.full((32 * 2,), ones_f16x2, device="cuda", dtype=torch.int64).to(torch.int32)
    d = torch.zeros(32 * 4, device="cuda")
    params = [
        Param("float*", "d_out"),
        Param("const uint32_t*", "a_in"),
        Param("const uint32_t*", "b_in"),
    ]
    load_kernel(compile(mma_sync_probe(), device_arch()), "mma_sync_probe", params)(
        d, a, b, block=32
    )
    torch.cuda.synchronize()
    assert torch.all(d == 16.0)  # every D element is a K=16 dot product of ones


def check_large_dynamic_shared_memory_launch() -> None:
    from cutemma.cuda.compile import compile

    source = """
extern "C" __global__ void smem_fill(float* out, int n) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = i;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = buf[n - 1 - i];
}
"""
    n = 100 * 1024 // 4  # 100 KiB: past the 48 KiB default limit
    out = torch.zeros(n, device="cuda")
    load_kernel(compile(source, device_arch()), "smem_fill")(out, n, block=256, shared_mem=n * 4)
    torch.cuda.synchronize()
    assert torch.equal(out, torch.arange(n - 1, -1, -1, device="cuda", dtype=torch.float32))


if __name__ == "__main__":
    name, *args = sys.argv[1:]
    globals()[f"check_{name}"](*args)
    print(f"PASSED {name} {' '.join(args)}")
