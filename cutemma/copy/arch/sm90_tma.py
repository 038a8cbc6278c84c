"""sm90: TMA and bulk copies (cute/arch/copy_sm90_tma.hpp), whose size comes from the box.

One thread issues a TMA; CuTe's traits are ``(1, bits):(0,1)`` on both sides, ``bits`` being
what one instruction moves: the box (the shared-memory tile of one ``cp.async.bulk.tensor``)
for TMA, the byte count for bulk copies. The name carries it as a template argument,
``SM90_TMA_LOAD<131072>`` (CuTe's ``Copy_Traits<SM90_TMA_LOAD, Int<131072>>``);
:func:`cutemma.copy.tma_atoms.make_tma_atom` derives it from a shared-memory layout.
``SM90_BULK_COPY_AUTO`` is CuTe's placeholder that picks the size itself: ``(1,1):(0,0)``.

>>> from cutemma.copy import copy_traits, copy_op
>>> str(copy_traits('SM90_TMA_LOAD<16384>').src_layout)
'(1,16384):(0,1)'
>>> copy_op('SM90_TMA_STORE<8192>').kind
'smem -> gmem'
"""

from __future__ import annotations

from cutemma.copy.arch import CopyFamily, register_copy_family, reject
from cutemma.copy.operation import CopyOperation, Operand
from cutemma.copy.traits import CopyTraits
from cutemma.layout import Layout
from cutemma.mma.names import MmaName

# name tokens -> (PTX, source space, destination space); PTX ISA 9.7.9.25 (cp.async.bulk,
# cp.async.bulk.tensor, cp.reduce.async.bulk.tensor). <N>d is the tensor rank (1..5).
KINDS = {
    ("TMA", "LOAD"): (
        "cp.async.bulk.tensor.<N>d.shared::cluster.global.mbarrier::complete_tx::bytes",
        "gmem",
        "smem",
    ),
    ("TMA", "LOAD", "MULTICAST"): (
        "cp.async.bulk.tensor.<N>d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster",
        "gmem",
        "smem",
    ),
    ("TMA", "STORE"): ("cp.async.bulk.tensor.<N>d.global.shared::cta.bulk_group", "smem", "gmem"),
    ("TMA", "REDUCE", "ADD"): (
        "cp.reduce.async.bulk.tensor.<N>d.global.shared::cta.add.bulk_group",
        "smem",
        "gmem",
    ),
    ("BULK", "COPY", "G2S"): (
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
        "gmem",
        "smem",
    ),
    ("BULK", "COPY", "S2G"): ("cp.async.bulk.global.shared::cta.bulk_group", "smem", "gmem"),
}


def _claims(n: MmaName) -> bool:
    return n.arch == 90 and (n.tokens in KINDS or n.tokens == ("BULK", "COPY", "AUTO"))


def _build(n: MmaName):
    base = "SM90_" + "_".join(n.tokens)
    if n.tokens == ("BULK", "COPY", "AUTO"):
        op = CopyOperation(
            base,
            90,
            "sm90.tma",
            "",
            Operand("gmem", "uint128_t"),
            Operand("smem", "uint128_t"),
            note="placeholder: cute::copy picks the bulk size",
        )
        one = Layout((1, 1), (0, 0))
        return op, CopyTraits(Layout(1, 0), one, one, one)
    ptx, src, dst = KINDS[n.tokens]
    if len(n.template) != 1 or not n.template[0].isdigit():
        raise reject(
            base,
            f"give the bits one instruction moves as a template argument, e.g. {base}<16384> "
            "(a 64x128 bf16 box); make_tma_atom derives it from a shared-memory layout",
        )
    bits = int(n.template[0])
    if bits <= 0 or bits % 128:
        raise reject(
            f"{base}<{bits}>", "TMA and bulk copies move a multiple of 16 bytes (128 bits)"
        )
    op = CopyOperation(
        f"{base}<{bits}>",
        90,
        "sm90.tma",
        ptx,
        Operand(src, "uint128_t", bits // 128),
        Operand(dst, "uint128_t", bits // 128),
        params=(("bits", bits),),
        ptx_isa=(8, 0),
        note="one thread issues it; the tensor map (cutemma.copy.tma) holds box and swizzle",
    )
    one = Layout((1, bits), (0, 1))
    return op, CopyTraits(Layout(1, 0), one, one, one)


def _members():
    for toks in KINDS:
        yield "SM90_" + "_".join(toks) + "<16384>"
    yield "SM90_BULK_COPY_AUTO"


TMA = register_copy_family(
    CopyFamily(
        "sm90.tma",
        90,
        "SM90_TMA_{LOAD,LOAD_MULTICAST,STORE,REDUCE_ADD}<bits>, SM90_BULK_COPY_{G2S,S2G}<bits>, "
        "SM90_BULK_COPY_AUTO",
        _claims,
        _build,
        _members,
    )
)
