"""TiledMMA/ThrMMA and TiledCopy/ThrCopy: atoms composed over threads and values, tensors partitioned.

>>> from cutemma.tiled import make_tiled_mma
>>> make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2)).size
128
"""

from cutemma.tiled.copy_analysis import bank_conflicts, coalescing, explain, vector_bits
from cutemma.tiled.tiled_copy import (
    ThrCopy,
    TiledCopy,
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_copy_D,
    make_tiled_copy_S,
)
from cutemma.tiled.tiled_mma import ThrMma, TiledMma, make_tiled_mma, tv_offsets

__all__ = [
    "bank_conflicts",
    "coalescing",
    "explain",
    "vector_bits",
    "ThrCopy",
    "ThrMma",
    "TiledCopy",
    "TiledMma",
    "make_tiled_copy",
    "make_tiled_copy_A",
    "make_tiled_copy_B",
    "make_tiled_copy_C",
    "make_tiled_copy_D",
    "make_tiled_copy_S",
    "make_tiled_mma",
    "tv_offsets",
]
