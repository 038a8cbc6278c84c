"""Python values of the algebra as C++ expressions with static ints, and as short text.

A Layout becomes ``Layout<Shape<I_<4>,I_<2>>,Stride<I_<1>,I_<4>>>{}`` (``I_<n>`` is
``cute::Int<n>``, every int static, as cutemma's ints are), a tuple tiler ``make_tile(...)``,
``None`` in a tiler CuTe's ``_``, a Swizzle ``Swizzle<B,M,S>{}`` and a ComposedLayout
``make_composed_layout(outer, offset, inner)``.
"""

from __future__ import annotations

from cutemma.layout import ComposedLayout, Layout, Swizzle


class Shape(tuple):
    """An int-tuple argument (a shape, cotarget, profile or order), not a tiler."""


def _tuple_type(t, kind: str) -> str:
    if isinstance(t, tuple):
        return f"{kind}<" + ",".join(_tuple_type(x, kind) for x in t) + ">"
    return f"I_<{t}>"


def cpp(v) -> str:
    """``v`` as a C++ expression (every int static)."""
    if isinstance(v, Layout):
        return f"Layout<{_tuple_type(v.shape, 'Shape')},{_tuple_type(v.stride, 'Stride')}>{{}}"
    if isinstance(v, Swizzle):
        return f"Swizzle<{v.bits},{v.base},{v.shift}>{{}}"
    if isinstance(v, ComposedLayout):
        return f"make_composed_layout({cpp(v.outer)}, I_<{v.offset}>{{}}, {cpp(v.inner)})"
    if isinstance(v, Shape):
        return f"{_tuple_type(tuple(v), 'Shape')}{{}}"
    if v is None:
        return "_"
    if isinstance(v, tuple):
        return "make_tile(" + ", ".join(cpp(x) for x in v) + ")"
    if isinstance(v, int):
        return f"I_<{v}>{{}}"
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
