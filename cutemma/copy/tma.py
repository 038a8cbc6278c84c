"""TMA on the host: the box a shared-memory layout needs, and the ``CUtensorMap`` that loads it.

A TMA load (``cp.async.bulk.tensor``) copies a *box* of a global tensor into shared memory as
a dense array, innermost global dimension fastest, and applies its swizzle to the shared
byte addresses. :func:`tma_box` reads a cutemma shared-memory layout (``gmma_layout_atom`` +
``tile_to_shape``, a swizzled ``ComposedLayout`` over an (MN, K) tile) back into the box
dimensions, the swizzle mode and the list of boxes (with their shared offsets) that fill
it, and checks element by element that those copies produce exactly the layout: a layout
TMA cannot produce raises :class:`~cutemma.errors.TmaError` naming why.
:func:`tensor_map_args` derives the ``cuTensorMapEncodeTiled`` arguments for a global
tensor (pure Python, checked against the driver's rules), and :func:`encode_tensor_map`
calls the driver (GPU machines only) and caches the 128-byte map per argument tuple.

Every hardware number used here is in :data:`TMA_RULES` and :data:`TMA_SWIZZLES`.

>>> from cutemma.layout import tile_to_shape
>>> from cutemma.smem import gmma_layout_atom
>>> box = tma_box(tile_to_shape(gmma_layout_atom("K", "SW128", "bf16"), (128, 64)), "bf16", "K")
>>> box.box, box.swizzle, box.copies, box.bytes
((64, 128), 'SW128', ((0, 0, 0),), 16384)
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from cutemma.errors import TmaError
from cutemma.layout import ComposedLayout, Layout
from cutemma.layout.layout import coalesced_pairs as _pairs
from cutemma.layout.swizzle import Swizzle


@dataclass(frozen=True)
class TmaRules:
    """The limits of ``cuTensorMapEncodeTiled`` and of the TMA copy instruction.

    Sources: the CUDA driver API reference of ``cuTensorMapEncodeTiled`` (its docstring in
    cuda-bindings 13: rank 1-5; global address 16-byte aligned; globalDim in [1, 2^32];
    globalStrides multiples of 16 bytes below 2^40; boxDim in [1, 256] with boxDim[0] x
    element size a multiple of 16 bytes; elementStrides in [1, 8]; a swizzled box's inner
    dimension at most the swizzle span; the tensor map itself 64-byte aligned, 128 bytes);
    PTX ISA 9.7.9.25.5.1 ``cp.async.bulk.tensor``: the shared destination 128-byte aligned,
    coordinates signed 32-bit (``.s32``). A zero stride (a broadcast batch) is not a
    stride TMA can walk: such an operand keeps a map without that dimension
    (:func:`batched_dims`).
    """

    max_rank: int = 5
    min_rank: int = 2  # this module's maps: (contiguous, rows[, batch]); the driver takes 1
    max_box: int = 256
    global_align: int = 16
    max_address: int = 1 << 64  # globalAddress is a 64-bit device pointer
    stride_multiple: int = 16
    max_stride: int = 1 << 40
    max_dim: int = 1 << 32
    box_inner_multiple: int = 16
    max_element_stride: int = 8
    max_coord: int = (1 << 31) - 1  # the instruction's .s32 coordinates
    smem_align: int = 128
    map_bytes: int = 128
    map_align: int = 64


TMA_RULES = TmaRules()


@dataclass(frozen=True)
class TmaSwizzle:
    """One TMA swizzle mode: the driver enum, its span and the byte-address swizzle it applies.

    The byte swizzles are the ones wgmma reads (PTX ISA 9.7.15.5.1.2 "Shared Memory Matrix
    Layout": 128B XORs address bits [4,7) with [7,10), 64B bits [4,6) with [7,9), 32B bit 4
    with bit 7), which is why one shared layout serves both; ``pattern_bytes`` is where the
    pattern repeats, so a swizzled box starts on a multiple of it.
    """

    name: str  # the cutemma.smem SwizzleMode name
    enum: str  # CUtensorMapSwizzle member
    value: int  # its integer value (cuda.h)
    span_bytes: int  # largest inner box dimension in bytes
    byte_swizzle: Swizzle

    @property
    def pattern_bytes(self) -> int:
        """Bytes after which the XOR pattern repeats (16 for no swizzle).

        >>> TMA_SWIZZLES["SW64"].pattern_bytes
        512
        """
        sw = self.byte_swizzle
        return 1 << (sw.base + sw.bits + sw.shift) if sw.bits else 16


TMA_SWIZZLES: dict[str, TmaSwizzle] = {
    "INTER": TmaSwizzle("INTER", "CU_TENSOR_MAP_SWIZZLE_NONE", 0, 256 * 16, Swizzle(0, 4, 3)),
    "SW32": TmaSwizzle("SW32", "CU_TENSOR_MAP_SWIZZLE_32B", 1, 32, Swizzle(1, 4, 3)),
    "SW64": TmaSwizzle("SW64", "CU_TENSOR_MAP_SWIZZLE_64B", 2, 64, Swizzle(2, 4, 3)),
    "SW128": TmaSwizzle("SW128", "CU_TENSOR_MAP_SWIZZLE_128B", 3, 128, Swizzle(3, 4, 3)),
}

# cutemma element type -> (CUtensorMapDataType member, value, bytes). tf32 is loaded as its
# fp32 bits (the tensor core reads the top 19); 8-bit floats and ints as raw bytes.
TMA_DTYPES: dict[str, tuple[str, int, int]] = {
    "f16": ("CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 6, 2),
    "bf16": ("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", 9, 2),
    "tf32": ("CU_TENSOR_MAP_DATA_TYPE_FLOAT32", 7, 4),
    "f32": ("CU_TENSOR_MAP_DATA_TYPE_FLOAT32", 7, 4),
    "e4m3": ("CU_TENSOR_MAP_DATA_TYPE_UINT8", 0, 1),
    "e5m2": ("CU_TENSOR_MAP_DATA_TYPE_UINT8", 0, 1),
    "s8": ("CU_TENSOR_MAP_DATA_TYPE_UINT8", 0, 1),
    "u8": ("CU_TENSOR_MAP_DATA_TYPE_UINT8", 0, 1),
}


# the element sizes of TMA_DTYPES (bytes), the only ones this module's maps move
ELEM_SIZES: tuple[int, ...] = tuple(sorted({b for _, _, b in TMA_DTYPES.values()}))


def _elem_bytes(dtype: str) -> int:
    if not isinstance(dtype, str) or dtype not in TMA_DTYPES:
        raise TmaError(f"TMA: element type {dtype!r}; give one of {', '.join(TMA_DTYPES)}")
    return TMA_DTYPES[dtype][2]


def _int(x: object, what: str) -> int:
    """``x`` as an int (a Python or numpy integer; not a bool, float or string)."""
    if type(x) is int:
        return x
    if isinstance(x, np.integer):
        return int(x)
    raise TmaError(f"TMA: {what} {x!r} must be a whole number (an int), not {type(x).__name__}")


def _ints(xs: object, what: str, hint: str) -> tuple[int, ...]:
    """``xs`` as a tuple of ints; ``hint`` says what the caller should have given."""
    if not isinstance(xs, (tuple, list)):
        raise TmaError(f"TMA: {what} {xs!r}: {hint}")
    return tuple(_int(x, f"{what} entry") for x in xs)


def _size_check(elem_bytes: object) -> int:
    eb = _int(elem_bytes, "element size")
    if eb not in ELEM_SIZES:
        sizes = f"{', '.join(map(str, ELEM_SIZES[:-1]))} or {ELEM_SIZES[-1]}"
        raise TmaError(f"TMA: element size {eb} bytes; TMA elements here are {sizes} bytes")
    return eb


@dataclass(frozen=True)
class TmaBox:
    """How TMA fills one shared-memory tile (shape (MN, K)).

    ``box`` is the box in global dimension order: (elements along the contiguous global
    mode, rows along the other). ``copies`` holds one ``(d_contig, d_other, smem_elem)``
    per box: its origin relative to the tile's origin, in the same order, and where it
    lands (element offset in the tile, before the swizzle). ``contiguous`` says which tile
    mode is contiguous in global memory ('K' or 'MN').

    >>> b = TmaBox("bf16", "MN", (64, 64), "SW128", ((0, 0, 0), (64, 0, 4096)))
    >>> b.bytes, b.box_bytes, b.swizzle_enum
    (16384, 8192, 3)
    """

    dtype: str
    contiguous: str
    box: tuple[int, int]
    swizzle: str
    copies: tuple[tuple[int, int, int], ...]

    def __post_init__(self) -> None:
        _elem_bytes(self.dtype)
        if self.contiguous not in ("K", "MN"):
            raise TmaError(f"TmaBox: contiguous={self.contiguous!r}; 'K' or 'MN'")
        box = _ints(self.box, "box", "a pair (inner, outer) of extents in 1 .. 256")
        if len(box) != 2 or not all(1 <= b <= TMA_RULES.max_box for b in box):
            raise TmaError(
                f"TmaBox: box {self.box!r}: a pair (inner, outer) of extents in 1 .. "
                f"{TMA_RULES.max_box}"
            )
        if not isinstance(self.swizzle, str) or self.swizzle not in TMA_SWIZZLES:
            raise TmaError(f"TmaBox: swizzle {self.swizzle!r}; one of {', '.join(TMA_SWIZZLES)}")
        hint = "a tuple of (d_contig, d_other, smem_elem) triples, one per box"
        if not isinstance(self.copies, tuple | list) or not self.copies:
            raise TmaError(f"TmaBox: copies {self.copies!r}: {hint}")
        copies = tuple(_ints(c, "copies entry", hint) for c in self.copies)
        for c, t in zip(self.copies, copies, strict=True):
            if len(t) != 3 or min(t) < 0:
                raise TmaError(f"TmaBox: copies entry {c!r}: {hint}, each >= 0")
        object.__setattr__(self, "box", box)  # plain ints (numpy integers are integers)
        object.__setattr__(self, "copies", copies)

    @property
    def elem_bytes(self) -> int:
        return _elem_bytes(self.dtype)

    @property
    def box_bytes(self) -> int:
        """Bytes one copy moves: what its mbarrier's expect-tx counts (zero fill included)."""
        return self.box[0] * self.box[1] * self.elem_bytes

    @property
    def bytes(self) -> int:
        """Bytes of the whole tile (every copy)."""
        return self.box_bytes * len(self.copies)

    @property
    def swizzle_enum(self) -> int:
        """The ``CUtensorMapSwizzle`` value."""
        return TMA_SWIZZLES[self.swizzle].value


def element_swizzle(mode: TmaSwizzle, elem_bytes: int) -> Swizzle:
    """The byte swizzle of ``mode`` acting on element offsets of ``elem_bytes``-byte elements.

    >>> str(element_swizzle(TMA_SWIZZLES["SW128"], 2))
    'Sw<3,3,3>'
    """
    if not isinstance(mode, TmaSwizzle):
        named = isinstance(mode, str) and mode in TMA_SWIZZLES
        hint = f"TMA_SWIZZLES[{mode!r}]" if named else "TMA_SWIZZLES['SW128']"
        raise TmaError(
            f"TMA: element_swizzle takes a TmaSwizzle mode, got {mode!r}; give one of "
            f"TMA_SWIZZLES ({', '.join(TMA_SWIZZLES)}), e.g. {hint}"
        )
    eb = _size_check(elem_bytes)
    sw = mode.byte_swizzle
    return Swizzle(sw.bits, sw.base - (eb.bit_length() - 1), sw.shift)


def _swizzle_of(layout, dtype: str) -> tuple[TmaSwizzle, Layout, int]:
    """The TMA swizzle whose byte pattern is the layout's element-unit swizzle."""
    if isinstance(layout, Layout):
        return TMA_SWIZZLES["INTER"], layout, 0
    if not isinstance(layout, ComposedLayout) or not isinstance(layout.inner, Layout):
        raise TmaError(f"TMA: expected a Layout or Swizzle o offset o Layout, got {layout!r}")
    sw = layout.outer
    if not isinstance(sw, Swizzle):
        raise TmaError(f"TMA: the outer function of {layout} is not a Swizzle")
    if not isinstance(layout.offset, int):
        raise TmaError(f"TMA: the offset of {layout} must be an int")
    eb = _elem_bytes(dtype)
    if sw.bits == 0:
        return TMA_SWIZZLES["INTER"], layout.inner, layout.offset
    for mode in TMA_SWIZZLES.values():
        if mode.byte_swizzle.bits and element_swizzle(mode, eb) == sw:
            return mode, layout.inner, layout.offset
    known = ", ".join(
        f"{element_swizzle(m, eb)} ({m.name})" for m in TMA_SWIZZLES.values() if m.byte_swizzle.bits
    )
    raise TmaError(
        f"TMA cannot produce the swizzle {sw} of {layout}: for {8 * eb}-bit elements TMA "
        f"swizzles are {known}"
    )


def _fits_shared(layout: Layout, elem_bytes: int, who: str) -> None:
    """A TmaError unless the tile fits in shared memory (its checks walk every element)."""
    from cutemma.hardware import MAX_SMEM_PER_BLOCK as SMEM_LIMIT
    from cutemma.layout import size

    n = size(layout)
    if n * elem_bytes > SMEM_LIMIT:
        raise TmaError(
            f"{who}: a shared tile of {n} elements x {elem_bytes} bytes; shared memory holds "
            f"at most {SMEM_LIMIT} bytes (use the tile of one stage)"
        )


def _extent(mode: Layout) -> int:
    n = 1
    for s, _ in _pairs(mode):
        n *= s
    return n


def tma_box(layout, dtype: str, contiguous: str) -> TmaBox:
    """The TMA boxes that fill shared tile ``layout`` (shape (MN, K), element units).

    ``contiguous`` names the tile mode that is contiguous in global memory: 'K' (a K-major
    operand) or 'MN'. The box's inner extent is the run of that mode at stride 1 in the
    layout (cut to the swizzle span and to 256); its outer extent is the run of the other
    mode at stride (inner extent), up to 256; the rest of the tile is covered by more
    boxes. The result is checked element by element against a model of the copy (dense
    box, then the byte swizzle on the shared address).

    An MN-major SW128 tile of 128 x 64 bf16 (tile_to_shape along K first) takes two boxes
    of 64 x 64, 8 KiB apart:

    >>> from cutemma.layout import tile_to_shape
    >>> from cutemma.smem import gmma_layout_atom
    >>> atom = gmma_layout_atom("MN", "SW128", "bf16")
    >>> tma_box(tile_to_shape(atom, (128, 64), (1, 0)), "bf16", "MN").copies
    ((0, 0, 0), (64, 0, 4096))
    """
    eb = _elem_bytes(dtype)
    if contiguous not in ("K", "MN"):
        raise TmaError(f"TMA: contiguous={contiguous!r}; the global-contiguous mode is 'K' or 'MN'")
    sw, inner, offset = _swizzle_of(layout, dtype)
    _fits_shared(inner, eb, "TMA")
    if len(inner) != 2:
        raise TmaError(f"TMA: layout {layout} must have rank 2, (MN, K); it has {len(inner)}")
    ci = 1 if contiguous == "K" else 0
    cmode, omode = inner[ci], inner[1 - ci]
    cp, op = _pairs(cmode), _pairs(omode)
    if not cp or cp[0][1] != 1:
        raise TmaError(
            f"TMA: layout {layout} has no stride-1 run along its {contiguous} mode, which is "
            "contiguous in global memory; a TMA box lands dense in shared memory, innermost "
            "global dimension fastest (choose the smem atom of the operand's major)"
        )
    inner_cap = min(TMA_RULES.max_box, sw.span_bytes // eb) if sw.byte_swizzle.bits else 256
    b0 = min(cp[0][0], inner_cap)
    if cp[0][0] % b0:
        raise TmaError(f"TMA: the contiguous run {cp[0][0]} of {layout} does not split by {b0}")
    if sw.byte_swizzle.bits and b0 * eb != sw.span_bytes:
        raise TmaError(
            f"TMA: layout {layout} has {sw.name} rows of {b0 * eb} bytes; TMA's {sw.name} box "
            f"rows are its span, {sw.span_bytes} bytes (use the {sw.name} layout atom)"
        )
    if (b0 * eb) % TMA_RULES.box_inner_multiple:
        raise TmaError(
            f"TMA: the box's inner extent {b0} x {eb} bytes is not a multiple of "
            f"{TMA_RULES.box_inner_multiple} bytes"
        )
    b1 = 1
    if op and op[0][1] == b0:
        b1 = min(op[0][0], TMA_RULES.max_box)
    box = (b0, b1)
    # every box origin: the tile coordinates not inside the box, in the layout's order
    c_ext, o_ext = _extent(cmode), _extent(omode)
    if c_ext % b0 or o_ext % b1:
        raise TmaError(f"TMA: box {box} does not tile the {c_ext} x {o_ext} tile of {layout}")
    coords = [(c, o) for o in range(0, o_ext, b1) for c in range(0, c_ext, b0)]
    copies = []
    for c, o in coords:
        crd = (o, c) if ci == 1 else (c, o)
        start = int(inner(*crd)) + offset
        copies.append((c, o, start))
    copies.sort(key=lambda x: x[2])
    result = TmaBox(dtype, contiguous, box, sw.name, tuple(copies))
    _check_model(result, layout, inner, offset, sw, ci, (c_ext, o_ext))
    return result


def _table(inner: Layout) -> np.ndarray:
    """[mn, k] -> offset of a rank-2 layout (numpy; the layout evaluated everywhere)."""
    from cutemma.mma.traits import mode_table

    rows = mode_table(inner.shape[0], inner.stride[0])
    cols = mode_table(inner.shape[1], inner.stride[1])
    return rows[:, None] + cols[None, :]


def _apply(sw: Swizzle, x: np.ndarray) -> np.ndarray:
    if sw.shift >= 0:
        return x ^ ((x & sw.yyy_mask) >> sw.shift)
    return x ^ ((x & sw.yyy_mask) << -sw.shift)


def _check_model(box: TmaBox, layout, inner: Layout, offset: int, sw: TmaSwizzle, ci, ext):
    """Every element lands where the layout says: dense box + byte swizzle = layout."""
    eb = box.elem_bytes
    b0, b1 = box.box
    sws = layout.outer if isinstance(layout, ComposedLayout) else None
    bsw = sw.byte_swizzle
    table = _table(inner)
    i = np.arange(b0)[None, :]
    j = np.arange(b1)[:, None]
    for c0, o0, start in box.copies:
        sbytes = start * eb
        align = max(TMA_RULES.smem_align, sw.pattern_bytes)
        if sbytes % align:
            raise TmaError(
                f"TMA: a box of {layout} starts at byte {sbytes} of the tile, not on "
                f"{align} bytes (the copy's destination alignment and the {sw.name} pattern)"
            )
        dense = sbytes + (i + b0 * j) * eb
        model = _apply(bsw, dense)
        ii, jj = np.broadcast_arrays(c0 + i, o0 + j)
        mn, kk = (jj, ii) if ci == 1 else (ii, jj)
        e = table[mn, kk] + offset
        want = (_apply(sws, e) if sws is not None else e) * eb
        if not np.array_equal(model, want):
            jj, ii = np.argwhere(model != want)[0]
            raise TmaError(
                f"TMA: box {box.box} at {(c0, o0)} puts element {(int(ii), int(jj))} at byte "
                f"{int(model[jj, ii])}, the layout {layout} at {int(want[jj, ii])}: the layout's "
                "rows are not dense box rows (TMA cannot produce it)"
            )


def _stride_question(elements: object, elem_bytes: object, dim: object) -> tuple[int, int, int]:
    """stride_refusal's arguments as ints, or the TmaError naming the one that is wrong."""
    elements, dim = _int(elements, "stride"), _int(dim, "stride's dim")
    eb = _size_check(elem_bytes)
    if not 0 < dim < TMA_RULES.max_rank:
        raise TmaError(
            f"TMA: stride of dim {dim}; strides belong to dims 1 .. {TMA_RULES.max_rank - 1} "
            "(dim 0 is the contiguous one, stride 1)"
        )
    return elements, eb, dim


def stride_refusal(elements: int, elem_bytes: int, dim: int = 1) -> str | None:
    """Why a global stride of ``elements`` cannot be a TMA stride of ``dim``, or None if it can.

    The driver's rule (:data:`TMA_RULES`): a positive multiple of 16 bytes below 2^40.
    ``elem_bytes`` is one of :data:`ELEM_SIZES` and ``dim`` in 1 .. ``TMA_RULES.max_rank`` - 1
    (dim 0 has no stride); anything else, or a non-int, raises TmaError.

    >>> stride_refusal(4096, 2) is None, stride_refusal(0, 2, dim=2)
    (True, 'stride 0 elements = 0 bytes of dim 2 must be a positive multiple of 16 bytes below 2^40; a zero (broadcast) stride is not allowed')
    """
    # cutemma.gemm's checked path (sm90_refusal) asks this per call with Python ints: one
    # test of the good case, the named error only past it
    if (
        type(elements) is not int
        or type(elem_bytes) is not int
        or type(dim) is not int
        or elem_bytes not in ELEM_SIZES
        or not 0 < dim < TMA_RULES.max_rank
    ):
        elements, elem_bytes, dim = _stride_question(elements, elem_bytes, dim)
    nbytes = elements * elem_bytes
    if nbytes % TMA_RULES.stride_multiple == 0 and 0 < nbytes < TMA_RULES.max_stride:
        return None
    return (
        f"stride {elements} elements = {nbytes} bytes of dim {dim} must be a positive multiple "
        f"of {TMA_RULES.stride_multiple} bytes below 2^{TMA_RULES.max_stride.bit_length() - 1}"
        + ("; a zero (broadcast) stride is not allowed" if nbytes == 0 else "")
    )


def batched_dims(
    dims: tuple[int, ...], strides: tuple[int, ...], batch: int | None, batch_stride: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(dims, strides) of a tensor map over ``batch`` matrices ``batch_stride`` elements apart.

    The batch is the outermost dimension (a rank-3 map of a rank-2 one); a shared operand
    (``batch`` None or 1, or ``batch_stride`` 0: every problem reads the same matrix)
    keeps its rank-2 map, since a TMA stride cannot be 0, and the kernel then passes no
    batch coordinate for it. ``dims`` (each >= 1) and ``strides`` (one per dim after the
    first, each >= 0) are tuples of ints, ``batch`` None or an int >= 1, ``batch_stride``
    an int >= 0; anything else raises TmaError. Whether TMA can walk the strides is
    :func:`tensor_map_args`' call.

    >>> batched_dims((64, 300), (64,), 8, 64 * 300)
    ((64, 300, 8), (64, 19200))
    >>> batched_dims((64, 300), (64,), 8, 0)
    ((64, 300), (64,))
    """
    dims = _ints(dims, "dims", "give the matrix's dims as a tuple of ints, contiguous first")
    strides = _ints(strides, "strides", "give the element strides of dims 1.. as a tuple of ints")
    if len(strides) != len(dims) - 1 or any(d < 1 for d in dims) or any(s < 0 for s in strides):
        raise TmaError(
            f"TMA: dims {dims} and strides {strides}: give dims >= 1 and one stride >= 0 for "
            "each dim after the first"
        )
    if batch is not None and _int(batch, "batch") < 1:
        raise TmaError(f"TMA: batch {batch}; give a problem count >= 1 (or None: no batch)")
    if _int(batch_stride, "batch_stride") < 0:
        raise TmaError(
            f"TMA: batch_stride {batch_stride}; give the element distance between problems, "
            ">= 0 (0: one matrix shared by every problem)"
        )
    if batch is None or batch == 1 or batch_stride == 0:
        return dims, strides
    return (*dims, int(batch)), (*strides, int(batch_stride))


@dataclass(frozen=True)
class TensorMapArgs:
    """The arguments of ``cuTensorMapEncodeTiled``, as plain ints (enums by value).

    >>> a = TensorMapArgs(9, 2, 0x1000, (64, 128), (128,), (64, 128), (1, 1), 0, 3, 3, 0)
    >>> a.rank, a.global_strides
    (2, (128,))
    """

    data_type: int
    rank: int
    global_address: int
    global_dim: tuple[int, ...]
    global_strides: tuple[int, ...]  # bytes, dims 1 .. rank-1
    box_dim: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: int  # CU_TENSOR_MAP_INTERLEAVE_NONE
    swizzle: int
    l2_promotion: int  # CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3
    oob_fill: int  # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: zeros past the edges

    def __post_init__(self) -> None:
        """The driver's limits (TmaRules) on the fields a hand-made map can get wrong."""
        r = TMA_RULES
        rank = _int(self.rank, "rank")
        dims = _ints(self.global_dim, "global_dim", "a tuple of extents")
        strides = _ints(self.global_strides, "global_strides", "a tuple of byte strides")
        box = _ints(self.box_dim, "box_dim", "a tuple of box extents")
        rules = [
            (1 <= rank <= r.max_rank, f"rank {rank} in 1 .. {r.max_rank}"),
            (
                len(dims) == len(box) == rank and len(strides) == rank - 1,
                f"global_dim, box_dim of {rank} entries and global_strides of {rank - 1}",
            ),
            (all(1 <= d <= r.max_dim for d in dims), f"global_dim {dims} each in [1, 2^32]"),
            (
                all(0 < s < r.max_stride and s % r.stride_multiple == 0 for s in strides),
                f"global_strides {strides} each a positive multiple of 16 bytes below 2^40",
            ),
            (all(1 <= b <= r.max_box for b in box), f"box_dim {box} each in [1, {r.max_box}]"),
        ]
        bad = [what for ok, what in rules if not ok]
        if bad:
            raise TmaError("TensorMapArgs: need " + "; ".join(bad))


L2_PROMOTION_256B = 3


def tensor_map_args(
    box: TmaBox, address: int, dims: tuple[int, ...], strides: tuple[int, ...]
) -> TensorMapArgs:
    """``cuTensorMapEncodeTiled`` arguments for a global tensor loaded by ``box``.

    ``dims`` are the global extents in TMA order (the contiguous one first: for a K-major
    A that is (K, M[, batch])); ``strides`` the element strides of dims 1.. (the first
    dim has stride 1). Boxes past the tensor's edge are filled with zeros.

    >>> from cutemma.layout import tile_to_shape
    >>> from cutemma.smem import gmma_layout_atom
    >>> b = tma_box(tile_to_shape(gmma_layout_atom("K", "SW128", "bf16"), (128, 64)), "bf16", "K")
    >>> a = tensor_map_args(b, 0x7F0000000000, (4096, 8192), (4096,))
    >>> a.global_dim, a.global_strides, a.box_dim, a.swizzle
    ((4096, 8192), (8192,), (64, 128), 3)
    >>> tensor_map_args(b, 0x7F0000000000, (100, 8192), (100,))
    Traceback (most recent call last):
    ...
    cutemma.errors.TmaError: TMA: stride 100 elements = 200 bytes of dim 1 must be a positive multiple of 16 bytes below 2^40 (pad the leading dimension to a multiple of 8 elements)
    """
    if not isinstance(box, TmaBox):
        raise TmaError(
            f"TMA: tensor_map_args takes the TmaBox of tma_box(layout, dtype, major), got {box!r}"
        )
    eb = box.elem_bytes
    shape_hint = (
        f"give {TMA_RULES.min_rank} to {TMA_RULES.max_rank} dims and one stride for each dim "
        "after the first, as tuples of ints"
    )
    dims = _ints(dims, "dims", shape_hint)
    strides = _ints(strides, "strides", shape_hint)
    rank = len(dims)
    if not TMA_RULES.min_rank <= rank <= TMA_RULES.max_rank or len(strides) != rank - 1:
        raise TmaError(f"TMA: dims {dims} and strides {strides}: {shape_hint}")
    address = _int(address, "global address")
    if not 0 <= address < TMA_RULES.max_address:
        raise TmaError(
            f"TMA: global address {address}; a device pointer is in [0, 2^64) (data_ptr())"
        )
    if address % TMA_RULES.global_align:
        raise TmaError(
            f"TMA: global address {address:#x} is not {TMA_RULES.global_align}-byte aligned"
        )
    for i, d in enumerate(dims):
        if not 1 <= d <= TMA_RULES.max_dim:
            raise TmaError(f"TMA: dim {i} = {d} must be in [1, 2^32]")
    for i, s in enumerate(strides, start=1):
        why = stride_refusal(s, eb, i)
        if why is not None:
            what = "leading dimension" if i == 1 else "batch stride"
            raise TmaError(
                f"TMA: {why} (pad the {what} to a multiple of "
                f"{TMA_RULES.stride_multiple // eb} elements)"
            )
    box_dim = tuple(box.box) + (1,) * (rank - 2)
    return TensorMapArgs(
        data_type=TMA_DTYPES[box.dtype][1],
        rank=rank,
        global_address=int(address),
        global_dim=tuple(int(d) for d in dims),
        global_strides=tuple(int(s) * eb for s in strides),
        box_dim=box_dim,
        element_strides=(1,) * rank,
        interleave=0,
        swizzle=box.swizzle_enum,
        l2_promotion=L2_PROMOTION_256B,
        oob_fill=0,
    )


class TensorMap(ctypes.Structure):
    """The opaque 128-byte ``CUtensorMap``, 64-byte aligned, passed to kernels by value."""

    _pack_ = 1
    _fields_ = [("words", ctypes.c_uint64 * 16)]


def encode_tensor_map(args: TensorMapArgs) -> bytes:
    """The 128 bytes of ``cuTensorMapEncodeTiled(args)`` (needs the driver; cached per args).

    >>> encode_tensor_map(TensorMapArgs(9, 2, 0, (64, 64), (128,), (64, 64), (1, 1), 0, 3, 3, 0))  # doctest: +SKIP
    b'...'
    """
    if not isinstance(args, TensorMapArgs):  # checked before the cache: it hashes its key
        raise TmaError(
            f"TMA: encode_tensor_map takes the TensorMapArgs of tensor_map_args(...), got {args!r}"
        )
    return _encode(args)


@lru_cache(maxsize=4096)
def _encode(args: TensorMapArgs) -> bytes:
    try:
        from cuda.bindings import driver
    except ImportError as exc:  # pragma: no cover - the cuda extra is missing
        raise TmaError(f"TMA: cuda.bindings is needed to encode a tensor map ({exc})") from None
    u64, u32 = driver.cuuint64_t, driver.cuuint32_t
    status, tmap = driver.cuTensorMapEncodeTiled(
        driver.CUtensorMapDataType(args.data_type),
        args.rank,
        args.global_address,
        [u64(d) for d in args.global_dim],
        [u64(s) for s in args.global_strides],
        [u32(b) for b in args.box_dim],
        [u32(e) for e in args.element_strides],
        driver.CUtensorMapInterleave(args.interleave),
        driver.CUtensorMapSwizzle(args.swizzle),
        driver.CUtensorMapL2promotion(args.l2_promotion),
        driver.CUtensorMapFloatOOBfill(args.oob_fill),
    )
    if int(status) != 0:
        raise TmaError(f"cuTensorMapEncodeTiled refused {args}: {status!r}")
    return ctypes.string_at(tmap.getPtr(), TMA_RULES.map_bytes)


def tensor_map_param(raw: bytes) -> TensorMap:
    """A ctypes kernel-argument box holding a tensor map (for ``cuLaunchKernel``).

    >>> bytes(tensor_map_param(bytes(range(128))))[:4]
    b'\\x00\\x01\\x02\\x03'
    """
    if not isinstance(raw, (bytes, bytearray)) or len(raw) != TMA_RULES.map_bytes:
        got = f"{len(raw)} bytes" if isinstance(raw, (bytes, bytearray)) else repr(raw)[:60]
        raise TmaError(
            f"TMA: a tensor map is {TMA_RULES.map_bytes} bytes (encode_tensor_map's result), "
            f"got {got}"
        )
    return TensorMap.from_buffer_copy(raw)
