"""Reading CuTe layout notation.

Accepted forms (whitespace anywhere between tokens):

- CuTe's printed form ``((4,8),(2,2)):((32,1),(16,8))``, with or without the underscores of
  static ints (``(_4,_2):(_1,_4)``); a shape alone (``(4,2)``) gets column-major strides;
- C++ spelling ``Layout<Shape<Shape<_4,_8>,_2>, Stride<Stride<_16,_1>,_8>>`` (``Int<4>`` too);
- swizzled layouts ``Sw<3,4,3> o 0 o (8,64):(64,1)`` (also ``Swizzle<3,4,3> o ...``, CuTe DSL's
  ``S<3,4,3> o 0 o ...``, and
  without the offset, ``Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))``, as the PTX ISA writes);
- CuTe's GMMA/UMMA shared-memory atoms, ``Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)``
  (see below: the swizzle is converted to element units);
- basis strides of identity-tensor layouts, ``(_64,_64):(_1@0,_1@1)``, and a tensor view's
  ``ArithTuple(4,1) o (_4,_2):(_1@0,_8@0)``: a :class:`cutemma.layout.basis.BasisLayout`;
- the empty layout ``():()``.

Swizzle units. In ``Sw<B,M,S> o smem_ptr[Nb](unset) o L`` (how CuTe prints
``GMMA::Layout_K_SW128_Atom<T>`` and the other ``ComposedLayout<Swizzle, smem_ptr_flag_bits<N>,
Layout>`` atoms) ``L`` is in elements of N bits but the swizzle acts on *byte* addresses: when
such a layout meets a pointer, CuTe moves the swizzle into the pointer (``make_tensor``,
cute/pointer_flagged.hpp) and swizzle_ptr XORs the byte address (cute/pointer_swizzle.hpp);
``as_position_independent_swizzle_layout`` recasts it from uint8_t to the N-bit type. cutemma's
swizzles act on the layout's own (element) offsets, so the parse does that recast:
``Sw<B,M,S>`` on bytes is ``Sw<B, M - log2(N/8), S>`` on N-bit elements (``M + log2(8/N)`` for
sub-byte types): ``Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)`` reads as
``Sw<3,3,3> o 0 o (8,64):(64,1)``, ``smem_ptr[8b]`` keeps ``Sw<3,4,3>``, ``smem_ptr[32b]`` gives
``Sw<3,2,3>``. An ``Sw<...> o 0 o L`` (no pointer) is already in element units and is kept.

>>> str(parse_layout("Layout<Shape<_4,_2>, Stride<_2,_1>>"))
'(4,2):(2,1)'
>>> str(parse_layout("Sw<3,4,3> o 0 o (8,64):(64,1)"))
'Sw<3,4,3> o 0 o (8,64):(64,1)'
>>> str(parse_layout("S<2,3,3> o 5 o (8,32):(32,1)"))  # as CuTe DSL prints it
'Sw<2,3,3> o 5 o (8,32):(32,1)'
>>> str(parse_layout("(S<1,1,2> o 0 o (8,2):(2,16) o 0 o 16:1)"))  # a nested composition
'Sw<1,1,2> o 0 o (8,2):(2,16) o 0 o 16:1'
>>> str(parse_layout("Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"))
'Sw<3,3,3> o 0 o (8,64):(64,1)'
>>> str(parse_layout("(_64,_64):(_1@0,_1@1)")), str(parse_layout("():()"))
('(64,64):(1@0,1@1)', '():()')
"""

from __future__ import annotations

import re

from cutemma.errors import LayoutError, LayoutParseError
from cutemma.layout.basis import BasisLayout, ScaledBasis
from cutemma.layout.layout import Layout, register_parser
from cutemma.layout.swizzle import ComposedLayout, Swizzle

_CPP_TUPLES = ("Shape", "Stride", "Coord", "Step", "Tile", "tuple", "cute::tuple")


# C++ prints ``Sw<B,M,S>``, CuTe DSL 4.8 ``S<B,M,S>`` (both ``o offset o layout`` after it)
_SWIZZLE_WORDS = ("Sw", "S", "Swizzle", "cute::Swizzle")

_MAX_DIGITS = 4000  # below Python's int-from-text limit (4300 digits)
# The reader spends ~50 us a number: past this many (counted by commas, before reading) it
# refuses at once instead of reading for minutes (1M modes: ~100 s). CuTe's layouts have tens.
MAX_ITEMS = 1 << 15


def _check_size(text: str, what: str) -> None:
    items = text.count(",") + 1
    if items > MAX_ITEMS:
        raise LayoutParseError(
            f"{what} text of {len(text)} characters holds {items} comma-separated items, more "
            f"than the reader's limit of {MAX_ITEMS} (cutemma.layout.notation.MAX_ITEMS); CuTe's "
            "layouts have tens of modes: write it with fewer (coalesce contiguous modes)"
        )


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
        shown = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        raise LayoutParseError(
            f"cannot read layout {shown!r}: at column {self.pos + 1} expected {expected}, "
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
            self.braces()
            return v
        m = re.compile(r"_?(-?[0-9]+)").match(self.text, self.pos)  # ASCII digits only
        if not m:
            self.fail("an integer")
        if len(m.group(1)) > _MAX_DIGITS:  # int() refuses past 4300 digits; say so first
            self.fail(f"an integer of at most {_MAX_DIGITS} digits (not {len(m.group(1))})")
        self.pos = m.end()
        return int(m.group(1))

    def int_tuple(self):
        if self.peek("("):
            self.expect("(")
            if self.peek(")"):  # the empty tuple: Layout(()) prints ():()
                self.expect(")")
                return ()
            items = [self.int_tuple()]
            while self.peek(","):
                self.expect(",")
                items.append(self.int_tuple())
            self.expect(")")
            return tuple(items)
        w = self.word()
        if w in _CPP_TUPLES:
            return self.cpp_tuple()
        if w in ("ScaledBasis", "cute::ScaledBasis"):  # to_cpp's ScaledBasis<Int<v>,m...>
            return self.cpp_basis()
        v = self.integer()
        if not self.peek("@"):
            return v
        modes = []  # CuTe prints a basis innermost mode first: v@inner@...@outer
        while self.peek("@"):
            self.expect("@")
            modes.append(self.integer())

        return ScaledBasis(v, tuple(reversed(modes)))

    def braces(self) -> None:
        """C++'s value-initialisation ``{}`` after a type (``Int<4>{}``, ``Layout<...>{}``)."""
        if self.peek("{}"):
            self.expect("{}")

    def cpp_basis(self):
        from cutemma.layout.basis import ScaledBasis

        self.pos += len(self.word())
        self.expect("<")
        v = self.integer()
        modes = []
        while self.peek(","):
            self.expect(",")
            modes.append(self.integer())
        self.expect(">")
        return ScaledBasis(v, tuple(modes))

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
            self.braces()
        else:
            shape = self.int_tuple()
            stride = None
            if self.peek(":"):
                self.expect(":")
                stride = self.int_tuple()
        try:
            if _has_basis(shape):
                raise LayoutParseError(
                    f"layout {self.text!r}: basis elements (v@i) belong in the stride, not the shape"
                )
            if stride is not None and _has_basis(stride):
                return BasisLayout(shape, stride)
            return Layout(shape, stride)
        except LayoutParseError:
            raise
        except LayoutError as e:
            raise LayoutParseError(f"layout {self.text!r} is not valid: {e}") from None

    def swizzle(self):

        w = self.word()
        if w not in _SWIZZLE_WORDS:
            self.fail("'Sw<', 'S<' or 'Swizzle<'")
        self.pos += len(w)
        self.expect("<")
        b = self.integer()
        self.expect(",")
        m = self.integer()
        self.expect(",")
        s = self.integer()
        if not (w == "S" and s < 0 and self.peek("o")):
            self.expect(">")
            self.braces()
        # else CuTe DSL 4.8 prints a negative shift without the '>': S<2,1,-2 o 0 o ...
        # (docs/dsl_defects.md); read it as it is printed
        try:
            return Swizzle(b, m, s)
        except LayoutError as e:
            raise LayoutParseError(f"swizzle in {self.text!r} is not valid: {e}") from None

    def cpp_function(self):
        """to_cpp's spellings: ``Swizzle<..>{}``, ``Layout<..>{}``, ``ComposedLayout<A,Int<o>,B>``
        and ``make_composed_layout(A{}, Int<o>{}, B{})``."""
        from cutemma.layout.swizzle import ComposedLayout

        w = self.word()
        if w in _SWIZZLE_WORDS:
            return self.swizzle()
        if w in ("ComposedLayout", "cute::ComposedLayout", "make_composed_layout"):
            self.pos += len(w)
            close = ">" if w != "make_composed_layout" else ")"
            self.expect("<" if close == ">" else "(")
            outer = self.cpp_function()
            self.expect(",")
            offset = self.integer()
            self.expect(",")
            inner = self.cpp_function()
            self.expect(close)
            self.braces()
            try:
                return ComposedLayout(outer, offset, inner)
            except LayoutError as e:
                raise LayoutParseError(f"layout {self.text!r} is not valid: {e}") from None
        return self.layout()

    def smem_ptr_bits(self) -> int:
        """``smem_ptr[16b](unset)``: the element bits of CuTe's unset shared-memory pointer."""
        self.expect("smem_ptr")
        self.expect("[")
        bits = self.integer()
        self.expect("b]")
        self.expect("(unset)")
        return bits

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
    _check_size(text, "layout")
    try:
        return _parse(text)
    except RecursionError:
        raise LayoutParseError(
            f"layout text of {len(text)} characters is nested too deeply to read (Python "
            "recursion limit); use a shallower hierarchy"
        ) from None


def parse_swizzle(text: str) -> Swizzle:
    """Parse a swizzle alone: ``Sw<3,4,3>`` (C++'s print), ``S<3,4,3>`` (the DSL's) or
    ``Swizzle<3,4,3>{}`` (C++ source, what ``to_cpp`` writes).

    >>> parse_swizzle("Swizzle<3,4,3>{}")
    Sw<3,4,3>
    """
    if not isinstance(text, str):
        raise LayoutParseError(f"swizzle text must be a str, got {text!r:.60}")
    r = _Reader(text[:200])
    if r.word() not in _SWIZZLE_WORDS:
        r.fail("'Sw<', 'S<' or 'Swizzle<'")
    sw = r.swizzle()
    r.end()
    return sw


def _has_basis(t) -> bool:

    if isinstance(t, tuple):
        return any(_has_basis(x) for x in t)
    return isinstance(t, ScaledBasis)


def byte_swizzle_to_elements(sw, bits: int, text: str = ""):
    """The element-unit swizzle of a byte-address swizzle for ``bits``-wide elements (CuTe's
    recast_layout<uint8_t, T> of a swizzle): the base moves down by log2(bits / 8).

    >>> str(byte_swizzle_to_elements(Swizzle(3, 4, 3), 16))
    'Sw<3,3,3>'
    """
    if bits < 1 or bits & (bits - 1):
        raise LayoutParseError(
            f"{text or sw}: a {bits}-bit element is not a power-of-two width, so a byte-address "
            "swizzle has no element-unit form; write the layout in bytes (smem_ptr[8b])"
        )
    shift = (bits.bit_length() - 1) - 3  # log2(bits / 8), negative for sub-byte elements
    if sw.bits and sw.base - shift < 0:
        raise LayoutParseError(
            f"{text or sw}: {sw} on bytes XORs bits below one {bits}-bit element; it has no "
            f"element-unit form (needs base >= {shift})"
        )
    return Swizzle(sw.bits, max(0, sw.base - shift), sw.shift)


def _parse(text: str):
    r = _Reader(text)
    if r.word() in ("ComposedLayout", "cute::ComposedLayout", "make_composed_layout"):
        result = r.cpp_function()  # what to_cpp writes for a composed layout
        r.end()
        return result
    if r.peek("(") and text.rstrip().endswith(")"):
        # CuTe DSL prints a nested composition in parentheses: (S<1,1,2> o 0 o L1 o 0 o L2)
        r.expect("(")
        if r.word() in _SWIZZLE_WORDS:
            return _parse(text.strip()[1:-1])
        r = _Reader(text)
    if r.word() in _SWIZZLE_WORDS:
        sw = r.swizzle()
        r.expect("o")
        # seed 001 writes ``Swizzle<1,4,3> o ((8,2),(4,4)):(...)`` with no offset
        offset, pinned = 0, False
        if r.peek("smem_ptr"):  # CuTe's GMMA/UMMA atoms: the swizzle is on byte addresses
            sw = byte_swizzle_to_elements(sw, r.smem_ptr_bits(), text)
            r.expect("o")
            pinned = True  # on a pointer, as the atoms cutemma builds
        elif not r.peek("(") and r.word() not in ("Layout", "cute::Layout"):
            offset = r.integer()
            r.expect("o")
        result = ComposedLayout(sw, offset, r.layout(), pinned)
        while r.peek("o"):  # a chain, Sw o 0 o L1 o 0 o L2: ((Sw o 0 o L1) o 0 o L2)
            r.expect("o")
            off = r.integer()
            r.expect("o")
            result = ComposedLayout(result, off, r.layout(), pinned)
        r.end()
        return result
    if r.word() == "ArithTuple":  # a tensor view over coordinates: start o basis layout
        r.pos += len("ArithTuple")
        start = r.int_tuple()
        r.expect("o")
        inner = r.layout()
        r.end()

        if isinstance(inner, Layout) and not _all_zero(inner.stride):
            raise LayoutParseError(
                f"cannot read {text!r}: after ArithTuple(...) o the strides must be basis "
                f"elements (v@i) or 0; {inner} has int strides"
            )
        start = start if isinstance(start, tuple) else (start,)
        return BasisLayout(inner.shape, inner.stride, start)
    result = r.layout()
    r.end()
    return result


def _all_zero(t) -> bool:
    return all(_all_zero(x) for x in t) if isinstance(t, tuple) else t == 0


def parse_int_tuple(text: str):
    """Parse an int-tuple such as ``(4,(2,2))``, ``Shape<_4,_2>`` or ``32``.

    >>> parse_int_tuple("Shape<_4, Shape<_2,_2>>")
    (4, (2, 2))
    """
    if not isinstance(text, str):
        raise LayoutParseError(f"int-tuple text must be a str such as '(4,(2,2))', got {text!r}")
    _check_size(text, "int-tuple")
    r = _Reader(text)
    try:
        t = r.int_tuple()
    except RecursionError:
        raise LayoutParseError(
            f"int-tuple text of {len(text)} characters is nested too deeply"
        ) from None
    r.end()
    return t


register_parser(parse_layout)  # Layout.parse reads with this module (see layout.py)
