"""Acceptance 4: layouts that are not canonical raise DescriptorError naming the broken rule."""

import pytest

from cutemma.errors import DescriptorError
from cutemma.layout import ComposedLayout, Layout, Swizzle, tile_to_shape
from cutemma.smem import (
    canonical_layout,
    gmma_layout_atom,
    make_gmma_desc,
    make_umma_desc,
    umma_layout_atom,
)

K128 = gmma_layout_atom("K", "SW128", "bf16")  # Sw<3,3,3> o (8,64):(64,1)
MN128 = gmma_layout_atom("MN", "SW128", "bf16")  # Sw<3,3,3> o (64,8):(1,64)
SW = Swizzle(3, 3, 3)


def sw128(shape, stride):
    return ComposedLayout(SW, 0, Layout(shape, stride))


CASES = [
    # (id, layout, major, dtype, start, rule the message must name)
    ("byte-swizzle-given-as-element", ComposedLayout(Swizzle(3, 4, 3), 0, K128.inner), "K",
     "bf16", 0, r"wrong swizzle base.*byte-address swizzle of SW128.*Sw<3,3,3>"),
    ("swizzle-wrong-shift", ComposedLayout(Swizzle(3, 3, 4), 0, K128.inner), "K", "bf16", 0,
     "not a shared-memory swizzle"),
    ("swizzle-for-other-width", K128, "K", "tf32", 0, "not a shared-memory swizzle for 32-bit"),
    ("K-tile-read-as-MN", K128, "MN", "bf16", 0, "not canonical MN-major.*expected 64 elements at stride 1"),
    ("MN-tile-read-as-K", MN128, "K", "bf16", 0, "not canonical K-major.*8 rows"),
    ("row-stride-off-by-one", sw128((8, 64), (65, 1)), "K", "bf16", 0, "expected 8 elements at stride 64, found 8:65"),
    ("sbo-off-by-one-element", Layout(((8, 2), (8, 2)), ((8, 65), (1, 256))), "K", "bf16", 0,
     "SBO .* not a multiple of 16"),
    ("lbo-off-by-one-element", Layout(((8, 2), (8, 2)), ((8, 64), (1, 129))), "K", "bf16", 0,
     "LBO .* not a multiple of 16"),
    ("four-rows", sw128((4, 64), (64, 1)), "K", "bf16", 0, "8 rows.*extent 4 is not a multiple of 8"),
    ("twelve-rows", Layout((12, 8), (8, 1)), "K", "bf16", 0, "extent 12 is not a multiple of 8"),
    # (32,8):(1,64) (half a row) is valid, as in C++ (tests/cute_cpp/test_desc_vs_cpp.py);
    # a partial row must still be whole 16-byte units
    ("mn-partial-16-byte-unit", sw128((12, 8), (1, 64)), "MN", "bf16", 0,
     "12 contiguous elements.*not a whole number of 16-byte units"),
    ("mn-more-than-a-row", sw128((96, 8), (1, 64)), "MN", "bf16", 0, "row of 64 elements.*found 96:1"),
    ("mn-four-k-rows", sw128((64, 4), (1, 64)), "MN", "bf16", 0, "K mode .8 rows.*found 4:64"),
    ("k-column-not-contiguous", Layout((8, (8, 2)), (8, (2, 64))), "K", "bf16", 0,
     "16-byte column of 8 elements.*found 8:2"),
    ("two-repeats-in-mn", sw128(((8, 2, 2), 64), ((64, 1024, 512), 1)), "K", "bf16", 0,
     "one repeat with one stride"),
    ("k-spans-two-swizzle-rows", tile_to_shape(gmma_layout_atom("K", "SW32", "bf16"), (8, 32)),
     "K", "bf16", 0, "must be contiguous"),
    ("k-longer-than-swizzle-row", canonical_layout("K", "SW32", T=8, m=1, k=2), "K", "bf16", 0,
     "overlap|more than one"),
    ("overlapping-core-matrices", Layout(((8, 2), (8, 2)), ((8, 64), (1, 8))), "K", "bf16", 0,
     "overlap"),
    ("rank-3", Layout((8, 8, 2), (8, 1, 64)), "K", "bf16", 0, "rank 2"),
    ("misaligned-start", K128, "K", "bf16", 0x408, "misaligned: it must be a multiple of 16"),
    ("swizzled-start-off-128", K128, "K", "bf16", 0x410, "misaligned for SW128"),
    ("start-past-window", K128, "K", "bf16", 1 << 18, "past the"),
    ("offset-not-16-bytes", ComposedLayout(SW, 4, K128.inner), "K", "bf16", 0,
     "offset 4 elements .8 bytes. is not a whole number of 16-byte"),
    ("lbo-too-large", Layout((8, (8, 2)), (8, (1, 1 << 17))), "K", "bf16", 0, "14 bits"),
    ("sw128-32b-on-sm90", umma_layout_atom("MN", "SW128_32B", "bf16"), "MN", "bf16", 0,
     "not a shared-memory swizzle"),
    ("6-bit-elements", K128, "K", "e2m3", 0, "8-bit containers"),
    ("not-a-layout", "(8,64):(64,1)", "K", "bf16", 0, "expected a Layout or ComposedLayout"),
    ("outer-not-a-swizzle", ComposedLayout(Layout(8, 2), 0, K128.inner), "K", "bf16", 0,
     "must be Swizzle o offset o Layout"),
    ("bad-major", K128, "row", "bf16", 0, "major 'row' must be 'K' or 'MN'"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_sm90_rejects(case):
    _, layout, major, dtype, start, rule = case
    with pytest.raises(DescriptorError, match=rule):
        make_gmma_desc(layout, major, dtype, start_address=start)


def test_at_least_twenty_rules():
    assert len({c[5] for c in CASES}) >= 20


def test_sm100_32b_atomic_is_mn_only():
    k_major = ComposedLayout(Swizzle(2, 4, 2), 0, Layout((8, 64), (64, 1)))
    with pytest.raises(DescriptorError, match="SW128_32B is MN-major only"):
        make_umma_desc(k_major, "K", "bf16")
    with pytest.raises(DescriptorError, match="no K-major atom"):
        umma_layout_atom("K", "SW128_32B", "bf16")
    with pytest.raises(DescriptorError, match="sm100"):
        gmma_layout_atom("MN", "SW128_32B", "bf16")


def test_unknown_swizzle_and_dtype():
    with pytest.raises(DescriptorError, match="unknown swizzle"):
        gmma_layout_atom("K", "SW256", "bf16")
    with pytest.raises(DescriptorError, match="unknown element type"):
        gmma_layout_atom("K", "SW128", "bf17")
