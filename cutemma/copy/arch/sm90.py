"""sm90: ``stmatrix`` (CuTe's STSM atoms, cute/arch/copy_sm90.hpp).

``SM90_U32x<n>_STSM_N`` / ``SM90_U16x<2n>_STSM_T`` are ``stmatrix.m8n8.x<n>[.trans].b16``,
the mirror of ldmatrix: the register side is the source, the 16-byte rows (one address
per lane ``< 8n``) the destination, and the reference is the register side.

>>> from cutemma.copy import copy_traits
>>> t = copy_traits('SM90_U16x8_STSM_T')
>>> str(t.src_layout), str(t.dst_layout)
('((4,8),(16,2,4)):((256,16),(1,128,1024))', '(32,128):(128,1)')
"""

from __future__ import annotations

from cutemma.copy.arch import m8n8_regs, rows_layout, table_family
from cutemma.copy.operation import CopyOperation, Operand
from cutemma.copy.traits import CopyTraits
from cutemma.layout import Layout


def _stsm(n: int, trans: bool):
    name = f"SM90_U16x{2 * n}_STSM_T" if trans else f"SM90_U32x{n}_STSM_N"

    def build():
        op = CopyOperation(
            name,
            90,
            "sm90.stsm",
            f"stmatrix.sync.aligned.m8n8.x{n}{'.trans' if trans else ''}.shared.b16",
            Operand("reg", "uint32_t", n),
            Operand("smem", "uint128_t", 1),
            modifiers=("trans",) if trans else (),
            params=(("num", n), ("trans", trans)),
            ptx_isa=(7, 8),
        )
        src = m8n8_regs(n, trans)
        return op, CopyTraits(Layout(32), src, rows_layout(8 * n), src)

    return name, build


STSM = table_family(
    "sm90.stsm",
    90,
    "SM90_U32x{1,2,4}_STSM_N and SM90_U16x{2,4,8}_STSM_T (stmatrix m8n8 b16, plain/.trans)",
    dict(_stsm(n, t) for t in (False, True) for n in (1, 2, 4)),
)
