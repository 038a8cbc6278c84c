"""Descriptor bit positions against the PTX ISA tables, and encode/decode round trips.

Positions here are typed from the ISA text: wgmma "Matrix Descriptor Format" (13-0 start,
29-16 LBO, 45-32 SBO, 51-49 base offset, 63-62 swizzle) and tcgen05 "Shared memory
descriptor" (adds 48-46 = 0b001, 52 LBO mode, 63-61 swizzle).
"""

import random

import pytest

from cutemma.errors import DescriptorError
from cutemma.smem import GmmaDescriptor, UmmaDescriptor, decode_gmma_desc, decode_umma_desc

GMMA_ISA = {
    "start_address": (0, 13),
    "leading_byte_offset": (16, 29),
    "stride_byte_offset": (32, 45),
    "base_offset": (49, 51),
    "layout_type": (62, 63),
}
UMMA_ISA = {"start_address": (0, 13), "leading_byte_offset": (16, 29),
            "stride_byte_offset": (32, 45), "base_offset": (49, 51), "lbo_mode": (52, 52),
            "layout_type": (61, 63)}  # fmt: skip
VERSION_BIT = 1 << 46  # bits 48-46 hold 0b001


def _ones(lo, hi):
    return ((1 << (hi - lo + 1)) - 1) << lo


@pytest.mark.parametrize("name", list(GMMA_ISA))
def test_gmma_field_positions(name):
    lo, hi = GMMA_ISA[name]
    assert GmmaDescriptor(**{name: (1 << (hi - lo + 1)) - 1}).raw == _ones(lo, hi)


@pytest.mark.parametrize("name", [n for n in UMMA_ISA if n != "layout_type"])
def test_umma_field_positions(name):
    lo, hi = UMMA_ISA[name]
    assert UmmaDescriptor(**{name: (1 << (hi - lo + 1)) - 1}).raw == _ones(lo, hi) | VERSION_BIT


def test_umma_layout_type_codes_and_version():
    # 0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B at bits 63-61
    for code, name in [(0, "INTER"), (1, "SW128_32B"), (2, "SW128"), (4, "SW64"), (6, "SW32")]:
        d = UmmaDescriptor(layout_type=code)
        assert d.raw == (code << 61) | VERSION_BIT
        assert d.swizzle_mode().name == name
    for bad in (3, 5, 7):
        with pytest.raises(DescriptorError, match="not defined"):
            UmmaDescriptor(layout_type=bad)


def test_gmma_known_value():
    # 128B swizzle, LBO 1 (unused), SBO 1024 bytes, tile at 0x400: a common K-major bf16 setup
    raw = (1 << 62) | ((1024 >> 4) << 32) | (1 << 16) | (0x400 >> 4)
    d = decode_gmma_desc(raw)
    assert (d.layout_type, d.stride_byte_offset, d.leading_byte_offset, d.start_address) == (
        1, 64, 1, 0x40)  # fmt: skip
    assert d.swizzle_mode().name == "SW128"


def _random_fields(rng, table):
    out = {}
    for name, (lo, hi) in table.items():
        out[name] = rng.randrange(1 << (hi - lo + 1))
    return out


def test_round_trips_random_fields():
    rng = random.Random(2026)
    for _ in range(500):
        f = _random_fields(rng, GMMA_ISA)
        d = GmmaDescriptor(**f)
        assert decode_gmma_desc(d.raw).values() == f
        f = _random_fields(rng, UMMA_ISA)
        f["layout_type"] = rng.choice([0, 1, 2, 4, 6])
        d = UmmaDescriptor(**f)
        assert {k: v for k, v in decode_umma_desc(d.raw).values().items() if k != "version"} == f
        assert decode_umma_desc(d.raw).version == 1


@pytest.mark.parametrize("bit", [14, 15, 30, 31, 46, 47, 48, 52, 55, 61])
def test_gmma_reserved_bits_rejected(bit):
    with pytest.raises(DescriptorError, match=f"bit\\(s\\) \\[{bit}\\]"):
        decode_gmma_desc(1 << bit)


@pytest.mark.parametrize("bit", [14, 15, 30, 31, 53, 56, 60])
def test_umma_reserved_bits_rejected(bit):
    with pytest.raises(DescriptorError, match="no field owns"):
        decode_umma_desc(VERSION_BIT | (1 << bit))


def test_umma_version_must_be_one():
    with pytest.raises(DescriptorError, match="version = 0"):
        decode_umma_desc(0)
    with pytest.raises(DescriptorError, match="version"):
        UmmaDescriptor(version=2)


def test_out_of_range_fields():
    with pytest.raises(DescriptorError, match="stride_byte_offset.*14 bits"):
        GmmaDescriptor(stride_byte_offset=1 << 14)
    with pytest.raises(DescriptorError, match="raw value"):
        decode_gmma_desc(1 << 64)
    with pytest.raises(DescriptorError, match="must be an int"):
        decode_umma_desc("0x10")


def test_describe_names_fields_and_meaning():
    text = decode_gmma_desc((1 << 62) | (64 << 32) | (1 << 16) | 0x40, major="K").describe()
    assert "SW128" in text and "SBO = 1024 bytes" in text and "0x400" in text
    assert "unused" in text  # LBO of swizzled K-major
    text = UmmaDescriptor(leading_byte_offset=0x106, lbo_mode=1, layout_type=2).describe()
    assert "absolute address 0x1060" in text
