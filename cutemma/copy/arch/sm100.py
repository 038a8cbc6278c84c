"""sm100: 8-bit ldmatrix/stmatrix and 256-bit global loads/stores (cute/arch/copy_sm100.hpp).

- ``SM100_U8x4/8/16_STSM_T``: ``stmatrix.m16n8.x<n>.trans.b8``. Register side: lane t
  holds 4 bytes of matrix j at rows ``2*(t%4) + {0,1}``, byte columns ``t/4 + {0,8}``
  of an 8-row x 16-byte block (bit ``1024*j + 128*row + 8*byte``); memory side: lane r
  addresses 16-byte row r (the m8n8 rows of :mod:`cutemma.copy.arch`).
- ``SM100_U8x8/16_LDSM_T``: ``ldmatrix.m16n16.x<m>.trans.b8`` followed by CuTe's byte
  shuffle so that its registers equal the stmatrix m16n8 trans fragment above (CuTe's
  comment on the atom). A 16x16-byte matrix is two 8-row blocks; lane t addresses the
  row ``(t&1) + 2*((t>>2)&3)`` of block ``(t>>1)&1`` in that index space (CuTe's
  Copy_Traits; lanes 16-31 give matrix 1 for x2, no address for x1).
- ``SM100_SU4/SU6_DU8x16_x<n>_LDSM_N``: ``ldmatrix.m8n16.x<n>.b8x16.b4x16_p64/.b6x16_p32``,
  4- or 6-bit elements in shared memory expanded to bytes: the m8n8 plain layout of
  128-bit destination rows.
- ``SM100_LOAD/STORE_256bit_CACHE_NOALLOCATION``: ``ld/st.global.L1::no_allocate.v8``,
  one thread, ``(1,256):(0,1)``.

>>> from cutemma.copy import copy_traits
>>> str(copy_traits('SM100_U8x16_LDSM_T').src_layout)
'((2,2,4,2),128):((128,1024,256,2048),1)'
"""

from __future__ import annotations

from cutemma.copy.arch import m8n8_regs, rows_layout, table_family, tv
from cutemma.copy.operation import CopyOperation, Operand
from cutemma.copy.traits import CopyTraits
from cutemma.layout import Layout


def _b8_trans_regs(n: int) -> Layout:
    """stmatrix m16n8 .trans .b8 registers of n 8x16-byte blocks (see the module text)."""
    return tv([(4, 256), (8, 8)], [(8, 1), (2, 128), (2, 64), (n, 1024)])


def _stsm8(n: int):
    name = f"SM100_U8x{4 * n}_STSM_T"

    def build():
        op = CopyOperation(
            name,
            100,
            "sm100.stsm8",
            f"stmatrix.sync.aligned.m16n8.x{n}.trans.shared.b8",
            Operand("reg", "uint32_t", n),
            Operand("smem", "uint128_t", 1),
            modifiers=("trans",),
            params=(("num", n),),
            ptx_isa=(8, 6),
        )
        src = _b8_trans_regs(n)
        return op, CopyTraits(Layout(32), src, rows_layout(8 * n), src)

    return name, build


def _ldsm8_t(m: int):
    name = f"SM100_U8x{8 * m}_LDSM_T"

    def build():
        op = CopyOperation(
            name,
            100,
            "sm100.ldsm8",
            f"ldmatrix.sync.aligned.m16n16.x{m}.trans.shared.b8",
            Operand("smem", "uint128_t", 1),
            Operand("reg", "uint32_t", 2 * m),
            modifiers=("trans",),
            params=(("num", m),),
            ptx_isa=(8, 6),
            note="followed by a byte shuffle (CuTe) so the registers match stmatrix m16n8 trans",
        )
        src = tv([(2, 128), (2, 1024), (4, 256), (2, 2048 if m == 2 else 0)], [(128, 1)])
        dst = _b8_trans_regs(2 * m)
        return op, CopyTraits(Layout(32), src, dst, dst)

    return name, build


def _ldsm_expand(bits: int, n: int):
    name = f"SM100_SU{bits}_DU8x16_x{n}_LDSM_N"
    suffix = {4: "b4x16_p64", 6: "b6x16_p32"}[bits]

    def build():
        op = CopyOperation(
            name,
            100,
            "sm100.ldsm8",
            f"ldmatrix.sync.aligned.m8n16.x{n}.shared.b8x16.{suffix}",
            Operand("smem", "uint128_t", 1),
            Operand("reg", "uint32_t", n),
            params=(("num", n), ("src_bits", bits)),
            ptx_isa=(8, 6),
        )
        dst = m8n8_regs(n, False)
        return op, CopyTraits(Layout(32), rows_layout(8 * n), dst, dst)

    return name, build


def _wide(store: bool):
    name = f"SM100_{'STORE' if store else 'LOAD'}_256bit_CACHE_NOALLOCATION"

    def build():
        mem, reg = Operand("gmem", "uint256_t", 1), Operand("reg", "uint32_t", 8)
        op = CopyOperation(
            name,
            100,
            "sm100.global256",
            f"{'st' if store else 'ld'}.global.L1::no_allocate.v8.f32",
            reg if store else mem,
            mem if store else reg,
            params=(("bits", 256),),
            ptx_isa=(8, 8),
        )
        one = Layout((1, 256), (0, 1))
        return op, CopyTraits(Layout(1, 0), one, one, one)

    return name, build


LDSM8 = table_family(
    "sm100.ldsm8",
    100,
    "SM100_U8x{8,16}_LDSM_T (ldmatrix m16n16 trans b8), SM100_SU{4,6}_DU8x16_x{1,2,4}_LDSM_N",
    dict([_ldsm8_t(m) for m in (1, 2)] + [_ldsm_expand(b, n) for b in (4, 6) for n in (1, 2, 4)]),
)
STSM8 = table_family(
    "sm100.stsm8",
    100,
    "SM100_U8x{4,8,16}_STSM_T (stmatrix m16n8 trans b8)",
    dict(_stsm8(n) for n in (1, 2, 4)),
)
GLOBAL256 = table_family(
    "sm100.global256",
    100,
    "SM100_LOAD_256bit_CACHE_NOALLOCATION, SM100_STORE_256bit_CACHE_NOALLOCATION",
    dict(_wide(s) for s in (False, True)),
)
