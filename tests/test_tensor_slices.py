"""Slice assignment and printing of tensors at their edges (issue 33's review of the
newest surfaces): an array shaped like the slice lands element for element, a rank-0
tensor prints, and two designs that compare equal but differ in a field's type are
checked each on its own value."""

from __future__ import annotations

import numpy as np
import pytest

import cutemma as cm
from cutemma.errors import DesignError, LayoutError


@pytest.mark.parametrize("shape", [(2, 3), (4, 1), ((2, 3), 4), (3, (2, 2))])
def test_an_array_shaped_like_the_slice_lands_element_for_element(shape):
    """t[None, None] = a puts a[i, j] at t(i, j), i and j each a mode's colexicographic
    index (numpy's C order would have written a 2 x 3 array transposed)."""
    layout = cm.Layout(shape)
    modes = [int(np.prod(m)) for m in shape]
    a = np.arange(np.prod(modes)).reshape(modes) * 10 + 1
    t = cm.make_tensor(np.zeros(layout.cosize(), dtype=int), layout)
    t[None, None] = a
    for i in range(modes[0]):
        for j in range(modes[1]):
            assert t(i + modes[0] * j) == a[i, j]


def test_a_flat_sequence_still_fills_the_slice_in_colexicographic_order():
    t = cm.make_tensor(np.zeros(6, dtype=int), cm.Layout((2, 3)))
    t[None, None] = [1, 2, 3, 4, 5, 6]
    assert [t(i, j) for j in range(3) for i in range(2)] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("value_shape", [(3, 2), (1, 2, 3), (6, 1)])
def test_an_array_of_another_shape_is_refused(value_shape):
    t = cm.make_tensor(np.zeros(6, dtype=int), cm.Layout((2, 3)))
    with pytest.raises(LayoutError, match=r"modes of \(2, 3\) elements"):
        t[None, None] = np.zeros(value_shape, dtype=int)


def test_a_rank_0_tensor_prints_its_one_element():
    assert str(cm.make_identity_tensor(())).splitlines()[-1].strip() == "()"
    t = cm.make_tensor(np.array([7.0, 8.0]), ())
    assert "7" in str(t).splitlines()[-1]


def test_designs_equal_in_value_but_not_in_type_are_checked_apart():
    from cutemma import kernels

    atom = "SM80_16x8x16_F32F16F16F32_TN"
    with pytest.raises(DesignError, match="whole number"):
        kernels.check(kernels.GemmDesign(atom, (64, 64, 32), stages=3.0))
    assert kernels.check(kernels.GemmDesign(atom, (64, 64, 32), stages=3)).stages == 3


def test_a_padded_identity_tensor_gives_the_coordinates_to_predicate_off():
    """A tile that does not divide an identity tensor is refused (its coordinates would
    wrap into the next column, inside the shape); the identity tensor of the shape rounded
    up to the tile gives CuTe's coordinates past the end, which predication tests."""
    with pytest.raises(LayoutError, match="does not divide"):
        cm.local_tile(cm.make_identity_tensor((8, 8)), (3, 3), (2, 2))
    t = cm.local_tile(cm.make_identity_tensor((9, 9)), (3, 3), (2, 2))
    assert t(2, 0) == (8, 6) and t(0, 2) == (6, 8)
    inside = [t(i, j)[0] < 8 and t(i, j)[1] < 8 for j in range(3) for i in range(3)]
    assert inside == [True, True, False] * 2 + [False] * 3


def test_a_design_tile_of_numpy_integers_is_the_same_design():
    from cutemma import kernels

    atom = "SM80_16x8x16_F32F16F16F32_TN"
    d = kernels.GemmDesign(atom, (np.int64(64), np.int32(64), 32))
    assert d == kernels.GemmDesign(atom, (64, 64, 32))
    assert all(type(x) is int for x in d.tile) and kernels.check(d).tile == (64, 64, 32)
