"""sm75: Turing's warp-wide ``mma.sync`` m16n8k8 (f16 inputs, f16 or f32 accumulators) and
m8n8k16 (s8).

CuTe 4.2 (cute/atom/mma_traits_sm75.hpp) has the f32-accumulator m16n8k8 and the s8 m8n8k16;
the f16-accumulator ``SM75_16x8x8_F16F16F16F16_TN`` is cuBLASDx's extension of CuTe (same
name, same layouts) and a PTX ISA instruction on sm_75 (9.7.14.5.7: mma.m16n8k8 .f16 .f16
.f16 .f16, ".f16 ... requires sm_75"). Its f16x2 accumulators hold the same (row, column)
pairs as the f32 ones (9.7.14.5.8: c0,c1 at row groupID, col 2*threadID_in_group + i; c2,c3 at
row groupID + 8), so every layout is the warp-level one later architectures reuse
(:func:`cutemma.mma.arch.sync_layouts`).

>>> from cutemma.mma import mma_op
>>> mma_op('SM75_8x8x16_S32S8S8S32_TN').ptx
'mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32'
>>> mma_op('SM75_16x8x8_F16F16F16F16_TN').ptx
'mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16'
"""

from __future__ import annotations

from cutemma.mma.arch import SyncSpec, sync_family

F16 = sync_family(
    SyncSpec(
        75,
        "f16",
        ("f16",),
        ((16, 8, 8),),
        (("f16", "f16", "f16", "f16"), ("f32", "f16", "f16", "f32")),
    )
)
INT8 = sync_family(SyncSpec(75, "int8", ("s8",), ((8, 8, 16),), (("s32", "s8", "s8", "s32"),)))
