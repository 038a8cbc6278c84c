"""TMA emulation (cutemma.emulate.tma) against a per-element model written from the docs.

The model: PTX ISA 9.7.9.25.5.1 (tiled mode: the box lands dense, innermost dimension
fastest; out-of-bound elements of a load are zero when the map's OOB fill is NONE; stores
and reductions write only in-bound elements) and the CUDA C++ Programming Guide's TMA swizzle
table (the 16-byte chunk index within a 128-byte row, address bits [4,7), is XORed with the
row index bits [7,10), masked to 3 bits for 128B, 2 for 64B, 1 for 32B).
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from cutemma.copy.tma import TmaBox, tensor_map_args, tma_box
from cutemma.emulate.tma import bulk_copy, tma_load, tma_reduce_add, tma_store
from cutemma.errors import TmaError

CHUNK_MASK = {"INTER": 0, "SW32": 1, "SW64": 3, "SW128": 7}
NP = {"bf16": np.uint16, "f32": np.float32, "u8": np.uint8}
EB = {"bf16": 2, "f32": 4, "u8": 1}


def model_swizzle(byte: int, mode: str) -> int:
    chunk, row = (byte >> 4) & 7, (byte >> 7) & 7
    return (byte & ~(7 << 4)) | ((chunk ^ (row & CHUNK_MASK[mode])) << 4)


def model_elements(box, dims, coords, mode, eb):
    """Yield (shared element index, global coordinate tuple or None) for every box element."""
    for rev in itertools.product(*[range(b) for b in reversed(box)]):
        i = tuple(reversed(rev))
        dense = 0
        for d in reversed(range(len(box))):
            dense = dense * box[d] + i[d]
        g = tuple(c + x for c, x in zip(coords, i))
        inside = all(0 <= g[d] < dims[d] for d in range(len(dims)))
        yield model_swizzle(dense * eb, mode) // eb, (g if inside else None)


def gflat(g, strides):
    return g[0] + sum(g[d] * strides[d - 1] for d in range(1, len(g)))


CASES = [
    # dtype, swizzle, box, dims, row strides (elements), coords
    ("bf16", "SW128", (64, 8), (100, 20), (104,), (0, 0)),
    ("bf16", "SW128", (64, 8), (100, 20), (104,), (64, 16)),
    ("bf16", "SW64", (32, 8), (40, 9), (48,), (-8, -3)),
    ("bf16", "SW32", (16, 8), (16, 8), (16,), (3, 1)),
    ("f32", "SW128", (32, 4, 2), (50, 6, 3), (56, 56 * 6), (20, 3, 2)),
    ("u8", "INTER", (48, 3), (50, 5), (64,), (16, 4)),
]


def _setup(dtype, mode, box, dims, strides):
    args = tensor_map_args(TmaBox(dtype, "K", box[:2], mode, ((0, 0, 0),)), 0, dims, strides)
    args = dataclasses.replace(args, box_dim=box)
    n_g = gflat(tuple(d - 1 for d in dims), strides) + 1
    rng = np.random.default_rng(1)
    return args, rng, rng.integers(1, 50, n_g).astype(NP[dtype])


@pytest.mark.parametrize("dtype, mode, box, dims, strides, coords", CASES)
def test_load_equals_the_model(dtype, mode, box, dims, strides, coords):
    args, _, g = _setup(dtype, mode, box, dims, strides)
    want = np.zeros(int(np.prod(box)), dtype=g.dtype)  # zeros outside, swizzled positions
    for s, gc in model_elements(box, dims, coords, mode, EB[dtype]):
        want[s] = 0 if gc is None else g[gflat(gc, strides)]
    assert np.array_equal(tma_load(args, g, coords), want)


STORE_CASES = [
    ("bf16", "SW128", (64, 8), (96, 20), (104,), (64, 16)),
    ("bf16", "SW64", (32, 8), (40, 9), (48,), (16, 4)),
    ("f32", "SW128", (32, 4, 2), (52, 6, 3), (56, 56 * 6), (20, 3, 2)),
    ("u8", "INTER", (48, 3), (48, 5), (64,), (16, 4)),
    ("u8", "INTER", (48, 3), (50, 5), (64,), (0, 4)),  # crosses dim 1 only
]


@pytest.mark.parametrize("dtype, mode, box, dims, strides, coords", STORE_CASES)
def test_store_and_reduce_equal_the_model(dtype, mode, box, dims, strides, coords):
    args, rng, g = _setup(dtype, mode, box, dims, strides)
    smem = rng.integers(50, 100, int(np.prod(box))).astype(g.dtype)
    for add in (False, True):  # in-bound elements only; the rest of global memory untouched
        got, ref = g.copy(), g.copy()
        (tma_reduce_add if add else tma_store)(args, smem, got, coords)
        for s, gc in model_elements(box, dims, coords, mode, EB[dtype]):
            if gc is not None:
                ref[gflat(gc, strides)] = smem[s] + (ref[gflat(gc, strides)] if add else 0)
        assert np.array_equal(got, ref)


def test_stores_the_h100_does_otherwise_are_refused():
    args, _, g = _setup("u8", "INTER", (48, 3), (50, 5), (64,))
    with pytest.raises(TmaError, match="negative coordinate trapped"):
        tma_store(args, np.zeros(144, np.uint8), g, (-16, 0))
    with pytest.raises(TmaError, match="wrote past the edge"):
        tma_reduce_add(args, np.zeros(144, np.uint8), g, (16, 0))


@pytest.mark.parametrize(
    "major, mode, dtype, shape",
    [
        ("K", "SW128", "bf16", (128, 64)),
        ("K", "SW64", "bf16", (64, 32)),
        ("K", "SW32", "f32", (64, 8)),
        ("MN", "SW128", "bf16", (128, 64)),
        ("K", "SW128", "e4m3", (64, 128)),
    ],
)
def test_tma_fills_the_smem_layout_it_was_sized_for(major, mode, dtype, shape):
    """Each box of tma_box(smem) loaded by the emulation puts tile element (mn, k) at
    smem(mn, k): the host-side box derivation and the copy model agree."""
    from cutemma.layout import tile_to_shape
    from cutemma.smem import gmma_layout_atom

    order = (1, 0) if major == "MN" else None
    smem = tile_to_shape(gmma_layout_atom(major, mode, dtype), shape, order)
    box = tma_box(smem, dtype, major)
    mn, k = shape
    # the global tile: element (mn, k) holds a distinct value; contiguous along `major`
    dims, ld = ((k, mn), k) if major == "K" else ((mn, k), mn)
    g = np.arange(mn * k, dtype=np.uint32).astype(np.uint32)
    args = tensor_map_args(box, 0, dims, (ld,))
    tile = np.zeros(mn * k, dtype=np.uint32)
    for c0, c1, start in box.copies:
        part = tma_load(args, g, (c0, c1))
        tile[start : start + part.size] = part
    for m in range(0, mn, 7):
        for kk in range(0, k, 3):
            gi = kk + m * ld if major == "K" else m + kk * ld
            assert tile[smem(m, kk)] == g[gi]


def test_bulk_copy_and_bad_inputs():
    s = np.arange(64, dtype=np.uint8)
    d = np.zeros(64, dtype=np.uint8)
    bulk_copy(s, d, 32, 16, 32)
    assert d[16:48].tolist() == list(range(32, 64)) and d[:16].sum() == 0
    with pytest.raises(TmaError, match="multiple of 16"):
        bulk_copy(s, d, 0, 0, 24)
    args = tensor_map_args(TmaBox("f32", "K", (4, 1), "INTER", ((0, 0, 0),)), 0, (4, 2), (4,))
    with pytest.raises(TmaError, match="3 coordinates"):
        tma_load(args, np.zeros(8, dtype=np.float32), (0, 0, 0))
