"""The wgmma (sm90) shared-memory matrix descriptor: one bitfield table, build, decode.

Bit positions: PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format" (also
cute/arch/mma_sm90_desc.hpp, GmmaDescriptor): start address 0-13, LBO 16-29, SBO 32-45 (each
``(x & 0x3FFFF) >> 4``), base offset 49-51, swizzle mode 62-63 (0 none, 1 128B, 2 64B, 3 32B).

>>> from cutemma.layout import tile_to_shape
>>> tile = tile_to_shape(gmma_layout_atom("K", "SW128", "bf16"), (64, 64))
>>> d = make_gmma_desc(tile, "K", "bf16", start_address=0x400)
>>> hex(d.raw), d.stride_byte_offset
('0x4000004000010040', 64)
>>> GmmaDescriptor.decode(d.raw) == d
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cutemma.errors import DescriptorError
from cutemma.smem.bitfield import Field, check_table
from cutemma.smem.canonical import match_canonical
from cutemma.smem.descriptor import SmemDescriptor, block_fields
from cutemma.smem.swizzle_atoms import (
    SWIZZLE_MODES,
    SwizzleMode,
    element_bits,
    gmma_layout_atom,
)

GMMA_DESC_FIELDS: tuple[Field, ...] = (
    Field("start_address", 0, 14, "start address >> 4"),
    Field("leading_byte_offset", 16, 14, "LBO >> 4"),
    Field("stride_byte_offset", 32, 14, "SBO >> 4"),
    Field("base_offset", 49, 3, "swizzle pattern phase, 0 when aligned"),
    Field("layout_type", 62, 2, "swizzle: 0 none, 1 128B, 2 64B, 3 32B"),
)
check_table(GMMA_DESC_FIELDS, 64)

GMMA_MODES = tuple(m for m in SWIZZLE_MODES if m.gmma_code is not None)
_BY_CODE = {m.gmma_code: m for m in GMMA_MODES}

__all__ = ["GMMA_DESC_FIELDS", "GmmaDescriptor", "make_gmma_desc", "decode_gmma_desc",
           "gmma_layout_atom"]  # fmt: skip


@dataclass(frozen=True)
class GmmaDescriptor(SmemDescriptor):
    """A wgmma descriptor; every field holds the value stored in its bits (16-byte units for
    addresses and offsets). ``major`` is context for ``describe`` only (not in the bits).

    >>> d = GmmaDescriptor(start_address=0x40, leading_byte_offset=1, stride_byte_offset=64,
    ...                    layout_type=1)
    >>> hex(d.raw), d.swizzle_mode().name
    ('0x4000004000010040', 'SW128')
    """

    TABLE = GMMA_DESC_FIELDS
    ARCH = "sm90"
    TITLE = "wgmma (sm90) matrix descriptor"

    start_address: int = 0
    leading_byte_offset: int = 0
    stride_byte_offset: int = 0
    base_offset: int = 0
    layout_type: int = 0
    major: str | None = field(default=None, compare=False)

    def swizzle_mode(self) -> SwizzleMode:
        """The swizzle mode named by ``layout_type``.

        >>> GmmaDescriptor(layout_type=2).swizzle_mode().name
        'SW64'
        """
        return _BY_CODE[self.layout_type]

    def __str__(self) -> str:
        """CuTe's ``print(GmmaDescriptor)`` (cute/arch/mma_sm90_desc.hpp): raw value, then each
        field in hex; ``describe()`` says what the numbers mean.

        >>> print(GmmaDescriptor(start_address=0x40, leading_byte_offset=1,
        ...                      stride_byte_offset=64, layout_type=1))
        GmmaDescriptor: 0x4000004000010040
          start_addr :  0x0040
          leading_off:  0x0001 (1)
          stride_off :  0x0040 (64)
          base_offset:  0x0
          layout_type:  0x1 (B128)
        """
        mode = self.swizzle_mode()
        name = f"B{mode.row_bytes}" if mode.bits else "INTERLEAVE"  # CuTe's LayoutType names
        return "\n".join(
            [
                f"GmmaDescriptor: {self.raw:#018x}",
                f"  start_addr :  {self.start_address:#06x}",
                f"  leading_off:  {self.leading_byte_offset:#06x} ({self.leading_byte_offset})",
                f"  stride_off :  {self.stride_byte_offset:#06x} ({self.stride_byte_offset})",
                f"  base_offset:  {self.base_offset:#03x}",
                f"  layout_type:  {self.layout_type:#03x} ({name})",
            ]
        )


def make_gmma_desc(layout, major: str, dtype, start_address: int = 0) -> GmmaDescriptor:
    """The wgmma descriptor of a shared-memory block ``layout`` (shape (MN, K), element units,
    swizzled or not) whose element (0, 0) before any offset sits at byte ``start_address``.

    Raises :class:`DescriptorError` naming the rule broken when the block is not canonical.

    >>> d = make_gmma_desc(gmma_layout_atom("MN", "SW32", "bf16"), "MN", "bf16")
    >>> d.layout_type, d.leading_byte_offset, d.stride_byte_offset
    (3, 0, 0)
    """
    form = match_canonical(layout, dtype, major, modes=GMMA_MODES)
    values = block_fields(form, layout, element_bits(dtype), start_address)
    return GmmaDescriptor(**values, layout_type=form.mode.gmma_code, major=form.major)


def decode_gmma_desc(raw: int, major: str | None = None) -> GmmaDescriptor:
    """``GmmaDescriptor.decode``: the fields of a raw 64-bit wgmma descriptor.

    >>> decode_gmma_desc(0x4000004000010040).stride_byte_offset
    64
    """
    if not isinstance(raw, int):
        raise DescriptorError(f"raw descriptor {raw!r} must be an int")
    return GmmaDescriptor.decode(raw, major)
