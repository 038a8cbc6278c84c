"""sm80: Ampere's warp-wide ``mma.sync`` atoms, one family per input type class.

f16/bf16 (m16n8k8, m16n8k16), tf32 (m16n8k4, m16n8k8), f64 (m8n8k4) and its
complex form built from four f64 MMAs, s8/u8 (m8n8k16, m16n8k16, m16n8k32),
s4/u4 (m8n8k32, m16n8k32, m16n8k64) each also with ``_SATURATE``
(``.satfinite``), and b1 (m8n8k128, m16n8k128, m16n8k256) with XOR or AND + popc.
Layouts follow the PTX ISA fragments (:func:`cutemma.mma.arch.sync_layouts`),
which equal CuTe's (cute/atom/mma_traits_sm80.hpp) except one: CuTe writes the
A layout of SM80_16x8x128_S32U1U1S32 with stride ``((512,1),((16,8)))``, nested one
level deeper than its shape ``((4,8),(32,2))`` so it cannot be evaluated; we use
the ISA's ``((4,8),(32,2)):((512,1),(16,8))``. And CuTe's B layout of
SM80_16x8x32_S32{S4,U4}{S4,U4}S32, ``((4,8),(8)):((32,1),(8))``, holds some B elements twice
and misses others; the ISA (9.7.14.5.10: k = 8*threadID_in_group + i) gives
``((4,8),(8)):((64,1),(8))``, which we use (with CuTe's 1-tuple value mode).

>>> from cutemma.mma import make_mma_atom
>>> str(make_mma_atom('SM80_16x8x128_S32U1U1S32_TN_XORPOPC').tv_layout_A)
'((4,8),(32,2)):((512,1),(16,8))'
"""

from __future__ import annotations

from cutemma.layout import Layout
from cutemma.mma.arch import (
    INT_MODIFIERS,
    INT_SUFFIXES,
    WARP,
    SyncSpec,
    int_types,
    sync_family,
    sync_layouts,
)


def _wrap_values(layout: Layout) -> Layout:
    """``(T,V):(t,v)`` with a lone value mode written as the 1-tuple ``(V)``."""
    if isinstance(layout.shape[1], tuple):
        return layout
    return Layout((layout.shape[0], (layout.shape[1],)), (layout.stride[0], (layout.stride[1],)))


def _int4_layouts(shape, types, majors):
    # CuTe spells the lone value mode of the m8n8k32 A/B and the m16n8k32 B layouts as
    # Shape<_8> (cute/atom/mma_traits_sm80.hpp); keeping that nesting makes every TiledMMA
    # view print as C++'s. The strides stay the ISA's (see the module docstring).
    a, b, c = sync_layouts(shape, 4)
    if shape[2] == 32:
        b = _wrap_values(b)
        a = _wrap_values(a) if shape[0] == 8 else a
    return WARP, a, b, c


F16 = sync_family(
    SyncSpec(
        80,
        "f16",
        ("f16", "bf16"),
        ((16, 8, 8), (16, 8, 16)),
        (
            ("f16", "f16", "f16", "f16"),
            ("f32", "f16", "f16", "f32"),
            ("f32", "bf16", "bf16", "f32"),
        ),
    )
)
TF32 = sync_family(
    SyncSpec(80, "tf32", ("tf32",), ((16, 8, 4), (16, 8, 8)), (("f32", "tf32", "tf32", "f32"),))
)
F64 = sync_family(SyncSpec(80, "f64", ("f64",), ((8, 8, 4),), (("f64", "f64", "f64", "f64"),)))
C64 = sync_family(
    SyncSpec(
        80,
        "c64",
        ("c64",),
        ((8, 8, 4),),
        (("c64", "c64", "c64", "c64"), ("gc64", "c64", "c64", "gc64")),
        note="complex<double> MMA issued as real f64 mma.sync: four for C64, three for GC64 "
        "(Gauss: t0 += ar*br, t1 += ai*bi, t2 += (ar+ai)*(br+bi))",
    )
)
INT8 = sync_family(
    SyncSpec(
        80,
        "int8",
        ("s8", "u8"),
        ((8, 8, 16), (16, 8, 16), (16, 8, 32)),
        int_types("s8", "u8"),
        suffixes=INT_SUFFIXES,
        modifiers=INT_MODIFIERS,
    )
)
INT4 = sync_family(
    SyncSpec(
        80,
        "int4",
        ("s4", "u4"),
        ((8, 8, 32), (16, 8, 32), (16, 8, 64)),
        int_types("s4", "u4"),
        suffixes=INT_SUFFIXES,
        modifiers=INT_MODIFIERS,
        layouts=_int4_layouts,
    )
)
B1 = sync_family(
    SyncSpec(
        80,
        "b1",
        ("b1",),
        ((8, 8, 128), (16, 8, 128), (16, 8, 256)),
        (("s32", "b1", "b1", "s32"),),
        suffixes=(("XORPOPC",), ("ANDPOPC",)),
        modifiers=((("XORPOPC",), "xor.popc"), (("ANDPOPC",), "and.popc")),
    )
)
