"""Python values of the algebra as C++ expressions with static ints, and as short text.

The C++ is the product's own spelling, ``cutemma.to_cpp`` (cutemma/emit/cpp_layouts.py): a
Layout is ``Layout<Shape<Int<4>,Int<2>>,Stride<Int<1>,Int<4>>>{}`` (every int static, as
cutemma's ints are), a tuple tiler ``make_tile(...)``, ``None`` in a tiler CuTe's ``_``, a Swizzle
``Swizzle<B,M,S>{}`` and a ComposedLayout ``make_composed_layout(outer, offset, inner)``
(always the composition here: the algebra's cases test the functions, not the atoms' names).
"""

from __future__ import annotations

from cutemma.emit import to_cpp
from cutemma.emit.cpp_layouts import tuple_type
from cutemma.layout import ComposedLayout, Layout, Swizzle


class Shape(tuple):
    """An int-tuple argument (a shape, cotarget, profile or order), not a tiler."""


def _unpinned(v):
    if isinstance(v, ComposedLayout):
        return ComposedLayout(_unpinned(v.outer), v.offset, _unpinned(v.inner))
    return v


def cpp(v) -> str:
    """``v`` as a C++ expression (every int static)."""
    if isinstance(v, Shape):
        return f"{tuple_type(tuple(v), 'Shape')}{{}}"
    if v is None:
        return "_"
    if isinstance(v, tuple):
        return "make_tile(" + ", ".join(cpp(x) for x in v) + ")"
    if isinstance(v, Layout | Swizzle | ComposedLayout | int):
        return to_cpp(_unpinned(v))
    raise TypeError(f"no C++ form for {v!r}")


def text(v) -> str:
    """``v`` as cutemma/CuTe notation, for failure messages and notes."""
    if isinstance(v, (Layout, ComposedLayout, Swizzle)):
        return str(v)
    if v is None:
        return "_"
    if isinstance(v, tuple):
        return (
            "(" + ",".join(text(x) for x in v) + ")"
            if not isinstance(v, Shape)
            else str(tuple(v)).replace(" ", "")
        )
    return str(v)
