"""Compare what CuTe DSL printed with cutemma's object: the same shape, the same value at every
index (a layout is a function; a stride of a size-1 mode is not part of it, see
docs/dsl_defects.md), read back by ``Layout.parse``."""

from __future__ import annotations

import re

from cutemma.layout import Layout, flatten
from cutemma.layout.notation import parse_int_tuple, parse_layout
from cutemma.layout.offsets import offsets


def values(L) -> list:
    if isinstance(L, Layout):
        return offsets(L).tolist()  # vectorised: GMMA TV layouts have 10^6 values
    return [L(i) for i in range(L.size())]


def same_function(dsl_text: str, mine) -> str | None:
    """None when ``dsl_text`` reads back as a layout equal to ``mine``, else what differs."""
    theirs = parse_layout(dsl_text)
    if str(theirs) == str(mine):
        return None
    if type(theirs).__name__ != type(mine).__name__:
        return (
            f"DSL {dsl_text} is a {type(theirs).__name__}, cutemma {mine} a {type(mine).__name__}"
        )
    if isinstance(mine, Layout) and _modes(theirs.shape) != _modes(mine.shape):
        return f"shape: DSL {dsl_text}, cutemma {mine}"
    if values(theirs) != values(mine):
        return f"values: DSL {dsl_text}, cutemma {mine}"
    return None


def _modes(shape) -> list[int]:
    """The extents without size-1 modes: the DSL drops a trailing size-1 value mode that C++
    keeps (GMMA N=8's C layout (2,2,1) prints (2,2); docs/dsl_defects.md)."""
    return [e for e in flatten(shape) if e != 1]


def same_text(dsl_text: str, mine) -> str | None:
    """None when ``dsl_text`` reads back to exactly ``mine`` (shape and stride, swizzle, offset)."""
    theirs = parse_layout(dsl_text)
    if _identity_swizzles(str(theirs)) != _identity_swizzles(str(mine)):
        return f"DSL {dsl_text} reads as {theirs}, cutemma {mine}"
    return None


def _identity_swizzles(text: str) -> str:
    """A swizzle of 0 bits is the identity whatever its base and shift; the DSL prints every
    one as S<0,4,3> (cutemma's INTER atoms keep the base of their type: Sw<0,3,3>)."""
    return re.sub(r"Sw<0,-?\d+,-?\d+>", "Sw<0,_,_>", text)


def int_tuple(text: str):
    return parse_int_tuple(text.replace(" ", ""))
