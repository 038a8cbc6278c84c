"""Acceptance 1: every worked example of seed 001 (PTX ISA 9.7.16.3.3, Figures 188-192).

Expected values are typed in from the seed's tables, not computed by cutemma.
"""

import pytest

from cutemma.errors import DescriptorError
from cutemma.layout import ComposedLayout, Layout, Swizzle
from cutemma.smem import canonical_layout, make_umma_desc, match_canonical, swizzle_mode

# (figure, major, swizzle, dtype, exact layout (shape, stride), byte swizzle B, T, m, k,
#  LBO in elements or None, SBO in elements, LBO encoding, SBO encoding)
EXAMPLES = [
    ("188", "K", "INTER", "tf32", (((8, 2), (4, 4)), ((4, 32), (1, 64))), 0, 4, 2, 2, 64, 32, 16, 8),
    ("189", "K", "SW32", "tf32", (((8, 2), (4, 4)), ((8, 64), (1, 4))), 1, 4, 2, 2, None, 64, 1, 16),
    ("190", "MN", "INTER", "bf16", (((8, 1, 2), (8, 2)), ((1, 8, 64), (8, 128))), 0, 8, 2, 2, 128, 64, 16, 8),
    ("191", "MN", "SW32", "bf16", (((8, 2, 2), (8, 2)), ((1, 8, 128), (16, 256))), 1, 8, 2, 2, 128, 256, 16, 32),
    ("192", "MN", "SW64", "bf16", (((8, 4, 2), (8, 2)), ((1, 8, 256), (32, 512))), 2, 8, 2, 2, 256, 512, 32, 64),
]  # fmt: skip
BYTES = {"tf32": 4, "bf16": 2}


@pytest.mark.parametrize("ex", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_exact_layout_comes_out_of_the_table(ex):
    fig, major, sw, dtype, (shape, stride), b, T, m, k, lbo, sbo, _, _ = ex
    got = canonical_layout(major, sw, T=T, m=m, k=k, lbo=lbo or 0, sbo=sbo)
    assert got.inner == Layout(shape, stride)
    # the seed prints the byte-address swizzle Swizzle<B,4,3>
    assert swizzle_mode(sw).byte_swizzle() == Swizzle(b, 4, 3)


@pytest.mark.parametrize("ex", EXAMPLES, ids=[e[0] for e in EXAMPLES])
@pytest.mark.parametrize("units", ["element", "byte"])
def test_exact_layout_is_recognised(ex, units):
    fig, major, sw, dtype, (shape, stride), b, T, m, k, lbo, sbo, _, _ = ex
    bits = BYTES[dtype] * 8
    # element units: Swizzle<B, log2(T), 3>; byte units: the seed's Swizzle<B, 4, 3>
    swz = Swizzle(b, T.bit_length() - 1, 3) if units == "element" else Swizzle(b, 4, 3)
    form = match_canonical(ComposedLayout(swz, 0, Layout(shape, stride)), bits, swizzle_units=units)
    assert (form.major, form.swizzle, form.T, form.m, form.k) == (major, sw, T, m, k)
    assert (form.lbo, form.sbo) == (lbo, sbo)


@pytest.mark.parametrize("ex", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_encodings(ex):
    fig, major, sw, dtype, (shape, stride), b, T, m, k, lbo, sbo, lbo_enc, sbo_enc = ex
    assert sbo * BYTES[dtype] >> 4 == sbo_enc  # the seed's arithmetic, checked once
    layout = canonical_layout(major, sw, T=T, m=m, k=k, lbo=lbo or 0, sbo=sbo)
    if fig == "189":
        # K extent 16 tf32 = 64 bytes in one 32-byte swizzle row: the table's exact layout
        # overlaps itself (row 1 starts at element 8), so no descriptor describes it.
        with pytest.raises(DescriptorError, match="overlap|more than one"):
            make_umma_desc(layout, major, dtype)
        return
    d = make_umma_desc(layout, major, dtype)
    assert (d.leading_byte_offset, d.stride_byte_offset) == (lbo_enc, sbo_enc)


def test_k_major_sw32_encoding_from_a_non_overlapping_block():
    # Figure 189's parameters with one K row (2 columns of 16 bytes): SBO 64 tf32 -> 16
    d = make_umma_desc(canonical_layout("K", "SW32", T=4, m=2, k=1, sbo=64), "K", "tf32")
    assert (d.leading_byte_offset, d.stride_byte_offset, d.layout_type) == (1, 16, 6)
