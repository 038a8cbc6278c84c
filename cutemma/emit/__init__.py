"""emit: cutemma's objects as source code a kernel author pastes into CuTe C++ (``to_cpp``).

A rendering, like ``cutemma.viz``: it reads objects and writes text, and changes nothing.
The tests compile what it writes with g++ against CuTe's own headers and compare what CuTe
prints with the object (tests/emit).

>>> from cutemma.emit import to_cpp
>>> from cutemma.layout import Layout
>>> to_cpp(Layout(8, 2))
'Layout<Int<8>,Int<2>>{}'
"""

from cutemma.emit.cpp import HEADERS, prelude, to_cpp

__all__ = ["HEADERS", "prelude", "to_cpp"]
