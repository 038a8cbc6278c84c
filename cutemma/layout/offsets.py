"""Every offset of a layout at once, with numpy: the vectorised form of calling it.

>>> offsets(Layout((2, 3), (3, 1))).tolist()
[0, 3, 1, 4, 2, 5]
"""

from __future__ import annotations

import numpy as np

from cutemma.layout.int_tuple import flatten
from cutemma.layout.layout import Layout


def offsets(layout) -> np.ndarray:
    """``[layout(i) for i in range(size(layout))]`` as an int64 array, computed mode by mode.

    A ComposedLayout applies its outer function (a Swizzle) elementwise afterwards.

    >>> offsets(Layout(4, 2)).tolist()
    [0, 2, 4, 6]
    """
    inner = layout.inner if hasattr(layout, "inner") else layout
    off = np.zeros(1, dtype=np.int64)
    for s, d in zip(flatten(inner.shape), flatten(inner.stride)):
        # the new mode varies slower than all earlier ones (colexicographic order)
        off = ((np.arange(s, dtype=np.int64) * d)[:, None] + off[None, :]).reshape(-1)
    if inner is not layout:
        off = np.array([layout.outer(int(layout.offset + o)) for o in off], dtype=np.int64)
    return off


__all__ = ["offsets", "Layout"]
