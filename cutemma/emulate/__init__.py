"""CPU emulation of whole tiled GEMMs through the atoms' own arithmetic.

>>> import numpy as np
>>> from cutemma.tiled import make_tiled_mma
>>> float(gemm(make_tiled_mma("SM80_16x8x8_F32TF32TF32F32_TN"), np.ones((3, 5)), np.ones((2, 5)))[0, 0])
5.0
"""

from cutemma.emulate.gemm import gemm

__all__ = ["gemm"]
