"""Bad-input rows for the copy layer and the names exported after tests/bad_inputs_table.py.

Same contract as that table: ``(call, error class, message fragment)``; ``call`` is evaluated
with :func:`namespace` and must raise the named cutemma error, its message holding the
fragment (case-insensitive). The fragments name the bad input or what would be accepted.

``KNOWN_BARE`` lists bad inputs that still escape as a bare Python error (or pass silently) in
a module another branch owns; tests/test_bad_inputs_copy.py runs them as expected failures
until that module checks them, then they move to ``COPY_API``.
"""

from __future__ import annotations

from cutemma.errors import CopyError, LayoutError, TmaError

CE, LE, ME = CopyError, LayoutError, TmaError


def namespace() -> dict:
    """The names a row's call may use (the base table's names plus the copy layer's)."""
    import numpy as np
    from bad_inputs_table import namespace as base

    import cutemma as cm
    import cutemma.copy as cp
    import cutemma.copy.tma as tma
    import cutemma.copy.tma_atoms as tmaa
    import cutemma.emulate.copy as ecopy
    import cutemma.emulate.tma as etma
    import cutemma.emulate.tmem as etmem
    import cutemma.tiled as tp
    import cutemma.tiled.tiled_copy as tcm

    ldsm = cm.make_copy_atom("SM75_U32x4_LDSM_N", "f16")
    uni = cm.make_copy_atom("UniversalCopy<uint32_t>", "f16")
    sm = cm.gmma_layout_atom("K", "SW128", "bf16")
    box = tma.tma_box(cm.tile_to_shape(sm, (64, 64)), "bf16", "K")
    names = base()
    names.update(
        cp=cp,
        tma=tma,
        tmaa=tmaa,
        ecopy=ecopy,
        etma=etma,
        etmem=etmem,
        tp=tp,
        tcm=tcm,
        ldsm=ldsm,
        uni=uni,
        tc=cm.make_tiled_copy(uni, cm.Layout((8, 4), (4, 1)), cm.Layout((1, 2))),
        tc_ld=cm.make_tiled_copy(ldsm, cm.Layout(32), cm.Layout(8)),
        tc_g=cm.make_tiled_copy(
            cm.make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f16"),
            cm.Layout((8, 4), (4, 1)),
            cm.Layout((1, 8)),
        ),
        sm=sm,
        box=box,
        args=tma.tensor_map_args(box, 0, (64, 64), (128,)),
        g16=np.zeros(64 * 128, np.uint16),
        tld=cm.make_copy_atom("SM100_TMEM_LOAD_32dp32b1x", "f32"),
        tst=cm.make_copy_atom("SM100_TMEM_STORE_32dp32b1x", "f32"),
        tmem=np.zeros((128, 512), np.uint32),
        b64=np.zeros(64, np.uint8),
    )
    return names


COPY_API: list[tuple[str, type, str]] = [
    # copy atoms: catalog lookup
    ("cm.make_copy_atom('nope', 'f16')", CE, "SM75_U32x4_LDSM_N"),
    ("cm.make_copy_atom(None, 'f16')", CE, "string"),
    ("cm.make_copy_atom(3, 'f16')", CE, "string"),
    ("cm.make_copy_atom('SM75_U32x4_LDSM_N')", CE, "value type"),
    ("cm.make_copy_atom('SM75_U32x4_LDSM_N', 'nope')", CE, "'nope'"),
    ("cm.make_copy_atom('SM75_U32x4_LDSM_N', None)", CE, "value type"),
    ("cm.make_copy_atom('SM75_U32x4_LDSM_N', 3.5)", CE, "value type 3.5"),
    ("cm.make_copy_atom('SM75_U32x4_LDSM_N', 'f64')", CE, "at most 32 bits"),
    ("cm.make_copy_atom('SM80_U32x4_LDSM_N', 'f16')", CE, "write SM75_U32x4_LDSM_N"),
    ("cm.make_copy_atom('SM75_U32x3_LDSM_N', 'f16')", CE, "U32x{1,2,4}"),
    ("cm.make_copy_atom('UniversalCopy<uint7_t>', 'f16')", CE, "uint7_t"),
    ("cm.copy_traits('nope')", CE, "nope"),
    ("cm.copy_traits(None)", CE, "string"),
    ("cm.copy_ops(arch='x')", CE, "'sm80'"),
    ("cm.copy_ops(arch=[1])", CE, "architecture [1]"),
    ("cm.copy_ops(arch=999)", CE, "sm999"),
    ("cm.copy_ops(family='nope')", CE, "'nope'"),
    ("cm.copy_ops(75, family='stsm')", CE, "sm75.ldsm"),
    ("cp.copy_families('x')", CE, "'sm80'"),
    ("cp.copy_families(1.5)", CE, "architecture 1.5"),
    ("cp.copy_families(999)", CE, "sm999"),
    ("cp.copy_op('SM90_U32x4_LDSM_N')", CE, "write SM75_U32x4_LDSM_N"),
    ("cp.copy_op(None)", CE, "string"),
    ("cp.parse_copy_name(None)", CE, "string"),
    ("cp.parse_copy_name('')", CE, "SM<arch>"),
    ("cp.parse_copy_name('UniversalCopy<')", CE, "<A,B,...>"),
    ("cp.register_copy_family('x')", CE, "Family"),
    ("cp.value_type('nope')", CE, "'nope'"),
    ("cp.value_type(3)", CE, "8, 16, 32"),
    ("cp.value_type(None)", CE, "value type None"),
    # copy atoms: construction and use
    ("cp.CopyAtom('x', 'y', 'z')", CE, "make_copy_atom(name, dtype)"),
    ("cp.CopyAtom(ldsm.op, ldsm.traits, 'nope')", CE, "'nope'"),
    ("cp.CopyTraits(cm.Layout(32), cm.Layout(4), L, L)", CE, "(thread, bit)"),
    ("cp.CopyTraits('x', L, L, L)", LE, "expected a Layout"),
    ("cp.Operand('nowhere', 'uint32_t', 1)", CE, "'reg', 'smem'"),
    ("cp.Operand('reg', 'uint32_t', 0)", CE, "count >= 1"),
    ("cp.Operand('reg', 'uint32_t', 'x')", CE, "count >= 1"),
    ("cp.Operand('reg', 'float', 1)", CE, "uint32_t"),
    ("ldsm.move('x')", CE, "expected (32, 8)"),
    ("ldsm.move(np.zeros(3))", CE, "shaped (3,)"),
    # TiledCopy
    ("cm.make_tiled_copy('x', cm.Layout(32), cm.Layout(1))", CE, "value type"),
    ("cm.make_tiled_copy(None)", CE, "value type"),
    ("cm.make_tiled_copy('SM75_U32x4_LDSM_N', cm.Layout(32), cm.Layout(1))", CE, "'f16'"),
    ("cm.make_tiled_copy('SM75_U32x4_LDSM_N', cm.Layout(32), dtype='nope')", CE, "'nope'"),
    ("cm.make_tiled_copy(uni, cm.Layout(32), cm.Layout(1), dtype='f16')", CE, "with a name"),
    ("cm.make_tiled_copy(uni, 'x', cm.Layout(1))", CE, "thr_layout"),
    ("cm.make_tiled_copy(uni, cm.Layout(32), 'x')", CE, "val_layout"),
    ("cm.make_tiled_copy(uni, cm.Layout(32), cm.Layout(3))", CE, "multiple of 2"),
    ("cm.make_tiled_copy(ldsm, cm.Layout(16), cm.Layout(8))", CE, "multiple of 32"),
    ("cm.make_tiled_copy(uni, cm.Layout((8, 4), (1, 1)), cm.Layout(2))", LE, "injective"),
    ("cm.make_tiled_copy(uni, cm.Layout(0), cm.Layout(2))", LE, "extent-0"),
    ("cm.make_tiled_copy_A(ldsm, 'x')", CE, "TiledMMA"),
    ("cm.make_tiled_copy_A(ldsm, tc)", CE, "got TiledCopy"),
    ("cm.make_tiled_copy_A('x', tiled)", CE, "value type"),
    ("cm.make_tiled_copy_B(ldsm, None)", CE, "TiledMMA"),
    ("cm.make_tiled_copy_C(ldsm, 3)", CE, "TiledMMA"),
    (
        "cm.make_tiled_copy_C(cm.make_copy_atom('SM90_U32x4_STSM_N', 'f16'),"
        " cm.make_tiled_mma('SM80_16x8x8_F16F16F16F16_TN'))",
        CE,
        "multiple of 8 values",
    ),
    ("cm.make_tiled_copy_D(ldsm, 'x')", CE, "TiledCopy"),
    ("cm.make_tiled_copy_S(ldsm, None)", CE, "TiledCopy"),
    ("cm.make_tiled_copy_S(ldsm, tiled)", CE, "got TiledMma"),
    ("cm.make_tiled_copy_D('x', tc)", CE, "value type"),
    ("cm.TiledCopy('x', cm.Layout((32, 1)), (8, 8))", CE, "CopyAtom"),
    ("cm.TiledCopy(uni, 'x', (8, 8))", CE, "(thread, value) Layout"),
    ("cm.TiledCopy(uni, cm.Layout(32), (32,))", CE, "rank 2"),
    ("cm.TiledCopy(uni, cm.Layout((32, 1)), 'x')", CE, "tiler_mn"),
    ("tc.get_slice(999)", CE, "0..31"),
    ("tc.get_slice(-1)", CE, "0..31"),
    ("tc.get_slice('x')", CE, "thread 'x'"),
    ("tc.get_slice(1.5)", CE, "thread 1.5"),
    ("tc.get_thread_slice(32)", CE, "0..31"),
    ("cm.ThrCopy('x', 0)", CE, "TiledCopy"),
    ("cm.ThrCopy(tc, 99)", CE, "0..31"),
    ("cm.ThrCopy(tc, 'a')", CE, "thread 'a'"),
    ("tc.get_slice(0).partition_S('x')", CE, "Tensor"),
    ("tc.get_slice(0).partition_D(None)", CE, "Tensor"),
    ("tc.get_slice(0).partition_S(cm.make_identity_tensor((7, 8)))", CE, "extent 7"),
    ("tc.get_slice(0).partition_D(cm.make_identity_tensor((8,)))", CE, "rank 1"),
    ("tc.get_slice(0).retile_S('x')", CE, "Tensor"),
    ("tc.get_slice(0).retile_D(None)", CE, "Tensor"),
    ("tc.tidfrg_S('x')", CE, "Layout"),
    ("tc.tidfrg_D(None)", CE, "Layout"),
    ("tcm.make_cotiled_copy('x', cm.Layout(32), cm.Layout(32))", CE, "value type"),
    ("tcm.make_cotiled_copy(uni, cm.Layout(32), 'x')", LE, "expected a Layout"),
    ("tcm.make_tmem_copy('x', cm.Layout((128, 32)))", CE, "value type"),
    ("tcm.make_tmem_copy(ldsm, cm.Layout((128, 32)))", CE, "tcgen05.ld/st"),
    ("tcm.make_tmem_copy(tld, 'x')", LE, "expected a Layout"),
    # TiledCopy analysis
    ("tp.bank_conflicts('x', cm.Layout(256))", CE, "TiledCopy"),
    ("tp.bank_conflicts(tc, cm.Layout((8, 8)))", CE, "side='S' or side='D'"),
    ("tp.bank_conflicts(tc, cm.Layout((8, 8)), side='Q')", CE, "'S'"),
    ("tp.bank_conflicts(tc_ld, cm.Layout(128))", CE, "256"),
    ("tp.coalescing('x', cm.Layout((8, 64)))", CE, "TiledCopy"),
    ("tp.coalescing(tc, cm.Layout((8, 8)))", CE, "side='S' or side='D'"),
    ("tp.coalescing(tc_g, cm.Layout((8, 64)), side='Q')", CE, "'D'"),
    ("tp.coalescing(tc_g, 'x')", LE, "expected a Layout"),
    ("tp.explain('x')", CE, "TiledCopy"),
    ("tp.explain(tc, smem=cm.Layout((8, 8)))", CE, "smem"),
    ("tp.vector_bits('x', cm.Layout((8, 8)))", CE, "TiledCopy"),
    ("tp.vector_bits(tc, cm.Layout((8, 8)), side='Q')", CE, "'S'"),
    ("tp.vector_bits(tc, cm.Layout((7, 8)))", CE, "extent 7"),
    ("tp.vector_bits(tc, 'x')", LE, "expected a Layout"),
    # the CPU emulation of copies
    ("ecopy.copy('x', [], [])", CE, "TiledCopy"),
    ("ecopy.copy(tc, [], [])", CE, "per thread (32)"),
    ("ecopy.copy(tc, [None] * 32, [None] * 32)", CE, "Tensor"),
    ("ecopy.copy_tensors('x', I, I)", CE, "TiledCopy"),
    ("ecopy.copy_tensors(tc, 'x', I)", CE, "Tensor"),
    (
        "ecopy.copy_tensors(tc, cm.make_tensor(np.zeros(64), cm.Layout((8, 8))),"
        " cm.make_tensor(np.zeros(32), cm.Layout((4, 8))))",
        CE,
        "extent 4",
    ),
    ("etmem.tmem_load('x', tmem, 0, 0)", CE, "CopyAtom"),
    ("etmem.tmem_load(ldsm, tmem, 0, 0)", CE, "tensor-memory"),
    ("etmem.tmem_load(tld, 'x', 0, 0)", CE, "numpy array"),
    ("etmem.tmem_load(tld, np.zeros((128, 64)), 0, 0)", CE, "(128, 512)"),
    ("etmem.tmem_load(tld, tmem, 200, 0)", CE, "multiple of 16"),
    ("etmem.tmem_load(tld, tmem, 8, 0)", CE, "lane 8"),
    ("etmem.tmem_load(tld, tmem, 'a', 0)", CE, "whole numbers"),
    ("etmem.tmem_load(tld, tmem, 0, 600)", CE, "512"),
    (
        "etmem.tmem_load(cm.make_copy_atom('SM100_TMEM_LOAD_32dp32b1x', 'f16'), tmem, 0, 0)",
        CE,
        "_16b",
    ),
    ("etmem.tmem_store('x', np.zeros((32, 1)), tmem, 0, 0)", CE, "CopyAtom"),
    ("etmem.tmem_store(tst, np.zeros(3), tmem, 0, 0)", CE, "expected (32, 1)"),
    # TMA: host side (cutemma.copy.tma, cutemma.copy.tma_atoms)
    ("tma.tma_box('x', 'bf16', 'K')", ME, "Layout"),
    ("tma.tma_box(None, 'bf16', 'K')", ME, "Layout"),
    ("tma.tma_box(sm, 'nope', 'K')", ME, "'nope'"),
    ("tma.tma_box(sm, None, 'K')", ME, "bf16"),
    ("tma.tma_box(sm, 'bf16', 'Q')", ME, "'K' or 'MN'"),
    ("tma.tma_box(cm.Layout((8, 8, 8)), 'bf16', 'K')", ME, "rank 2"),
    ("tma.tma_box(cm.Layout(64), 'bf16', 'K')", ME, "rank 2"),
    ("tma.tma_box(cm.Layout((64, 64), (64, 2)), 'bf16', 'K')", ME, "stride-1"),
    ("tma.tensor_map_args(box, 8, (64, 64), (128,))", ME, "16-byte aligned"),
    ("tma.tensor_map_args(box, 0, (64,), ())", ME, "2 to 5 dims"),
    ("tma.tensor_map_args(box, 0, 'x', (128,))", ME, "2 to 5 dims"),
    ("tma.tensor_map_args(box, 0, (64, 64), (100,))", ME, "multiple of 16 bytes"),
    ("tma.tensor_map_args(box, 0, (64, 64), (0,))", ME, "broadcast"),
    ("tma.tensor_map_args(box, 0, (0, 64), (128,))", ME, "[1, 2^32]"),
    ("tma.tensor_map_args(box, 0, (64, -1), (128,))", ME, "dim 1 = -1"),
    ("tma.tensor_map_args(box, 0, (2**33, 64), (128,))", ME, "[1, 2^32]"),
    ("tma.tensor_map_param(b'x')", ME, "128 bytes"),
    ("tmaa.make_tma_atom('GATHER', sm, 'bf16')", CE, "LOAD, LOAD_MULTICAST, STORE"),
    ("tmaa.make_tma_atom(None, sm, 'bf16')", CE, "LOAD"),
    ("tmaa.make_tma_atom('LOAD', 'x', 'bf16')", ME, "Layout"),
    ("tmaa.make_tma_atom('LOAD', sm, 'nope')", ME, "'nope'"),
    ("tmaa.make_tma_atom('LOAD', sm, 'bf16', 'Q')", ME, "'K' or 'MN'"),
    ("tmaa.tma_instructions(None, 'x')", CE, "TmaBox"),
    ("tmaa.tma_instructions(None, None)", CE, "TmaBox"),
    # TMA: the CPU model (cutemma.emulate.tma)
    ("etma.tma_load(args, np.zeros(64 * 64, np.uint16), (0, 0))", ME, "holds 4096 elements"),
    ("etma.tma_load(args, g16, (0,))", ME, "rank-2"),
    ("etma.tma_load(args, g16, 'x')", ME, "sequence of 2 ints"),
    ("etma.tma_load(args, g16, (1.5, 0))", ME, "whole numbers"),
    ("etma.tma_load(args, 'x', (0, 0))", ME, "numpy array"),
    ("etma.tma_load('x', g16, (0, 0))", ME, "TensorMapArgs"),
    ("etma.tma_store(args, np.zeros(10, np.uint16), g16, (0, 0))", ME, "smem holds 10"),
    ("etma.tma_store(args, 'x', g16, (0, 0))", ME, "numpy array"),
    ("etma.tma_store(args, np.zeros(4096, np.uint16), g16, (-64, 0))", ME, "coordinates >= 0"),
    ("etma.tma_reduce_add(args, np.zeros(4096, np.uint16), 'x', (0, 0))", ME, "numpy array"),
    ("etma.box_addresses('x', (0, 0))", ME, "TensorMapArgs"),
    ("etma.box_addresses(args, None)", ME, "sequence of 2 ints"),
    ("etma.bulk_copy(b64, b64, 0, 0, 15)", ME, "multiple of 16"),
    ("etma.bulk_copy(b64, b64, 8, 0, 16)", ME, "source offset 8"),
    ("etma.bulk_copy(b64, b64, 0, 0, 128)", ME, "64 bytes"),
    ("etma.bulk_copy(b64, b64, -16, 0, 16)", ME, ">= 0"),
    ("etma.bulk_copy(b64, b64, 'x', 0, 16)", ME, "whole number"),
    ("etma.bulk_copy('x', b64, 0, 0, 16)", ME, "numpy array"),
    ("etma.bulk_copy(b64, None, 0, 0, 16)", ME, "numpy array"),
    # identity layouts and scaled bases
    ("cm.BasisLayout('x', 1)", LE, "'x'"),
    ("cm.BasisLayout((4, -2), (1, 4))", LE, "-2"),
    ("cm.BasisLayout((4, 2), (1,))", LE, "congruent"),
    ("cm.BasisLayout((4, 2), 'x')", LE, "congruent"),
    ("cm.BasisLayout((4, 2), (cm.ScaledBasis(1, (0,)), 1.5))", LE, "1.5"),
    ("cm.BasisLayout((4, 2), (1, 4))", LE, "belongs in a Layout"),
    ("cm.make_identity_layout((4, 2))(8)", LE, "index 8"),
    ("cm.make_identity_layout((4, 2))(-1)", LE, "index -1"),
    ("cm.make_identity_layout((4, 2))('x')", LE, "not an int"),
    ("cm.make_identity_layout((4, 2))(1, 1, 1)", LE, "(1, 1, 1)"),
    ("cm.make_identity_layout('x')", LE, "'x'"),
    ("cm.make_identity_layout(None)", LE, "None"),
    ("cm.make_identity_layout((4, -2))", LE, "-2"),
    ("cm.make_identity_layout((4, 2.5))", LE, "2.5"),
    ("cm.ScaledBasis('x', (0,))", LE, "must be an int"),
    ("cm.ScaledBasis(1.5, (0,))", LE, "must be an int"),
    ("cm.ScaledBasis(1, 'x')", LE, "non-negative ints"),
    ("cm.ScaledBasis(1, (-1,))", LE, "non-negative ints"),
    ("cm.ScaledBasis(1, (0,)) * 1.5", LE, "must be an int"),
    # printing tensors
    ("cm.print_tensor('x')", LE, "Tensor"),
    ("cm.print_tensor(None)", LE, "Tensor"),
    ("cm.print_tensor(L)", LE, "Tensor"),
    # append/prepend past the target rank (C++'s append<N>/prepend<N> refuse it too)
    ("cm.prepend(cm.Layout((2, 3, 4)), n=2)", LE, "rank > 2"),
    ("cm.append(cm.Layout((2, 3, 4)), n=2)", LE, "rank > 2"),
]

# In cutemma/copy/tma.py (the batch branch's file): still a bare error or a silent answer.
KNOWN_BARE: list[tuple[str, type, str]] = [
    ("tma.tensor_map_args(box, 'x', (64, 64), (128,))", ME, "address"),
    ("tma.tensor_map_args(box, -16, (64, 64), (128,))", ME, "address"),
    ("tma.tensor_map_args(box, 0, (64, 64), 'x')", ME, "stride"),
    ("tma.tensor_map_args(box, 0, (64, 64.5), (128,))", ME, "64.5"),
    ("tma.tensor_map_args('x', 0, (64, 64), (128,))", ME, "TmaBox"),
    ("tma.encode_tensor_map('x')", ME, "TensorMapArgs"),
    ("tma.tensor_map_param(None)", ME, "128 bytes"),
    ("tma.element_swizzle('x', 2)", ME, "swizzle"),
]

# Public callables with no bad input of their own: data records the library fills.
EXEMPT = {
    "cutemma.copy.CopyFamily",
    "cutemma.copy.CopyOperation",
    "cutemma.copy.ValueType",
    "cutemma.copy.is_copy_name",  # answers False for anything that is not a copy name
    "cutemma.copy.tma.TensorMap",
    "cutemma.copy.tma.TensorMapArgs",
    "cutemma.copy.tma.TmaBox",
    "cutemma.copy.tma.TmaRules",
    "cutemma.copy.tma.TmaSwizzle",
    "cutemma.tiled.copy_analysis.BankReport",
    "cutemma.tiled.copy_analysis.CoalescingReport",
    "cutemma.tiled.copy_analysis.InstructionCost",
    "cutemma.tiled.tiled_copy.make_tiled_copy_impl",  # make_tiled_copy's layouts, checked there
}
