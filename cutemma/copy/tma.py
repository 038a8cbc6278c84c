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
calls the driver (GPU machines only) and caches the 128-byte map per argument tuple: those
and :class:`TmaBox` live in :mod:`cutemma.copy.tma_map` (no layout algebra: what a cached
kernel's launch needs) and are re-exported here.

Every hardware number used here is in :data:`TMA_RULES`, :data:`TMA_SWIZZLES` and
:data:`cutemma.copy.tma_map.SWIZZLE_MODES`.

>>> from cutemma.layout import tile_to_shape
>>> from cutemma.smem import gmma_layout_atom
>>> box = tma_box(tile_to_shape(gmma_layout_atom("K", "SW128", "bf16"), (128, 64)), "bf16", "K")
>>> box.box, box.swizzle, box.copies, box.bytes
((64, 128), 'SW128', ((0, 0, 0),), 16384)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cutemma.copy.tma_map import (  # noqa: F401  (the driver side, re-exported here)
    ELEM_SIZES,
    L2_PROMOTION_256B,
    SWIZZLE_MODES,
    TMA_DTYPES,
    TMA_RULES,
    TensorMap,
    TensorMapArgs,
    TmaBox,
    TmaRules,
    _elem_bytes,
    _int,
    _ints,
    _size_check,
    batched_dims,
    encode_tensor_map,
    stride_refusal,
    tensor_map_args,
    tensor_map_param,
)
from cutemma.errors import TmaError
from cutemma.layout import ComposedLayout, Layout
from cutemma.layout.layout import coalesced_pairs as _pairs
from cutemma.layout.swizzle import Swizzle

__all__ = [
    "ELEM_SIZES", "L2_PROMOTION_256B", "TMA_DTYPES", "TMA_RULES", "TMA_SWIZZLES", "TensorMap",
    "TensorMapArgs", "TmaBox", "TmaRules", "TmaSwizzle", "batched_dims", "element_swizzle",
    "encode_tensor_map", "stride_refusal", "tensor_map_args", "tensor_map_param", "tma_box",
]  # fmt: skip


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


# the byte swizzle of each mode (PTX ISA 9.7.15.5.1.2, above); the driver's enum and span are
# cutemma.copy.tma_map's SWIZZLE_MODES
_BYTE_SWIZZLES = {"INTER": Swizzle(0, 4, 3), "SW32": Swizzle(1, 4, 3), "SW64": Swizzle(2, 4, 3),
                  "SW128": Swizzle(3, 4, 3)}  # fmt: skip
TMA_SWIZZLES: dict[str, TmaSwizzle] = {
    name: TmaSwizzle(name, enum, value, span, _BYTE_SWIZZLES[name])
    for name, (enum, value, span) in SWIZZLE_MODES.items()
}


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
    mode at stride (inner extent), or its largest divisor up to 256 (320 rows: boxes of
    160); the rest of the tile is covered by more boxes. The result is checked element by
    element against a model of the copy (dense box, then the byte swizzle on the shared
    address).

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
    if op and op[0][1] == b0:  # the run, or its largest part a box can hold that tiles it
        run = op[0][0]
        b1 = max(d for d in range(1, min(run, TMA_RULES.max_box) + 1) if run % d == 0)
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
