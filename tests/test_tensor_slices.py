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


def test_a_tile_past_the_end_of_an_identity_tensor_holds_coordinates_past_it():
    """A tile that does not divide an identity tensor runs past its end, and its coordinates
    go on counting along their own mode, as CuTe's basis strides do (the coordinates a
    predicated kernel tests against the shape); a linear decode of the offset would have
    wrapped row 8 of an 8 x 8 tensor into (0, 1), inside the shape. C++ witnesses the same
    coordinates in tests/cute_cpp/test_identity_tiles_vs_cpp.py."""
    t = cm.local_tile(cm.make_identity_tensor((8, 8)), (3, 3), (2, 2))
    assert [t(i, 0) for i in range(3)] == [(6, 6), (7, 6), (8, 6)]
    assert t(0, 2) == (6, 8) and t(2, 2) == (8, 8)
    inside = [t(i, j)[0] < 8 and t(i, j)[1] < 8 for j in range(3) for i in range(3)]
    assert inside == [True, True, False] * 2 + [False] * 3
    # the identity tensor of the shape rounded up to the tile gives the same coordinates
    padded = cm.local_tile(cm.make_identity_tensor((9, 9)), (3, 3), (2, 2))
    assert padded.tolist() == t.tolist()


def test_an_identity_view_prints_its_coordinate_steps():
    """The header shows CuTe's basis strides and the tile's origin past the end, not the
    packed integers the coordinates are kept in."""
    t = cm.local_tile(cm.make_identity_tensor((10, 8)), (4, 4), (2, 1))
    assert str(t).splitlines()[0] == "ArithTuple(8,4) o (4,4):(1@0,1@1):"
    assert str(t).splitlines()[-1].split() == ["(11,4)", "(11,5)", "(11,6)", "(11,7)"]


@pytest.mark.parametrize(
    "shape", [(4, 3), (3, (2, 3)), ((2, 2), 4), (5, 3, 4), (2, 2, 2, 2, 2, 2, 2, 2), 7, (7,)]
)
def test_an_identity_tensor_holds_each_coordinate_once(shape):
    """Every coordinate of the shape, in colexicographic order, nested like the shape (a
    rank-1 identity counts with plain ints), as before the coordinates were packed."""
    from cutemma.layout.int_tuple import idx2crd, product

    t = cm.make_identity_tensor(shape)
    assert t.tolist() == [idx2crd(i, shape) for i in range(product(shape))]


def test_coordinates_decode_with_their_sign():
    """Balanced digits: a step back along one mode is not a borrow from the next."""
    from cutemma.tensor import CoordinateEngine

    e = CoordinateEngine((4, (2, 3)))
    w0, (w1, w2) = 1, e.strides[1]
    assert e.strides[0] == w0
    assert e[-1] == (-1, (0, 0)) and e[w2 - 1] == (-1, (0, 1)) and e[-w1 + 3 * w2] == (0, (-1, 3))
    assert e[5 * w0 + 7 * w1 - 2 * w2] == (5, (7, -2))


def test_a_view_whose_coordinates_outgrow_their_digit_is_refused():
    """Past half a leaf's digit a coordinate would decode into the next leaf: refused, with
    the bound, rather than answered wrongly."""
    from cutemma.tensor import CoordinateEngine, composition_tensor

    ident = cm.make_identity_tensor((8, 8))
    half = 1 << (CoordinateEngine((8, 8)).bits[0] - 1)
    ok = composition_tensor(ident, (cm.Layout(2, half - 1), None))
    assert ok(1, 3) == (half - 1, 3)
    with pytest.raises(LayoutError, match=f"reaches coordinate {half} .* below {half}"):
        composition_tensor(ident, (cm.Layout(2, half), None))
    # the last leaf is the top digit: it has no bound
    far = composition_tensor(ident, (None, cm.Layout(2, 1 << 40)))
    assert far(0, 1) == (0, 1 << 40)


def test_padded_partitions_of_data_are_still_refused():
    """A partition that pads a tensor of data would read the next column's elements past the
    end (CuTe does, and predicates them off with the identity tensor's partition): refused
    for data, allowed for identity tensors (tests/cute_cpp/test_identity_tiles_vs_cpp.py)."""
    from cutemma.copy import make_copy_atom
    from cutemma.errors import CopyError, TiledMmaError

    thr = cm.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN").get_slice(5)
    with pytest.raises(TiledMmaError, match="extent 20, not a multiple .* M=16"):
        thr.partition_C(cm.make_tensor(np.zeros(240), (20, 12)))
    assert thr.partition_C(cm.make_identity_tensor((20, 12))).shape == ((2, 2), 2, 2)
    assert thr.partition_fragment_C(cm.make_identity_tensor((20, 12))).shape == ((2, 2), 2, 2)
    tc = cm.make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "f32"), cm.Layout((8, 4)),
                            cm.Layout((1, 2)))  # fmt: skip
    with pytest.raises(CopyError, match="extent 13, not a multiple"):
        tc.get_slice(0).partition_S(cm.make_tensor(np.zeros(130), (13, 10)))
    assert tc.get_slice(31).partition_D(cm.make_identity_tensor((13, 10)))(1) == (7, 7)


def test_a_design_tile_of_numpy_integers_is_the_same_design():
    from cutemma import kernels

    atom = "SM80_16x8x16_F32F16F16F32_TN"
    d = kernels.GemmDesign(atom, (np.int64(64), np.int32(64), 32))
    assert d == kernels.GemmDesign(atom, (64, 64, 32))
    assert all(type(x) is int for x in d.tile) and kernels.check(d).tile == (64, 64, 32)


def test_an_identity_tiles_bad_coordinate_names_its_strides_as_basis_elements():
    # the packed integer strides are cutemma's, not the user's: the error shows CuTe's form
    tile = cm.local_tile(cm.make_identity_tensor((10, 8)), (4, 4), (2, 1))
    with pytest.raises(LayoutError, match=r"\(4,4\):\(1@0,1@1\)") as info:
        tile(4, 0)
    assert "2147483648" not in str(info.value)
