"""sm100: tensor-memory copies ``tcgen05.ld`` / ``tcgen05.st`` / ``tcgen05.cp``.

Index space (CuTe, cute/atom/copy_traits_sm100.hpp): bit ``row * row_bits + b`` of the
``dp`` data-path lanes (rows) one warp touches, ``row_bits = B * R`` for a ``B``-bit
pattern repeated ``R`` times. The register side of one pattern, per lane t of the warp
(PTX ISA, tcgen05 "Matrix fragments for tcgen05.ld/st"):

- ``32x32b``: lane t holds row t, one 32-bit column per repetition;
- ``16x32bx2``: lanes 0-15 hold row t of the first half, lanes 16-31 of the second
  half (CuTe puts it R columns on: ``B = 64``);
- ``16x64b``: lane t: row ``t/4 + 8*(t%2)``, column ``(t/2)%2``;
- ``16x128b``: lane t: rows ``t/4`` and ``t/4 + 8``, column ``t%4``;
- ``16x256b``: lane t: rows ``t/4`` and ``t/4 + 8``, columns ``2*(t%4)`` and ``+1``;

each repetition adds the next ``B`` bits of every row. The tensor-memory side is
``(32, dp*row_bits):(0,1)`` (every lane names the warp's whole block: the instruction
takes one address). ``val_id`` maps a logical bit to its tensor-memory bit address:
column bits are contiguous, a lane is ``DP_BITS`` further; with ``.pack::16b`` /
``.unpack::16b`` only the low 16 bits of each 32-bit column hold data.
``tcgen05.cp`` (CuTe's UTCCP) copies shared memory, through a descriptor, to tensor
memory in 128x256b, 128x128b, 4x256b, 32x128b.warpx4 and 64x128b.warpx2 shapes.

>>> from cutemma.copy import copy_traits
>>> str(copy_traits('SM100_TMEM_LOAD_16dp128b2x').dst_layout)
'((4,8),(32,2,2)):((32,256),(1,2048,128))'
"""

from __future__ import annotations

from cutemma.copy.arch import table_family, tv
from cutemma.copy.operation import CopyOperation, Operand
from cutemma.copy.traits import CopyTraits
from cutemma.layout import Layout

# A tensor-memory address is lane << 16 | column, a column 32 bits wide; in CuTe's bit
# addresses one lane is 2**16 columns * 32 bits on (cute/arch/copy_sm100.hpp, TMEM::DP_b).
DP_BITS = 32 << 16

# shape token -> (data-path lanes, bits per lane per repetition B, largest repetition, PTX shape)
SHAPES = {
    "16dp256b": (16, 256, 32, "16x256b"),
    "16dp128b": (16, 128, 64, "16x128b"),
    "16dp64b": (16, 64, 128, "16x64b"),
    "16dp32b": (16, 64, 128, "16x32bx2"),
    "32dp32b": (32, 32, 128, "32x32b"),
}


def _reg_layout(shape: str, r: int) -> Layout:
    """The register side of ``shape`` repeated r times (module text)."""
    dp, b, _, _ = SHAPES[shape]
    row = b * r
    thr, val = {
        "32dp32b": ([(32, row)], [(32, 1), (r, 32)]),
        "16dp32b": ([(16, row), (2, 32 * r)], [(32, 1), (r, 32)]),
        "16dp64b": ([(2, 8 * row), (2, 32), (8, row)], [(32, 1), (r, 64)]),
        "16dp128b": ([(4, 32), (8, row)], [(32, 1), (2, 8 * row), (r, 128)]),
        "16dp256b": ([(4, 64), (8, row)], [(64, 1), (2, 8 * row), (r, 256)]),
    }[shape]
    return tv(thr, val, coalesce_val=True)


def _tmem(store: bool, shape: str, r: int, pack: bool):
    dp, b, _, ptx_shape = SHAPES[shape]
    verb = "STORE" if store else "LOAD"
    name = f"SM100_TMEM_{verb}_{shape}{r}x" + ("_16b" if pack else "")
    total = dp * b * r

    def build():
        regs = Operand("reg", "uint32_t", total // 1024)
        mem = Operand("tmem", "uint32_t", 1)
        packing = (".unpack::16b" if store else ".pack::16b") if pack else ""
        op = CopyOperation(
            name,
            100,
            f"sm100.tmem_{verb.lower()}",
            f"tcgen05.{'st' if store else 'ld'}.sync.aligned.{ptx_shape}.x{r}{packing}.b32",
            regs if store else mem,
            mem if store else regs,
            modifiers=("pack16",) if pack else (),
            # 16x32bx2 takes immHalfSplitoff, the column of its second half: R (as CuTe)
            params=(("shape", shape), ("reps", r), ("pack16", pack))
            + ((("half_split", r),) if shape == "16dp32b" else ()),
            ptx_isa=(8, 6),
        )
        tmem_side = Layout((32, total), (0, 1))
        regs_side = _reg_layout(shape, r)
        if pack:
            val_id = Layout(((16, b * r // 16), dp), ((1, 32), DP_BITS))
        else:
            val_id = Layout((b * r, dp), (1, DP_BITS))
        src, dst = (regs_side, tmem_side) if store else (tmem_side, regs_side)
        return op, CopyTraits(Layout(32), src, dst, tmem_side, val_id)

    return name, build


def _tmem_table(store: bool) -> dict:
    out = {}
    for shape, (_, _, most, _) in SHAPES.items():
        r = 1
        while r <= most:
            for pack in (False, True):
                name, build = _tmem(store, shape, r, pack)
                out[name] = build
            r *= 2
    return out


TMEM_LOAD = table_family(
    "sm100.tmem_load",
    100,
    "SM100_TMEM_LOAD_{16dp256b,16dp128b,16dp64b,16dp32b,32dp32b}<R>x[_16b] (tcgen05.ld)",
    _tmem_table(False),
)
TMEM_STORE = table_family(
    "sm100.tmem_store",
    100,
    "SM100_TMEM_STORE_{16dp256b,16dp128b,16dp64b,16dp32b,32dp32b}<R>x[_16b] (tcgen05.st)",
    _tmem_table(True),
)

# tcgen05.ld.red (PTX ISA 8.8, "tcgen05.ld"): a 32x32b or 16x32bx2 load that also reduces, with
# .min or .max, the values each lane loads across its columns into one more register, redVal;
# .num at least .x2. Targets sm_101a/sm_110a and the sm_103f family only. CuTe's
# SM100_TMEM_LOAD_STAT_32dp32b{32,128}x (newer CUTLASS than the 4.2 headers on PyPI, arch
# define CUTE_ARCH_TCGEN05_TMEM_STAT_ENABLED for sm_103a/f) issue the 32x32b form with .max.f32:
# the row maximum a softmax needs. Their layouts are the plain 32dp32b<R>x atom's.
STAT_REPS = (32, 128)


def _tmem_stat(r: int):
    name = f"SM100_TMEM_LOAD_STAT_32dp32b{r}x"

    def build():
        plain_op, traits = _tmem(False, "32dp32b", r, False)[1]()
        op = CopyOperation(
            name,
            100,
            "sm100.tmem_load_stat",
            f"tcgen05.ld.red.sync.aligned.32x32b.x{r}.max.f32",
            plain_op.src,
            plain_op.dst,
            modifiers=("red_max",),
            params=(("shape", "32dp32b"), ("reps", r), ("red", "max")),
            ptx_isa=(8, 8),
            note="sm_103a/sm_103f (tcgen05.ld.red); also writes each thread's maximum over "
            "the columns it loads (its lane's row) to one more f32 register, CuTe's row_max",
        )
        return op, traits

    return name, build


TMEM_LOAD_STAT = table_family(
    "sm100.tmem_load_stat",
    100,
    "SM100_TMEM_LOAD_STAT_32dp32b{32,128}x (tcgen05.ld.red .max.f32, sm_103)",
    dict(_tmem_stat(r) for r in STAT_REPS),
)

# tcgen05.cp shapes: token -> (PTX shape, val_id (shape, stride in lanes L / bits), smem side
# (shape, stride), destination size). Strides written with L = one data-path lane.
_L = DP_BITS
UTCCP_SHAPES = {
    "128dp256bit": ("128x256b", ((128, 256), (_L, 1)), (32768, 1), 32768),
    "128dp128bit": ("128x128b", ((128, 128), (_L, 1)), (16384, 1), 16384),
    "4dp256bit": ("4x256b", ((128, 256), (_L, 1)), ((4, 256), (32, 128)), None),
    "4x32dp128bit": (
        "32x128b.warpx4",
        ((32, 128, 4), (_L, 1, 32 * _L)),
        ((32, 128, 4), (1, 32, 0)),
        16384,
    ),
    "2x64dp128bitlw0213": (
        "64x128b.warpx2::02_13",
        ((64, 128, 2), (_L, 1, 64 * _L)),
        ((64, 128, 2), (1, 64, 0)),
        16384,
    ),
    "2x64dp128bitlw0123": (
        "64x128b.warpx2::01_23",
        ((32, 128, 2, 2), (_L, 1, 64 * _L, 32 * _L)),
        ((32, 128, 2, 2), (1, 32, 4096, 0)),
        16384,
    ),
}


def _utccp(shape: str, ctas: int):
    name = f"SM100_UTCCP_{shape}_{ctas}cta"
    ptx_shape, (vs, vd), (ss, sd), dst_size = UTCCP_SHAPES[shape]

    def build():
        op = CopyOperation(
            name,
            100,
            "sm100.utccp",
            f"tcgen05.cp.cta_group::{ctas}.{ptx_shape}",
            Operand("smem", "uint64_t", 1),
            Operand("tmem", "uint32_t", 1),
            params=(("ctas", ctas), ("shape", shape)),
            ptx_isa=(8, 6),
            note="source is a shared-memory matrix descriptor; one thread issues it",
        )
        src = Layout((ctas, ss), (0, sd))
        dst = src if dst_size is None else Layout((ctas, dst_size), (0, 1))
        thr = Layout(ctas, 0 if ctas == 1 else 1)
        return op, CopyTraits(thr, src, dst, dst, Layout(vs, vd))

    return name, build


UTCCP = table_family(
    "sm100.utccp",
    100,
    "SM100_UTCCP_{128dp256bit,128dp128bit,4dp256bit,4x32dp128bit,2x64dp128bitlw0213,"
    "2x64dp128bitlw0123}_{1,2}cta (tcgen05.cp)",
    dict(_utccp(s, c) for s in UTCCP_SHAPES for c in (1, 2)),
)
