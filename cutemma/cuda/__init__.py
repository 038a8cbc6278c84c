"""The CUDA backend: generate CUDA C++, compile it with NVRTC (cached on disk),
read its SASS, and launch it on GPU tensors.

Everything but the launch works on a machine without a GPU. The pieces:
``source`` (emitters of CUDA C++ text), ``compile`` (NVRTC and the cache),
``sass`` (disassembly, instruction counts, spills), ``launch`` (DLPack tensors),
``probe`` (one kernel per atom) and ``verify`` (the sweep that proves the catalog:
``from cutemma.cuda.verify import verify``; the module keeps its name, so it is not
re-exported here as a function).

>>> from cutemma.cuda import compile, sass, count_instructions
>>> cubin = compile('extern "C" __global__ void k(int* x) { x[0] = 1; }', "sm_80")
>>> count_instructions(sass(cubin))["EXIT"] >= 1
True
"""

from cutemma.cuda.cache import cache_dir
from cutemma.cuda.compile import (
    TARGETS,
    Cubin,
    compile,
    nvrtc_version,
    ptx_isa_version,
    unavailable_reason,
)
from cutemma.cuda.launch import (
    Kernel,
    device_arch,
    device_count,
    gpu_unavailable_reason,
    launch,
    load_kernel,
)
from cutemma.cuda.probe import Probe, ProbeUnavailable, probe_for
from cutemma.cuda.sass import (
    count_instructions,
    local_memory_use,
    resource_usage,
    sass,
    tensor_core_counts,
)
from cutemma.cuda.source import Param

__all__ = [
    "TARGETS",
    "Cubin",
    "Kernel",
    "Param",
    "Probe",
    "ProbeUnavailable",
    "cache_dir",
    "compile",
    "count_instructions",
    "device_arch",
    "device_count",
    "gpu_unavailable_reason",
    "launch",
    "load_kernel",
    "local_memory_use",
    "nvrtc_version",
    "probe_for",
    "ptx_isa_version",
    "resource_usage",
    "sass",
    "tensor_core_counts",
    "unavailable_reason",
]
