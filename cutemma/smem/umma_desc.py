"""The tcgen05 (sm100) shared-memory matrix descriptor: one bitfield table, build, decode.

Bit positions: PTX ISA 9.7.16.4.1 "Shared memory descriptor" (also
cute/arch/mma_sm100_desc.hpp, UMMA::SmemDescriptor): start address 0-13, LBO 16-29, SBO 32-45,
version 46-48 (fixed 0b001), base offset 49-51, LBO mode 52 (0 relative offset, 1 absolute
address), swizzle 61-63 (0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B).

Absolute-address LBO mode (seed 001, 9.7.16.3.1.2): for a K extent of 48 bytes the block is
stored as two chunks that each stay inside an aligned 128-byte row; LBO then holds the
address of the second chunk. Only 128B swizzle (16-byte atomicity), K-major, base offset 0.

>>> d = make_umma_desc(umma_layout_atom("MN", "SW128_32B", "tf32"), "MN", "tf32")
>>> d.layout_type, d.version, hex(d.raw)
(1, 1, '0x2000400000000000')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cutemma.errors import DescriptorError
from cutemma.smem.bitfield import Field, check_table
from cutemma.smem.canonical import match_canonical
from cutemma.smem.descriptor import SmemDescriptor, block_fields, check_start, encode_offset
from cutemma.smem.swizzle_atoms import (
    SWIZZLE_MODES,
    SwizzleMode,
    element_bits,
    umma_layout_atom,
)

UMMA_DESC_FIELDS: tuple[Field, ...] = (
    Field("start_address", 0, 14, "start address >> 4"),
    Field("leading_byte_offset", 16, 14, "LBO >> 4 (or second-chunk address >> 4)"),
    Field("stride_byte_offset", 32, 14, "SBO >> 4"),
    Field("version", 46, 3, "fixed 0b001 on sm100", fixed=1),
    Field("base_offset", 49, 3, "swizzle pattern phase, 0 when aligned"),
    Field("lbo_mode", 52, 1, "0 LBO is a relative offset, 1 an absolute address"),
    Field("layout_type", 61, 3, "swizzle: 0 none, 1 128B/32B-atom, 2 128B, 4 64B, 6 32B"),
)
check_table(UMMA_DESC_FIELDS, 64)

_BY_CODE = {m.umma_code: m for m in SWIZZLE_MODES}
ABSOLUTE_K_BYTES = 48  # the one K extent the absolute-address mode exists for

__all__ = ["UMMA_DESC_FIELDS", "UmmaDescriptor", "make_umma_desc", "decode_umma_desc",
           "umma_layout_atom"]  # fmt: skip


@dataclass(frozen=True)
class UmmaDescriptor(SmemDescriptor):
    """A tcgen05 descriptor; fields hold the values stored in their bits.

    >>> UmmaDescriptor(stride_byte_offset=64, layout_type=2).raw == (2 << 61) | (1 << 46) | (64 << 32)
    True
    """

    TABLE = UMMA_DESC_FIELDS
    ARCH = "sm100"
    TITLE = "tcgen05 (sm100) shared memory descriptor"

    start_address: int = 0
    leading_byte_offset: int = 0
    stride_byte_offset: int = 0
    version: int = 1
    base_offset: int = 0
    lbo_mode: int = 0
    layout_type: int = 0
    major: str | None = field(default=None, compare=False)

    def swizzle_mode(self) -> SwizzleMode:
        """The swizzle mode named by ``layout_type`` (codes 3, 5, 7 are not defined).

        >>> UmmaDescriptor(layout_type=4).swizzle_mode().name
        'SW64'
        """
        if self.layout_type not in _BY_CODE:
            raise DescriptorError(
                f"tcgen05 layout_type {self.layout_type} is not defined; it must be one of "
                + ", ".join(f"{c} ({m.name})" for c, m in sorted(_BY_CODE.items()))
            )
        return _BY_CODE[self.layout_type]

    def describe(self) -> str:
        """The descriptor in words (see ``SmemDescriptor.describe``), plus the LBO mode.

        >>> "absolute" in UmmaDescriptor(lbo_mode=1, layout_type=2).describe()
        True
        """
        text = super().describe()
        if self.lbo_mode:
            text += (
                f"\n  LBO mode 1: LBO is the absolute address {self.leading_byte_offset << 4:#x} "
                "of the second chunk of a 48-byte K block"
            )
        return text


def make_umma_desc(
    layout, major: str, dtype, start_address: int = 0, *, second_chunk_address: int | None = None
) -> UmmaDescriptor:
    """The tcgen05 descriptor of a shared-memory block ``layout`` (shape (MN, K), element units)
    whose element (0, 0) before any offset sits at byte ``start_address``.

    With ``second_chunk_address`` the descriptor uses the absolute-address LBO mode: ``layout``
    is the first chunk of a 48-byte K block (K-major, SW128), the remaining K bytes sit at that
    address; both chunks must stay inside one aligned 128-byte row and the base offset must be 0.

    >>> from cutemma.smem.canonical import canonical_layout
    >>> first = canonical_layout("K", "SW128", T=32, m=8, k=1, sbo=2048)  # 32 B of e2m1
    >>> d = make_umma_desc(first, "K", "e2m1", 0x800, second_chunk_address=0x1060)
    >>> d.lbo_mode, hex(d.leading_byte_offset << 4)
    (1, '0x1060')
    """
    form = match_canonical(layout, dtype, major)
    bits = element_bits(dtype)
    values = block_fields(form, layout, bits, start_address)
    values.update(layout_type=form.mode.umma_code)
    if second_chunk_address is None:
        return UmmaDescriptor(**values, major=form.major)
    values.update(_absolute_lbo(form, values, bits, start_address, second_chunk_address))
    return UmmaDescriptor(**values, major=form.major)


def _absolute_lbo(form, values: dict, bits: int, tile_start: int, second: int) -> dict[str, int]:
    """Check the restrictions of the absolute-address LBO mode and return its fields."""
    rule = "absolute-address LBO mode"
    if form.mode.name != "SW128":
        raise DescriptorError(
            f"{rule}: only 128B swizzle (16-byte atomicity); got {form.mode.name}"
        )
    if form.major != "K":
        raise DescriptorError(f"{rule}: only K-major (transpose bits 0); got {form.major}-major")
    if check_start(tile_start, form.mode) != 0 or values["base_offset"] != 0:
        raise DescriptorError(
            f"{rule}: the base offset must be 0, so the tile must start on 1024 bytes; "
            f"start_address is {tile_start:#x}"
        )
    first = int(2 * form.k) * 16
    rest = ABSOLUTE_K_BYTES - first
    if rest <= 0:
        raise DescriptorError(
            f"{rule}: the first chunk holds {first} bytes of K; it must hold less than "
            f"{ABSOLUTE_K_BYTES} so the second chunk has the rest"
        )
    start = values["start_address"] << 4
    if start % 128 + first > 128:
        raise DescriptorError(f"{rule}: first chunk ({first} bytes at {start:#x}) crosses 128 B")
    if not isinstance(second, int) or second % 128 + rest > 128:
        raise DescriptorError(
            f"{rule}: second chunk ({rest} bytes at {second!r}) must be 16-byte aligned and stay "
            "inside one aligned 128-byte row"
        )
    return {"leading_byte_offset": encode_offset(second, f"{rule}: second chunk address"),
            "lbo_mode": 1}  # fmt: skip


def decode_umma_desc(raw: int, major: str | None = None) -> UmmaDescriptor:
    """``UmmaDescriptor.decode``: the fields of a raw 64-bit tcgen05 descriptor.

    >>> decode_umma_desc(0x2000400000000000).swizzle_mode().name
    'SW128_32B'
    """
    from cutemma.layout.checks import as_int

    if as_int(raw) is None:  # numpy ints are ints; True is not a descriptor
        raise DescriptorError(f"raw descriptor {raw!r} must be an int")
    return UmmaDescriptor.decode(as_int(raw), major)
