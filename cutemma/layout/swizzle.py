"""Swizzles and swizzled (composed) layouts.

``Swizzle(bits, base, shift)`` XORs the ``bits`` bits found ``shift`` positions above bit
``base + max(shift, 0)`` into the bits at ``base``: CuTe's ``Swizzle<B, M, S>``. A
``ComposedLayout(outer, offset, inner)`` is the function ``x -> outer(offset + inner(x))``;
swizzled shared-memory layouts are ``ComposedLayout(Swizzle, 0, Layout)``.

>>> Swizzle(3, 4, 3)(0b1110000000)
1008
>>> str(ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1))))
'Sw<3,4,3> o 0 o (8,64):(64,1)'
"""

from __future__ import annotations

from dataclasses import dataclass

from cutemma.display import RichDisplay
from cutemma.errors import LayoutError
from cutemma.layout import checks as ck
from cutemma.layout.int_tuple import crd2idx
from cutemma.layout.layout import Layout, cosize, slice_and_offset

OFFSET_BITS = 64  # the widest offset a swizzle acts on (CuTe's uint64_t)


@dataclass(frozen=True)
class Swizzle:
    """CuTe's ``Swizzle<B, M, S>`` on integers: a bijection that is its own inverse.

    >>> sw = Swizzle(2, 0, 3)
    >>> [sw(i) for i in (0, 8, 9, 16)]
    [0, 9, 8, 18]
    """

    bits: int
    base: int
    shift: int

    def __post_init__(self):
        for name in ("bits", "base", "shift"):  # whole numbers first (numpy ints become ints)
            object.__setattr__(self, name, ck.int_arg(getattr(self, name), "Swizzle", name))
        if self.bits < 0 or self.base < 0:
            raise LayoutError(
                f"Swizzle{(self.bits, self.base, self.shift)}: bits and base must be >= 0"
            )
        if self.bits and abs(self.shift) < self.bits:
            raise LayoutError(
                f"Swizzle{(self.bits, self.base, self.shift)}: |shift| must be >= bits so the "
                "source and target bit ranges do not overlap"
            )
        if self.base + self.bits + abs(self.shift) > OFFSET_BITS:
            raise LayoutError(
                f"Swizzle{(self.bits, self.base, self.shift)}: base + bits + |shift| = "
                f"{self.base + self.bits + abs(self.shift)} bits; a swizzle permutes offsets of "
                f"at most {OFFSET_BITS} bits (CuTe's are 32- or 64-bit integers)"
            )

    @property
    def yyy_mask(self) -> int:
        """The bits read (the higher range when shift > 0)."""
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_mask(self) -> int:
        """The bits flipped (the lower range when shift > 0)."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def __call__(self, x: int) -> int:
        if type(x) is not int and getattr(x, "dtype", None) is None:  # numpy arrays pass
            x = ck.int_arg(x, str(self), "offset (an integer)")
        if self.shift >= 0:
            return x ^ ((x & self.yyy_mask) >> self.shift)
        return x ^ ((x & self.yyy_mask) << -self.shift)

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    def __repr__(self) -> str:
        return self.__str__()

    def size(self) -> int:
        """The span the swizzle permutes within: 2**(base + bits + |shift|)."""
        return 1 << (self.base + self.bits + abs(self.shift))

    def cosize(self) -> int:
        """Same as size: a swizzle is a permutation of its span."""
        return self.size()


def _is_function(x) -> bool:
    return isinstance(x, (Swizzle, Layout, ComposedLayout))


def _apply(fn, x: int) -> int:
    """``fn(x)`` for a Swizzle, a ComposedLayout, or a Layout called past its domain (CuTe
    extends a layout along its last mode)."""
    if isinstance(fn, Layout):
        # every layout sends 0 to 0, also one with an extent-0 mode (which has no index to split)
        return 0 if x == 0 else crd2idx(x, fn.shape, fn.stride)
    if isinstance(fn, ComposedLayout):  # an outer ComposedLayout: C++ extends its inner too
        return _apply(fn.outer, fn.offset + _apply(fn.inner, x))
    return fn(x)


class ComposedLayout(RichDisplay):
    """``x -> outer(offset + inner(x))``; the algebra (composition with a tiler, divides,
    products, tile_to_shape) acts on ``inner``.

    As in CuTe, ``outer`` and ``inner`` may be a Swizzle, a Layout or another ComposedLayout
    (a right inverse of a swizzled layout with an offset is ``Layout o offset o Swizzle``).

    ``pinned=True`` marks a shared-memory layout whose offset stands for a pointer (CuTe's
    ``smem_ptr_flag``): the algebra keeps it composed even with an identity swizzle, as C++
    keeps its GMMA/UMMA INTER atoms composed, so slicing a tile keeps the slice's offset (a
    plain Layout's slice drops it). ``gmma_layout_atom`` and ``umma_layout_atom`` pin theirs.
    It changes neither the function, the printing nor equality.

    >>> c = ComposedLayout(Swizzle(1, 0, 1), 0, Layout(4))
    >>> [c(i) for i in range(4)], c.size()
    ([0, 1, 3, 2], 4)
    """

    __slots__ = ("outer", "offset", "inner", "pinned")

    def __init__(self, outer, offset: int, inner, pinned: bool = False):
        if not _is_function(inner):
            raise LayoutError(
                f"ComposedLayout: inner must be a Layout, Swizzle or ComposedLayout, got {inner!r}"
            )
        if not _is_function(outer):
            raise LayoutError(
                f"ComposedLayout: outer must be a Swizzle, Layout or ComposedLayout, got {outer!r}"
            )
        offset = ck.int_arg(offset, "ComposedLayout", "offset")  # numpy ints are ints
        self.outer = outer
        self.offset = offset
        self.inner = inner
        self.pinned = bool(pinned)

    def __call__(self, *crd, strict: bool = False):
        if isinstance(self.inner, Swizzle):
            if len(crd) != 1 or not isinstance(crd[0], int):
                raise LayoutError(f"{self} takes one int index, got {crd!r}")
            return _apply(self.outer, self.offset + self.inner(crd[0]))
        # past the size, the inner layout extends its last mode as CuTe's does (strict refuses)
        r = self.inner(*crd, strict=strict)
        if not isinstance(r, int):  # a slice: keep the part the coordinate fixes as offset
            c = crd[0] if len(crd) == 1 else crd
            if isinstance(self.inner, Layout):
                sub, off = slice_and_offset(c, self.inner)
                return ComposedLayout(self.outer, self.offset + off, sub, self.pinned)
            return ComposedLayout(self.outer, self.offset, r, self.pinned)
        return _apply(self.outer, self.offset + r)

    def __eq__(self, other) -> bool:
        return isinstance(other, ComposedLayout) and (self.outer, self.offset, self.inner) == (
            other.outer,
            other.offset,
            other.inner,
        )

    def __hash__(self) -> int:
        return hash((self.outer, self.offset, self.inner))

    def __str__(self) -> str:
        return f"{self.outer} o {self.offset} o {self.inner}"

    def __repr__(self) -> str:
        # CuTe's notation at the REPL too (issue 13), as Layout
        return self.__str__()

    @property
    def shape(self):
        """The inner layout's shape (the domain)."""
        return self.inner.shape

    @property
    def stride(self):
        """The inner layout's stride."""
        return self.inner.stride

    def __len__(self) -> int:
        return len(self.inner)

    def __getitem__(self, i: int) -> ComposedLayout:
        return ComposedLayout(self.outer, self.offset, self.inner[i], self.pinned)

    def size(self) -> int:
        """Size of the domain."""
        return self.inner.size()

    def cosize(self) -> int:
        """Cosize of the inner layout (a swizzle permutes within aligned blocks)."""
        return cosize(self.inner)

    def with_inner(self, inner):
        """The same outer function and offset over a new inner layout (CuTe's
        ``composition(A, O, B)``: an identity swizzle at offset 0 leaves just ``inner``, unless
        the layout is pinned to a pointer)."""
        if self.pinned:
            return ComposedLayout(self.outer, self.offset, inner, pinned=True)
        return compose_functions(self.outer, self.offset, inner)


def compose_functions(outer, offset: int, inner):
    """CuTe's three-argument ``composition(A, O, B)``: ``x -> A(O + B(x))``.

    An identity swizzle (no bits) at offset 0 is dropped, as CuTe does.

    >>> compose_functions(Swizzle(0, 4, 3), 0, Layout(8))
    8:1
    """
    if isinstance(outer, Swizzle) and outer.bits == 0 and offset == 0 and isinstance(inner, Layout):
        return inner
    return ComposedLayout(outer, offset, inner)


def make_swizzle(yyy: int, zzz: int) -> Swizzle:
    """The Swizzle whose read bits are ``yyy`` and flipped bits ``zzz`` (CuTe's
    ``make_swizzle<Y, Z>``); both must be runs of the same number of bits.

    >>> str(make_swizzle(0b11000000, 0b00000110))
    'Sw<2,1,5>'
    """
    if yyy < 0 or zzz < 0:
        raise LayoutError(f"make_swizzle({yyy}, {zzz}): the bit masks must be >= 0")
    bits = bin(yyy).count("1")
    if bits != bin(zzz).count("1"):
        raise LayoutError(
            f"make_swizzle({yyy:#b}, {zzz:#b}): the read and flipped masks have different "
            "numbers of bits (CuTe: 'Number of bits in Y and Z don't match')"
        )

    def tz(x):
        return (x & -x).bit_length() - 1 if x else 32

    base = min(tz(yyy), tz(zzz)) % 32
    sw = Swizzle(bits, base, tz(yyy) - tz(zzz))
    if (yyy | zzz) != (sw.yyy_mask | sw.zzz_mask):
        raise LayoutError(
            f"make_swizzle({yyy:#b}, {zzz:#b}): the masks are not two runs of contiguous bits, "
            "so no Swizzle<B,M,S> reads and flips them"
        )
    return sw


def swizzle_after_layout(layout, sw: Swizzle):
    """``layout o sw`` written as ``sw' o layout`` (CuTe's ``composition(Layout, Swizzle)``):
    the swizzle whose bits are the layout's images of ``sw``'s bits.

    >>> str(swizzle_after_layout(Layout(32, 2), Swizzle(2, 1, 3)))
    'Sw<2,2,3> o 0 o 32:2'
    """
    if not isinstance(layout, Layout):
        raise LayoutError(f"{layout} o {sw}: only a Layout can be moved past a swizzle")
    return compose_functions(
        make_swizzle(_apply(layout, sw.yyy_mask), _apply(layout, sw.zzz_mask)), 0, layout
    )


def make_swizzled(sw: Swizzle, layout) -> ComposedLayout:
    """``Swizzle o layout`` with offset 0.

    >>> str(make_swizzled(Swizzle(1, 4, 3), Layout((8, 16), (16, 1))))
    'Sw<1,4,3> o 0 o (8,16):(16,1)'
    """
    if not isinstance(sw, Swizzle):
        raise LayoutError(f"make_swizzled: expected a Swizzle such as Swizzle(3, 4, 3), got {sw!r}")
    return ComposedLayout(sw, 0, ck.layout_arg(layout, "make_swizzled", which="the layout"))


ck.register_classes(composed=ComposedLayout, swizzle=Swizzle)
