"""Kernels generated from cutemma layouts: the sm80 (mma.sync) and sm90 (wgmma + TMA) GEMMs.

>>> from cutemma.kernels import GemmConfig, Sm90Config, gemm_source, gemm_sm90_source
>>> "mma.sync.aligned.m16n8k16" in gemm_source(GemmConfig(64, 64, 32), "f16", "K", "K")
True
>>> "wgmma.mma_async" in gemm_sm90_source(Sm90Config(), "bf16", "K", "N", "bf16")
True
"""

from typing import TYPE_CHECKING

from cutemma.lazy_exports import lazy_exports

if TYPE_CHECKING:  # what type checkers and the API reference (griffe) read; at run time each
    # name loads its module on first use (below)
    from cutemma.kernels.design import GemmDesign, check, failed_rules
    from cutemma.kernels.dispatch import gemm, which_kernel
    from cutemma.kernels.pick import BUILTIN_CONFIGS, pick_config, pick_sm90_config
    from cutemma.kernels.report import explain
    from cutemma.kernels.sm80.config import GemmConfig
    from cutemma.kernels.sm80.plan import GemmPlan
    from cutemma.kernels.sm80.source import gemm_source, kernel_name
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.sm90.plan import Sm90Plan
    from cutemma.kernels.sm90.source import gemm_sm90_source

# each name loads its module on first use (cutemma.lazy_exports): ``cutemma.gemm``'s call
# imports only the host side it runs (a cached kernel needs no generator, plan or algebra)
_LAZY = {
    "GemmDesign": "design",
    "check": "design",
    "failed_rules": "design",
    "explain": "report",
    "gemm": "dispatch",
    "which_kernel": "dispatch",
    "BUILTIN_CONFIGS": "pick",
    "pick_config": "pick",
    "pick_sm90_config": "pick",
    "GemmConfig": "sm80.config",
    "GemmPlan": "sm80.plan",
    "gemm_source": "sm80.source",
    "kernel_name": "sm80.source",
    "Sm90Config": "sm90.config",
    "Sm90Plan": "sm90.plan",
    "gemm_sm90_source": "sm90.source",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "BUILTIN_CONFIGS",
    "GemmDesign",
    "GemmConfig",
    "GemmPlan",
    "Sm90Config",
    "Sm90Plan",
    "check",
    "explain",
    "failed_rules",
    "gemm",
    "gemm_sm90_source",
    "gemm_source",
    "kernel_name",
    "pick_config",
    "pick_sm90_config",
    "which_kernel",
]
