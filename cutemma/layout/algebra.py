"""CuTe's layout algebra: composition, complement, inverses, divides and products.

Each function follows its definition in CuTe's layout-algebra documentation
(``media/docs/cpp/cute/02_layout_algebra.md``) and ``include/cute/layout.hpp``.
A *tiler* is a Layout, an int ``n`` (the layout ``n:1``), or a tuple of those applied
mode by mode (:mod:`cutemma.layout.tiler`). The functions live in one module per topic,
imported here so that ``cutemma.layout.algebra`` offers them all:
:mod:`~cutemma.layout.compose` (composition), :mod:`~cutemma.layout.inverse` (complement,
right/left inverse, nullspace), :mod:`~cutemma.layout.divide`, :mod:`~cutemma.layout.product`
(products, make_ordered_layout, tile_to_shape) and :mod:`~cutemma.layout.recast` (upcast,
downcast, max_common_layout/vector).

>>> str(composition(Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1))))
'((2,2),3):((24,2),8)'
>>> str(logical_divide(Layout(16), 4))
'(4,4):(1,4)'
"""

from __future__ import annotations

from cutemma.layout.compose import composition
from cutemma.layout.divide import flat_divide, logical_divide, tiled_divide, zipped_divide
from cutemma.layout.inverse import complement, left_inverse, nullspace, right_inverse
from cutemma.layout.layout import Layout
from cutemma.layout.product import (
    blocked_product,
    flat_product,
    logical_product,
    make_ordered_layout,
    raked_product,
    tile_to_shape,
    tiled_product,
    zipped_product,
)
from cutemma.layout.recast import downcast, max_common_layout, max_common_vector, upcast

__all__ = [
    "Layout",
    "blocked_product",
    "complement",
    "composition",
    "downcast",
    "flat_divide",
    "flat_product",
    "left_inverse",
    "logical_divide",
    "logical_product",
    "make_ordered_layout",
    "max_common_layout",
    "max_common_vector",
    "nullspace",
    "raked_product",
    "right_inverse",
    "tile_to_shape",
    "tiled_divide",
    "tiled_product",
    "upcast",
    "zipped_divide",
    "zipped_product",
]
