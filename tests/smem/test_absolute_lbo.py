"""Acceptance 5: the absolute-address LBO mode (seed 001, 9.7.16.3.1.2): K of 48 bytes in two
chunks, each inside an aligned 128-byte row; 128B swizzle only, K-major only, base offset 0."""

import pytest

from cutemma.errors import DescriptorError
from cutemma.smem import canonical_layout, decode_umma_desc, make_umma_desc

# e2m1 (4-bit): T = 32 per 16 bytes; 96 elements of K = 48 bytes (kind::mxf4nvf4, K = 96)
FIRST_32B = canonical_layout("K", "SW128", T=32, m=16, k=1, sbo=2048)  # 2 columns = 32 bytes
FIRST_16B = canonical_layout("K", "SW128", T=32, m=16, k=0.5, sbo=2048)  # 1 column = 16 bytes


def test_absolute_mode_fields():
    d = make_umma_desc(FIRST_32B, "K", "e2m1", 0x800, second_chunk_address=0x1060)
    assert d.lbo_mode == 1 and d.leading_byte_offset == 0x1060 >> 4
    assert (d.raw >> 52) & 1 == 1  # bit 52: LBO mode
    assert (d.raw >> 16) & 0x3FFF == 0x106  # LBO field holds the address >> 4
    assert (d.layout_type, d.base_offset, d.start_address) == (2, 0, 0x80)
    assert decode_umma_desc(d.raw) == d
    assert "absolute address 0x1060" in d.describe()


def test_first_chunk_of_16_bytes_leaves_32():
    d = make_umma_desc(FIRST_16B, "K", "e2m1", 0x400, second_chunk_address=0x2040)
    assert d.leading_byte_offset == 0x204
    with pytest.raises(DescriptorError, match="128-byte row"):  # 32 bytes at 0x70 cross 128
        make_umma_desc(FIRST_16B, "K", "e2m1", 0x400, second_chunk_address=0x2070)


def test_relative_mode_is_the_default():
    assert make_umma_desc(FIRST_32B, "K", "e2m1", 0x800).lbo_mode == 0


@pytest.mark.parametrize(
    "layout, major, start, second, rule",
    [
        (canonical_layout("K", "SW64", T=32, m=16, k=1, sbo=1024), "K", 0x800, 0x1060,
         "only 128B swizzle"),
        (canonical_layout("MN", "SW128_32B", T=32, m=1, k=2, lbo=0, sbo=1024), "MN", 0x800,
         0x1060, "only 128B swizzle"),
        (canonical_layout("MN", "SW128", T=32, m=1, k=2, lbo=0, sbo=2048), "MN", 0x800, 0x1060,
         "only K-major"),
        (FIRST_32B, "K", 0x880, 0x1060, "base offset must be 0"),
        (canonical_layout("K", "SW128", T=32, m=16, k=1.5, sbo=2048), "K", 0x800, 0x1060,
         "less than 48"),
        (FIRST_32B, "K", 0x800, 0x1078, "inside one aligned 128-byte row"),
        (FIRST_32B, "K", 0x800, 0x1068, "multiple of 16"),
        (FIRST_32B, "K", 0x800, 1 << 18, r"\[0, 262144\)"),
    ],
)  # fmt: skip
def test_restrictions_enforced(layout, major, start, second, rule):
    with pytest.raises(DescriptorError, match=rule):
        make_umma_desc(layout, major, "e2m1", start, second_chunk_address=second)
