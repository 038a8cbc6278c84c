"""CPU emulation of whole tiled GEMMs through the atoms' own arithmetic.

``gemm`` rounds its inputs to the atom's types first (float64 data given to a bf16 atom is
rounded to bf16, as the GPU would read it); ``rounded_reference`` is the float64 product of
those rounded inputs, the reference to compare with.

>>> import numpy as np
>>> from cutemma.tiled import make_tiled_mma
>>> float(gemm(make_tiled_mma("SM80_16x8x8_F32TF32TF32F32_TN"), np.ones((3, 5)), np.ones((2, 5)))[0, 0])
5.0
"""

from cutemma.emulate.gemm import gemm, rounded_reference

__all__ = ["gemm", "rounded_reference"]
