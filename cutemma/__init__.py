"""cutemma: CuTe's MMA system in Python.

The layout algebra, MMA atoms (Operation + Traits), TiledMMA, shared-memory descriptors and
the CPU emulation are re-exported here; the CUDA backend lives in ``cutemma.cuda``.

>>> import cutemma
>>> str(cutemma.Layout((4, 2), (2, 1)))
'(4,2):(2,1)'
>>> cutemma.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2)).tile_size_mnk
(32, 16, 16)
"""

from cutemma import emulate
from cutemma.errors import (
    AtomError,
    CompileError,
    CutemmaError,
    DescriptorError,
    LaunchError,
    LayoutError,
    LayoutParseError,
    NotALayoutError,
    TiledMmaError,
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
)
from cutemma.tiled import ThrMma, TiledMma, make_tiled_mma
from cutemma.viz import print_latex, print_text, to_html, to_latex, to_svg, to_text

__version__ = "0.1.0"

__all__ = [
    "AtomError", "CompileError", "CutemmaError", "DescriptorError", "LaunchError",
    "LayoutError", "LayoutParseError", "NotALayoutError", "TiledMmaError",
    "Tensor", "ThrMma", "TiledMma", "emulate", "infer_layout", "local_partition", "local_tile",
    "make_identity_tensor", "make_tensor", "make_tiled_mma",
    "print_latex", "print_text", "to_html", "to_latex", "to_svg", "to_text",
    *_layout_all, *_mma_all, *_smem_all,
]  # fmt: skip
