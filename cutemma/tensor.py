"""Tensor = data + Layout: CuTe's tensors on the host.

The data is read as a flat buffer and indexed through the layout. An identity tensor's
elements are their own coordinates, which is how partitions are checked: partition an
identity tensor and read off which coordinates each thread holds.

>>> t = make_tensor(np.arange(8), Layout((2, 4), (4, 1)))
>>> int(t(1, 2)), int(t(3))
(6, 5)
>>> make_identity_tensor((4, 8))(1, 2)
(1, 2)
"""

from __future__ import annotations

import numpy as np

from cutemma.errors import LayoutError
from cutemma.layout import algebra
from cutemma.layout import checks as ck
from cutemma.layout.int_tuple import IntTuple, idx2crd, is_tuple, product, product_each
from cutemma.layout.layout import Layout, _has_none, _modes, as_layout, slice_and_offset


class CoordinateEngine:
    """Data of an identity tensor: offset ``o`` holds the coordinate ``idx2crd(o, shape)``."""

    def __init__(self, shape: IntTuple):
        self.shape = shape

    def __getitem__(self, offset: int):
        return idx2crd(int(offset), self.shape)

    def __len__(self) -> int:
        return product(self.shape)


class Tensor:
    """A layout over data: ``T(c)`` is ``data[offset + layout(c)]``.

    ``data`` is a numpy array (read flat, in C order) or a CoordinateEngine; ``None`` in a
    coordinate slices and returns a sub-tensor.

    >>> t = Tensor(np.arange(6), Layout((2, 3)))
    >>> t(None, 1).tolist()
    [2, 3]
    """

    def __init__(self, data, layout, offset: int = 0):
        self.data = data if isinstance(data, CoordinateEngine) else np.asarray(data).reshape(-1)
        if isinstance(layout, int | tuple):
            layout = Layout(layout)
        self.layout = ck.layout_arg(layout, "Tensor", composed=True, which="the layout")
        self.offset = ck.int_arg(offset, "Tensor", "offset")

    @property
    def shape(self) -> IntTuple:
        """Shape of the layout."""
        return self.layout.shape

    def size(self) -> int:
        """Number of elements."""
        return self.layout.size()

    def __len__(self) -> int:
        return len(self.layout)

    def __call__(self, *crd):
        c = crd[0] if len(crd) == 1 else crd
        if _has_none(c):
            sub, off = slice_and_offset(c, self.layout)
            return Tensor(self.data, sub, self.offset + off)
        i = self.offset + self.layout(c)
        if not isinstance(self.data, CoordinateEngine) and not 0 <= i < len(self.data):
            # numpy would wrap a negative index around: a view past its data (a padded tile,
            # a bad offset) is read only where it lands inside, as CuTe code predicates
            raise LayoutError(
                f"Tensor element {c}: data offset {self.offset} + {i - self.offset} = {i} is "
                f"outside the data (offsets 0..{len(self.data) - 1}); read only the elements "
                "inside it (predicate a padded tile) or give more data / another offset"
            )
        v = self.data[i]
        return v.item() if isinstance(v, np.generic) else v

    def __getitem__(self, crd):
        return self(crd)

    def tolist(self) -> list:
        """Elements in the layout's (colexicographic) order."""
        return [self(i) for i in range(self.size())]

    def offsets(self) -> np.ndarray:
        """The data offset of every element, in the layout's order."""
        return np.array([self.offset + self.layout(i) for i in range(self.size())])

    def __repr__(self) -> str:
        return f"Tensor({self.layout}, offset={self.offset})"


def make_tensor(data, layout) -> Tensor:
    """A tensor over ``data`` with ``layout`` (a Layout or a shape).

    >>> make_tensor(np.zeros(4), (2, 2)).shape
    (2, 2)
    """
    layout = as_layout(layout) if isinstance(layout, (int, tuple)) else layout
    layout = ck.layout_arg(layout, "make_tensor", composed=True, which="the layout")
    n = len(data) if isinstance(data, CoordinateEngine) else np.asarray(data).size
    if layout.cosize() > n:
        raise LayoutError(
            f"layout {layout} reaches offset {layout.cosize() - 1} but data has {n} elements"
        )
    return Tensor(data, layout)


def make_identity_tensor(shape: IntTuple) -> Tensor:
    """The tensor whose element at each coordinate is that coordinate.

    >>> make_identity_tensor((2, 3))(5)
    (1, 2)
    """
    layout = Layout(ck.int_tuple_arg(shape, "make_identity_tensor", "shape", 1))
    return Tensor(CoordinateEngine(layout.shape), layout)


def composition_tensor(tensor: Tensor, tiler) -> Tensor:
    """The tensor with layout ``tensor.layout o tiler``.

    >>> composition_tensor(make_identity_tensor(8), Layout(4, 2))(1)
    2
    """
    return Tensor(tensor.data, algebra.composition(tensor.layout, tiler), tensor.offset)


def zipped_divide_tensor(tensor: Tensor, tiler) -> Tensor:
    """``((tile), (rest))`` view of a tensor: mode 0 walks one tile, mode 1 picks the tile.

    Element (1, 1) of the 2x2 tile at tile coordinate (1, 0) of a 4x4 tensor:

    >>> z = zipped_divide_tensor(make_identity_tensor((4, 4)), (2, 2))
    >>> print(z.layout)
    ((2,2),(2,2)):((1,4),(2,8))
    >>> z((1, 1), (1, 0))
    (3, 1)
    """
    return Tensor(tensor.data, algebra.zipped_divide(tensor.layout, tiler), tensor.offset)


def local_tile(tensor: Tensor, tiler, coord) -> Tensor:
    """The tile of ``tensor`` at tile coordinate ``coord`` (CuTe's ``local_tile``, inner partition).

    >>> t = local_tile(make_identity_tensor((8, 8)), (4, 4), (1, 0))
    >>> t(0, 0), t(3, 3)
    ((4, 0), (7, 3))
    """
    _tensor_arg(tensor, "local_tile")
    z = zipped_divide_tensor(tensor, ck.tiler_arg(tiler, "local_tile"))
    tile, rest = z.layout[0], z.layout[1]
    n_tile = len(tile) if is_tuple(tile.shape) else 1
    n_rest = len(rest) if is_tuple(rest.shape) else 1
    if not is_tuple(coord):
        coord = (coord,)
    # slicing with one '_' per tile mode keeps the tile's modes flat, as CuTe's local_tile
    keep = tuple([None] * n_tile) if n_tile > 1 else None
    return z(keep, coord if n_rest > 1 else coord[0])


def local_partition(tensor: Tensor, thr_layout, index: int) -> Tensor:
    """The elements of ``tensor`` owned by thread ``index`` of ``thr_layout`` (outer partition).

    Each thread takes one element of every ``thr_layout``-shaped tile.

    >>> t = local_partition(make_identity_tensor((4, 4)), Layout((2, 2)), 1)
    >>> t.tolist()
    [(1, 0), (3, 0), (1, 2), (3, 2)]
    """
    _tensor_arg(tensor, "local_partition")
    if not isinstance(thr_layout, Layout | int | tuple):
        raise LayoutError(
            f"local_partition: thr_layout must be a Layout or a shape, got {thr_layout!r}"
        )
    thr_layout = as_layout(thr_layout)
    index = ck.int_arg(index, "local_partition", "index")
    tile = product_each(thr_layout.shape)
    tile = tile if is_tuple(tile) else (tile,)
    coord = _coord_of(thr_layout, index)
    z = zipped_divide_tensor(tensor, tuple(Layout(t) for t in tile))
    rest = z.layout[1]
    n_rest = len(rest) if is_tuple(rest.shape) else 1
    keep = tuple([None] * n_rest) if n_rest > 1 else None
    return z(coord if len(tile) > 1 else coord[0], keep)


def _tensor_arg(x, func: str) -> None:
    if not isinstance(x, Tensor):
        raise LayoutError(
            f"{func}: expected a Tensor (make_tensor or make_identity_tensor) first, got {x!r}"
        )


def _coord_of(layout: Layout, index: int) -> tuple:
    """The top-level coordinate ``c`` of ``layout`` with ``layout(c) == index``."""
    n = layout.size()
    for i in range(n):
        if layout(i) == index:
            shapes = product_each(layout.shape)
            c = idx2crd(i, shapes)
            return c if is_tuple(c) else (c,)
    raise LayoutError(f"thread index {index} is not in the image of thread layout {layout}")


__all__ = [
    "CoordinateEngine",
    "Tensor",
    "composition_tensor",
    "local_partition",
    "local_tile",
    "make_identity_tensor",
    "make_tensor",
    "zipped_divide_tensor",
    "_modes",
]
