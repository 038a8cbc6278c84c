"""sm90 warp-level atoms: ``mma.sync`` f64 m16n8k4/k8/k16 and their complex forms.

(The warpgroup GMMA families live in ``sm90_gmma``.) Layouts are the warp-level
ones (cute/atom/mma_traits_sm90.hpp agrees); complex<double> atoms are issued as
four real f64 MMAs with the same layouts.

>>> from cutemma.mma import make_mma_atom
>>> str(make_mma_atom('SM90_16x8x16_F64F64F64F64_TN').tv_layout_A)
'((4,8),(2,4)):((16,1),(8,64))'
"""

from __future__ import annotations

from cutemma.mma.arch import SyncSpec, sync_family

_SHAPES = ((16, 8, 4), (16, 8, 8), (16, 8, 16))

F64 = sync_family(SyncSpec(90, "f64", ("f64",), _SHAPES, (("f64", "f64", "f64", "f64"),)))
C64 = sync_family(
    SyncSpec(
        90,
        "c64",
        ("c64",),
        _SHAPES,
        (("c64", "c64", "c64", "c64"),),
        note="complex<double> MMA issued as four real f64 mma.sync",
    )
)
