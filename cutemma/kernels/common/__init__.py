"""What both kernel families (:mod:`cutemma.kernels.sm80`, :mod:`cutemma.kernels.sm90`) share
and neither owns: element types, per-thread partitions of a TiledMMA's tables, the C text of
those partitions and of swizzles, the tile schedulers' text, the kernel-source template. A
family imports from here, never from the other family.

>>> from cutemma.kernels.common.types import ELEM_BYTES
>>> ELEM_BYTES["bf16"], ELEM_BYTES["e4m3"]
(2, 1)
"""
