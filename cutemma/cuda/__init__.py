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
>>> import cutemma.cuda
>>> cutemma.cuda.sass.__module__, cutemma.cuda.launch.__module__  # the functions, not modules
('cutemma.cuda.sass', 'cutemma.cuda.launch')
"""

import sys
import types

from cutemma.cuda.cache import cache_dir  # light (no numpy): what a cached kernel's call needs
from cutemma.cuda.compile import (
    TARGETS,
    Cubin,
    compile,
    nvrtc_version,
    ptx_isa_version,
    unavailable_reason,
)
from cutemma.lazy_exports import lazy_exports

# the rest loads on first use: launching, probing and reading SASS pull in numpy and the
# catalog, which a cutemma.gemm call whose kernel is in the disk cache never needs
_LAZY = {
    "Kernel": "launch", "device_arch": "launch", "device_count": "launch",
    "gpu_unavailable_reason": "launch", "launch": "launch", "load_kernel": "launch",
    "Probe": "probe", "ProbeUnavailable": "probe", "probe_for": "probe",
    "count_instructions": "sass", "local_memory_use": "sass", "resource_usage": "sass",
    "sass": "sass", "tensor_core_counts": "sass", "Param": "source",
}  # fmt: skip


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


class _Package(types.ModuleType):
    """``launch`` and ``sass`` name both a submodule and the function it exports; the
    import system sets the package's attribute to the submodule when the submodule first
    loads, which a lazy package would let happen after the function was bound. The
    function keeps the name (as the eager package had it); the modules stay in
    sys.modules."""

    def __setattr__(self, name: str, value) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


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
