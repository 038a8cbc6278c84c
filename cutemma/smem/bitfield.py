"""Bitfield tables: one ``Field`` row per descriptor field, packed and unpacked generically.

Every descriptor in :mod:`cutemma.smem` (the wgmma and tcgen05 shared-memory matrix
descriptors, the tcgen05 instruction descriptor) is one tuple of :class:`Field` rows;
encode, decode, range checks and the printed explanation all read that one table.

>>> table = (Field("lo", 0, 4, "low nibble"), Field("hi", 4, 4, "high nibble"))
>>> pack(table, {"lo": 0xA, "hi": 0x3}, what="demo")
58
>>> unpack(table, 0x3A)
{'lo': 10, 'hi': 3}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cutemma.errors import DescriptorError


@dataclass(frozen=True)
class Field:
    """One bitfield: ``width`` bits starting at bit ``lo``.

    ``fixed`` is the value the hardware requires (reserved zeros, the sm100 version 1):
    ``pack`` fills it in and rejects any other value.

    >>> Field("n_dim", 17, 6, "N >> 3").mask
    8257536
    """

    name: str
    lo: int
    width: int
    doc: str
    fixed: int | None = None

    @property
    def hi(self) -> int:
        """The last bit (inclusive), as the PTX ISA tables print it.

        >>> Field("sbo", 32, 14, "").hi
        45
        """
        return self.lo + self.width - 1

    @property
    def mask(self) -> int:
        """The field's bits in place.

        >>> hex(Field("swizzle", 62, 2, "").mask)
        '0xc000000000000000'
        """
        return ((1 << self.width) - 1) << self.lo

    @property
    def bits(self) -> str:
        """``'17-22'`` or ``'52'``: the bit range as text.

        >>> Field("lbo_mode", 52, 1, "").bits
        '52'
        """
        return str(self.lo) if self.width == 1 else f"{self.lo}-{self.hi}"


def check_table(table: tuple[Field, ...], total_bits: int) -> None:
    """Raise if two fields overlap or one leaves the ``total_bits``-wide word (a table bug).

    >>> check_table((Field("a", 0, 2, ""), Field("b", 2, 2, "")), 4)
    """
    used = 0
    for f in table:
        if f.mask & used or f.lo + f.width > total_bits:
            raise DescriptorError(f"bitfield table: field {f.name!r} overlaps or leaves the word")
        used |= f.mask


def pack(table: tuple[Field, ...], values: Mapping[str, int], what: str) -> int:
    """Pack named field values into one integer; unknown names and out-of-range values raise.

    Fields with a ``fixed`` value may be left out; named fields left out are 0.

    >>> pack((Field("a", 0, 2, ""), Field("v", 2, 1, "", fixed=1)), {"a": 2}, what="demo")
    6
    """
    names = {f.name for f in table}
    unknown = sorted(set(values) - names)
    if unknown:
        raise DescriptorError(f"{what}: unknown field(s) {unknown}; fields are {sorted(names)}")
    raw = 0
    for f in table:
        value = values.get(f.name, f.fixed if f.fixed is not None else 0)
        if not isinstance(value, int) or (isinstance(value, bool) and f.width != 1):
            raise DescriptorError(f"{what}: field {f.name!r} must be an int, got {value!r}")
        value = int(value)
        if not 0 <= value < (1 << f.width):
            raise DescriptorError(
                f"{what}: field {f.name!r} (bits {f.bits}) = {value} does not fit in "
                f"{f.width} bits; it must be in [0, {(1 << f.width) - 1}]"
            )
        if f.fixed is not None and value != f.fixed:
            raise DescriptorError(f"{what}: field {f.name!r} must be {f.fixed}, got {value}")
        raw |= value << f.lo
    return raw


def unpack(table: tuple[Field, ...], raw: int) -> dict[str, int]:
    """Every field's value in ``raw``, in table order.

    >>> unpack((Field("a", 0, 2, ""), Field("b", 2, 2, "")), 0b1101)
    {'a': 1, 'b': 3}
    """
    return {f.name: (raw >> f.lo) & ((1 << f.width) - 1) for f in table}


def check_raw(table: tuple[Field, ...], raw: int, total_bits: int, what: str) -> None:
    """Reject a raw word that is negative, too wide, sets bits no field owns, or breaks a fixed
    field.

    >>> check_raw((Field("a", 0, 2, ""),), 0b100, 4, "demo")
    Traceback (most recent call last):
    ...
    cutemma.errors.DescriptorError: demo: raw 0x4 sets bit(s) [2] that no field owns (reserved, must be 0)
    """
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw < (1 << total_bits):
        raise DescriptorError(f"{what}: raw value {raw!r} is not a {total_bits}-bit unsigned int")
    owned = 0
    for f in table:
        owned |= f.mask
    stray = [b for b in range(total_bits) if (raw >> b) & 1 and not (owned >> b) & 1]
    if stray:
        raise DescriptorError(
            f"{what}: raw {raw:#x} sets bit(s) {stray} that no field owns (reserved, must be 0)"
        )
    for name, value in unpack(table, raw).items():
        f = next(f for f in table if f.name == name)
        if f.fixed is not None and value != f.fixed:
            raise DescriptorError(
                f"{what}: raw {raw:#x} has {name} = {value} (bits {f.bits}); it must be {f.fixed}"
            )


def field_lines(table: tuple[Field, ...], values: Mapping[str, int]) -> list[str]:
    """One aligned line per field: bits, name, value, meaning.

    >>> field_lines((Field("a", 0, 2, "two bits"),), {"a": 3})
    ['  bits 0-1    a = 3  (two bits)']
    """
    width = max(len(f.name) for f in table)
    return [
        f"  bits {f.bits:<6} {f.name:<{width}} = {values[f.name]}  ({f.doc})"
        for f in table
        if f.name in values
    ]
