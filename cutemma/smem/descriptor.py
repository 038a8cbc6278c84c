"""What the wgmma (sm90) and tcgen05 (sm100) shared-memory matrix descriptors share.

A descriptor stores a start address, the leading-dimension byte offset (LBO), the
stride-dimension byte offset (SBO) and a base offset, all but the last as ``(x & 0x3FFFF) >> 4``
(PTX ISA "Matrix Descriptor Format": matrix-descriptor-encode). :func:`block_fields` turns a
recognised canonical form (:mod:`cutemma.smem.canonical`) into those values after checking
what the form alone does not: the block does not overlap itself, a swizzled K-major block fits
in one swizzle row, offsets are whole 16-byte units, the start address is aligned.

>>> encode_offset(512, "LBO")
32
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from cutemma.display import RichDisplay
from cutemma.errors import DescriptorError
from cutemma.layout.layout import coalesced_pairs
from cutemma.smem.bitfield import Field, check_raw, field_lines, pack, unpack
from cutemma.smem.canonical import CanonicalForm, split_swizzle
from cutemma.smem.swizzle_atoms import SwizzleMode, check_major

SMEM_WINDOW = 1 << 18  # matrix-descriptor-encode keeps address bits [4, 18)


def encode_offset(nbytes: int, what: str) -> int:
    """``nbytes >> 4`` after checking it is a whole number of 16-byte units that fits 14 bits.

    >>> encode_offset(1024, "SBO")
    64
    """
    if nbytes % 16:
        raise DescriptorError(f"{what} = {nbytes} bytes is not a multiple of 16 bytes")
    if not 0 <= nbytes < SMEM_WINDOW:
        raise DescriptorError(f"{what} = {nbytes} bytes must be in [0, {SMEM_WINDOW}) (14 bits)")
    return nbytes >> 4


def _check_injective(inner, what: str) -> None:
    offs = np.zeros(1, dtype=np.int64)
    for size, stride in coalesced_pairs(inner):
        offs = (offs[:, None] + np.arange(size, dtype=np.int64)[None, :] * stride).ravel()
    if len(np.unique(offs)) != len(offs):
        raise DescriptorError(
            f"{what}: layout {inner} maps two elements to one offset (its strides overlap)"
        )


def check_start(start_address: int, mode: SwizzleMode) -> int:
    """Check the tile's byte address and return its base offset (PTX ISA: 0 when the swizzle
    pattern starts on its repeat, 256/512/1024 bytes; else ``(start >> 7) & 7``). With it the
    hardware swizzles relative to the tile start, as the element-unit layouts do (checked on
    an H100 by tests/smem/gpu_wgmma_check.py --base-offset).

    >>> from cutemma.smem.swizzle_atoms import swizzle_mode
    >>> check_start(0x400, swizzle_mode("SW128")), check_start(0x480, swizzle_mode("SW128"))
    (0, 1)
    """
    if not isinstance(start_address, int) or start_address < 0:
        raise DescriptorError(f"start_address {start_address!r} must be a non-negative int")
    if start_address % 16:
        raise DescriptorError(
            f"start_address {start_address:#x} is misaligned: it must be a multiple of 16 bytes"
        )
    if start_address >= SMEM_WINDOW:
        raise DescriptorError(
            f"start_address {start_address:#x} is past the {SMEM_WINDOW:#x}-byte shared window"
        )
    if mode.bits == 0 or start_address % mode.pattern_bytes == 0:
        return 0
    if start_address % 128:
        raise DescriptorError(
            f"start_address {start_address:#x} is misaligned for {mode.name}: a swizzled tile "
            f"starts on {mode.pattern_bytes} bytes, or on 128 bytes with a base offset"
        )
    return (start_address >> 7) & 7


def block_fields(form: CanonicalForm, layout, bits: int, start_address: int) -> dict[str, int]:
    """Descriptor field values (as stored) for a block recognised as ``form``.

    A stride with no repeat in the block is stored as 0, except LBO of swizzled K-major
    layouts, which the ISA says is unused and assumed 1.

    >>> from cutemma.smem.canonical import canonical_layout, match_canonical
    >>> block = canonical_layout("K", "SW128", 8, 8, 1, sbo=512)
    >>> block_fields(match_canonical(block, "bf16", "K"), block, 16, 0x400)
    {'start_address': 64, 'leading_byte_offset': 1, 'stride_byte_offset': 64, 'base_offset': 0}
    """
    mode = form.mode
    _, offset, inner = split_swizzle(layout)
    _check_injective(inner, f"{form.major}-major {mode.name} block")
    if form.major == "K" and mode.bits:
        cols = int(2 * form.k)
        if cols * 16 > mode.row_bytes:
            raise DescriptorError(
                f"K-major {mode.name} block spans {cols * 16} bytes of K, more than one "
                f"{mode.row_bytes}-byte swizzle row; one descriptor covers one row (cut K into "
                "blocks of at most one row, each with its own start address)"
            )
    base_offset = check_start(start_address, mode)
    if (offset * bits) % (16 * 8):
        raise DescriptorError(
            f"layout offset {offset} elements ({offset * bits / 8:g} bytes) is not a whole "
            "number of 16-byte units; descriptors start on 16 bytes"
        )
    start = start_address + offset * bits // 8
    if start >= SMEM_WINDOW:
        raise DescriptorError(f"block start {start:#x} is past the shared window {SMEM_WINDOW:#x}")

    def enc(v: int | None, name: str, unused: int = 0) -> int:
        return unused if v is None else encode_offset(v * bits // 8, f"{name} ({v} elements)")

    if form.major == "K" and mode.bits:
        lbo = 1  # "not used, assumed to be 1" (seed 001, K-major swizzled)
    else:
        lbo = enc(form.lbo, "LBO")
    return {
        "start_address": start >> 4,
        "leading_byte_offset": lbo,
        "stride_byte_offset": enc(form.sbo, "SBO"),
        "base_offset": base_offset,
    }


# Meaning of LBO/SBO per (major, swizzled?), from seed 001 "Major-ness supported by strides".
_MEANING = {
    ("K", False): ("from one 16-byte column of core matrices to the next along K",
                   "from one group of 8 rows to the next"),
    ("K", True): ("unused for swizzled K-major (assumed 1)",
                  "from one group of 8 rows to the next"),
    ("MN", False): ("from the first 8 K-columns to the next 8",
                    "from one 16-byte column of MN to the next"),
    ("MN", True): ("from one swizzle row of MN to the next",
                   "from one group of K rows to the next"),
}  # fmt: skip


@dataclass(frozen=True)
class SmemDescriptor(RichDisplay):
    """Base of :class:`GmmaDescriptor` and :class:`UmmaDescriptor`: the field values as stored
    in the bitfields, ``.raw``, ``.describe()`` and ``decode(raw)``. Subclasses give ``TABLE``
    (one ``Field`` row per field), ``ARCH`` and the layout-type codes.

    >>> from cutemma.smem.gmma_desc import GmmaDescriptor
    >>> GmmaDescriptor(stride_byte_offset=8).values()["stride_byte_offset"]
    8
    """

    TABLE: ClassVar[tuple[Field, ...]] = ()
    ARCH: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""

    def __post_init__(self):
        pack(self.TABLE, self.values(), what=self.TITLE)  # range-checks every field
        self.swizzle_mode()
        if getattr(self, "major", None) is not None:
            object.__setattr__(self, "major", check_major(self.major))

    def values(self) -> dict[str, int]:
        """The bitfield values by name (the fields of ``TABLE``).

        >>> from cutemma.smem.umma_desc import UmmaDescriptor
        >>> UmmaDescriptor(layout_type=2).values()["version"]
        1
        """
        names = {f.name for f in self.TABLE}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in names}

    @property
    def raw(self) -> int:
        """The 64-bit integer the instruction takes.

        >>> from cutemma.smem.gmma_desc import GmmaDescriptor
        >>> hex(GmmaDescriptor(layout_type=3, start_address=1).raw)
        '0xc000000000000001'
        """
        return pack(self.TABLE, self.values(), what=self.TITLE)

    @classmethod
    def decode(cls, raw: int, major: str | None = None):
        """The descriptor whose ``.raw`` is ``raw``; reserved bits set raise.

        >>> from cutemma.smem.gmma_desc import GmmaDescriptor
        >>> GmmaDescriptor.decode(0xC000000000000001).swizzle_mode().name
        'SW32'
        """
        check_raw(cls.TABLE, raw, 64, f"{cls.TITLE} decode")
        values = unpack(cls.TABLE, raw)
        return cls(**values, major=major)

    def swizzle_mode(self) -> SwizzleMode:  # pragma: no cover - subclasses
        raise NotImplementedError

    def describe(self) -> str:
        """The descriptor in words: every field, then what the numbers mean in bytes.

        >>> from cutemma.smem.gmma_desc import GmmaDescriptor
        >>> print(GmmaDescriptor(stride_byte_offset=8, major="K").describe().splitlines()[-1])
          if K-major: SBO = 128 bytes: from one group of 8 rows to the next
        """
        mode = self.swizzle_mode()
        v = self.values()
        out = [f"{self.TITLE} {self.raw:#018x}"]
        out += field_lines(self.TABLE, v)
        out.append(f"  start address: {v['start_address'] << 4:#x} (bytes, low 4 bits dropped)")
        out.append(
            f"  swizzle: {mode.name} ({mode.row_bytes}-byte rows in {mode.granule_bytes}-byte "
            f"units" + (f", pattern repeats every {mode.pattern_bytes} bytes)" if mode.bits
                        else ", no swizzle: 8x16-byte core matrices)")
        )  # fmt: skip
        lbo, sbo = v["leading_byte_offset"] << 4, v["stride_byte_offset"] << 4
        majors = [self.major] if getattr(self, "major", None) else list(mode.majors)
        for major in majors:
            lm, sm = _MEANING[(major, bool(mode.bits))]
            out.append(f"  if {major}-major: LBO = {lbo} bytes: {lm}")
            out.append(f"  if {major}-major: SBO = {sbo} bytes: {sm}")
        if v["base_offset"]:
            out.append(f"  base offset {v['base_offset']}: pattern starts off its repeat")
        return "\n".join(out)
