"""Reading CuTe layout notation.

Accepted forms (whitespace anywhere between tokens):

- CuTe's printed form ``((4,8),(2,2)):((32,1),(16,8))``, with or without the underscores of
  static ints (``(_4,_2):(_1,_4)``); a shape alone (``(4,2)``) gets column-major strides;
- C++ spelling ``Layout<Shape<Shape<_4,_8>,_2>, Stride<Stride<_16,_1>,_8>>`` (``Int<4>`` too);
- swizzled layouts ``Sw<3,4,3> o 0 o (8,64):(64,1)`` (also ``Swizzle<3,4,3> o ...``, and
  without the offset, ``Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))``, as the PTX ISA writes).

>>> str(parse_layout("Layout<Shape<_4,_2>, Stride<_2,_1>>"))
'(4,2):(2,1)'
>>> str(parse_layout("Sw<3,4,3> o 0 o (8,64):(64,1)"))
'Sw<3,4,3> o 0 o (8,64):(64,1)'
"""

from __future__ import annotations

import re

from cutemma.errors import LayoutError, LayoutParseError
from cutemma.layout.layout import Layout

_CPP_TUPLES = ("Shape", "Stride", "Coord", "Step", "Tile", "tuple", "cute::tuple")


class _Reader:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, s: str) -> bool:
        self.skip()
        return self.text.startswith(s, self.pos)

    def fail(self, expected: str):
        self.skip()
        found = self.text[self.pos : self.pos + 10] or "end of text"
        raise LayoutParseError(
            f"cannot read layout {self.text!r}: at column {self.pos + 1} expected {expected}, "
            f"found {found!r}"
        )

    def expect(self, s: str) -> None:
        if not self.peek(s):
            self.fail(repr(s))
        self.pos += len(s)

    def word(self) -> str:
        self.skip()
        m = re.compile(r"[A-Za-z_:][A-Za-z_:0-9]*").match(self.text, self.pos)
        return m.group(0) if m else ""

    def integer(self) -> int:
        self.skip()
        if self.text.startswith("Int<", self.pos) or self.text.startswith("cute::Int<", self.pos):
            self.pos = self.text.index("<", self.pos) + 1
            v = self.integer()
            self.expect(">")
            return v
        m = re.compile(r"_?(-?\d+)").match(self.text, self.pos)
        if not m:
            self.fail("an integer")
        self.pos = m.end()
        return int(m.group(1))

    def int_tuple(self):
        if self.peek("("):
            self.expect("(")
            items = [self.int_tuple()]
            while self.peek(","):
                self.expect(",")
                items.append(self.int_tuple())
            self.expect(")")
            return tuple(items)
        w = self.word()
        if w in _CPP_TUPLES:
            return self.cpp_tuple()
        return self.integer()

    def cpp_tuple(self):
        w = self.word()
        self.pos += len(w)
        self.expect("<")
        items = [self.int_tuple()]
        while self.peek(","):
            self.expect(",")
            items.append(self.int_tuple())
        self.expect(">")
        return tuple(items)

    def layout(self) -> Layout:
        w = self.word()
        if w in ("Layout", "cute::Layout"):
            self.pos += len(w)
            self.expect("<")
            shape = self.int_tuple()
            stride = None
            if self.peek(","):
                self.expect(",")
                stride = self.int_tuple()
            self.expect(">")
        else:
            shape = self.int_tuple()
            stride = None
            if self.peek(":"):
                self.expect(":")
                stride = self.int_tuple()
        try:
            return Layout(shape, stride)
        except LayoutParseError:
            raise
        except LayoutError as e:
            raise LayoutParseError(f"layout {self.text!r} is not valid: {e}") from None

    def swizzle(self):
        from cutemma.layout.swizzle import Swizzle

        w = self.word()
        if w not in ("Sw", "Swizzle", "cute::Swizzle"):
            self.fail("'Sw<' or 'Swizzle<'")
        self.pos += len(w)
        self.expect("<")
        b = self.integer()
        self.expect(",")
        m = self.integer()
        self.expect(",")
        s = self.integer()
        self.expect(">")
        try:
            return Swizzle(b, m, s)
        except LayoutError as e:
            raise LayoutParseError(f"swizzle in {self.text!r} is not valid: {e}") from None

    def end(self) -> None:
        self.skip()
        if self.pos != len(self.text):
            self.fail("end of text")


def parse_layout(text: str):
    """Parse a Layout or a swizzled ComposedLayout from CuTe or C++ notation.

    >>> parse_layout("(_4,_2):(_2,_1)")
    (4,2):(2,1)
    """
    if not isinstance(text, str):
        raise LayoutParseError(f"layout text must be a str, got {text!r}")
    try:
        return _parse(text)
    except RecursionError:
        raise LayoutParseError(
            f"layout text of {len(text)} characters is nested too deeply to read (Python "
            "recursion limit); use a shallower hierarchy"
        ) from None


def _parse(text: str):
    r = _Reader(text)
    if r.word() in ("Sw", "Swizzle", "cute::Swizzle"):
        from cutemma.layout.swizzle import ComposedLayout

        sw = r.swizzle()
        r.expect("o")
        # seed 001 writes ``Swizzle<1,4,3> o ((8,2),(4,4)):(...)`` with no offset
        offset = 0
        if not r.peek("(") and r.word() not in ("Layout", "cute::Layout"):
            offset = r.integer()
            r.expect("o")
        inner = r.layout()
        r.end()
        return ComposedLayout(sw, offset, inner)
    result = r.layout()
    r.end()
    return result


def parse_int_tuple(text: str):
    """Parse an int-tuple such as ``(4,(2,2))``, ``Shape<_4,_2>`` or ``32``.

    >>> parse_int_tuple("Shape<_4, Shape<_2,_2>>")
    (4, (2, 2))
    """
    r = _Reader(text)
    t = r.int_tuple()
    r.end()
    return t
