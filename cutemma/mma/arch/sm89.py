"""sm89: Ada's fp8 ``mma.sync.m16n8k32`` for every E4M3/E5M2 pair, F32 and F16 accumulators.

>>> from cutemma.mma import mma_op
>>> mma_op('SM89_16x8x32_F16E5M2E4M3F16_TN').ptx
'mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e4m3.f16'
"""

from __future__ import annotations

from cutemma.mma.arch import SyncSpec, sync_family

_FP8 = ("e4m3", "e5m2")

FP8 = sync_family(
    SyncSpec(
        89,
        "fp8",
        _FP8,
        ((16, 8, 32),),
        tuple((acc, a, b, acc) for acc in ("f32", "f16") for a in _FP8 for b in _FP8),
    )
)
