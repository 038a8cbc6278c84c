"""cutemma: CuTe's MMA system in Python.

The layout algebra, MMA atoms (Operation + Traits), copy atoms (Operation + Copy_Traits),
TiledMMA and TiledCopy, shared-memory descriptors and the CPU emulation are re-exported here; the CUDA backend lives in ``cutemma.cuda``.

>>> import cutemma
>>> str(cutemma.Layout((4, 2), (2, 1)))
'(4,2):(2,1)'
>>> cutemma.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2)).tile_size_mnk
(32, 16, 16)

The GEMM kernels (``cutemma.gemm``, ``cutemma.GemmConfig``, ``cutemma.tune``) load on
first use; ``gemm`` and ``tune`` need a CUDA GPU and torch:

>>> A = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)  # doctest: +SKIP
>>> cutemma.gemm(A, A.T).shape                                       # doctest: +SKIP
torch.Size([512, 512])
"""

from cutemma import emulate
from cutemma.copy import CopyAtom, copy_ops, copy_traits, make_copy_atom
from cutemma.emit import to_cpp
from cutemma.errors import (
    AtomError,
    CliError,
    CompileError,
    CopyError,
    CutemmaError,
    DescriptorError,
    DesignError,
    EmitError,
    LaunchError,
    LayoutError,
    LayoutParseError,
    NotALayoutError,
    TiledMmaError,
    TmaError,
)
from cutemma.layout import *  # noqa: F403
from cutemma.layout import __all__ as _layout_all
from cutemma.mma import *  # noqa: F403
from cutemma.mma import __all__ as _mma_all
from cutemma.mma.infer import infer_layout
from cutemma.smem import *  # noqa: F403
from cutemma.smem import __all__ as _smem_all
from cutemma.tensor import (
    Tensor,
    local_partition,
    local_tile,
    make_identity_tensor,
    make_tensor,
    print_tensor,
)
from cutemma.tiled import (
    ThrCopy,
    ThrMma,
    TiledCopy,
    TiledMma,
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_copy_D,
    make_tiled_copy_S,
    make_tiled_mma,
)
from cutemma.viz import print_latex, print_text, to_html, to_latex, to_svg, to_text

__version__ = "0.1.0"

# The GEMM kernels' public names, imported on first use: ``import cutemma`` stays free of
# the kernel generator (and never imports torch or cuda-python).
_LAZY = {
    "gemm": "cutemma.kernels.dispatch",
    "GemmConfig": "cutemma.kernels.plan",
    "Sm90Config": "cutemma.kernels.plan_sm90",
    "tune": "cutemma.kernels.tune",
    "to_cute_dsl": "cutemma.emit",
}


def __getattr__(name: str):
    """``cutemma.gemm``, ``cutemma.GemmConfig``, ``cutemma.tune``: loaded when first asked for.

    >>> import cutemma
    >>> cutemma.GemmConfig(64, 64, 32).name
    'b64x64x32_w2x2_s4'
    """
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cutemma' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    *_LAZY,  # GemmConfig, gemm, tune, to_cute_dsl
    "AtomError", "CliError", "CompileError", "CutemmaError", "DescriptorError", "LaunchError",
    "LayoutError", "LayoutParseError", "NotALayoutError", "TiledMmaError", "CopyError", "TmaError",
    "DesignError", "EmitError",
    "CopyAtom", "copy_ops", "copy_traits", "make_copy_atom",
    "ThrCopy", "TiledCopy", "make_tiled_copy", "make_tiled_copy_A", "make_tiled_copy_B",
    "make_tiled_copy_C", "make_tiled_copy_D", "make_tiled_copy_S",
    "Tensor", "ThrMma", "TiledMma", "emulate", "infer_layout", "local_partition", "local_tile",
    "make_identity_tensor", "make_tensor", "make_tiled_mma", "print_tensor",
    "print_latex", "print_text", "to_html", "to_latex", "to_svg", "to_text", "to_cpp",
    *_layout_all, *_mma_all, *_smem_all,
]  # fmt: skip
