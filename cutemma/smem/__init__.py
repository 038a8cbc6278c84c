"""Shared-memory layouts and matrix descriptors for wgmma (sm90) and tcgen05 (sm100).

- :mod:`~cutemma.smem.swizzle_atoms`: the swizzle modes (one table) and the layout atoms,
  ``gmma_layout_atom`` / ``umma_layout_atom``, in element units.
- :mod:`~cutemma.smem.canonical`: the canonical layouts of the PTX ISA (seed 001) and
  ``match_canonical``, which reads a layout back into them.
- :mod:`~cutemma.smem.gmma_desc`, :mod:`~cutemma.smem.umma_desc`: the 64-bit descriptors (one
  bitfield table each), built from a layout, decoded from a raw value, described in words.
- :mod:`~cutemma.smem.instr_desc`: the tcgen05 32-bit instruction descriptor.

>>> from cutemma.layout import tile_to_shape
>>> tile = tile_to_shape(gmma_layout_atom("MN", "SW128", "bf16"), (128, 64))
>>> d = make_gmma_desc(tile, "MN", "bf16")
>>> (d.leading_byte_offset << 4, d.stride_byte_offset << 4)
(1024, 2048)
"""

from cutemma.smem.canonical import CanonicalForm, canonical_layout, match_canonical
from cutemma.smem.gmma_desc import (
    GMMA_DESC_FIELDS,
    GmmaDescriptor,
    decode_gmma_desc,
    make_gmma_desc,
)
from cutemma.smem.instr_desc import (
    INSTR_DESC_BLOCK_SCALED_FIELDS,
    INSTR_DESC_FIELDS,
    InstrDescriptor,
    decode_instr_desc,
    make_instr_desc,
)
from cutemma.smem.swizzle_atoms import (
    SWIZZLE_MODES,
    SwizzleMode,
    element_bits,
    gmma_layout_atom,
    swizzle_mode,
    umma_layout_atom,
)
from cutemma.smem.umma_desc import (
    UMMA_DESC_FIELDS,
    UmmaDescriptor,
    decode_umma_desc,
    make_umma_desc,
)

__all__ = [
    "CanonicalForm", "canonical_layout", "match_canonical",
    "GMMA_DESC_FIELDS", "GmmaDescriptor", "decode_gmma_desc", "make_gmma_desc",
    "INSTR_DESC_FIELDS", "INSTR_DESC_BLOCK_SCALED_FIELDS", "InstrDescriptor",
    "decode_instr_desc", "make_instr_desc",
    "SWIZZLE_MODES", "SwizzleMode", "element_bits", "gmma_layout_atom", "swizzle_mode",
    "umma_layout_atom",
    "UMMA_DESC_FIELDS", "UmmaDescriptor", "decode_umma_desc", "make_umma_desc",
]  # fmt: skip
