"""sm75: ``ldmatrix`` (CuTe's LDSM atoms) and ``movmatrix`` (cute/arch/copy_sm75.hpp).

``SM75_U32x<n>_LDSM_N`` is ``ldmatrix.m8n8.x<n>.b16``: each lane receives one 32-bit
register per matrix; ``SM75_U16x<2n>_LDSM_T`` is the ``.trans`` form, whose registers
hold two 16-bit values of one column. Layouts come from the m8n8 description in
:mod:`cutemma.copy.arch` (PTX ISA fragment figures for ldmatrix); the reference is the
register side.

``SM75_U32x1_MOVM_T`` (``movmatrix.m8n8.trans.b16``): CuTe gives it the identity
``(32,32):(32,1)`` on both sides, which we keep to stay equal to CuTe, although the
instruction transposes the 8x8 matrix (PTX ISA, movmatrix): a TiledCopy built from it
places values as an identity register copy would.

>>> from cutemma.copy import copy_traits
>>> str(copy_traits('SM75_U32x2_LDSM_N').src_layout)
'((16,2),128):((128,0),1)'
"""

from __future__ import annotations

from cutemma.copy.arch import m8n8_family, table_family, tv
from cutemma.copy.operation import CopyOperation, Operand
from cutemma.copy.traits import CopyTraits
from cutemma.layout import Layout

LDSM = m8n8_family(75, "LDSM", (6, 5))


def _movm():
    ident = tv([(32, 32)], [(32, 1)])
    op = CopyOperation(
        "SM75_U32x1_MOVM_T",
        75,
        "sm75.movm",
        "movmatrix.sync.aligned.m8n8.trans.b16",
        Operand("reg", "uint32_t", 1),
        Operand("reg", "uint32_t", 1),
        modifiers=("trans",),
        ptx_isa=(7, 8),
        note="CuTe's traits are the identity on both sides; the instruction transposes",
    )
    return op, CopyTraits(Layout(32), ident, ident, ident)


MOVM = table_family(
    "sm75.movm", 75, "SM75_U32x1_MOVM_T (movmatrix m8n8 .trans b16)", {"SM75_U32x1_MOVM_T": _movm}
)
