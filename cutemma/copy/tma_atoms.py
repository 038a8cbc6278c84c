"""TMA copy atoms from a shared-memory layout: the box (cutemma.copy.tma) names the atom.

``make_tma_atom`` asks :func:`cutemma.copy.tma.tma_box` (the host-side TMA module) which box
fills the shared tile, and returns the CopyAtom ``SM90_TMA_<KIND><bits>`` of one instruction
(``bits`` = box elements x element width, as CuTe's ``make_tma_copy`` sizes
``Copy_Traits<SM90_TMA_LOAD, NumBitsPerTMA>``) together with the box, which also says how
many instructions fill the tile and where each lands.

>>> from cutemma.layout import tile_to_shape
>>> from cutemma.smem import gmma_layout_atom
>>> smem = tile_to_shape(gmma_layout_atom("K", "SW128", "bf16"), (128, 64))
>>> atom, box = make_tma_atom("LOAD", smem, "bf16", "K")   # doctest: +SKIP
>>> atom.name, atom.num_val_src, box.box                   # doctest: +SKIP
('SM90_TMA_LOAD<131072>', 8192, (64, 128))
"""

from __future__ import annotations

from cutemma.copy.atom import CopyAtom
from cutemma.copy.catalog import make_copy_atom
from cutemma.errors import CopyError

TMA_KINDS = ("LOAD", "LOAD_MULTICAST", "STORE", "REDUCE_ADD")


def make_tma_atom(kind: str, smem_layout, dtype: str, contiguous: str = "K"):
    """(CopyAtom, TmaBox) of a TMA ``kind`` filling ``smem_layout`` (an (MN, K) tile).

    ``contiguous`` names the tile mode contiguous in global memory ('K' or 'MN').

    >>> make_tma_atom("GATHER", None, "bf16")
    Traceback (most recent call last):
    ...
    cutemma.errors.CopyError: TMA kind 'GATHER': one of LOAD, LOAD_MULTICAST, STORE, REDUCE_ADD
    """
    if kind not in TMA_KINDS:
        raise CopyError(f"TMA kind {kind!r}: one of {', '.join(TMA_KINDS)}")
    try:
        from cutemma.copy.tma import tma_box
    except ImportError:  # pragma: no cover - until the TMA host module is merged
        raise CopyError(
            "make_tma_atom needs cutemma.copy.tma (the TMA host side), which is not installed"
        ) from None
    box = tma_box(smem_layout, dtype, contiguous)
    atom = make_copy_atom(f"SM90_TMA_{kind}<{box.box_bytes * 8}>", dtype)
    return atom, box


def tma_instructions(atom: CopyAtom, box) -> int:
    """How many TMA instructions fill the tile (one per box copy).

    >>> from cutemma.layout import tile_to_shape
    >>> from cutemma.smem import gmma_layout_atom
    >>> tile = tile_to_shape(gmma_layout_atom("MN", "SW128", "bf16"), (128, 64), (1, 0))
    >>> tma_instructions(*make_tma_atom("LOAD", tile, "bf16", "MN"))
    2
    """
    if not isinstance(atom, CopyAtom) or atom.op.family != "sm90.tma":
        raise CopyError(
            f"tma_instructions: expected the TMA CopyAtom of make_tma_atom(...), got {atom!r}"
        )
    copies = getattr(box, "copies", None)
    if not isinstance(copies, tuple):
        raise CopyError(
            f"tma_instructions: expected the TmaBox of make_tma_atom(...) or tma_box(...), "
            f"got {box!r}"
        )
    return len(copies)
