"""TMA atoms sized from a shared-memory layout through cutemma.copy.tma (the hopper helper's module)."""

from __future__ import annotations

import pytest

from cutemma.copy.tma_atoms import make_tma_atom, tma_instructions

tma = pytest.importorskip("cutemma.copy.tma")


@pytest.mark.parametrize(
    "major, shape, order, dtype, box, copies",
    [
        ("K", (128, 64), None, "bf16", (64, 128), 1),
        ("MN", (128, 64), (1, 0), "bf16", (64, 64), 2),
        ("K", (64, 128), None, "e4m3", (128, 64), 1),
    ],
)
def test_tma_atom_bits_are_one_box(major, shape, order, dtype, box, copies):
    from cutemma.layout import tile_to_shape
    from cutemma.smem import gmma_layout_atom

    smem = tile_to_shape(gmma_layout_atom(major, "SW128", dtype), shape, order)
    atom, b = make_tma_atom("LOAD", smem, dtype, major)
    bits = {"bf16": 16, "e4m3": 8}[dtype]
    # one instruction moves one box: box elements x element bits (CuTe's NumBitsPerTMA)
    assert b.box == box
    assert atom.name == f"SM90_TMA_LOAD<{box[0] * box[1] * bits}>"
    assert atom.num_val_src == box[0] * box[1]
    assert tma_instructions(atom, b) == copies
