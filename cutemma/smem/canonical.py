"""The canonical shared-memory layouts of wgmma/tcgen05 (seed 001, PTX ISA "Canonical Layouts").

A descriptor can only describe a tile laid out in one of these forms, with ``T = 128 / bits``
elements per 16 bytes, ``s`` 16-byte units per swizzle row (1, 2, 4, 8) and ``g`` rows per atom
(8; 4 for 128B with 32-byte atomicity). In element units (LBO, SBO in elements):

====== ========= =====================================================
major  swizzle   layout (before the swizzle)
====== ========= =====================================================
MN     INTER     ``((T,1,m),(8,k)):((1,T,SBO),(T,LBO))``
MN     SWxx      ``((T,s,m),(g,k)):((1,T,LBO),(sT,SBO))``
K      INTER     ``((8,m),(T,2k)):((T,SBO),(1,LBO))``
K      SWxx      ``((8,m),(T,2k)):((sT,SBO),(1,T))``  (LBO unused, encoded 1)
====== ========= =====================================================

In 128-bit units the same forms hold with ``T = 1`` and offsets in 16-byte units.

An MN-major block narrower than one swizzle row (fewer than ``sT`` elements of MN, a whole
number of 16-byte units, no MN repeat) is the first columns of the form with ``m = 1``: the
instruction reads only as far along MN as its own M or N, so it is a valid block, and CuTe's
make_gmma_desc accepts it (its logical_divide by the row pads the MN mode; LBO is then 0).
E.g. 64 fp8 elements of a 128-byte SW128 row, ``(64,32):(1,128)``: SBO 1024 bytes, LBO 0.
:func:`match_canonical` reads a layout back into (major, swizzle, T, m, k, LBO, SBO) and says
which rule fails when it cannot.

>>> str(canonical_layout("K", "SW32", T=4, m=2, k=2, sbo=64))
'Sw<1,2,3> o 0 o ((8,2),(4,4)):((8,64),(1,4))'
>>> f = match_canonical(Layout(((8, 1, 2), (8, 2)), ((1, 8, 64), (8, 128))), "bf16")
>>> (f.major, f.swizzle, f.T, f.m, f.k, f.lbo, f.sbo)
('MN', 'INTER', 8, 2, 2, 128, 64)
"""

from __future__ import annotations

from dataclasses import dataclass

from cutemma.errors import DescriptorError
from cutemma.layout import ComposedLayout, Layout, Swizzle
from cutemma.layout.layout import coalesced_pairs
from cutemma.smem.swizzle_atoms import (
    SWIZZLE_MODES,
    check_major,
    element_bits,
    elems_per_16b,
    swizzle_mode,
)

Pairs = list[tuple[int, int]]


@dataclass(frozen=True)
class CanonicalForm:
    """A recognised canonical layout. ``lbo``/``sbo`` are in elements; ``None`` where the form
    has no such stride (the repeat is 1, or LBO of swizzled K-major). ``offset`` is the
    composed layout's offset (elements before the swizzle).

    >>> CanonicalForm("K", "SW128", 8, 8, 1, None, 512).layout()
    Sw<3,3,3> o 0 o ((8,8),(8,2)):((64,512),(1,8))
    """

    major: str
    swizzle: str
    T: int
    m: int
    k: int | float  # K-major: the K mode holds 2k columns of 16 bytes, so k may be a half
    lbo: int | None
    sbo: int | None
    offset: int = 0
    row_elems: int | None = None  # MN-major: MN covers only this prefix of one swizzle row

    @property
    def mode(self):
        """The :class:`SwizzleMode` row.

        >>> CanonicalForm("MN", "SW64", 8, 1, 1, None, None).mode.row_bytes
        64
        """
        return swizzle_mode(self.swizzle)

    def layout(self, units: str = "element") -> ComposedLayout:
        """The exact layout this form stands for (unused strides become 0).

        >>> str(CanonicalForm("MN", "INTER", 8, 2, 1, None, 64).layout())
        'Sw<0,3,3> o 0 o ((8,1,2),(8,1)):((1,8,64),(8,0))'
        """
        units_used = None if self.row_elems is None else self.row_elems // self.T
        return canonical_layout(
            self.major,
            self.swizzle,
            self.T,
            self.m,
            self.k,
            self.lbo or 0,
            self.sbo or 0,
            units,
            units_used,
        )


def _form_strides(major: str, mode, T: int, m, k, lbo: int, sbo: int, used: int | None = None):
    """Shape and stride of the table form (one place for the seed-001 table); ``used``: the
    16-byte units of the swizzle row an MN-major block covers (all ``s`` when None)."""
    s, g = mode.row_bytes // 16, mode.rows
    if major == "MN":
        if mode.name == "INTER":
            return ((T, 1, m), (8, k)), ((1, T, sbo), (T, lbo))
        return ((T, used or s, m), (g, k)), ((1, T, lbo), (s * T, sbo))
    cols = int(2 * k)
    if mode.name == "INTER":
        return ((8, m), (T, cols)), ((T, sbo), (1, lbo))
    return ((8, m), (T, cols)), ((s * T, sbo), (1, T))


def canonical_layout(
    major: str,
    swizzle,
    T: int,
    m: int,
    k: int | float,
    lbo: int = 0,
    sbo: int = 0,
    units: str = "element",
    row_units: int | None = None,
) -> ComposedLayout:
    """The canonical layout of the seed-001 table for the given parameters.

    ``row_units`` (MN-major swizzled only): how many 16-byte units of the swizzle row the MN
    mode covers, fewer than the row's when the block is narrower than a row (then ``m = 1``).

    ``units='element'``: strides and LBO/SBO in elements of a type with ``T`` per 16 bytes, the
    swizzle in element units. ``units='u128'``: ``T`` is taken as 1, LBO/SBO are in 16-byte
    units and the swizzle acts on 16-byte units.

    >>> str(canonical_layout("MN", "SW64", T=8, m=2, k=2, lbo=256, sbo=512))
    'Sw<2,3,3> o 0 o ((8,4,2),(8,2)):((1,8,256),(32,512))'
    >>> str(canonical_layout("K", "INTER", T=4, m=2, k=2, lbo=16, sbo=8, units="u128"))
    'Sw<0,0,3> o 0 o ((8,2),(1,4)):((1,8),(1,16))'
    """
    mode = swizzle_mode(swizzle)
    major = check_major(major)
    if major not in mode.majors:
        raise DescriptorError(f"swizzle {mode.name} has no {major}-major canonical form")
    if units not in ("element", "u128"):
        raise DescriptorError(f"units {units!r} must be 'element' or 'u128'")
    if T not in (1, 4, 8, 16, 32):
        raise DescriptorError(f"T = {T} must be 128 / element bits: 4, 8, 16 or 32")
    if units == "u128":
        T = 1
    if 2 * k != int(2 * k) or k <= 0 or m <= 0:
        raise DescriptorError(f"m = {m} and k = {k} must be positive (2k an integer)")
    if row_units is not None:
        s = mode.row_bytes // 16
        if major != "MN" or not mode.bits or m != 1 or not 0 < row_units <= s:
            raise DescriptorError(
                f"row_units = {row_units}: a partial swizzle row is an MN-major swizzled block "
                f"of m = 1 with 1..{s} 16-byte units"
            )
    shape, stride = _form_strides(major, mode, T, m, k, lbo, sbo, row_units)
    sw_base = mode.base + (T.bit_length() - 1) - 4
    return ComposedLayout(
        Swizzle(mode.bits, sw_base, mode.shift), 0, Layout(shape, stride), pinned=True
    )


# ---------------------------------------------------------------- recognising a layout


def _take(pairs: Pairs, n: int, stride: int, what: str) -> Pairs:
    """Check that ``pairs`` starts with ``n`` elements at ``stride`` and return the rest."""
    if not pairs or pairs[0][1] != stride:
        found = f"{pairs[0][0]}:{pairs[0][1]}" if pairs else "nothing"
        raise DescriptorError(f"{what}: expected {n} elements at stride {stride}, found {found}")
    size, d = pairs[0]
    if size % n:
        raise DescriptorError(
            f"{what}: expected {n} elements at stride {stride}, found {size}:{d} "
            f"(extent {size} is not a multiple of {n})"
        )
    rest = pairs[1:]
    if size > n:
        rest = [(size // n, d * n)] + rest
    return rest


def _repeat(pairs: Pairs, what: str) -> tuple[int, int | None]:
    """The rest of a mode must be one repeat ``(count, stride)``, or nothing."""
    if not pairs:
        return 1, None
    if len(pairs) > 1:
        txt = ", ".join(f"{s}:{d}" for s, d in pairs)
        raise DescriptorError(f"{what}: expected one repeat with one stride, found {txt}")
    return pairs[0]


def _partial_row(mn: Pairs, row: int, T: int, mode) -> int | None:
    """The MN extent when the MN mode is one contiguous run shorter than a swizzle row."""
    if len(mn) != 1 or mn[0][1] != 1 or mn[0][0] >= row:
        return None
    if mn[0][0] % T:
        raise DescriptorError(
            f"MN mode of {mn[0][0]} contiguous elements is part of a {mode.row_bytes}-byte "
            f"{mode.name} row but not a whole number of 16-byte units ({T} elements); "
            f"use a multiple of {T} elements, up to {row}"
        )
    return mn[0][0]


def split_swizzle(layout) -> tuple[Swizzle | None, int, Layout]:
    """``(swizzle or None, offset, inner Layout)`` of a Layout or ComposedLayout.

    >>> split_swizzle(Layout((8, 8), (8, 1)))
    (None, 0, (8,8):(8,1))
    """
    if isinstance(layout, ComposedLayout):
        if not isinstance(layout.outer, Swizzle) or not isinstance(layout.inner, Layout):
            raise DescriptorError(
                f"layout {layout} must be Swizzle o offset o Layout for a descriptor"
            )
        if not isinstance(layout.offset, int):
            raise DescriptorError(f"layout {layout}: the offset must be an int")
        return layout.outer, layout.offset, layout.inner
    if isinstance(layout, Layout):
        return None, 0, layout
    raise DescriptorError(f"expected a Layout or ComposedLayout, got {layout!r}")


def detect_swizzle(sw: Swizzle | None, dtype, modes=SWIZZLE_MODES, units: str = "element"):
    """The swizzle mode whose element-unit (or, ``units='byte'``, byte-address) swizzle is
    ``sw``; ``None`` or a 0-bit swizzle is INTER.

    >>> detect_swizzle(Swizzle(3, 3, 3), "bf16").name
    'SW128'
    >>> detect_swizzle(Swizzle(3, 4, 3), "bf16", units="byte").name
    'SW128'
    """
    if units not in ("element", "byte"):
        raise DescriptorError(f"swizzle units {units!r} must be 'element' or 'byte'")
    if sw is None or sw.bits == 0:
        return swizzle_mode("INTER")
    for mode in modes:
        want = mode.element_swizzle(dtype) if units == "element" else mode.byte_swizzle()
        if mode.bits and want == sw:
            return mode
    expect = ", ".join(f"{m.element_swizzle(dtype)} ({m.name})" for m in modes if m.bits)
    hint = ""
    for mode in modes:
        if mode.byte_swizzle() == sw and element_bits(dtype) != 8:
            hint = (
                f"; {sw} is the byte-address swizzle of {mode.name}: in element units of "
                f"{element_bits(dtype)}-bit elements it is {mode.element_swizzle(dtype)}"
            )
    raise DescriptorError(
        f"swizzle {sw} is not a shared-memory swizzle for {element_bits(dtype)}-bit elements "
        f"(wrong swizzle base or bits); expected one of {expect}{hint}"
    )


def match_canonical(
    layout, dtype, major: str | None = None, modes=SWIZZLE_MODES, swizzle_units: str = "element"
) -> CanonicalForm:
    """Recognise ``layout`` (shape (MN, K), element units) as a canonical form of seed 001.

    ``major=None`` tries K-major, then MN-major. ``swizzle_units='byte'`` reads the swizzle as
    the byte-address form the PTX ISA prints next to element-unit layouts (``Swizzle<1,4,3> o
    ((8,2),(4,4)):((8,64),(1,4))`` for tf32). Raises :class:`DescriptorError` naming the rule
    that fails (swizzle kind, rank, the stride expected and found, a second repeat).

    >>> f = match_canonical(canonical_layout("K", "SW32", T=4, m=2, k=2, sbo=64), "tf32")
    >>> (f.major, f.swizzle, f.m, f.k, f.lbo, f.sbo)
    ('K', 'SW32', 2, 2, None, 64)
    """
    sw, offset, inner = split_swizzle(layout)
    mode = detect_swizzle(sw, dtype, modes, swizzle_units)
    T = elems_per_16b(dtype)
    if len(inner) != 2:
        raise DescriptorError(f"layout {layout} must have rank 2, (MN, K); it has {len(inner)}")
    _fits_shared(inner, T)
    if major is None:
        errors = []
        for guess in mode.majors:
            try:
                return _match(inner, mode, T, guess, offset)
            except DescriptorError as e:
                errors.append(f"as {guess}-major: {e}")
        raise DescriptorError(f"layout {layout} is not canonical: " + "; ".join(errors))
    major = check_major(major)
    if major not in mode.majors:
        raise DescriptorError(f"swizzle {mode.name} is {'/'.join(mode.majors)}-major only")
    try:
        return _match(inner, mode, T, major, offset)
    except DescriptorError as e:
        raise DescriptorError(f"layout {layout} is not canonical {major}-major: {e}") from None


def _fits_shared(inner: Layout, T: int) -> None:
    """A descriptor addresses shared memory: a block past its size is refused before the
    element-by-element checks, whose work grows with it."""
    from cutemma.hardware import MAX_SMEM_PER_BLOCK as SMEM_LIMIT
    from cutemma.layout import size

    nbytes = size(inner) * 16 // T
    if nbytes > SMEM_LIMIT:
        raise DescriptorError(
            f"a shared-memory block of {size(inner)} elements ({nbytes} bytes); shared memory "
            f"holds at most {SMEM_LIMIT} bytes: describe the block one MMA reads"
        )


def _match(inner: Layout, mode, T: int, major: str, offset: int) -> CanonicalForm:
    mn, kk = coalesced_pairs(inner[0]), coalesced_pairs(inner[1])
    s = mode.row_bytes // 16
    if major == "MN":
        row = _partial_row(mn, s * T, T, mode) if mode.bits else None
        if row is not None:  # narrower than one swizzle row: m = 1, no MN repeat (LBO 0)
            rest = _take(
                kk, mode.rows, s * T, f"K mode ({mode.rows} rows, one row = {s * T} elems)"
            )
            k, k_stride = _repeat(rest, f"K mode after {mode.rows} rows")
            return CanonicalForm(major, mode.name, T, 1, k, None, k_stride, offset, row)
        rest = _take(mn, s * T, 1, f"MN mode (one {mode.row_bytes}-byte row of {s * T} elements)")
        m, mn_stride = _repeat(rest, "MN mode after the first row")
        rest = _take(kk, mode.rows, s * T, f"K mode ({mode.rows} rows, one row = {s * T} elems)")
        k, k_stride = _repeat(rest, f"K mode after {mode.rows} rows")
        if mode.name == "INTER":
            return CanonicalForm(major, mode.name, T, m, k, k_stride, mn_stride, offset)
        return CanonicalForm(major, mode.name, T, m, k, mn_stride, k_stride, offset)
    row_stride = s * T
    rest = _take(mn, 8, row_stride, f"MN mode (8 rows, {mode.row_bytes} bytes = {s * T} apart)")
    m, mn_stride = _repeat(rest, "MN mode after 8 rows")
    if mode.name == "INTER":
        rest = _take(kk, T, 1, f"K mode (a 16-byte column of {T} elements)")
        cols, k_stride = _repeat(rest, "K mode after the first 16 bytes")
        return CanonicalForm(major, mode.name, T, m, cols / 2 if cols % 2 else cols // 2,
                             k_stride, mn_stride, offset)  # fmt: skip
    if len(kk) != 1 or kk[0][1] != 1 or kk[0][0] % T:
        found = ", ".join(f"{a}:{b}" for a, b in kk) or "nothing"
        raise DescriptorError(
            f"K mode of a swizzled K-major layout must be contiguous (stride 1) whole 16-byte "
            f"columns of {T} elements; found {found}"
        )
    cols = kk[0][0] // T
    return CanonicalForm(major, mode.name, T, m, cols / 2 if cols % 2 else cols // 2, None,
                         mn_stride, offset)  # fmt: skip
