"""emit: cutemma's objects as source code a kernel author pastes, CuTe C++ (``to_cpp``) and
CuTe DSL (``to_cute_dsl``).

A rendering, like ``cutemma.viz``: it reads objects and writes text, and changes nothing.
The tests compile what it writes with g++ against CuTe's own headers (tests/emit) and run it
through CuTe DSL (tests/emit_dsl), and compare what each prints with the object.

>>> from cutemma.layout import Layout
>>> to_cpp(Layout(8, 2))
'Layout<Int<8>,Int<2>>{}'
>>> to_cute_dsl(Layout(8, 2))
'cute.make_layout(8, stride=2)'
"""

from cutemma.emit.cpp import HEADERS, prelude, to_cpp
from cutemma.emit.dsl import to_cute_dsl

__all__ = ["HEADERS", "prelude", "to_cpp", "to_cute_dsl"]
