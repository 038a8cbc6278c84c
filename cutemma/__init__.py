"""cutemma: CuTe's MMA system in Python.

The layout algebra, MMA atoms (Operation + Traits), copy atoms (Operation + Copy_Traits),
TiledMMA and TiledCopy, shared-memory descriptors and the CPU emulation are re-exported here; the CUDA backend lives in ``cutemma.cuda``.

>>> import cutemma
>>> str(cutemma.Layout((4, 2), (2, 1)))
'(4,2):(2,1)'
>>> cutemma.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2)).tile_size_mnk
(32, 16, 16)
>>> cutemma.GemmConfig(64, 64, 32).name
'b64x64x32_w2x2_s4'

The GEMM kernels (``cutemma.gemm``, ``cutemma.GemmConfig``, ``cutemma.tune``) load on
first use; ``gemm`` and ``tune`` need a CUDA GPU and torch:

>>> A = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)  # doctest: +SKIP
>>> cutemma.gemm(A, A.T).shape                                       # doctest: +SKIP
torch.Size([512, 512])
"""

import importlib

from cutemma.display import renderers_from
from cutemma.errors import (  # noqa: F401  (re-exported: cutemma.LayoutError ...)
    AtomError,
    CliError,
    CompileError,
    CopyError,
    CutemmaError,
    DescriptorError,
    DesignError,
    DrawError,
    EmitError,
    LaunchError,
    LayoutError,
    LayoutParseError,
    NotALayoutError,
    TiledMmaError,
    TmaError,
)
from cutemma.lazy_exports import lazy_exports

__version__ = "0.1.0"

# Every public name loads on first use (PEP 562): ``import cutemma`` and ``cutemma --version``
# import only the errors; ``cutemma.Layout`` imports the layout algebra, ``cutemma.emulate`` the
# emulator, ``cutemma.gemm`` the kernel generator (never torch or cuda-python before a call).
# name -> the module that defines it, relative to cutemma
_LAZY = {
    "gemm": "kernels.entry",
    "GemmConfig": "kernels.sm80.config",
    "Sm90Config": "kernels.sm90.config",
    "tune": "kernels.tune",
    **dict.fromkeys(("CopyAtom", "copy_ops", "copy_traits", "make_copy_atom"), "copy"),
    **dict.fromkeys(("to_cpp", "to_cute_dsl"), "emit"),
    "infer_layout": "mma.infer",
    **dict.fromkeys(
        ("Tensor", "local_partition", "local_tile", "make_identity_tensor", "make_tensor",
         "print_tensor"),
        "tensor",
    ),
    **dict.fromkeys(
        ("ThrCopy", "ThrMma", "TiledCopy", "TiledMma", "make_tiled_copy", "make_tiled_copy_A",
         "make_tiled_copy_B", "make_tiled_copy_C", "make_tiled_copy_D", "make_tiled_copy_S",
         "make_tiled_mma"),
        "tiled",
    ),
    **dict.fromkeys(
        ("print_latex", "print_text", "to_html", "to_latex", "to_svg", "to_text"), "viz"
    ),
}  # fmt: skip
# the packages whose whole ``__all__`` cutemma re-exports, searched in this order
_STAR = ("cutemma.layout", "cutemma.mma", "cutemma.smem")
_SUBMODULES = ("copy", "cuda", "emulate", "kernels", "layout", "mma", "smem", "tensor", "tiled",
               "viz")  # fmt: skip


def _other(name: str):
    """``__all__``, a name of a star package, or any other submodule (``cutemma.display``)."""
    import importlib.util

    if name == "__all__":
        return _all()
    if name.startswith("__"):  # __wrapped__, __path__ ... : asked by tools, never lazy
        raise AttributeError(f"module 'cutemma' has no attribute {name!r}")
    for mod in _STAR:
        m = importlib.import_module(mod)
        if name in m.__all__:
            return getattr(m, name)
    if name.isidentifier() and importlib.util.find_spec(f"cutemma.{name}") is not None:
        return importlib.import_module(f"cutemma.{name}")
    raise AttributeError(
        f"module 'cutemma' has no attribute {name!r} (dir(cutemma) lists its names)"
    )


__getattr__, _dir = lazy_exports(__name__, _LAZY, submodules=_SUBMODULES, fallback=_other)


def __dir__() -> list[str]:
    return sorted(set(_dir()) | set(_all()))


_ERRORS = [
    "AtomError", "CliError", "CompileError", "CutemmaError", "DescriptorError", "LaunchError",
    "LayoutError", "LayoutParseError", "NotALayoutError", "TiledMmaError", "CopyError", "TmaError",
    "DesignError", "DrawError", "EmitError",
]  # fmt: skip


def _all() -> list[str]:
    """``cutemma.__all__``: the errors, the lazily loaded names and the star packages' names
    (asking for it imports those packages, as ``from cutemma import *`` must)."""
    star = [n for mod in _STAR for n in importlib.import_module(mod).__all__]
    return [*_ERRORS, *_LAZY, "emulate", *star]


# the pictures (cutemma.viz) sit above every class they draw: named here, imported when an
# object in a notebook first asks for its picture
renderers_from("cutemma.viz")
