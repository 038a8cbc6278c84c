"""Shared-memory descriptors against CuTe C++: make_gmma_desc / make_umma_desc, bit by bit.

For every canonical layout atom (CuTe's ``GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>``
and UMMA's, with ``Layout_MN_SW128_32B_Atom``), several element types and a few tiles built
with ``tile_to_shape``, the suite compares the 64-bit descriptor C++ builds with cutemma's,
and the atom C++ prints (parsed, its byte-address swizzle turned into element units) with
cutemma's atom. C++ builds descriptors on the host where ``cast_smem_ptr_to_uint`` is 0, so
the start-address bits are compared with the block's byte offset computed here instead.
"""

from __future__ import annotations

from functools import cache

import pytest

from cute_cpp import harness
from cutemma.emit.cpp_types import cpp_value_type
from cutemma.emit.smem_names import smem_layout_expr
from cutemma.layout import ComposedLayout, Layout, Swizzle, tile_to_shape
from cutemma.layout.algebra import zipped_divide
from cutemma.layout.layout import slice_and_offset
from cutemma.layout.notation import parse_layout
from cutemma.smem import gmma_desc, umma_desc, umma_layout_atom
from cutemma.smem.swizzle_atoms import element_bits, swizzle_mode

pytestmark = pytest.mark.skipif(
    harness.unavailable_reason() is not None, reason=str(harness.unavailable_reason())
)

START_MASK = (1 << 14) - 1  # start address field, bits 0-13 (both descriptors)
GMMA_SWIZZLES = ("INTER", "SW32", "SW64", "SW128")
UMMA_SWIZZLES = (*GMMA_SWIZZLES, "SW128_32B")


def _blocks(major: str, swizzle: str, dtype: str) -> list[tuple[tuple[int, int], int, int]]:
    """((MN, K) of the tile_to_shape target, K of one block, block index along K) cases.

    One descriptor covers one instruction's K: 32 bytes of K (CuTe's make_gmma_desc asserts
    K = 256 / bits for MN-major, 2 x 16 bytes for K-major)."""
    mode = swizzle_mode(swizzle)
    bits = element_bits(dtype)
    k_inst = 256 // bits
    if major == "MN":
        row = mode.row_bytes * 8 // bits
        return [((row, k_inst), k_inst, 0), ((4 * row, k_inst), k_inst, 0)]
    k_full = max(mode.row_bytes * 8 // bits, k_inst)
    last = k_full // k_inst - 1
    return [((8, k_full), k_inst, 0), ((64, k_full), k_inst, last), ((128, k_full), k_inst, 0)]


def all_cases() -> dict[str, tuple]:
    """key -> (sm, major, swizzle, dtype, tile, k_block, kb); plus the issue-11 fp8 block."""
    out = {}
    for sm, swizzles in (("sm90", GMMA_SWIZZLES), ("sm100", UMMA_SWIZZLES)):
        for swizzle in swizzles:
            for major in swizzle_mode(swizzle).majors:
                for dtype in ("f16", "tf32", "e4m3", "s8", "bf16"):
                    for tile, kblk, kb in _blocks(major, swizzle, dtype):
                        key = f"{sm}/{major}/{swizzle}/{dtype}/{tile[0]}x{tile[1]}/k{kb}"
                        out[key] = (sm, major, swizzle, dtype, tile, kblk, kb)
    return out


def _cpp_atom(sm: str, major: str, swizzle: str, dtype: str) -> str:
    """CuTe's name of the atom (to_cpp's: GMMA:: and UMMA:: name the same sm90 atoms)."""
    return smem_layout_expr(umma_layout_atom(major, swizzle, dtype), dtype)


def _cpp_case(key: str, case: tuple) -> str:
    sm, major, swizzle, dtype, (mn, kf), kblk, kb = case
    ns, fn = ("SM90::GMMA", "make_gmma_desc") if sm == "sm90" else ("UMMA", "make_umma_desc")
    return "\n".join(
        [
            f"using T = {cpp_value_type(dtype)};",
            f"auto atom = {_cpp_atom(sm, major, swizzle, dtype)};",
            f'CASE("{key}|atom", atom);',
            f"auto sl = tile_to_shape(atom, make_shape(Int<{mn}>{{}}, Int<{kf}>{{}}));",
            "auto t = make_tensor(make_smem_ptr((T*)nullptr), sl);",
            f"auto blk = local_tile(t, make_shape(Int<{mn}>{{}}, Int<{kblk}>{{}}), "
            f"make_coord(0, {kb}));",
            f"auto d = {ns}::{fn}<{ns}::Major::{major}>(blk);",
            f'printf("{key}|desc\\t%llu\\n", (unsigned long long)d.desc_);',
        ]
    )


# issue 11 item 14: MN-major SW128 blocks narrower than a swizzle row (key -> dtype, MN, K,
# K stride in elements); C++ pads the MN mode to the row
PARTIAL_ROWS = {
    "sm90/MN/SW128/e4m3/(64,32):(1,128)": ("e4m3", 64, 32, 128),
    "sm90/MN/SW128/bf16/(32,16):(1,64)": ("bf16", 32, 16, 64),
    "sm90/MN/SW64/f16/(16,16):(1,32)": ("f16", 16, 16, 32),
}
HALF_ROW = "sm90/MN/SW128/e4m3/(64,32):(1,128)"


def _partial_row_cpp(key: str) -> str:
    dtype, mn, k, row = PARTIAL_ROWS[key]
    bits = element_bits(dtype)
    sw = swizzle_mode(key.split("/")[2]).byte_swizzle()
    return f"""
auto L = composition(Swizzle<{sw.bits},{sw.base},{sw.shift}>{{}}, smem_ptr_flag_bits<{bits}>{{}},
                     make_layout(make_shape(Int<{mn}>{{}},Int<{k}>{{}}), make_stride(Int<1>{{}},Int<{row}>{{}})));
auto d = SM90::GMMA::make_gmma_desc<SM90::GMMA::Major::MN>(make_tensor(make_smem_ptr(({cpp_value_type(dtype)}*)nullptr), L));
printf("{key}|desc\\t%llu\\n", (unsigned long long)d.desc_);
"""


@cache
def _cpp_results_or_error():
    src = {k: _cpp_case(k, c) for k, c in all_cases().items()}
    src.update({k: _partial_row_cpp(k) for k in PARTIAL_ROWS})
    try:
        return harness.run_cases(
            src, headers=("cute/atom/mma_traits_sm100.hpp",), per_program=110
        ), None
    except harness.CompileFailed as e:  # kept, so one failed build is not retried per test
        return None, e.errors


def cpp_prefetch() -> None:
    """The C++ this file's tests compile, for tests/cute_cpp/prefetch.py (same calls, cached)."""
    _cpp_results_or_error()


def cpp_results() -> dict[str, str]:
    got, err = _cpp_results_or_error()
    if err is not None:  # an empty message is still a failure
        pytest.fail(f"the C++ cases did not compile:\n{err}")
    return got


def _atom(sm: str, major: str, swizzle: str, dtype: str):
    make = gmma_desc.gmma_layout_atom if sm == "sm90" else umma_desc.umma_layout_atom
    return make(major, swizzle, dtype)


def _block(case: tuple) -> ComposedLayout:
    """The (MN, k_block) block at K-block kb of tile_to_shape(atom, tile), as cutemma users
    cut it: zipped_divide the tile and take one block, keeping its offset."""
    sm, major, swizzle, dtype, tile, kblk, kb = case
    full = tile_to_shape(_atom(sm, major, swizzle, dtype), tile)
    if isinstance(full, Layout):  # an INTER atom: CuTe drops the identity swizzle at offset 0
        full = ComposedLayout(Swizzle(0, 4, 3), 0, full)
    blocks = zipped_divide(full.inner, (Layout(tile[0]), Layout(kblk)))
    inner, off = slice_and_offset(((None, None), (0, kb)), blocks)
    return ComposedLayout(full.outer, full.offset + off, inner)


def _desc(case: tuple, layout) -> int:
    sm, major, _, dtype = case[:4]
    make = gmma_desc.make_gmma_desc if sm == "sm90" else umma_desc.make_umma_desc
    return make(layout, major, dtype).raw


CASE_KEYS = sorted(all_cases()) if harness.unavailable_reason() is None else []


@pytest.mark.parametrize("key", CASE_KEYS)
def test_descriptor_matches_cpp(key):
    case = all_cases()[key]
    got = cpp_results()
    sm, major, swizzle, dtype, tile, kblk, kb = case
    assert parse_layout(got[f"{key}|atom"]) == _atom(sm, major, swizzle, dtype), got[f"{key}|atom"]
    block = _block(case)
    mine, want = _desc(case, block), int(got[f"{key}|desc"])
    assert mine & ~START_MASK == want & ~START_MASK, f"cutemma {mine:#018x}, C++ {want:#018x}"
    # the start address is the block's first byte: kb blocks of k_block elements along K
    # (K-major: contiguous bytes of one row; MN-major has one block here)
    assert mine & START_MASK == kb * kblk * element_bits(dtype) // 8 // 16


@pytest.mark.parametrize("key", sorted(PARTIAL_ROWS))
def test_partial_swizzle_row_block_matches_cpp(key):
    dtype, mn, k, row = PARTIAL_ROWS[key]
    sw = swizzle_mode(key.split("/")[2]).element_swizzle(dtype)
    block = ComposedLayout(sw, 0, Layout((mn, k), (1, row)))
    d = gmma_desc.make_gmma_desc(block, "MN", dtype)
    assert d.raw == int(cpp_results()[f"{key}|desc"]), f"{d.raw:#018x}"


def test_half_row_fp8_block_fields():
    # issue 11 item 14: SBO 64 (1024 bytes: 8 rows of 128 bytes), LBO 0 (no MN repeat), B128
    dtype, mn, k, row = PARTIAL_ROWS[HALF_ROW]
    block = ComposedLayout(swizzle_mode("SW128").byte_swizzle(), 0, Layout((mn, k), (1, row)))
    d = gmma_desc.make_gmma_desc(block, "MN", dtype)
    assert (d.stride_byte_offset, d.leading_byte_offset, d.swizzle_mode().name) == (64, 0, "SW128")
