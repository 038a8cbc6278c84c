"""TiledMMA and ThrMMA: atoms composed over threads and values, tensors partitioned among threads.

>>> from cutemma.tiled import make_tiled_mma
>>> make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2)).size
128
"""

from cutemma.tiled.tiled_mma import ThrMma, TiledMma, make_tiled_mma, tv_offsets

__all__ = ["ThrMma", "TiledMma", "make_tiled_mma", "tv_offsets"]
