"""TMA and bulk copies on the CPU: what ``cp.async.bulk[.tensor]`` does with a tensor map.

The model reads the same ``cuTensorMapEncodeTiled`` arguments the driver encodes
(:class:`cutemma.copy.tma.TensorMapArgs`), so a CPU run and a GPU run start from one object:

- a *box* (``box_dim``, innermost dimension first) at signed coordinates ``coords`` of a
  global tensor (``global_dim``, byte ``global_strides`` of dims 1..) lands in shared memory
  dense, innermost dimension fastest (PTX ISA 9.7.9.25.5.1, tiled mode);
- the shared byte address of each element is then swizzled by the map's mode
  (:data:`cutemma.copy.tma.TMA_SWIZZLES`: 16-byte chunks XORed with the row bits);
- a load fills elements outside the tensor with zeros (``CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE``);
  a store or reduction skips them (the box is clipped to the tensor);
- a multicast load writes the same box into every CTA of its mask;
- ``cp.reduce.async.bulk.tensor .add`` adds the box to the global tensor;
- a bulk copy (``cp.async.bulk``, no tensor map) moves ``n`` contiguous bytes.

Global memory is a flat numpy array of elements starting at the map's base address, shared
memory one of the box's elements (starting at a base aligned to the swizzle pattern).

>>> import numpy as np
>>> from cutemma.copy.tma import TmaBox, tensor_map_args
>>> args = tensor_map_args(TmaBox("f32", "K", (4, 2), "INTER", ((0, 0, 0),)), 0, (6, 3), (8,))
>>> g = np.arange(24, dtype=np.float32)          # 3 rows of 6, row stride 8
>>> tma_load(args, g, (4, 2)).reshape(2, 4).tolist()   # row 2 cols 4, 5 then zeros
[[20.0, 21.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cutemma.copy.tma import TMA_DTYPES, TMA_RULES, TMA_SWIZZLES, TensorMapArgs
from cutemma.errors import TmaError
from cutemma.layout.checks import as_int

_SWIZZLE_BY_ENUM = {m.value: m for m in TMA_SWIZZLES.values()}
_BYTES_BY_ENUM = {v: b for _, v, b in TMA_DTYPES.values()}


def _swizzle_bytes(enum: int, byte_offsets: np.ndarray) -> np.ndarray:
    """Apply the map's byte swizzle to shared byte offsets (base aligned to the pattern)."""
    mode = _SWIZZLE_BY_ENUM.get(enum)
    if mode is None:
        raise TmaError(f"TMA swizzle value {enum}: one of {sorted(_SWIZZLE_BY_ENUM)}")
    sw = mode.byte_swizzle
    if not sw.bits:
        return byte_offsets
    return byte_offsets ^ ((byte_offsets & sw.yyy_mask) >> sw.shift)


def _checked_args(args: TensorMapArgs, coords: Sequence[int]) -> tuple[int, ...]:
    """The map and the coordinates checked; the coordinates as plain ints."""
    if not isinstance(args, TensorMapArgs):
        raise TmaError(
            f"TMA emulation: expected the TensorMapArgs of cutemma.copy.tma.tensor_map_args(...), "
            f"got {type(args).__name__}"
        )
    if isinstance(coords, str) or not isinstance(coords, Sequence | np.ndarray):
        raise TmaError(f"TMA: coordinates {coords!r} must be a sequence of {args.rank} ints")
    out = tuple(as_int(c) for c in coords)
    if None in out:
        raise TmaError(f"TMA: coordinates {tuple(coords)} must be whole numbers (ints)")
    top = TMA_RULES.max_coord
    if any(not -top - 1 <= c <= top for c in out):
        raise TmaError(
            f"TMA: coordinates {out}: the instruction's coordinates are signed 32-bit, in "
            f"[-2^31, 2^31 - 1] (PTX ISA cp.async.bulk.tensor)"
        )
    return out


def _checked_array(x, what: str, need: int) -> np.ndarray:
    """``x`` as a numpy array holding at least ``need`` elements, else a TmaError."""
    if not isinstance(x, np.ndarray):
        raise TmaError(f"TMA emulation: {what} must be a numpy array, got {type(x).__name__}")
    if x.dtype.kind in "USV":  # the copy fills zeros past the edges: elements are numbers
        raise TmaError(f"TMA emulation: {what} holds {x.dtype} values; give a numeric array")
    if x.size < need:
        raise TmaError(
            f"TMA emulation: {what} holds {x.size} elements but the copy reaches element "
            f"{need - 1}; pass the whole tensor (global memory from the map's base address, "
            "shared memory from the box's start)"
        )
    return x


def box_addresses(
    args: TensorMapArgs, coords: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(shared element index, global element index, in bounds) of every box element.

    All three are flat arrays in the box's dense order (innermost dimension fastest); the
    shared index is after the swizzle, the global index is meaningful where in bounds.

    >>> from cutemma.copy.tma import TmaBox, tensor_map_args
    >>> a = tensor_map_args(TmaBox("bf16", "K", (64, 2), "SW128", ((0, 0, 0),)), 0, (64, 2), (64,))
    >>> s, g, ok = box_addresses(a, (0, 0))
    >>> s[64:72].tolist()     # row 1: its 16-byte chunks XORed with 1 (8 bf16 per chunk)
    [72, 73, 74, 75, 76, 77, 78, 79]
    """
    coords = _checked_args(args, coords)
    eb = _BYTES_BY_ENUM.get(args.data_type)
    if eb is None:
        raise TmaError(f"TMA data type value {args.data_type}: one of {sorted(_BYTES_BY_ENUM)}")
    rank = args.rank
    if len(coords) != rank:
        raise TmaError(f"TMA: {len(coords)} coordinates {tuple(coords)} for a rank-{rank} map")
    if any(e != 1 for e in args.element_strides):
        raise TmaError(f"TMA emulation: element strides {args.element_strides}; only 1 is modelled")
    box = args.box_dim
    # np.indices over the box reversed: the last axis is dimension 0 (fastest in shared memory)
    idx = np.indices(tuple(reversed(box))).reshape(rank, -1)[::-1]
    crd = idx + np.asarray(coords, dtype=np.int64)[:, None]
    dims = np.asarray(args.global_dim, dtype=np.int64)[:, None]
    inside = np.all((crd >= 0) & (crd < dims), axis=0)
    strides = (1,) + tuple(s // eb for s in args.global_strides)
    gidx = np.zeros(idx.shape[1], dtype=np.int64)
    for d in range(rank):
        gidx += np.where(inside, crd[d], 0) * strides[d]
    dense = np.arange(idx.shape[1], dtype=np.int64) * eb
    sidx = _swizzle_bytes(args.swizzle, dense) // eb
    return sidx, gidx, inside


def tma_load(args: TensorMapArgs, gmem: np.ndarray, coords: Sequence[int]) -> np.ndarray:
    """The shared-memory box a TMA load at ``coords`` writes (flat, swizzled, zeros outside).

    A multicast load writes this same array into each CTA of its mask.

    >>> import numpy as np
    >>> from cutemma.copy.tma import TmaBox, tensor_map_args
    >>> a = tensor_map_args(TmaBox("f32", "K", (4, 1), "INTER", ((0, 0, 0),)), 0, (4, 2), (4,))
    >>> tma_load(a, np.arange(8.0, dtype=np.float32), (-2, 1)).tolist()
    [0.0, 0.0, 4.0, 5.0]
    """
    sidx, gidx, inside = box_addresses(args, coords)
    gmem = _checked_array(gmem, "gmem", int(gidx[inside].max(initial=-1)) + 1)
    out = np.zeros(sidx.size, dtype=gmem.dtype)
    out[sidx] = np.where(inside, gmem.reshape(-1)[gidx], 0)
    return out


def tma_store(
    args: TensorMapArgs, smem: np.ndarray, gmem: np.ndarray, coords: Sequence[int], add=False
) -> None:
    """Write (``add``: add) the shared box into ``gmem`` at ``coords``, clipped to the tensor.

    >>> import numpy as np
    >>> from cutemma.copy.tma import TmaBox, tensor_map_args
    >>> a = tensor_map_args(TmaBox("f32", "K", (4, 1), "INTER", ((0, 0, 0),)), 0, (4, 2), (4,))
    >>> g = np.zeros(8, dtype=np.float32)
    >>> tma_store(a, np.array([1, 2, 3, 4], dtype=np.float32), g, (2, 1)); g.tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0]
    """
    sidx, gidx, inside = box_addresses(args, coords)
    _check_store(args, _checked_args(args, coords))
    smem = _checked_array(smem, "smem", sidx.size)
    gmem = _checked_array(gmem, "gmem", int(gidx[inside].max(initial=-1)) + 1)
    if smem.dtype != gmem.dtype:
        raise TmaError(
            f"TMA {'reduce' if add else 'store'}: smem holds {smem.dtype}, gmem {gmem.dtype}; TMA "
            f"moves the map's elements unconverted: give both arrays the same dtype"
        )
    flat = gmem.reshape(-1)
    vals = smem.reshape(-1)[sidx[inside]]
    if add:
        np.add.at(flat, gidx[inside], vals)
    else:
        flat[gidx[inside]] = vals


def _check_store(args: TensorMapArgs, coords: Sequence[int]) -> None:
    """Refuse the stores this model does not describe (both seen on the H100 by the probes of
    :mod:`cutemma.cuda.probe_copy_tma`)."""
    if any(c < 0 for c in coords):
        raise TmaError(
            f"TMA store/reduce at coordinates {tuple(coords)}: a negative coordinate trapped "
            "(illegal instruction) on the H100; start stored boxes at coordinates >= 0"
        )
    eb = _BYTES_BY_ENUM[args.data_type]
    row = args.global_dim[0] * eb
    if row % 16 and coords[0] + args.box_dim[0] > args.global_dim[0]:
        raise TmaError(
            f"TMA store/reduce of a box crossing dim 0 = {args.global_dim[0]} elements "
            f"({row} bytes, not a multiple of 16): the H100 wrote past the edge, which this "
            "model does not describe; pad dim 0 to a multiple of 16 bytes"
        )


def tma_reduce_add(
    args: TensorMapArgs, smem: np.ndarray, gmem: np.ndarray, coords: Sequence[int]
) -> None:
    """``cp.reduce.async.bulk.tensor .add``: gmem += the shared box, clipped to the tensor.

    >>> import numpy as np
    >>> from cutemma.copy.tma import TmaBox, tensor_map_args
    >>> a = tensor_map_args(TmaBox("f32", "K", (4, 1), "INTER", ((0, 0, 0),)), 0, (4, 1), (4,))
    >>> g = np.ones(4, dtype=np.float32)
    >>> tma_reduce_add(a, np.arange(4, dtype=np.float32), g, (1, 0)); g.tolist()
    [1.0, 1.0, 2.0, 3.0]
    """
    tma_store(args, smem, gmem, coords, add=True)


def bulk_copy(src: np.ndarray, dst: np.ndarray, src_byte: int, dst_byte: int, nbytes: int) -> None:
    """``cp.async.bulk``: ``nbytes`` contiguous bytes (a multiple of 16, 16-byte aligned ends).

    >>> import numpy as np
    >>> s, d = np.arange(32, dtype=np.uint8), np.zeros(32, dtype=np.uint8)
    >>> bulk_copy(s, d, 16, 0, 16); d[:3].tolist()
    [16, 17, 18]
    """
    for what, v in (("size", nbytes), ("source offset", src_byte), ("destination", dst_byte)):
        if as_int(v) is None or v < 0:
            raise TmaError(f"bulk copy: {what} {v!r} must be a whole number of bytes >= 0")
        if v % 16:
            raise TmaError(f"bulk copy: {what} {v} bytes is not a multiple of 16 (PTX ISA)")
    for what, arr, start in (("source", src, src_byte), ("destination", dst, dst_byte)):
        if not isinstance(arr, np.ndarray):
            raise TmaError(f"bulk copy: the {what} must be a numpy array, got {type(arr).__name__}")
        if arr.dtype.kind == "O" or not arr.flags.c_contiguous:
            # bytes are copied through a flat byte view: a strided array would be copied
            # into a temporary (the destination left unchanged), an object array has no bytes
            raise TmaError(
                f"bulk copy: the {what} must be a C-contiguous array of plain values (got "
                f"{arr.dtype}, {'contiguous' if arr.flags.c_contiguous else 'strided'}); "
                "pass np.ascontiguousarray(x) and copy back"
            )
        if start + nbytes > arr.nbytes:
            raise TmaError(
                f"bulk copy: {nbytes} bytes at {what} offset {start} run past its "
                f"{arr.nbytes} bytes"
            )
    sb, db = src.reshape(-1).view(np.uint8), dst.reshape(-1).view(np.uint8)
    db[dst_byte : dst_byte + nbytes] = sb[src_byte : src_byte + nbytes]
