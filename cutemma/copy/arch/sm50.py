"""sm50: warp shuffles that CuTe uses as copy atoms (cute/arch/copy_sm50.hpp).

``SM50_Shuffle_U32_2x2Trans_XOR<m>`` exchanges two 32-bit registers between lanes ``t``
and ``t ^ m`` so that the pair's 2x2 block of registers is transposed: the lane whose
bit ``m`` is ``q`` ends with, in register ``r``, register ``q`` of the lane whose bit ``m``
is ``r`` (one or two ``shfl.sync.bfly``). Index space: bit ``64*lane + 32*register``.

>>> from cutemma.copy import copy_traits
>>> str(copy_traits('SM50_Shuffle_U32_2x2Trans_XOR4').dst_layout)
'((4,2,4),(32,2)):((64,32,512),(1,256))'
"""

from __future__ import annotations

from cutemma.copy.arch import table_family, tv
from cutemma.copy.operation import CopyOperation, Operand
from cutemma.copy.traits import CopyTraits
from cutemma.layout import Layout


def _shuffle(mask: int):
    name = f"SM50_Shuffle_U32_2x2Trans_XOR{mask}"

    def build():
        op = CopyOperation(
            name,
            50,
            "sm50.shuffle",
            "shfl.sync.bfly.b32",
            Operand("reg", "uint32_t", 2),
            Operand("reg", "uint32_t", 2),
            params=(("xor", mask),),
            note=f"2x2 transpose of registers between lanes t and t^{mask} (__shfl_xor_sync)",
        )
        src = tv([(32, 64)], [(64, 1)])
        # lane = a + m*q + 2m*b holds, in register r, register q of lane a + m*r + 2m*b
        dst = tv(
            [(mask, 64), (2, 32), (32 // (2 * mask), 128 * mask)],
            [(32, 1), (2, 64 * mask)],
        )
        return op, CopyTraits(Layout(32), src, dst, src)

    return name, build


SHUFFLE = table_family(
    "sm50.shuffle",
    50,
    "SM50_Shuffle_U32_2x2Trans_XOR1 / _XOR4: 2x2 register transpose between lane pairs",
    dict(_shuffle(m) for m in (1, 4)),
)
