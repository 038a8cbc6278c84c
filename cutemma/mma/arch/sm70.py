"""sm70: Volta's quadpair ``mma.sync.m8n8k4`` with F16 or F32 accumulators, all four majors.

Eight threads (a quadpair: lanes 0-3 and 16-19) compute an 8x8x4 product. The
layouts are CuTe's (cute/atom/mma_traits_sm70.hpp, seed 004): A/B use the
``Row`` layout when K-major (T for A, N for B) and ``Col`` otherwise.

>>> from cutemma.mma import make_mma_atom
>>> str(make_mma_atom('SM70_8x8x4_F32F16F16F32_NT').tv_layout_C)
'((2,2,2),(2,2,2)):((1,16,4),(8,2,32))'
"""

from __future__ import annotations

from cutemma.layout import Layout
from cutemma.mma.arch import MAJORS, SyncSpec, sync_family

SM70_QuadPair = Layout((4, 2), (1, 16))
SM70_8x4_Row = Layout((8, 4), (1, 8))  # (T8,V4) -> (M8,K4), K-major operand
SM70_8x4_Col = Layout(((4, 2), 4), ((8, 4), 1))  # (T8,V4) -> (M8,K4), M-major operand
SM70_8x8_16b = Layout((8, 8), (1, 8))  # (T8,V8) -> (M8,N8), f16 accumulators
SM70_8x8_32b = Layout(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))  # f32 accumulators


def _layouts(shape, types, majors):
    # A is K-major when its letter is T; B is K-major when its letter is N.
    a = SM70_8x4_Row if majors[0] == "T" else SM70_8x4_Col
    b = SM70_8x4_Row if majors[1] == "N" else SM70_8x4_Col
    c = SM70_8x8_16b if types[3].name == "f16" else SM70_8x8_32b
    return SM70_QuadPair, a, b, c


QUADPAIR = sync_family(
    SyncSpec(
        arch=70,
        short="quadpair",
        inputs=("f16",),
        shapes=((8, 8, 4),),
        types=(("f16", "f16", "f16", "f16"), ("f32", "f16", "f16", "f32")),
        majors=MAJORS,
        layouts=_layouts,
    )
)
