"""Acceptance 2 and 3: descriptors of whole tiles built with tile_to_shape, for every swizzle
mode x major x element width x several tile shapes; fields checked against the tile geometry,
and every element's address checked against an independent reading of the fields."""

import itertools
import random

import pytest
from smem_reference import GMMA_CODES, UMMA_CODES, hw_bit_address

from cutemma.layout import tile_to_shape, zipped_divide
from cutemma.smem import (
    GmmaDescriptor,
    UmmaDescriptor,
    gmma_layout_atom,
    make_gmma_desc,
    make_umma_desc,
    umma_layout_atom,
)

ROW_BYTES = {"INTER": 16, "SW32": 32, "SW64": 64, "SW128": 128, "SW128_32B": 128}
GMMA_CODE = {"INTER": 0, "SW128": 1, "SW64": 2, "SW32": 3}  # PTX ISA wgmma swizzle mode
UMMA_CODE = {"INTER": 0, "SW128_32B": 1, "SW128": 2, "SW64": 4, "SW32": 6}  # tcgen05
WIDTHS = [32, 16, 8, 4]


def tile_shapes(major: str, sw: str, bits: int):
    """(MN, K) tiles made of whole atoms; K-major swizzled tiles are one swizzle row of K."""
    row = ROW_BYTES[sw] * 8 // bits  # elements per swizzle row
    rows = 4 if sw == "SW128_32B" else 8
    if major == "K":
        ks = [row] if sw != "INTER" else [row, 2 * row, 4 * row]
        return [(mn, k) for mn in (8, 16, 64) for k in ks]
    return [(mn, k) for mn in (row, 2 * row) for k in (rows, 2 * rows, 4 * rows)]


def expected_fields(major: str, sw: str, bits: int, mn: int, k: int) -> tuple[int, int]:
    """LBO and SBO in bytes, from how tile_to_shape stacks atoms (MN first, then K)."""
    rb = ROW_BYTES[sw]
    if major == "K":
        atom_bytes = 8 * rb  # 8 rows of one swizzle row
        sbo = atom_bytes if mn > 8 else 0  # next 8 rows = next atom
        if sw != "INTER":
            return 16, sbo  # LBO unused, stored as 1 (16 bytes)
        lbo = mn * 16 if k > 128 // bits else 0  # next 16-byte column after all MN rows
        return lbo, sbo
    rows = 4 if sw == "SW128_32B" else 8
    group_bytes = mn * bits // 8 * rows  # one K group over the whole MN extent
    if sw == "INTER":
        sbo = 8 * 16 if mn > 128 // bits else 0  # next 16 bytes of MN = next core matrix
        lbo = group_bytes if k > 8 else 0
        return lbo, sbo
    lbo = rows * rb if mn > rb * 8 // bits else 0  # next swizzle row of MN = next atom
    sbo = group_bytes if k > rows else 0
    return lbo, sbo


def cases(arch: str):
    modes = ["INTER", "SW32", "SW64", "SW128"] + (["SW128_32B"] if arch == "sm100" else [])
    for sw, major, bits in itertools.product(modes, ["K", "MN"], WIDTHS):
        if sw == "SW128_32B" and major == "K":
            continue
        for shape in tile_shapes(major, sw, bits):
            yield sw, major, bits, shape


ARCHS = {
    "sm90": (gmma_layout_atom, make_gmma_desc, GMMA_CODE, GMMA_CODES),
    "sm100": (umma_layout_atom, make_umma_desc, UMMA_CODE, UMMA_CODES),
}
ALL = [(arch, *c) for arch in ARCHS for c in cases(arch)]


@pytest.mark.parametrize("arch,sw,major,bits,shape", ALL)
def test_tile_descriptor_fields(arch, sw, major, bits, shape):
    atom_fn, make, code, _ = ARCHS[arch]
    tile = tile_to_shape(atom_fn(major, sw, bits), shape)
    d = make(tile, major, bits, start_address=0x2000)
    lbo, sbo = expected_fields(major, sw, bits, *shape)
    assert (d.leading_byte_offset << 4, d.stride_byte_offset << 4) == (lbo, sbo)
    assert d.layout_type == code[sw]
    assert (d.start_address << 4, d.base_offset) == (0x2000, 0)
    cls = GmmaDescriptor if arch == "sm90" else UmmaDescriptor
    assert cls.decode(d.raw) == d


def _check_addresses(arch, layout, major, bits, shape, start):
    _, make, _, codes = ARCHS[arch]
    d = make(layout, major, bits, start_address=start)
    f = d.values()
    for mn in range(shape[0]):
        for k in range(shape[1]):
            want = hw_bit_address(f, codes, major, bits, mn, k)
            assert start * 8 + layout(mn, k) * bits == want, (mn, k)


# every canonical form (mode x major x width) with one mid-sized tile, all elements
ADDR = [c for c in ALL if c[4] == tile_shapes(c[2], c[1], c[3])[-1]]


@pytest.mark.parametrize("arch,sw,major,bits,shape", ADDR)
def test_every_element_address_matches_the_isa_reading(arch, sw, major, bits, shape):
    atom_fn = ARCHS[arch][0]
    tile = tile_to_shape(atom_fn(major, sw, bits), shape)
    _check_addresses(arch, tile, major, bits, shape, start=0x4000)


@pytest.mark.parametrize("arch", list(ARCHS))
def test_blocks_cut_out_of_a_tile(arch):
    # an MMA's K blocks cut from a bigger tile: each block gets its own start address
    rng = random.Random(6)
    for sw, major, bits in [("SW128", "K", 16), ("SW64", "MN", 16), ("SW32", "K", 8),
                            ("INTER", "K", 32), ("SW128", "MN", 8)]:  # fmt: skip
        atom = ARCHS[arch][0](major, sw, bits)
        row = ROW_BYTES[sw] * 8 // bits
        kblk = 32 * 8 // bits  # one 32-byte MMA K block
        shape = (128, row if major == "K" and sw != "INTER" else 4 * kblk)
        if major == "MN":
            shape = (2 * row, 4 * kblk)
        tile = tile_to_shape(atom, shape)
        blocks = zipped_divide(tile, (shape[0] // 2, kblk))
        for _ in range(3):
            i = rng.randrange(2)
            j = rng.randrange(shape[1] // kblk)
            blk = blocks((None, None), (i, j))
            _check_addresses(arch, blk, major, bits, (shape[0] // 2, kblk), start=0x8000)
