"""The layout algebra's values as CuTe C++: layouts, swizzles, composed and basis-stride
layouts, tilers.

Every integer is static, spelled ``Int<n>``: it compiles for every n, where CuTe's ``_n``
aliases exist only for an irregular list (``_12`` and ``_16`` but no ``_11``, ``_13`` ...;
cute/numeric/integral_constant.hpp), and CuTe prints both as ``_n``. A pinned GMMA/UMMA
shared-memory atom is spelled by CuTe's own name (:mod:`cutemma.emit.smem_names`).
:func:`cutemma.emit.cpp.to_cpp` is the one entry point; it sends these values here.

>>> from cutemma.layout import Layout, Swizzle
>>> layout_to_cpp(Layout((4, 2), (2, 1)))
'Layout<Shape<Int<4>,Int<2>>,Stride<Int<2>,Int<1>>>{}'
>>> layout_to_cpp(Swizzle(3, 4, 3), type=True)
'Swizzle<3,4,3>'
>>> layout_to_cpp((8, None, Layout(4, 2)))
'make_tile(Int<8>{}, _, Layout<Int<4>,Int<2>>{})'
"""

from __future__ import annotations

import builtins

from cutemma.emit.smem_names import smem_layout_expr
from cutemma.errors import EmitError
from cutemma.layout.basis import BasisLayout, ScaledBasis
from cutemma.layout.checks import as_int
from cutemma.layout.layout import Layout
from cutemma.layout.swizzle import ComposedLayout, Swizzle

# CuTe's Int<n> is integral_constant<int, n>: a value outside int32 does not compile (g++
# refuses the narrowing; with -w it wraps). The DSL's static ints have the same range.
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def shown_int(n: int) -> str:
    """``n`` in a message: its digits, or its size when Python would refuse to print them
    (past 4,300 digits) or they would drown the message.

    >>> shown_int(2**31), shown_int(10**5000)
    ('2147483648', 'a 16610-bit integer')
    """
    return str(n) if n.bit_length() <= 256 else f"a {n.bit_length()}-bit integer"


def static_int(v, what: str = "value") -> int:
    """``v`` as a plain int in C++'s ``int`` range, or EmitError: C++ needs every value at
    compile time, as an ``Int<n>`` whose n is an ``int``.

    >>> import numpy as np
    >>> static_int(np.int64(4))
    4
    """
    n = as_int(v)
    if n is None:
        raise EmitError(
            f"to_cpp: {what} {_shown(v)} ({type(v).__name__}) has no static C++ form: CuTe's "
            "Int<n> takes a whole number known when the code is written (a Python int, or a "
            "numpy integer scalar), not an array, float, bool or run-time value"
        )
    if not INT_MIN <= n <= INT_MAX:
        raise EmitError(
            f"to_cpp: {what} {shown_int(n)} is outside CuTe's Int<n>, whose n is a 32-bit int "
            f"[{INT_MIN}, {INT_MAX}] (g++ rejects it; to_cute_dsl refuses it too): use "
            "smaller extents or strides"
        )
    return n


def _shown(v) -> str:
    """A short, printable form of any value (its type alone when its print is long)."""
    if as_int(v) is not None and not isinstance(v, bool):
        return shown_int(as_int(v))
    try:
        text = repr(v)
    except ValueError:  # a structure holding an int too long to print
        return f"a {type(v).__name__}"
    return text if len(text) <= 80 and "\n" not in text else f"a {type(v).__name__}"


def int_type(n) -> str:
    """``Int<n>`` (a type).

    >>> int_type(-2)
    'Int<-2>'
    """
    return f"Int<{static_int(n)}>"


def _stride_leaf(d) -> str:
    if isinstance(d, ScaledBasis):
        modes = "".join(f",{m}" for m in d.modes)
        return f"ScaledBasis<{int_type(d.value)}{modes}>"
    return int_type(d)


def tuple_type(t, kind: str, leaf=int_type) -> str:
    """A (nested) int tuple as CuTe's ``Shape<...>``/``Stride<...>``; a leaf alone is a leaf.

    >>> tuple_type((2, (4, 8)), "Shape")
    'Shape<Int<2>,Shape<Int<4>,Int<8>>>'
    """
    if isinstance(t, tuple):
        return f"{kind}<" + ",".join(tuple_type(x, kind, leaf) for x in t) + ">"
    return leaf(t)


def _layout_type(layout) -> str:
    stride_leaf = _stride_leaf if isinstance(layout, BasisLayout) else int_type
    return (
        f"Layout<{tuple_type(layout.shape, 'Shape')},"
        f"{tuple_type(layout.stride, 'Stride', stride_leaf)}>"
    )


def _swizzle_type(sw: Swizzle) -> str:
    return f"Swizzle<{sw.bits},{sw.base},{sw.shift}>"


def _composed_type(c: ComposedLayout) -> str:
    return f"ComposedLayout<{_type(c.outer)},{int_type(c.offset)},{_type(c.inner)}>"


def _composed_expr(c: ComposedLayout, dtype) -> str:
    named = smem_layout_expr(c, dtype) if c.pinned else None
    if named is not None:
        return named
    offset = int_type(c.offset)
    return f"make_composed_layout({_expr(c.outer)}, {offset}{{}}, {_expr(c.inner)})"


def _tile_entry(x) -> str:
    if x is None:
        return "Underscore"
    if isinstance(x, tuple):  # a nested tiler: make_tile's own type, one level down
        return tiler_type(x)
    if isinstance(x, Layout | ComposedLayout | Swizzle):
        return _type(x)
    return int_type(x)


def tiler_type(tiler: tuple) -> str:
    """A tuple tiler as ``Tile<...>``: ints ``Int<n>``, Layouts, ``None`` CuTe's ``_``, a
    nested tuple the ``Tile<...>`` its ``make_tile`` makes.

    >>> tiler_type((8, None)), tiler_type((4, (2, 8)))
    ('Tile<Int<8>,Underscore>', 'Tile<Int<4>,Tile<Int<2>,Int<8>>>')
    """
    return "Tile<" + ",".join(_tile_entry(x) for x in tiler) + ">"


def _tiler_expr(tiler: tuple) -> str:
    parts = ["_" if x is None else _expr(x) for x in tiler]
    return "make_tile(" + ", ".join(parts) + ")"


def _check_basis(b: BasisLayout) -> None:
    if b.offset != 0:
        raise EmitError(
            f"{b} is a view of a coordinate tensor (it starts at {b.offset}), not a layout; "
            "C++ builds it as make_identity_tensor(...) sliced, so emit the layout without the "
            "offset (BasisLayout(shape, stride))"
        )


def _type(obj) -> str:
    """The C++ type of a layout-algebra value (no atoms)."""
    if isinstance(obj, Layout):
        return _layout_type(obj)
    if isinstance(obj, BasisLayout):
        _check_basis(obj)
        return _layout_type(obj)
    if isinstance(obj, Swizzle):
        return _swizzle_type(obj)
    if isinstance(obj, ComposedLayout):
        return _composed_type(obj)
    if isinstance(obj, tuple):
        return tiler_type(obj)
    if isinstance(obj, ScaledBasis):
        return _stride_leaf(obj)
    return int_type(obj)


def _expr(obj, dtype=None) -> str:
    if isinstance(obj, ComposedLayout):
        return _composed_expr(obj, dtype)
    if isinstance(obj, tuple):
        return _tiler_expr(obj)
    return _type(obj) + "{}"


_ALGEBRA = (Layout, BasisLayout, Swizzle, ComposedLayout, ScaledBasis, tuple)


def is_algebra_value(obj) -> bool:
    """Whether ``obj`` is a value of the layout algebra (what :func:`layout_to_cpp` takes).

    >>> is_algebra_value((4, None)), is_algebra_value(3), is_algebra_value("4:1")
    (True, True, False)
    """
    return isinstance(obj, _ALGEBRA) or as_int(obj) is not None


def layout_to_cpp(obj, *, type: bool = False, dtype=None) -> str:  # noqa: A002 - to_cpp's name
    """A CuTe C++ expression (``type=True``: its type) for a value of the layout algebra: a
    Layout, BasisLayout, Swizzle, ComposedLayout, tiler tuple or int. ``dtype`` names the
    element type of a shared-memory atom (:func:`cutemma.emit.cpp.to_cpp` says more).

    >>> from cutemma.smem import gmma_layout_atom
    >>> layout_to_cpp(gmma_layout_atom("K", "SW128", "bf16"), dtype="bf16")
    'GMMA::Layout_K_SW128_Atom<bfloat16_t>{}'
    """
    try:
        if isinstance(obj, ComposedLayout) and type and obj.pinned:
            return _type(obj) if smem_layout_expr(obj, dtype) is None else _decltype(obj, dtype)
        return _type(obj) if type else _expr(obj, dtype)
    except RecursionError:
        raise EmitError(
            f"to_cpp: the {builtins_type(obj).__name__} is nested too deeply to write "
            "(past Python's recursion limit); C++ templates nest far less: flatten it"
        ) from None


builtins_type = builtins.type  # layout_to_cpp's keyword ``type`` shadows the builtin there


def _decltype(c: ComposedLayout, dtype) -> str:
    # C++'s smem atoms are ComposedLayout<Swizzle, smem_ptr_flag_bits<B>, Layout>: their type
    # is spelled through the expression that builds them
    return f"decltype({_composed_expr(c, dtype)})"


def unsupported(obj) -> EmitError:
    """The EmitError for an object with no C++ form (names what has one)."""
    what = type(obj).__name__
    if isinstance(obj, str):
        hint = (
            "a string is not an object: parse it first (Layout.parse(text), "
            "make_mma_atom(name), make_copy_atom(name, dtype)), or use `cutemma emit cpp TEXT`"
        )
    elif isinstance(obj, bool | float):
        hint = "C++ static values are whole numbers (Int<n>)"
    else:
        hint = _hint(obj)
    return EmitError(
        f"to_cpp: no CuTe C++ form for {_shown(obj)} ({what}); {hint}. to_cpp takes a Layout, "
        "Swizzle, ComposedLayout, BasisLayout, tiler tuple, int, MmaAtom, TiledMma, CopyAtom, "
        "TiledCopy or a GMMA/UMMA descriptor"
    )


def _hint(obj) -> str:
    # the objects users most often try: say what to emit instead of printing them whole
    name = type(obj).__name__
    if name in ("ThrMma", "ThrCopy"):
        return f"a {name} is one thread's slice: emit the tiled object it came from"
    if name == "Tensor":
        return "a Tensor holds run-time data: emit its layout (tensor.layout)"
    if name.endswith("Descriptor"):
        return "a descriptor is emitted by to_cpp only (the DSL builds one inside its kernel)"
    return "a NumPy array or other run-time value has no static form"
