"""Kernels generated from cutemma layouts: the sm80 (mma.sync) GEMM and its dispatch.

>>> from cutemma.kernels import GemmConfig, gemm_source
>>> "mma.sync.aligned.m16n8k16" in gemm_source(GemmConfig(64, 64, 32), "f16", "K", "K")
True
"""

from cutemma.kernels.dispatch import BUILTIN_CONFIGS, gemm, pick_config
from cutemma.kernels.gemm_sm80 import gemm_source, kernel_name
from cutemma.kernels.plan import GemmConfig, GemmPlan

__all__ = [
    "BUILTIN_CONFIGS",
    "GemmConfig",
    "GemmPlan",
    "gemm",
    "gemm_source",
    "kernel_name",
    "pick_config",
]
