"""CopyTraits: what a copy instruction means, in CuTe's terms (bit layouts).

As CuTe's ``Copy_Traits``: ``thr_id`` (logical thread -> thread index), and three
(thread, value) -> bit layouts over one index space: ``src_layout`` (which bits each
thread supplies), ``dst_layout`` (which bits each thread receives) and ``ref_layout``
(the reference the TiledCopy partitions by; it equals one of the two). Tensor-memory
atoms also carry ``val_id``: logical bit -> tensor-memory bit address (CuTe's ``ValID``).

>>> from cutemma.copy import copy_traits
>>> t = copy_traits('SM75_U16x8_LDSM_T')
>>> str(t.dst_layout)
'((4,8),(16,2,4)):((256,16),(1,128,1024))'
"""

from __future__ import annotations

from dataclasses import dataclass

from cutemma.errors import CopyError
from cutemma.layout import Layout, size


@dataclass(frozen=True)
class CopyTraits:
    """ThrID and the Src/Dst/Ref (thread, bit) layouts of one copy instruction.

    >>> from cutemma.copy import copy_traits
    >>> copy_traits('SM80_CP_ASYNC_CACHEALWAYS<uint128_t>').bits
    128
    """

    thr_id: Layout
    src_layout: Layout
    dst_layout: Layout
    ref_layout: Layout
    val_id: Layout | None = None

    def __post_init__(self):
        threads = size(self.thr_id)
        for which in ("src_layout", "dst_layout", "ref_layout"):
            lay = getattr(self, which)
            if not isinstance(lay, Layout):
                raise CopyError(f"{which} must be a (thread, bit) Layout, got {lay!r}")
            if not isinstance(lay.shape, tuple) or len(lay.shape) != 2:
                raise CopyError(f"{which} {lay} must have two modes (thread, bit)")
            if size(lay[0]) != threads:
                raise CopyError(
                    f"{which} {lay} has {size(lay[0])} threads; thr_id {self.thr_id} has {threads}"
                )

    @property
    def threads(self) -> int:
        """Number of threads that issue the instruction together.

        >>> from cutemma.copy import copy_traits
        >>> copy_traits('SM75_U32x1_LDSM_N').threads
        32
        """
        return size(self.thr_id)

    @property
    def bits(self) -> int:
        """Bits each thread moves per instruction (size of the reference value mode).

        >>> from cutemma.copy import copy_traits
        >>> copy_traits('SM75_U32x4_LDSM_N').bits
        128
        """
        return size(self.ref_layout[1])
