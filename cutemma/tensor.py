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

import re

import numpy as np

from cutemma.display import RichDisplay
from cutemma.errors import LayoutError
from cutemma.layout import algebra
from cutemma.layout import checks as ck
from cutemma.layout.int_tuple import (
    IntTuple,
    flatten,
    idx2crd,
    is_tuple,
    product,
    product_each,
    unflatten,
)
from cutemma.layout.layout import Layout, _has_none, as_layout, slice_and_offset

# An offset must fit numpy's int64: the composition check and offsets() compute in it.
_OFFSET_BITS = 62


def _digit_bits(leaves: tuple) -> tuple[int, ...]:
    """Bits of each leaf's digit but the last (the top digit is unbounded): room for twice
    the extent and its sign, plus an even share of what the int64 budget leaves over."""
    need = [max(int(e), 1).bit_length() + 2 for e in leaves]
    spare = max(0, _OFFSET_BITS - sum(need)) // max(len(need), 1)
    return tuple(n + spare for n in need[:-1])


class CoordinateEngine:
    """Data of an identity tensor: an offset packs one coordinate per leaf of ``shape``.

    CuTe's identity tensor has basis strides ``1@0, 1@1, ...``
    (cute/numeric/arithmetic_tuple.hpp), so each mode's coordinate is summed on its own and a
    tile past the end of a mode gives coordinates past its end. Here each leaf of the
    flattened shape is a digit of the offset (leaf j weighs ``2**(bits[0]+...+bits[j-1])``,
    ``strides`` nests those weights like the shape), read back as *balanced* digits (each in
    ``[-2**(b-1), 2**(b-1))``, so negative coordinates decode too): every layout the algebra
    derives from ``Layout(shape, strides)`` is a sum of per-leaf steps and decodes mode by
    mode, as long as no coordinate reaches half its digit: ``check`` refuses a view that
    could. (What it cannot see is a step of a whole digit, ``2**bits[j]`` along leaf j, which
    reads as a step along leaf j+1: a tiler stride of 2**31 on a mode of a 2-mode shape, less
    on shapes of many leaves, which share the 62 bits of an int64 offset.)
    ``make_identity_tensor`` builds the tensor ``Tensor(engine, Layout(shape, strides))``.

    >>> e = CoordinateEngine((4, 3))
    >>> w = e.strides[1]
    >>> e[1 + 2 * w], e[10 + 0 * w], e[-1]
    ((1, 2), (10, 0), (-1, 0))
    """

    def __init__(self, shape: IntTuple):
        self.shape = shape
        leaves = flatten(shape) if is_tuple(shape) else (shape,)
        self.bits = _digit_bits(leaves)
        weights = [1]
        for b in self.bits:
            weights.append(weights[-1] << b)
        self.weights = tuple(weights[: len(leaves)])
        self.strides = unflatten(self.weights, shape) if is_tuple(shape) else 1
        self._radix = tuple((b, 1 << (b - 1), (1 << b) - 1) for b in self.bits)
        self._flat = is_tuple(shape) and not any(is_tuple(x) for x in shape)

    def digits(self, offset: int) -> list[int]:
        """The per-leaf coordinates packed in ``offset``, flat (balanced digits).

        >>> e = CoordinateEngine((2, (2, 3)))
        >>> e.digits(e.weights[2] - e.weights[1])
        [0, -1, 1]
        """
        o, out = int(offset), []
        for b, half, mask in self._radix:
            d = ((o + half) & mask) - half
            out.append(d)
            o = (o - d) >> b
        return out + [o] if self.weights else []

    def __getitem__(self, offset: int):
        digits = self.digits(offset)
        if not is_tuple(self.shape):
            return digits[0]
        return tuple(digits) if self._flat else unflatten(tuple(digits), self.shape)

    def __len__(self) -> int:
        # one past the largest offset of the whole identity tensor (make_tensor's check)
        leaves = flatten(self.shape) if is_tuple(self.shape) else (self.shape,)
        return 1 + sum((e - 1) * w for e, w in zip(leaves, self.weights))

    def check(self, layout: Layout, offset: int) -> None:
        """Refuse a view whose coordinates could outgrow a digit and decode into the next
        leaf (a silent wrong coordinate); the reach of each leaf is summed over the modes.

        >>> e = CoordinateEngine((8, 8))
        >>> e.check(Layout((4, 4), (1, e.strides[1])), 4)  # a tile at rows 4..7: fine
        >>> e.check(Layout(2, 1 << 30), 0)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        cutemma.errors.LayoutError: a view of the identity tensor of shape (8, 8) reaches ...
        """
        if len(self.bits) == 0:
            return  # one leaf: its coordinate is the whole offset, never wrong
        reach = [abs(d) for d in self.digits(offset)[:-1]]
        for s, d in zip(*layout.flat()):
            for j, x in enumerate(self.digits(d)[:-1]):
                reach[j] += max(s - 1, 0) * abs(x)
        for j, (r, b) in enumerate(zip(reach, self.bits)):
            if r >= 1 << (b - 1):
                raise LayoutError(
                    f"a view of the identity tensor of shape {self.shape} reaches coordinate "
                    f"{r} (in absolute value) along leaf {j} of the flattened shape; CuTe "
                    "counts on, but cutemma packs an identity tensor's coordinates and holds "
                    f"them exactly only below {1 << (b - 1)} along that leaf (past it they "
                    "would be wrong): keep the view's coordinates below that (smaller tiler "
                    "strides or extents)"
                )


class Tensor(RichDisplay):
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
        if isinstance(self.data, CoordinateEngine) and isinstance(self.layout, Layout):
            self.data.check(self.layout, self.offset)

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
        try:
            if _has_none(c):
                sub, off = slice_and_offset(c, self.layout)
                return Tensor(self.data, sub, self.offset + off)
            v = self.data[self._data_index(c)]
        except LayoutError as e:  # (an identity tensor's strides, as coordinate steps)
            raise LayoutError(packed_text(str(e), self)) from None
        return v.item() if isinstance(v, np.generic) else v

    def _data_index(self, c) -> int:
        # a tensor reads data: a coordinate outside its shape is refused, not extended
        i = self.offset + self.layout(c, strict=True)
        if not isinstance(self.data, CoordinateEngine) and not 0 <= i < len(self.data):
            # numpy would wrap a negative index around: a view past its data (a padded tile,
            # a bad offset) is read only where it lands inside, as CuTe code predicates
            raise LayoutError(
                f"Tensor element {c}: data offset {self.offset} + {i - self.offset} = {i} is "
                f"outside the data (offsets 0..{len(self.data) - 1}); read only the elements "
                "inside it (predicate a padded tile) or give more data / another offset"
            )
        return i

    def __getitem__(self, crd):
        return self(crd)

    def __setitem__(self, crd, value) -> None:
        """``t[c] = v`` writes one element, as CuTe's ``tensor(c) = v``; a coordinate with
        ``None`` (CuTe's ``_``) writes every element of that slice: ``v`` a scalar, one
        value per element in the slice's (colexicographic) order, or an array shaped like the
        slice's modes (``t[None, None] = a`` puts ``a[i, j]`` at ``t(i, j)``).

        The data is written in place (a numpy array given to ``make_tensor`` sees the write
        when it was contiguous; ``Tensor.data`` always does).

        >>> t = make_tensor(np.zeros(6, dtype=int), Layout((2, 3)))
        >>> t[1, 2] = 7
        >>> t[None, 0] = [1, 2]
        >>> t.data.tolist()
        [1, 2, 0, 0, 0, 7]
        """
        if isinstance(self.data, CoordinateEngine):
            raise LayoutError(
                f"an identity tensor's elements are its coordinates and cannot be assigned "
                f"(t[{crd!r}] = {value!r}); make a tensor over data with make_tensor to write"
            )
        if not _has_none(crd):
            i = self._data_index(crd)
            self.data[i] = _element_values(self.data, value, crd, single=True)[()]
            return
        sub = self(crd)
        n = sub.size()
        values = _element_values(self.data, value, crd, single=False)
        if values.ndim > 1:  # an array shaped like the slice: element (i, j) to (i, j)
            modes = product_each(sub.layout.shape)
            modes = modes if is_tuple(modes) else (modes,)
            if values.shape != tuple(modes):
                raise LayoutError(
                    f"t[{crd!r}] = an array of shape {values.shape}: the slice {sub.layout} "
                    f"has modes of {tuple(modes)} elements; give an array of that shape "
                    f"(element (i, j) lands at (i, j)), or {n} values in a flat sequence, "
                    "in the slice's colexicographic order"
                )
            values = values.reshape(-1, order="F")  # (colexicographic: the first index fastest)
        if values.ndim == 0:
            values = np.broadcast_to(values, (n,))
        elif values.size != n:
            raise LayoutError(
                f"t[{crd!r}] = ...: the slice {sub.layout} has {n} elements but "
                f"{values.size} values were given; give a scalar or {n} values"
            )
        for j, v in enumerate(values.reshape(-1)):
            sub.data[sub._data_index(j)] = v

    def tolist(self) -> list:
        """Elements in the layout's (colexicographic) order."""
        return [self(i) for i in range(self.size())]

    def offsets(self) -> np.ndarray:
        """The data offset of every element, in the layout's order (an identity tensor's
        offsets pack its coordinates, see CoordinateEngine)."""
        return np.array([self.offset + self.layout(i) for i in range(self.size())])

    def __str__(self) -> str:
        """CuTe's ``print_tensor``: ``engine o layout:`` and then the elements, up to
        ``PRINT_LIMIT`` of them (``print_tensor(t)`` prints up to ``PRINT_TENSOR_LIMIT``).

        >>> print(make_identity_tensor((2, 3)))
        ArithTuple(0,0) o (2,3):(1@0,1@1):
          (0,0)  (0,1)  (0,2)
          (1,0)  (1,1)  (1,2)
        """
        return format_tensor(self, limit=PRINT_LIMIT)

    def __repr__(self) -> str:
        return self.__str__()


PRINT_LIMIT = 1024  # elements str(tensor) shows; above, the header and a count


def engine_text(tensor: Tensor) -> str:
    """The part of CuTe's ``print(tensor)`` before `` o layout``.

    An identity tensor is CuTe's ``ArithTuple(origin)`` (a partition's origin is its first
    coordinate); an array is ``ptr[Nb](data+offset)``: N bits per element and the element
    offset where the address would be in C++.

    >>> engine_text(make_identity_tensor((4, 4))), engine_text(make_tensor(np.zeros(4), 4))
    ('ArithTuple(0,0)', 'ptr[64b](data+0)')
    """
    if isinstance(tensor.data, CoordinateEngine):
        origin = tensor.data[tensor.offset]
        return f"ArithTuple{_crd_text(origin if is_tuple(origin) else (origin,))}"
    return f"ptr[{tensor.data.dtype.itemsize * 8}b](data+{tensor.offset})"


def layout_text(tensor: Tensor) -> str:
    """The tensor's layout as CuTe prints it; an identity tensor's integer strides are shown
    as the coordinate steps they are, ``8@0`` (8 along mode 0), as CuTe's ``ScaledBasis``.

    >>> t = make_identity_tensor((8, 8))
    >>> layout_text(zipped_divide_tensor(t, (2, 4)))
    '((2,4),(4,2)):((1@0,1@1),(2@0,4@1))'
    """
    if not isinstance(tensor.data, CoordinateEngine) or not isinstance(tensor.layout, Layout):
        return str(tensor.layout)  # arrays, and swizzled views: the layout as it prints
    engine = tensor.data

    def step(d):
        if is_tuple(d):
            return "(" + ",".join(step(x) for x in d) + ")"
        return _basis_text(engine[d])

    return f"{_shape_text(tensor.layout.shape)}:{step(tensor.layout.stride)}"


def _shape_text(s) -> str:
    return "(" + ",".join(_shape_text(x) for x in s) + ")" if is_tuple(s) else str(s)


def _crd_text(c) -> str:
    return "(" + ",".join(_crd_text(x) for x in c) + ")" if is_tuple(c) else str(c)


def _basis_text(crd) -> str:
    """``v@i`` for a step of v along mode i (``v@j@i`` for sub-mode j of mode i), like CuTe's
    ScaledBasis; a step along several modes prints as the coordinate tuple."""
    if not is_tuple(crd):
        return str(crd)  # a rank-1 identity: CuTe counts with plain ints
    hits = []

    def walk(c, path):
        if is_tuple(c):
            for i, x in enumerate(c):
                walk(x, path + (i,))
        elif c:
            hits.append((c, path))

    walk(crd, ())
    if not hits:
        return "0"
    if len(hits) > 1:
        return _crd_text(crd)
    v, path = hits[0]
    return str(v) + "".join(f"@{i}" for i in reversed(path))


def _element_format(tensor: Tensor):
    """CuTe's ``pretty_print`` widths (cute/util/print.hpp): ints ``%5d``, float ``%10.2e``,
    double ``%11.3e``, 16- and 8-bit floats ``%8.2f``, bool ``%3d``, tuples ``"  (m,n)"``."""
    if isinstance(tensor.data, CoordinateEngine):
        return lambda v: "  " + _crd_text(v)
    dt = tensor.data.dtype
    if dt == np.bool_:
        return lambda v: f"{int(v):3d}"
    if np.issubdtype(dt, np.integer):
        return lambda v: f"{int(v):5d}"
    if dt == np.float64:
        return lambda v: f"{float(v):11.3e}"
    if dt == np.float32:
        return lambda v: f"{float(v):10.2e}"
    if dt.kind == "V" or dt.itemsize <= 2:  # half, bf16, fp8 (ml_dtypes)
        return lambda v: f"{float(v):8.2f}"
    return lambda v: "  " + str(v)


def format_tensor(tensor: Tensor, limit: int | None = None) -> str:
    """The text of CuTe's ``print_tensor``: the header ``engine o layout:``, then the elements.

    Rank 1 prints a column; rank 2 rows of mode 0 by columns of mode 1; rank 3 one such table
    per index of mode 2, separated by ``-`` lines; rank 4 groups those by mode 3 with ``=``
    lines (modes past the fourth are folded into it). Above ``limit`` elements only the
    header and a count print.

    >>> print(format_tensor(make_tensor(np.arange(8, dtype=np.int32), Layout((2, 2, 2)))))
    ptr[32b](data+0) o (2,2,2):(1,2,4):
        0    2
        1    3
    ----------
        4    6
        5    7
    """
    if not isinstance(tensor, Tensor):
        raise LayoutError(
            f"print_tensor: expected a cutemma Tensor (make_tensor(data, layout)), got {tensor!r}"
        )
    head = f"{engine_text(tensor)} o {layout_text(tensor)}:"
    n = tensor.size()
    if limit is not None and n > limit:
        return f"{head}\n  ... {n} elements (print_tensor shows them all)"
    fmt = _element_format(tensor)
    shape = tensor.layout.shape
    sizes = [product(m) for m in shape] if is_tuple(shape) else [product(shape)]
    sizes = sizes or [1]  # (rank 0: one element, at coordinate ())
    if len(sizes) > 4:
        sizes = sizes[:3] + [product(tuple(sizes[3:]))]
    rows = []

    def table(base: int) -> None:
        # element (m, n, ...) sits at linear index m + M*n + base (colexicographic)
        if len(sizes) == 1:
            rows.extend(fmt(tensor(m)) for m in range(sizes[0]))
            return
        M, N = sizes[0], sizes[1]
        for m in range(M):
            rows.append("".join(fmt(tensor(base + m + M * c)) for c in range(N)))

    plane = sizes[0] * (sizes[1] if len(sizes) > 1 else 1)
    K = sizes[2] if len(sizes) > 2 else 1
    P = sizes[3] if len(sizes) > 3 else 1
    width = 5 * sizes[1] if len(sizes) > 1 else 5
    for p in range(P):
        if p:
            rows.append("=" * width)
        for k in range(K):
            if k:
                rows.append("-" * width)
            table((p * K + k) * plane)
    return "\n".join([head, *rows])


def print_tensor(tensor: Tensor) -> None:
    """Print every element of ``tensor`` as CuTe's ``print_tensor`` does.

    A thread's partition of an identity tensor shows which (m, n) coordinates it holds:

    >>> print_tensor(local_partition(make_identity_tensor((4, 4)), Layout((2, 2)), 1))
    ArithTuple(1,0) o (2,2):(2@0,2@1):
      (1,0)  (1,2)
      (3,0)  (3,2)
    """
    if isinstance(tensor, Tensor) and tensor.size() > PRINT_TENSOR_LIMIT:
        raise LayoutError(
            f"print_tensor: a tensor of {tensor.size()} elements; it prints at most "
            f"{PRINT_TENSOR_LIMIT} (one line each): print a tile of it (local_tile, "
            "local_partition)"
        )
    print(format_tensor(tensor))


PRINT_TENSOR_LIMIT = 1 << 20  # elements print_tensor writes out (a million lines of text)


def make_tensor(data, layout) -> Tensor:
    """A tensor over ``data`` with ``layout`` (a Layout or a shape).

    >>> make_tensor(np.zeros(4), (2, 2)).shape
    (2, 2)
    """
    layout = as_layout(layout) if isinstance(layout, (int, tuple)) else layout
    layout = ck.layout_arg(layout, "make_tensor", composed=True, which="the layout")
    if not isinstance(data, CoordinateEngine):
        try:
            n = np.asarray(data).size
        except (ValueError, TypeError) as e:  # ragged nesting
            raise LayoutError(
                f"make_tensor: data {data!r:.60} is not an array ({e}); give a flat sequence "
                "or a numpy array of the elements"
            ) from None
    else:
        n = len(data)
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
    shape = Layout(ck.int_tuple_arg(shape, "make_identity_tensor", "shape", 1)).shape
    engine = CoordinateEngine(shape)
    # one digit per leaf stands for CuTe's basis strides 1@0, 1@1, ... (see CoordinateEngine)
    return Tensor(engine, Layout(shape, engine.strides))


def composition_tensor(tensor: Tensor, tiler) -> Tensor:
    """The tensor with layout ``tensor.layout o tiler``.

    >>> composition_tensor(make_identity_tensor(8), Layout(4, 2))(1)
    2
    """
    return _derived(tensor, algebra.composition, tiler)


def zipped_divide_tensor(tensor: Tensor, tiler) -> Tensor:
    """``((tile), (rest))`` view of a tensor: mode 0 walks one tile, mode 1 picks the tile.

    Element (1, 1) of the 2x2 tile at tile coordinate (1, 0) of a 4x4 tensor:

    >>> z = zipped_divide_tensor(make_identity_tensor((4, 4)), (2, 2))
    >>> layout_text(z)
    '((2,2),(2,2)):((1@0,1@1),(2@0,2@1))'
    >>> z((1, 1), (1, 0))
    (3, 1)

    A tiler that does not divide a mode pads it, as in CuTe: the last tile's coordinates run
    past the end (the ones a predicated copy tests against the shape).

    >>> zipped_divide_tensor(make_identity_tensor((5, 4)), (2, 2))((1, 0), (2, 0))
    (5, 0)
    """
    return _derived(tensor, algebra.zipped_divide, tiler)


def _derived(tensor: Tensor, op, tiler) -> Tensor:
    try:
        layout = op(tensor.layout, tiler)
    except LayoutError as e:
        raise LayoutError(packed_text(str(e), tensor)) from None
    return Tensor(tensor.data, layout, tensor.offset)


# a layout's stride as the algebra prints it: what follows "shape:" (a message's own colons
# are followed by a space)
_STRIDE = re.compile(r":(\([-\d,()]*\)|-?\d+)")


def packed_text(message: str, tensor: Tensor) -> str:
    """``message`` (the layout algebra's, about ``tensor``'s layout) with the packed strides of
    an identity tensor shown as the coordinate steps they are: a stride that steps along a
    leaf past the first prints as CuTe's basis elements; index layouts (tilers) stay as they
    are.

    >>> t = make_identity_tensor((8, (3, 4)))
    >>> packed_text(f"no: {t.layout[1]} by 4:1", t)
    'no: (3,4):(1@0@1,1@1@1) by 4:1'
    """
    engine = tensor.data
    if not isinstance(engine, CoordinateEngine) or len(engine.weights) < 2:
        return message

    def steps(m: re.Match) -> str:
        if all(abs(int(x)) < engine.weights[1] for x in re.findall(r"-?\d+", m.group(1))):
            return m.group(0)  # a tiler's index strides (or steps along the first leaf only)
        return ":" + re.sub(r"-?\d+", lambda n: _basis_text(engine[int(n.group())]), m.group(1))

    return _STRIDE.sub(steps, message)


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
    if thr_layout.shape == ():
        raise LayoutError(
            "local_partition: thr_layout () has no modes; give one mode per tensor mode the "
            "threads split, e.g. Layout((2, 2))"
        )
    tile = product_each(thr_layout.shape)
    tile = tile if is_tuple(tile) else (tile,)
    coord = _coord_of(thr_layout, index)
    z = zipped_divide_tensor(tensor, tuple(Layout(t) for t in tile))
    rest = z.layout[1]
    n_rest = len(rest) if is_tuple(rest.shape) else 1
    keep = tuple([None] * n_rest) if n_rest > 1 else None
    return z(coord if len(tile) > 1 else coord[0], keep)


def _element_values(data: np.ndarray, value, crd, single: bool) -> np.ndarray:
    """``value`` as numbers the data's dtype holds exactly (integers) or finitely (floats),
    else a LayoutError: numpy would store None as NaN, wrap 1000 into int8 and drop 1.5's
    half, all without a word."""
    where = f"t[{crd!r}] = {value!r:.60}"
    if not data.flags.writeable:
        raise LayoutError(f"{where}: the tensor's data is read-only; make_tensor over a copy")
    if data.dtype.kind not in "biufc" and not _is_ml_float(data.dtype):
        # object or structured data: the caller's own values, as numpy takes them
        if data.dtype.kind == "O":
            return np.asarray(value, dtype=object)
        values = np.asarray(value)
        if single and values.ndim != 0:
            raise LayoutError(
                f"{where}: one element takes one value, got {values.size}; slice with None "
                "(t[None, j] = [...]) to write several"
            )
        return values
    accepted = "give a number" + ("" if single else " or a list/array of numbers")
    if (
        value is None
        or isinstance(value, str | bytes | set | frozenset | dict)
        or not (isinstance(value, list | tuple | np.ndarray | np.generic | int | float | complex))
    ):
        raise LayoutError(f"{where}: {type(value).__name__} is not a number; {accepted}")
    try:
        values = np.asarray(value)
    except (ValueError, TypeError) as e:  # ragged nesting
        raise LayoutError(f"{where}: not an array of numbers ({e}); {accepted}") from None
    if values.dtype.kind not in "biufc":
        raise LayoutError(
            f"{where}: holds {values.dtype} values, not numbers (too large for 64 bits, or not"
            f" numeric); {accepted} that {data.dtype} holds"
        )
    if single and values.ndim != 0:
        raise LayoutError(
            f"{where}: one element takes one number, got {values.size}; slice with None "
            "(t[None, j] = [...]) to write several"
        )
    if values.dtype.kind == "c" and data.dtype.kind != "c" and np.any(values.imag != 0):
        raise LayoutError(
            f"{where}: complex values into {data.dtype} data would lose the imaginary part"
        )
    if values.dtype.kind == "c" and data.dtype.kind != "c":
        values = values.real
    with np.errstate(all="ignore"):
        stored = values.astype(data.dtype)
        if data.dtype.kind in "biu":
            exact = values.dtype.kind in "biu" or np.all(np.isfinite(values))
            exact = exact and np.array_equal(stored.astype(values.dtype), values)
            if values.dtype.kind in "iu" and exact:  # int -> int round trip can wrap twice
                info = np.iinfo(data.dtype) if data.dtype.kind != "b" else None
                exact = info is None or bool(
                    values.size == 0 or (values.min() >= info.min and values.max() <= info.max)
                )
            if not exact:
                raise LayoutError(
                    f"{where}: {data.dtype} data cannot hold these values exactly (whole numbers "
                    f"in its range only; numpy would wrap or truncate them)"
                )
        elif np.any(np.isfinite(values) & ~np.isfinite(stored.astype(np.complex128))):
            raise LayoutError(
                f"{where}: a value is past the largest finite {data.dtype} and would be stored "
                "as inf or NaN; give values in range"
            )
    return stored


def _is_ml_float(dtype: np.dtype) -> bool:
    """bf16, fp8 ... (ml_dtypes): numpy sees them as opaque ('V') but they hold floats."""
    import ml_dtypes

    try:
        ml_dtypes.finfo(dtype)
    except ValueError:
        return False
    return True


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
    "print_tensor",
    "format_tensor",
    "zipped_divide_tensor",
]
