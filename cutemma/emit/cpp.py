"""cutemma's objects as CuTe C++: ``to_cpp``, the one entry point, and what its text needs.

``to_cpp(obj)`` is a C++ expression that builds an object equal to ``obj`` after the
``HEADERS`` below and ``using namespace cute;``; ``to_cpp(obj, type=True)`` its type. The
layout algebra's values are written by :mod:`cutemma.emit.cpp_layouts`; atoms, TiledMMA,
TiledCopy and descriptors by :mod:`cutemma.emit.cpp_atoms`.

>>> from cutemma.layout import Layout, Swizzle
>>> to_cpp(Layout((4, 2), (2, 1)))
'Layout<Shape<Int<4>,Int<2>>,Stride<Int<2>,Int<1>>>{}'
>>> to_cpp(Swizzle(3, 4, 3), type=True)
'Swizzle<3,4,3>'
>>> to_cpp((8, None, Layout(4, 2)))
'make_tile(Int<8>{}, _, Layout<Int<4>,Int<2>>{})'
"""

from __future__ import annotations

from cutemma.emit.cpp_atoms import to_cpp_object
from cutemma.emit.cpp_layouts import is_algebra_value, layout_to_cpp
from cutemma.emit.cpp_types import cpp_value_type
from cutemma.errors import EmitError

# What an emitted expression needs besides cute/tensor.hpp: the atoms' arch and traits headers
# (the GMMA "ext" headers hold the N that are not multiples of 16 or 32; sm100/sm120 traits).
HEADERS = (
    "cute/tensor.hpp",
    "cute/atom/mma_atom.hpp",
    "cute/atom/copy_atom.hpp",
    "cute/arch/mma_sm90_gmma_ext.hpp",
    "cute/arch/mma_sm90_gmma_sparse_ext.hpp",
    "cute/atom/mma_traits_sm90_gmma_ext.hpp",
    "cute/atom/mma_traits_sm90_gmma_sparse_ext.hpp",
    "cute/atom/mma_traits_sm100.hpp",
    "cute/atom/mma_traits_sm120.hpp",
    "cute/atom/copy_traits_sm75.hpp",
    "cute/atom/copy_traits_sm80.hpp",
    "cute/atom/copy_traits_sm90.hpp",
    "cute/atom/copy_traits_sm90_tma.hpp",
    "cute/atom/copy_traits_sm100.hpp",
)


def prelude() -> str:
    """The lines an emitted expression compiles after (the HEADERS, then the using).

    >>> prelude().splitlines()[-1]
    'using namespace cute;'
    """
    return "".join(f"#include <{h}>\n" for h in HEADERS) + "using namespace cute;\n"


def to_cpp(obj, *, type: bool = False, dtype=None) -> str:  # noqa: A002 - the issue's name
    """A CuTe C++ expression (``type=True``: the C++ type) that builds an object equal to ``obj``.

    Compiles after :func:`prelude` (``#include <cute/tensor.hpp>``, the atom headers and
    ``using namespace cute;``). Takes a Layout, BasisLayout, Swizzle, ComposedLayout (a
    GMMA/UMMA shared-memory atom, or ``tile_to_shape`` of one, by CuTe's own name), a tiler
    (a tuple of ints, Layouts, Swizzles, ``None`` and nested tilers), an int, an MmaAtom, TiledMma, CopyAtom,
    TiledCopy, or a GMMA/UMMA shared-memory descriptor. ``dtype`` names the element type
    of a shared-memory atom (its layout depends only on the width, so by default a type of
    that width: ``half_t`` for 16 bits). Raises EmitError for anything C++ cannot express.

    >>> from cutemma.layout import Layout
    >>> to_cpp(Layout((2, 4)), type=True)
    'Layout<Shape<Int<2>,Int<4>>,Stride<Int<1>,Int<2>>>'
    >>> from cutemma.smem import gmma_layout_atom
    >>> to_cpp(gmma_layout_atom("K", "SW128", "bf16"), dtype="bf16")
    'GMMA::Layout_K_SW128_Atom<bfloat16_t>{}'
    """
    if not isinstance(type, bool):
        raise EmitError(
            f"to_cpp(obj, type=...) takes True (the C++ type) or False (an expression); "
            f"got type={type!r}"
        )
    if dtype is not None:
        cpp_value_type(dtype)  # an unknown type is refused whatever obj is
    if is_algebra_value(obj):
        return layout_to_cpp(obj, type=type, dtype=dtype)
    return to_cpp_object(obj, type=type)


__all__ = ["HEADERS", "prelude", "to_cpp"]
