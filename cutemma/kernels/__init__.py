"""Kernels generated from cutemma layouts: the sm80 (mma.sync) and sm90 (wgmma + TMA) GEMMs.

>>> from cutemma.kernels import GemmConfig, Sm90Config, gemm_source, gemm_sm90_source
>>> "mma.sync.aligned.m16n8k16" in gemm_source(GemmConfig(64, 64, 32), "f16", "K", "K")
True
>>> "wgmma.mma_async" in gemm_sm90_source(Sm90Config(), "bf16", "K", "N", "bf16")
True
"""

from cutemma.kernels.dispatch import gemm
from cutemma.kernels.pick import BUILTIN_CONFIGS, pick_config, pick_sm90_config
from cutemma.kernels.sm80.plan import GemmConfig, GemmPlan
from cutemma.kernels.sm80.source import gemm_source, kernel_name
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.sm90.plan import Sm90Plan
from cutemma.kernels.sm90.source import gemm_sm90_source

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
    "pick_sm90_config",
]
