"""2:4 structured sparsity of wgmma.mma_async.sp: packing, metadata, emulation (cutemma.mma.sparse)."""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.errors import AtomError
from cutemma.layout import Layout
from cutemma.mma import make_mma_atom, mma_op
from cutemma.mma.arch.sm90_gmma import rs_a_layout
from cutemma.mma.sparse import (
    FORMATS,
    check_pattern,
    compress,
    compressed_tv_layout,
    contributors,
    decode_metadata,
    decompress,
    metadata_words,
    random_pattern,
    sparse_operands,
)
from cutemma.mma.traits import tv_table

FMTS = sorted(FORMATS)
# one atom per format (RS, so the packed register layout is exercised too)
ATOMS = {
    "f16": "SM90_SPARSE_64x16x32_F32BF16BF16_RS",
    "tf32": "SM90_SPARSE_64x8x16_F32TF32TF32_RS_TN",
    "8bit": "SM90_SPARSE_64x24x64_F16E4M3E5M2_RS_TN",
}


def _sparse_a(fmt, rng, fewer=True):
    A = random_pattern(rng.integers(-8, 9, (64, fmt.k)).astype(np.float64), fmt, rng)
    if fewer:  # some chunks with fewer nonzeros than kept, some all zero
        A[::3, : fmt.chunk] = 0
        A[1::5, fmt.chunk : 2 * fmt.chunk] = 0
    return A


@pytest.mark.parametrize("name", FMTS)
def test_compress_round_trip(name):
    fmt, rng = FORMATS[name], np.random.default_rng(1)
    A = _sparse_a(fmt, rng)
    values, index = compress(A, fmt)
    assert values.shape == (64, fmt.k // 2)
    assert index.shape == (64, fmt.k // fmt.chunk, fmt.keep)
    assert (np.diff(index, axis=-1) > 0).all()  # rising, never the same index twice
    assert (decompress(values, index, fmt) == A).all()


@pytest.mark.parametrize("name", FMTS)
def test_metadata_round_trip_for_every_selector(name):
    fmt, rng = FORMATS[name], np.random.default_rng(2)
    _, index = compress(_sparse_a(fmt, rng), fmt)
    words = metadata_words(index, fmt)
    assert words.shape == (128,) and words.dtype == np.uint32
    for sel in fmt.selectors:
        assert (decode_metadata(words, fmt, sel) == index).all()


@pytest.mark.parametrize("name", FMTS)
def test_contributors_cover_each_chunk_once(name):
    # Each (row, chunk) of the 64xK tile gets its nibble from exactly one selected thread.
    fmt = FORMATS[name]
    table = tv_table(fmt.meta)
    for sel in fmt.selectors:
        seen = np.zeros((64, fmt.k // fmt.chunk), int)
        for t in contributors(fmt, sel):
            for v in range(0, table.shape[1], fmt.chunk):
                seen[table[t, v] % 64, table[t, v] // 64 // fmt.chunk] += 1
        assert (seen == 1).all()


def test_metadata_codes_are_the_isa_values():
    # PTX ISA 9.7.15.6.1 / 9.7.15.6.3: no index twice (0b0000, 0b0101, 0b1010, 0b1111 are
    # invalid); tf32 takes only 0b0100 and 0b1110.
    f16 = FORMATS["f16"]
    codes = {f16.code((a, b)) for a in range(4) for b in range(a + 1, 4)}
    assert codes.isdisjoint({0b0000, 0b0101, 0b1010, 0b1111}) and len(codes) == 6
    assert {FORMATS["tf32"].code((p,)) for p in (0, 1)} == {0b0100, 0b1110}
    # f16, thread 0: row 0 K 0..15 in bits 0-15, row 8 in bits 16-31; thread 1 the next K.
    index = np.tile([0, 1], (64, 8, 1))
    index[0, 0], index[8, 1], index[0, 4] = (2, 3), (0, 3), (1, 2)
    words = metadata_words(index, f16)
    assert hex(int(words[0])) == "0x44c4444e" and hex(int(words[1])) == "0x44444449"


def test_metadata_layouts_are_cutes_elayouts():
    # cute/atom/mma_traits_sm90_gmma_sparse.hpp: GMMA::ELayout_64x32, _64x16, _64x64.
    assert str(FORMATS["f16"].meta) == "((2,2,8,4),(16,2)):((1024,0,1,16),(64,8))"
    assert str(FORMATS["tf32"].meta) == "((2,2,8,4),(8,2)):((512,0,1,16),(64,8))"
    assert str(FORMATS["8bit"].meta) == "((2,2,8,4),32):((8,2048,1,16),64)"


@pytest.mark.parametrize("name", FMTS)
def test_packed_register_layout_is_the_dense_half_k_fragment(name):
    # PTX ISA 9.7.15.6.2: the sparse A registers hold the kept values as the dense fragment
    # of K/2 does (f16: four .b32 of 2 out of 4 consecutive; 8-bit: 4 out of 8).
    fmt = FORMATS[name]
    packed = compressed_tv_layout(rs_a_layout(fmt.k), fmt)
    assert np.array_equal(tv_table(packed), tv_table(rs_a_layout(fmt.k // 2)))
    atom = make_mma_atom(ATOMS[name])
    assert np.array_equal(tv_table(compressed_tv_layout(atom.tv_layout_A, fmt)),
                          tv_table(rs_a_layout(fmt.k // 2)))  # fmt: skip


def test_packed_layout_refuses_a_layout_not_along_k():
    with pytest.raises(AtomError, match="first value mode must run along K"):
        compressed_tv_layout(Layout.parse("((4,8,4),(2,4,2)):((256,1,16),(8,64,1024))"),
                             FORMATS["f16"])  # fmt: skip


@pytest.mark.parametrize("name", FMTS)
def test_pattern_violation_is_an_atom_error(name):
    fmt = FORMATS[name]
    A = np.zeros((64, fmt.k))
    A[5, fmt.chunk : fmt.chunk + fmt.keep + 1] = 1  # one too many in row 5, chunk 1
    with pytest.raises(AtomError, match=rf"{fmt.ratio} pattern at row 5, K {fmt.chunk}\.\."):
        check_pattern(A, fmt)
    atom = make_mma_atom(ATOMS[name])
    m, n, k = atom.shape_mnk
    with pytest.raises(AtomError, match=atom.name):
        atom.emulate_tiles(A, np.zeros((n, k)), np.zeros((m, n)))


@pytest.mark.parametrize("name", FMTS)
def test_emulate_sparse_equals_the_dense_product(name):
    atom = make_mma_atom(ATOMS[name])
    fmt, rng = atom.sparsity, np.random.default_rng(3)
    m, n, k = atom.shape_mnk
    A = atom.val_type_A.quantize(_sparse_a(fmt, rng) / 4)
    B = atom.val_type_B.quantize(rng.integers(-8, 9, (n, k)) / 4)
    C = atom.val_type_C.quantize(rng.integers(-8, 9, (m, n)) / 2)
    want = atom.val_type_D.quantize(A @ B.T + C)  # small integers / 4: exact
    assert (atom.emulate_tiles(A, B, C) == want).all()
    frag = atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C))
    assert (atom.tile_C(frag) == want).all()


def test_emulate_sparse_s8_equals_two_dense_halves():
    sparse = make_mma_atom("SM90_SPARSE_64x16x64_S32S8S8_SS_TN")
    dense = make_mma_atom("SM90_64x16x32_S32S8S8_SS_TN")
    rng = np.random.default_rng(4)
    A = random_pattern(rng.integers(-128, 128, (64, 64)), sparse.sparsity, rng)
    B, C = rng.integers(-128, 128, (16, 64)), rng.integers(-(2**20), 2**20, (64, 16))
    half = dense.emulate_tiles(A[:, :32], B[:, :32], C)
    assert (sparse.emulate_tiles(A, B, C) == dense.emulate_tiles(A[:, 32:], B[:, 32:], half)).all()


def test_sparse_operands_pack_a_and_words():
    atom = make_mma_atom("SM90_SPARSE_64x8x32_F16F16F16_SS")
    A = _sparse_a(atom.sparsity, np.random.default_rng(5))
    packed, words = sparse_operands(atom, A)
    values, index = compress(A, atom.sparsity)
    assert (packed == values).all() and (words == metadata_words(index, atom.sparsity)).all()
    with pytest.raises(AtomError, match="not a sparse GMMA atom"):
        sparse_operands(make_mma_atom("SM90_64x8x16_F16F16F16_SS"), A)


def test_selector_rules():
    # PTX ISA 9.7.15.6.3: sp-sel 0 or 1 for f16/bf16/tf32, only 0 for the 8-bit types.
    assert mma_op("SM90_SPARSE_64x8x16_F32TF32TF32_SS_TN", sp_sel=1).param("sp_sel") == 1
    with pytest.raises(AtomError, match="sparsity selector of e4m3 sparse GMMA is 0"):
        mma_op("SM90_SPARSE_64x8x64_F32E4M3E4M3_SS_TN", sp_sel=1)
    with pytest.raises(AtomError, match="0 or 1"):
        mma_op("SM90_SPARSE_64x8x32_F16F16F16_SS", sp_sel=2)


@pytest.mark.parametrize("name", FMTS)
def test_random_pattern_keeps_at_most_keep(name):
    fmt = FORMATS[name]
    A = random_pattern(np.ones((3, 64, fmt.k)), fmt, np.random.default_rng(6))
    assert (A.reshape(3, 64, -1, fmt.chunk).sum(axis=-1) == fmt.keep).all()
