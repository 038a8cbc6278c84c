"""Bad TiledMMA input raises TiledMmaError saying what was wrong."""

import numpy as np
import pytest

from cutemma import Layout, TiledMmaError, make_identity_tensor, make_tensor, make_tiled_mma

ATOM = "SM80_16x8x16_F32F16F16F32_TN"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"permutation_mnk": (Layout((4, 4), (1, 2)), None, None)}, "not a permutation"),
        ({"permutation_mnk": (Layout(16, 2), None, None)}, "not a permutation"),
        ({"permutation_mnk": (24, None, None)}, "not a multiple"),
        ({"permutation_mnk": (0, None, None)}, ">= 1"),
        ({"permutation_mnk": (None, None, None, None)}, "at most 3"),
        ({"permutation_mnk": ("x", None, None)}, "None, an int or a Layout"),
        ({"atom_layout_mnk": Layout((2, 2, 2, 2))}, "at most 3 modes"),
        ({"atom_layout_mnk": "2x2"}, "int-tuple or a Layout"),
    ],
)
def test_make_tiled_mma_rejects(kwargs, match):
    with pytest.raises(TiledMmaError, match=match):
        make_tiled_mma(ATOM, **kwargs)


def test_partition_needs_a_tile_that_divides_the_tensor():
    # a tensor of data; an identity tensor is padded instead (its coordinates past the end
    # are the ones to predicate off, tests/cute_cpp/test_identity_tiles_vs_cpp.py)
    thr = make_tiled_mma(ATOM, (2, 2)).get_slice(0)
    with pytest.raises(TiledMmaError, match=r"extent 30, not a multiple of the TiledMMA tile M=32"):
        thr.partition_C(make_tensor(np.zeros(30 * 16), (30, 16)))
    with pytest.raises(TiledMmaError, match="K=16"):
        thr.partition_A(make_tensor(np.zeros(32 * 20), (32, 20)))
    last = make_tiled_mma(ATOM, (2, 2)).get_slice(63).partition_C(make_identity_tensor((30, 16)))
    assert last.tolist() == [(23, 6), (23, 7), (31, 6), (31, 7)]  # row 31: past the end


def test_unknown_thread():
    with pytest.raises(TiledMmaError, match="thread 128 is not a thread"):
        make_tiled_mma(ATOM, (2, 2)).get_slice(128)
