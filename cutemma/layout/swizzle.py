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

from cutemma.errors import LayoutError
from cutemma.layout import checks as ck
from cutemma.layout.layout import Layout, cosize


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

    def size(self) -> int:
        """The span the swizzle permutes within: 2**(base + bits + |shift|)."""
        return 1 << (self.base + self.bits + abs(self.shift))

    def cosize(self) -> int:
        """Same as size: a swizzle is a permutation of its span."""
        return self.size()


class ComposedLayout:
    """``x -> outer(offset + inner(x))``; the algebra (composition with a tiler, divides,
    products, tile_to_shape) acts on ``inner``.

    >>> c = ComposedLayout(Swizzle(1, 0, 1), 0, Layout(4))
    >>> [c(i) for i in range(4)], c.size()
    ([0, 1, 3, 2], 4)
    """

    __slots__ = ("outer", "offset", "inner")

    def __init__(self, outer, offset: int, inner: Layout):
        if not isinstance(outer, Swizzle | Layout | ComposedLayout):
            raise LayoutError(
                f"ComposedLayout: outer must be a Swizzle, Layout or ComposedLayout, got {outer!r}"
            )
        offset = ck.int_arg(offset, "ComposedLayout", "offset")
        if not isinstance(inner, Layout):
            raise LayoutError(f"ComposedLayout: inner must be a Layout, got {inner!r}")
        self.outer = outer
        self.offset = offset
        self.inner = inner

    def __call__(self, *crd):
        r = self.inner(*crd)
        if isinstance(r, Layout):
            from cutemma.layout.layout import slice_and_offset

            c = crd[0] if len(crd) == 1 else crd
            sub, off = slice_and_offset(c, self.inner)
            return ComposedLayout(self.outer, self.offset + off, sub)
        return self.outer(self.offset + r)

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
        return f"ComposedLayout({self.outer!r}, {self.offset}, {self.inner!r})"

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
        return ComposedLayout(self.outer, self.offset, self.inner[i])

    def size(self) -> int:
        """Size of the domain."""
        return self.inner.size()

    def cosize(self) -> int:
        """Cosize of the inner layout (a swizzle permutes within aligned blocks)."""
        return cosize(self.inner)

    def with_inner(self, inner: Layout) -> ComposedLayout:
        """The same outer function and offset over a new inner layout."""
        return ComposedLayout(self.outer, self.offset, inner)

    def compose_inner(self, tiler) -> ComposedLayout:
        """``self o tiler``: composition acts on the inner layout."""
        from cutemma.layout.algebra import composition

        return self.with_inner(composition(self.inner, tiler))


def make_swizzled(sw: Swizzle, layout) -> ComposedLayout:
    """``Swizzle o layout`` with offset 0.

    >>> str(make_swizzled(Swizzle(1, 4, 3), Layout((8, 16), (16, 1))))
    'Sw<1,4,3> o 0 o (8,16):(16,1)'
    """
    if not isinstance(sw, Swizzle):
        raise LayoutError(f"make_swizzled: expected a Swizzle such as Swizzle(3, 4, 3), got {sw!r}")
    return ComposedLayout(sw, 0, ck.layout_arg(layout, "make_swizzled", which="the layout"))
