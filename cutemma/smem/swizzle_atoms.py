"""Swizzle modes of shared memory and the layout atoms built from them.

One row of ``SWIZZLE_MODES`` per mode holds everything the rest of ``cutemma.smem`` needs:
the swizzle row width, CuTe's byte-address ``Swizzle<B, M, S>``, the rows per atom, and the
``layout_type`` codes of the wgmma (sm90) and tcgen05 (sm100) descriptors.

Element units. The hardware swizzles byte addresses with ``Swizzle<B, M, S>`` (M = 4 for the
16-byte-granule modes: bits ``[M+S, M+S+B)`` are XORed into bits ``[M, M+B)``). A layout in
element units of a ``bits``-wide type sees the same permutation shifted down by
``log2(bits / 8)`` bit positions, i.e. ``Swizzle<B, M + log2(T) - 4, S>`` with
``T = 128 / bits`` elements per 16 bytes. The two agree exactly when the tile starts on the
swizzle pattern's repeat (``pattern_bytes``: 256, 512, 1024 bytes); a tile elsewhere needs the
descriptor's base offset.

>>> str(gmma_layout_atom("K", "SW128", "bf16"))
'Sw<3,3,3> o 0 o (8,64):(64,1)'
>>> str(umma_layout_atom("MN", "SW128_32B", "tf32"))
'Sw<2,3,2> o 0 o (32,4):(1,32)'
"""

from __future__ import annotations

from dataclasses import dataclass

from cutemma.errors import DescriptorError
from cutemma.layout import Layout
from cutemma.layout.swizzle import ComposedLayout, Swizzle

MAJORS = ("K", "MN")


@dataclass(frozen=True)
class SwizzleMode:
    """One shared-memory swizzle mode (a row of ``SWIZZLE_MODES``).

    >>> swizzle_mode("SW64").pattern_bytes
    512
    """

    name: str
    row_bytes: int  # bytes of one swizzled row: the K extent (K-major) or MN extent (MN-major)
    bits: int  # CuTe Swizzle<B, M, S> on byte addresses
    base: int
    shift: int
    rows: int  # rows per atom: 8, or 4 for 128B with 32-byte atomicity
    gmma_code: int | None  # wgmma descriptor bits 62-63; None: not on sm90
    umma_code: int  # tcgen05 descriptor bits 61-63
    majors: tuple[str, ...]

    @property
    def pattern_bytes(self) -> int:
        """Bytes after which the XOR pattern repeats; tiles start on a multiple of it.

        >>> swizzle_mode("SW128").pattern_bytes
        1024
        """
        return 1 << (self.base + self.bits + self.shift)

    @property
    def granule_bytes(self) -> int:
        """Bytes moved as one unit by the swizzle: 16, or 32 for 32-byte atomicity.

        >>> swizzle_mode("SW128_32B").granule_bytes
        32
        """
        return 1 << self.base

    def byte_swizzle(self) -> Swizzle:
        """CuTe's ``Swizzle<B, M, S>`` acting on byte addresses.

        >>> str(swizzle_mode("SW128").byte_swizzle())
        'Sw<3,4,3>'
        """
        return Swizzle(self.bits, self.base, self.shift)

    def element_swizzle(self, dtype) -> Swizzle:
        """The same swizzle acting on element offsets of ``dtype`` (see the module doc).

        >>> str(swizzle_mode("SW128").element_swizzle("f16"))
        'Sw<3,3,3>'
        """
        return Swizzle(self.bits, self.base + log2_elems_per_16b(dtype) - 4, self.shift)


# Codes: PTX ISA "Matrix Descriptor Format" (wgmma: 0 none, 1 128B, 2 64B, 3 32B) and the
# tcgen05 "Shared memory descriptor" (0 none, 1 128B with 32B atomic, 2 128B, 4 64B, 6 32B);
# same in cute/arch/mma_sm90_desc.hpp and mma_sm100_desc.hpp. Byte swizzles and atom shapes:
# cute/atom/mma_traits_sm90_gmma.hpp (Layout_*_Atom_Bits), mma_traits_sm100.hpp (SW128_32B is
# MN-major only there, with Swizzle<2,5,2> over 128-byte rows and 4-row atoms).
SWIZZLE_MODES: tuple[SwizzleMode, ...] = (
    SwizzleMode("INTER", 16, 0, 4, 3, 8, 0, 0, MAJORS),
    SwizzleMode("SW32", 32, 1, 4, 3, 8, 3, 6, MAJORS),
    SwizzleMode("SW64", 64, 2, 4, 3, 8, 2, 4, MAJORS),
    SwizzleMode("SW128", 128, 3, 4, 3, 8, 1, 2, MAJORS),
    SwizzleMode("SW128_32B", 128, 2, 5, 2, 4, None, 1, ("MN",)),
)
_BY_NAME = {m.name: m for m in SWIZZLE_MODES}
_ALIASES = {
    "NONE": "INTER", "INTERLEAVE": "INTER", "0": "INTER", "16": "INTER",
    "32": "SW32", "B32": "SW32", "64": "SW64", "B64": "SW64", "128": "SW128", "B128": "SW128",
    "128_32B": "SW128_32B", "B128_BASE32B": "SW128_32B", "SW128_BASE32B": "SW128_32B",
}  # fmt: skip

# Fallback widths, used only when cutemma.mma.types cannot be imported.
_FALLBACK_BITS = {"tf32": 32, "f32": 32, "s32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8,
                  "s8": 8, "u8": 8, "e2m3": 6, "e3m2": 6, "e2m1": 4, "s4": 4, "u4": 4}  # fmt: skip


def swizzle_mode(x: str | int | SwizzleMode) -> SwizzleMode:
    """The mode named by ``'SW128'``, ``128``, ``'B128'``, ``'INTER'``, ``'none'`` ...

    >>> swizzle_mode(32).name, swizzle_mode("interleave").name
    ('SW32', 'INTER')
    """
    if isinstance(x, SwizzleMode):
        return x
    from cutemma.layout.checks import as_int

    if not isinstance(x, str) and as_int(x) is None:  # None, True, 128.0 are no swizzle
        raise DescriptorError(
            f"unknown swizzle {x!r}; use one of {', '.join(_BY_NAME)} (or 0/16, 32, 64, 128)"
        )
    key = x.upper() if isinstance(x, str) else str(as_int(x))
    key = _ALIASES.get(key, key)
    if key not in _BY_NAME:
        raise DescriptorError(
            f"unknown swizzle {x!r}; use one of {', '.join(_BY_NAME)} (or 0/16, 32, 64, 128)"
        )
    return _BY_NAME[key]


def check_major(major: str) -> str:
    """``'K'`` or ``'MN'`` (case-insensitive; ``'M'``/``'N'`` read as ``'MN'``).

    >>> check_major("mn")
    'MN'
    """
    m = str(major).upper()
    m = "MN" if m in ("M", "N") else m
    if m not in MAJORS:
        raise DescriptorError(f"major {major!r} must be 'K' or 'MN'")
    return m


def element_bits(dtype) -> int:
    """Bit width of ``dtype``: a short name (``'bf16'``), a NumericType, anything with ``.bits``.

    >>> element_bits("tf32"), element_bits("e4m3")
    (32, 8)
    """
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        if dtype < 1:
            raise DescriptorError(f"element width {dtype} bits: a width must be >= 1 bit")
        return dtype
    if hasattr(dtype, "bits"):
        return int(dtype.bits)
    try:
        from cutemma.mma.types import numeric_type
    except ImportError:  # the types module is optional at this layer
        numeric_type = None
    if numeric_type is not None:
        try:
            return numeric_type(dtype).bits
        except Exception:  # unknown there: fall through to our own message
            pass
    if isinstance(dtype, str) and dtype.lower() in _FALLBACK_BITS:
        return _FALLBACK_BITS[dtype.lower()]
    raise DescriptorError(f"unknown element type {dtype!r}; give a name like 'bf16' or a width")


def elems_per_16b(dtype) -> int:
    """``T`` of the PTX ISA: elements per 128 bits (4 for tf32, 8 for bf16, 32 for e2m1).

    >>> elems_per_16b("bf16")
    8
    """
    bits = element_bits(dtype)
    if bits not in (4, 8, 16, 32):
        hint = (
            " (6-bit types sit in 8-bit containers in shared memory: pass 8)" if bits == 6 else ""
        )
        raise DescriptorError(
            f"element type {dtype!r} is {bits} bits; shared-memory descriptors take 4, 8, 16 or "
            f"32-bit elements{hint}"
        )
    return 128 // bits


def log2_elems_per_16b(dtype) -> int:
    """``log2(T)``.

    >>> log2_elems_per_16b("tf32")
    2
    """
    return elems_per_16b(dtype).bit_length() - 1


def _atom(major: str, swizzle, dtype, sm: str) -> ComposedLayout:
    mode = swizzle_mode(swizzle)
    major = check_major(major)
    if major not in mode.majors:
        raise DescriptorError(
            f"{sm}: swizzle {mode.name} has no {major}-major atom; it is {'/'.join(mode.majors)}"
            "-major only"
        )
    row = mode.row_bytes * 8 // element_bits(dtype)  # elements per swizzled row
    elems_per_16b(dtype)  # rejects widths the descriptors cannot take
    if major == "K":
        inner = Layout((mode.rows, row), (row, 1))
    else:
        inner = Layout((row, mode.rows), (1, row))
    # pinned: C++'s atoms sit on an smem_ptr_flag, so even INTER stays composed when tiled
    return ComposedLayout(mode.element_swizzle(dtype), 0, inner, pinned=True)


def gmma_layout_atom(major: str, swizzle, dtype) -> ComposedLayout:
    """The wgmma (sm90) shared-memory atom, in element units: CuTe's
    ``GMMA::Layout_{major}_{swizzle}_Atom<T>``. Shape (MN, K): K-major atoms are 8 rows of one
    swizzle row each; MN-major atoms are one swizzle row of MN by 8 K.

    >>> str(gmma_layout_atom("MN", "SW64", "bf16"))
    'Sw<2,3,3> o 0 o (32,8):(1,32)'
    >>> str(gmma_layout_atom("K", "INTER", "tf32"))
    'Sw<0,2,3> o 0 o (8,4):(4,1)'
    """
    if swizzle_mode(swizzle).gmma_code is None:
        raise DescriptorError(f"sm90 wgmma has no {swizzle_mode(swizzle).name} mode; it is sm100")
    return _atom(major, swizzle, dtype, "gmma_layout_atom")


def umma_layout_atom(major: str, swizzle, dtype) -> ComposedLayout:
    """The tcgen05 (sm100) shared-memory atom: the sm90 atoms plus ``'SW128_32B'`` (MN-major,
    128-byte rows swizzled in 32-byte units, 4 rows).

    >>> str(umma_layout_atom("MN", "SW128_32B", "bf16"))
    'Sw<2,4,2> o 0 o (64,4):(1,64)'
    """
    return _atom(major, swizzle, dtype, "umma_layout_atom")
