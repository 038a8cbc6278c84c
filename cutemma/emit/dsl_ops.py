"""CuTe DSL 4.8's op table, as data: which DSL op builds each cutemma atom.

Read from the installed ``nvidia-cutlass-dsl`` 4.8 sources (cutlass/cute/nvgpu/{warp,
warpgroup,tcgen05,cpasync}/*.py and nvgpu/common.py): each op's constructor arguments, the
dtypes and shapes its ``__post_init__``/``_verify`` accepts, and the ``CUTE_DSL_ARCH`` it
needs. One row per cutemma family; a family the DSL has no op for names the nearest op it has.

>>> MMA_OPS["sm80.f16"].op
'cute.nvgpu.warp.MmaF16BF16Op'
>>> MMA_NO_OP["sm75.f16"].split(" ")[0]
'cute.nvgpu.warp.MmaF16BF16Op'
"""

from __future__ import annotations

from dataclasses import dataclass

# cutemma numeric type name (or C++ unsigned spelling of a copy value type) -> DSL type
DTYPES: dict[str, str] = {
    "f16": "cutlass.Float16",
    "bf16": "cutlass.BFloat16",
    "tf32": "cutlass.TFloat32",
    "f32": "cutlass.Float32",
    "f64": "cutlass.Float64",
    "e4m3": "cutlass.Float8E4M3FN",
    "e5m2": "cutlass.Float8E5M2",
    "e3m2": "cutlass.Float6E3M2FN",
    "e2m3": "cutlass.Float6E2M3FN",
    "e2m1": "cutlass.Float4E2M1FN",
    "ue8m0": "cutlass.Float8E8M0FNU",
    "ue4m3": "cutlass.Float8E4M3FN",  # the DSL's NVF4 scale type (warp/mma.py sf_type checks)
    "s4": "cutlass.Int4",
    "s8": "cutlass.Int8",
    "u8": "cutlass.Uint8",
    "s16": "cutlass.Int16",
    "s32": "cutlass.Int32",
    "uint8_t": "cutlass.Uint8",
    "uint16_t": "cutlass.Uint16",
    "uint32_t": "cutlass.Uint32",
    "uint64_t": "cutlass.Uint64",
    "uint128_t": "cutlass.Uint128",
}

# The CUTE_DSL_ARCH an op checks for (warpgroup ops want sm_90a, tcgen05 ops sm_100a, the
# sm120 block-scaled warp ops sm_120a); the rest build under any arch.
ARCH_SM90 = "sm_90a"
ARCH_SM100 = "sm_100a"
ARCH_SM120 = "sm_120a"


@dataclass(frozen=True)
class MmaOpSpec:
    """One DSL op: its dotted name, its constructor arguments (see ``ARGS`` in dsl.py), the
    arch it needs, and a rule on the types (``same_ab``: the op takes one A/B dtype)."""

    op: str
    args: tuple[str, ...]
    arch: str | None = None
    same_ab: bool = False
    acc: tuple[str, ...] = ()  # accumulator types the op takes (empty: any the catalog has)
    when: str | None = None  # a rule (see RULES in dsl.py) choosing among a family's ops


_WG = "cute.nvgpu.warpgroup."
_TC = "cute.nvgpu.tcgen05."
_TC_ARGS = ("shape", "cta", "a_src_tc", "a_major", "b_major")

MMA_OPS: dict[str, MmaOpSpec] = {
    "sm80.f16": MmaOpSpec("cute.nvgpu.warp.MmaF16BF16Op", ("ab", "acc", "shape")),
    "sm80.tf32": MmaOpSpec("cute.nvgpu.warp.MmaTF32Op", ("shape",)),
    "sm89.fp8": MmaOpSpec("cute.nvgpu.warp.MmaFP8Op", ("ab", "acc", "shape"), same_ab=True),
    "sm90.gmma_f16": MmaOpSpec(
        _WG + "MmaF16BF16Op", ("ab", "acc", "shape", "a_src_wg", "a_major", "b_major"), ARCH_SM90
    ),
    "sm90.gmma_f8": MmaOpSpec(
        _WG + "MmaF8Op", ("a", "b", "acc", "shape", "a_src_wg", "a_major", "b_major"), ARCH_SM90
    ),
    "sm90.gmma_int": MmaOpSpec(
        _WG + "MmaI8Op", ("a", "b", "acc", "shape", "a_src_wg", "a_major", "b_major"), ARCH_SM90
    ),
    "sm100.f16bf16": MmaOpSpec(_TC + "MmaF16BF16Op", ("ab", "acc", *_TC_ARGS), ARCH_SM100),
    "sm100.tf32": MmaOpSpec(_TC + "MmaTF32Op", _TC_ARGS, ARCH_SM100),
    "sm100.s8": MmaOpSpec(_TC + "MmaI8Op", ("ab", *_TC_ARGS), ARCH_SM100, acc=("s32",)),
    "sm100.f8f6f4": MmaOpSpec(_TC + "MmaF8F6F4Op", ("a", "b", "acc", *_TC_ARGS), ARCH_SM100),
    "sm100.mxf8f6f4": MmaOpSpec(_TC + "MmaMXF8F6F4Op", ("a", "b", *_TC_ARGS), ARCH_SM100),
    "sm100.mxf4": MmaOpSpec(_TC + "MmaMXF4Op", ("shape", "cta", "a_src_tc"), ARCH_SM100),
    "sm100.mxf4nvf4": MmaOpSpec(
        _TC + "MmaMXF4NVF4Op", ("sf", "shape", "cta", "a_src_tc"), ARCH_SM100
    ),
}

# Families whose atoms split over several DSL ops: candidates in order, the first whose rule
# holds builds the atom (warp/mma.py: MmaMXF8Op takes one e4m3/e5m2 A/B type, MmaMXF8F6F4Op
# an e2m1 paired with an e4m3/e5m2, MmaMXF4Op vector size 32, MmaMXF4NVF4Op 16).
MMA_OP_CHOICES: dict[str, tuple[MmaOpSpec, ...]] = {
    "sm120.mxf8f6f4": (
        MmaOpSpec("cute.nvgpu.warp.MmaMXF8Op", ("ab", "acc", "sf"), ARCH_SM120, when="same_f8"),
        MmaOpSpec(
            "cute.nvgpu.warp.MmaMXF8F6F4Op", ("a", "b", "acc", "sf"), ARCH_SM120, when="f4_f8"
        ),
    ),
    "sm120.mxf4": (
        MmaOpSpec("cute.nvgpu.warp.MmaMXF4Op", ("ab", "acc", "sf"), ARCH_SM120, when="vs32"),
        MmaOpSpec("cute.nvgpu.warp.MmaMXF4NVF4Op", ("ab", "acc", "sf"), ARCH_SM120, when="vs16"),
    ),
}

# Families with no DSL op -> the nearest op the DSL has (said in the EmitError).
MMA_NO_OP: dict[str, str] = {
    "sm61.dp": "cute.nvgpu.MmaUniversalOp (a scalar FMA; the DSL has no dp4a/dp2a op)",
    "sm70.quadpair": "cute.nvgpu.warp.MmaF16BF16Op (sm_80 16x8x8; the DSL has no sm70 quadpair op)",
    "sm75.f16": "cute.nvgpu.warp.MmaF16BF16Op (the sm_80 op of the same 16x8x8 shape)",
    "sm75.int8": "cute.nvgpu.warp.MmaFP8Op (the DSL has no warp-level integer op)",
    "sm80.int8": "cute.nvgpu.warp.MmaFP8Op (the DSL has no warp-level integer op)",
    "sm80.int4": "cute.nvgpu.warp.MmaFP8Op (the DSL has no warp-level integer op)",
    "sm80.b1": "cute.nvgpu.warp.MmaF16BF16Op (the DSL has no warp-level b1 op)",
    "sm80.f64": "cute.nvgpu.MmaUniversalOp (the DSL has no f64 tensor-core op)",
    "sm80.c64": "cute.nvgpu.MmaUniversalOp (the DSL has no complex tensor-core op)",
    "sm90.f64": "cute.nvgpu.MmaUniversalOp (the DSL has no f64 tensor-core op)",
    "sm90.c64": "cute.nvgpu.MmaUniversalOp (the DSL has no complex tensor-core op)",
    "sm90.gmma_tf32": "cute.nvgpu.warpgroup.MmaF16BF16Op (the DSL has no warpgroup tf32 op)",
    "sm90.gmma_b1": "cute.nvgpu.warpgroup.MmaI8Op (the DSL has no warpgroup b1 op)",
    "sm90.gmma_sparse_f16": "cute.nvgpu.warpgroup.MmaF16BF16Op (dense; no warpgroup sparse op)",
    "sm90.gmma_sparse_tf32": "cute.nvgpu.warpgroup.MmaF16BF16Op (dense; no warpgroup sparse op)",
    "sm90.gmma_sparse_f8": "cute.nvgpu.warpgroup.MmaF8Op (dense; no warpgroup sparse op)",
    "sm90.gmma_sparse_int": "cute.nvgpu.warpgroup.MmaI8Op (dense; no warpgroup sparse op)",
    "sm100.ffma2": "cute.nvgpu.MmaUniversalOp (a scalar FMA; the DSL has no ffma2 op)",
    "sm120.f8f6f4": "cute.nvgpu.warp.MmaFP8Op (the sm_89 e4m3/e5m2 op; no unscaled sm120 f8f6f4 op)",
}

# tcgen05 sparse atoms: the DSL's sparse ops (MmaF16BF16SparseOp, MmaFP8SparseOp) take a
# metadata format cutemma's atoms do not model, so they are refused with these names.
SM100_SPARSE_NEAREST = {
    "sm100.f16bf16": "cute.nvgpu.tcgen05.MmaF16BF16SparseOp",
    "sm100.f8f6f4": "cute.nvgpu.tcgen05.MmaFP8SparseOp",
}


@dataclass(frozen=True)
class CopyOpSpec:
    """A copy family's DSL op: ``expr`` is a format string over the atom's params; ``bits`` says
    the atom passes ``num_bits_per_copy`` (from the param of that name)."""

    expr: str
    bits: str | None = None
    arch: str | None = None


COPY_OPS: dict[str, CopyOpSpec] = {
    "universal": CopyOpSpec("cute.nvgpu.CopyUniversalOp()", bits="bits"),
    "sm75.ldsm": CopyOpSpec("cute.nvgpu.warp.LdMatrix8x8x16bOp({trans}, {num})"),
    "sm90.stsm": CopyOpSpec("cute.nvgpu.warp.StMatrix8x8x16bOp({trans}, {num})"),
    "sm80.cp_async": CopyOpSpec("cute.nvgpu.cpasync.CopyG2SOp({cache})", bits="bits"),
    "sm100.tmem_load": CopyOpSpec("cute.nvgpu.tcgen05.{ld}({rep}, {pack})", arch=ARCH_SM100),
    "sm100.tmem_store": CopyOpSpec("cute.nvgpu.tcgen05.{st}({rep}, {unpack})", arch=ARCH_SM100),
    "sm100.ldsm8": CopyOpSpec("cute.nvgpu.warp.{ldsm8}"),
    "sm100.stsm8": CopyOpSpec("cute.nvgpu.warp.StMatrix16x8x8bOp(True, {num})"),
    "sm100.utccp": CopyOpSpec("cute.nvgpu.tcgen05.{cp}({cta})", arch=ARCH_SM100),
}

# the 8-bit ldmatrix forms by source width (warp/copy.py): .m8n16 unpacking 4- or 6-bit
# sources into bytes. CuTe C++'s SM100_U8x{8,16}_LDSM_T (.m16n16.trans.b8) shuffles bytes
# after the load so that its registers equal the stmatrix m16n8 fragment; the DSL's
# LdMatrix16x16x8bOp is the bare instruction, another fragment (tests/emit_dsl saw it): none.
LDSM8_T_NEAREST = (
    "cute.nvgpu.warp.LdMatrix16x16x8bOp(True, n) (the bare ldmatrix.m16n16.trans.b8: CuTe "
    "C++'s atom adds a byte shuffle, so the DSL op's register fragment differs)"
)
LDSM8 = {
    4: "LdMatrix8x16x8bOp(False, {num}, 4)",
    6: "LdMatrix8x16x8bOp(False, {num}, 6)",
}

# tcgen05.cp shapes -> the DSL op (tcgen05/copy.py)
UTCCP_SHAPES = {
    "128dp256bit": "Cp128x256bOp",
    "128dp128bit": "Cp128x128bOp",
    "4dp256bit": "Cp4x256bOp",
    "4x32dp128bit": "Cp4x32x128bOp",
    "2x64dp128bitlw0213": "Cp2x64x128b0213Op",
    "2x64dp128bitlw0123": "Cp2x64x128b0123Op",
}

CP_ASYNC_CACHE = {
    "ca": "cute.nvgpu.cpasync.LoadCacheMode.ALWAYS",
    "cg": "cute.nvgpu.cpasync.LoadCacheMode.GLOBAL",
}

# tcgen05.ld/st data-path shapes -> the DSL op name stem
TMEM_SHAPES = {
    "32dp32b": "32x32b",
    "16dp64b": "16x64b",
    "16dp128b": "16x128b",
    "16dp256b": "16x256b",
    "16dp32b": "16x32bx2",
}

COPY_NO_OP: dict[str, str] = {
    "sm50.shuffle": "cute.nvgpu.CopyUniversalOp (the DSL has no warp-shuffle copy op)",
    "sm75.movm": "cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose=True) (no movmatrix op)",
    "sm90.tma": (
        "cute.nvgpu.cpasync.make_tiled_tma_atom(cute.nvgpu.cpasync.CopyBulkTensorTileG2SOp(), "
        "gmem_tensor, smem_layout, cta_tiler) (a TMA atom needs the global tensor, so it is "
        "not an expression of the atom alone)"
    ),
    "sm100.global256": "cute.nvgpu.CopyUniversalOp (the DSL has no 256-bit global load op)",
    "sm100.tmem_load_stat": (
        "cute.nvgpu.tcgen05.LdRed16x32bx2Op (redOp=TmemLoadRedOp.MAX; the DSL's one "
        "tcgen05.ld.red op has the 16x32bx2 shape, none the 32x32b shape)"
    ),
}

# Families the DSL has ops for that this emitter does not build (the message says which op
# to write by hand); none today.
COPY_NOT_WIRED: dict[str, str] = {}
