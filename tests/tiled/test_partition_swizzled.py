"""Partitions of swizzled tensors keep the swizzle, and thread indices may be numpy ints."""

import numpy as np

from cutemma.layout import Layout, Swizzle, make_swizzled
from cutemma.tensor import Tensor, make_identity_tensor
from cutemma.tiled import make_tiled_mma


def test_partition_of_a_swizzled_tensor_reads_what_the_swizzled_layout_says():
    tm = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2))
    L = make_swizzled(Swizzle(3, 3, 3), Layout((32, 64), (64, 1)))
    data = Tensor(np.arange(L.cosize()), L)
    for thr in (0, 4, 77, 127):
        got = tm.get_slice(thr).partition_A(data)
        crds = tm.get_slice(thr).partition_A(make_identity_tensor((32, 64)))
        # the element at each coordinate of the partition is L(m, k), swizzle included
        assert [got(i) for i in range(got.size())] == [L(*crds(i)) for i in range(crds.size())]


def test_numpy_thread_index():
    tm = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2))
    assert tm.get_slice(np.int64(5)).thr_idx == 5
    assert tm.thr_coord(np.int32(97)) == tm.thr_coord(97)
