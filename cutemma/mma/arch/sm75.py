"""sm75: Turing's warp-wide ``mma.sync`` m16n8k8 (f16 inputs, f32 accumulators) and m8n8k16 (s8).

CuTe has exactly these two (cute/atom/mma_traits_sm75.hpp); their layouts are the
warp-level ones every later architecture reuses (:func:`cutemma.mma.arch.sync_layouts`).

>>> from cutemma.mma import mma_op
>>> mma_op('SM75_8x8x16_S32S8S8S32_TN').ptx
'mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32'
"""

from __future__ import annotations

from cutemma.mma.arch import SyncSpec, sync_family

F16 = sync_family(SyncSpec(75, "f16", ("f16",), ((16, 8, 8),), (("f32", "f16", "f16", "f32"),)))
INT8 = sync_family(SyncSpec(75, "int8", ("s8",), ((8, 8, 16),), (("s32", "s8", "s8", "s32"),)))
