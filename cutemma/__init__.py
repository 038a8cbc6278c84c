"""cutemma: CuTe's MMA system in Python.

>>> import cutemma
>>> str(cutemma.Layout((4, 2), (2, 1)))
'(4,2):(2,1)'
"""

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

__version__ = "0.1.0"

__all__ = [
    "AtomError",
    "CompileError",
    "CutemmaError",
    "DescriptorError",
    "LaunchError",
    "LayoutError",
    "LayoutParseError",
    "NotALayoutError",
    "TiledMmaError",
    *_layout_all,
]
