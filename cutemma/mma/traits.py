"""Traits: what an MMA instruction means, in CuTe's terms.

Value types of D, A, B, C, the logical ``shape_mnk``, the ``thr_id`` layout
(logical thread -> thread index in the warp or warpgroup) and the three
(thread, value) -> coordinate layouts, with CuTe's meaning:
A: (T,V) -> m + k*M, B: (T,V) -> n + k*N, C: (T,V) -> m + n*M.

>>> from cutemma.mma import make_mma_atom
>>> t = make_mma_atom('SM80_16x8x8_F16F16F16F16_TN').traits
>>> str(t.tv_layout_C)
'((4,8),(2,2)):((32,1),(16,8))'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cutemma.errors import AtomError
from cutemma.layout import Layout
from cutemma.mma.types import NumericType


@dataclass(frozen=True)
class Traits:
    """Value types, Shape_MNK, ThrID and the A/B/C thread-value layouts of one Operation.

    >>> from cutemma.mma import make_mma_atom
    >>> make_mma_atom('SM70_8x8x4_F32F16F16F32_TN').traits.shape_mnk
    (8, 8, 4)
    """

    val_type_D: NumericType
    val_type_A: NumericType
    val_type_B: NumericType
    val_type_C: NumericType
    shape_mnk: tuple[int, int, int]
    thr_id: Layout
    tv_layout_A: Layout
    tv_layout_B: Layout
    tv_layout_C: Layout

    def __post_init__(self):
        m, n, k = self.shape_mnk
        threads = _mode_size(self.thr_id.shape)
        for which, lay, extent in (
            ("A", self.tv_layout_A, m * k),
            ("B", self.tv_layout_B, n * k),
            ("C", self.tv_layout_C, m * n),
        ):
            if _mode_size(lay.shape[0]) != threads:
                raise AtomError(
                    f"tv_layout_{which} {lay} has {_mode_size(lay.shape[0])} threads; "
                    f"thr_id {self.thr_id} has {threads}"
                )
            hi = sum((n - 1) * max(d, 0) for n, d in _flat(lay.shape, lay.stride))
            if hi >= extent:
                raise AtomError(
                    f"tv_layout_{which} {lay} reaches index {hi}; the {which} tile of "
                    f"shape_mnk {self.shape_mnk} has only {extent} elements"
                )

    @property
    def threads(self) -> int:
        """Number of logical threads (size of thr_id).

        >>> from cutemma.mma import make_mma_atom
        >>> make_mma_atom('SM70_8x8x4_F16F16F16F16_TN').traits.threads
        8
        """
        return _mode_size(self.thr_id.shape)


def _mode_size(shape) -> int:
    if isinstance(shape, int):
        return shape
    return int(np.prod([_mode_size(s) for s in shape], dtype=np.int64))


def _flat(shape, stride) -> list[tuple[int, int]]:
    if isinstance(shape, int):
        return [(shape, stride)]
    return [p for s, d in zip(shape, stride, strict=True) for p in _flat(s, d)]


def mode_table(shape, stride) -> np.ndarray:
    """Offsets of every index of one (possibly nested) mode, colexicographic order.

    >>> mode_table((4, 2), (1, 16)).tolist()
    [0, 1, 2, 3, 16, 17, 18, 19]
    """
    pairs = _flat(shape, stride)
    idx = np.arange(_mode_size(shape), dtype=np.int64)
    out = np.zeros_like(idx)
    step = 1
    for s, d in pairs:
        out += ((idx // step) % s) * d
        step *= s
    return out


def tv_table(layout: Layout) -> np.ndarray:
    """The (T, V) table of a rank-2 thread-value layout, as a numpy int array.

    Computed with numpy from shape and stride (the same function ``layout(t, v)``
    computes), so that 128-thread GMMA layouts stay fast.

    >>> from cutemma.layout import Layout
    >>> tv_table(Layout(((4, 2), 4), ((8, 4), 1))).tolist()[4]
    [4, 5, 6, 7]
    """
    if not isinstance(layout, Layout):
        raise AtomError(f"tv_table: expected a rank-2 (thread, value) Layout, got {layout!r}")
    shape, stride = layout.shape, layout.stride
    if isinstance(shape, int) or len(shape) != 2:
        raise AtomError(f"a thread-value layout has rank 2 (thread, value); got {layout}")
    t = mode_table(shape[0], stride[0])
    v = mode_table(shape[1], stride[1])
    return t[:, None] + v[None, :]
