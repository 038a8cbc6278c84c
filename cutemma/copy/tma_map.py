"""TMA's driver side: the rules of ``cuTensorMapEncodeTiled``, the boxes a plan holds, and the
128-byte ``CUtensorMap`` of a global tensor.

What a GEMM launch needs of TMA when its kernel is already compiled: the limits
(:data:`TMA_RULES`), the element types and swizzle modes the driver knows by value,
:class:`TmaBox` (the boxes a plan derived, read back from the kernel's disk index),
:func:`tensor_map_args` (the ``cuTensorMapEncodeTiled`` arguments of a global tensor, pure
Python, checked against the rules) and :func:`encode_tensor_map` (the driver's encoding, through
:mod:`cutemma.libcuda`, cached per argument tuple). Deriving boxes from a shared-memory layout
is :mod:`cutemma.copy.tma`'s (which re-exports everything here): this module imports no layout
algebra, so a cached kernel's first call does not load it.

>>> b = TmaBox("bf16", "K", (64, 128), "SW128", ((0, 0, 0),))
>>> a = tensor_map_args(b, 0x7F0000000000, (4096, 8192), (4096,))
>>> a.global_dim, a.global_strides, a.box_dim, a.swizzle
((4096, 8192), (8192,), (64, 128), 3)
"""

from __future__ import annotations

import ctypes
import sys
from dataclasses import dataclass
from functools import lru_cache

from cutemma.errors import TmaError


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

# CUtensorMapSwizzle by cutemma.smem SwizzleMode name: (enum member, its value (cuda.h), the
# largest inner box extent in bytes). The byte swizzle each applies is cutemma.copy.tma's
# TMA_SWIZZLES (it needs the layout algebra's Swizzle).
SWIZZLE_MODES: dict[str, tuple[str, int, int]] = {
    "INTER": ("CU_TENSOR_MAP_SWIZZLE_NONE", 0, 256 * 16),
    "SW32": ("CU_TENSOR_MAP_SWIZZLE_32B", 1, 32),
    "SW64": ("CU_TENSOR_MAP_SWIZZLE_64B", 2, 64),
    "SW128": ("CU_TENSOR_MAP_SWIZZLE_128B", 3, 128),
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
    np = sys.modules.get("numpy")  # a numpy integer exists only once numpy is imported
    if np is not None and isinstance(x, np.integer):
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
        if not isinstance(self.swizzle, str) or self.swizzle not in SWIZZLE_MODES:
            raise TmaError(f"TmaBox: swizzle {self.swizzle!r}; one of {', '.join(SWIZZLE_MODES)}")
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
        return SWIZZLE_MODES[self.swizzle][1]


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
    # cutemma.gemm's checked path (sm90/operands.views) asks this per call with Python ints: one
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

    >>> from cutemma.copy.tma import tma_box
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
    from cutemma.libcuda import encode_tiled, lib, status_name

    if lib() is None:
        raise TmaError("TMA: encoding a tensor map needs the CUDA driver (libcuda.so.1)")
    status, raw = encode_tiled(
        args.data_type, args.rank, args.global_address, args.global_dim, args.global_strides,
        args.box_dim, args.element_strides, args.interleave, args.swizzle, args.l2_promotion,
        args.oob_fill, TMA_RULES.map_bytes, TMA_RULES.map_align,
    )  # fmt: skip
    if status != 0:
        raise TmaError(f"cuTensorMapEncodeTiled refused {args}: {status_name(status)} ({status})")
    return raw


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
