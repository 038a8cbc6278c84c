"""Kernels generated from cutemma layouts: the sm80 (mma.sync) and sm90 (wgmma + TMA) GEMMs.

>>> from cutemma.kernels import GemmConfig, Sm90Config, gemm_source, gemm_sm90_source
>>> "mma.sync.aligned.m16n8k16" in gemm_source(GemmConfig(64, 64, 32), "f16", "K", "K")
True
>>> "wgmma.mma_async" in gemm_sm90_source(Sm90Config(), "bf16", "K", "N", "bf16")
True
"""

from cutemma.kernels.dispatch import BUILTIN_CONFIGS, gemm, pick_config
from cutemma.kernels.gemm_sm80 import gemm_source, kernel_name
from cutemma.kernels.gemm_sm90 import gemm_sm90_source
from cutemma.kernels.plan import GemmConfig, GemmPlan
from cutemma.kernels.plan_sm90 import Sm90Config, Sm90Plan

__all__ = [
    "BUILTIN_CONFIGS",
    "GemmConfig",
    "GemmPlan",
    "Sm90Config",
    "Sm90Plan",
    "gemm",
    "gemm_sm90_source",
    "gemm_source",
    "kernel_name",
    "pick_config",
]
