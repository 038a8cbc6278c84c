"""Hostile calls on the newer surfaces (issue 22): a tool, not a test (``python tests/hostile_calls.py``).

Every public callable of the copy, TMA, kernels and tune surfaces is called from a valid
template with one argument at a time swapped for a hostile value (wrong type, 0, -1, 2**40,
NaN, empty, bool ...), plus the hand-written cases of ``EXTRA``. Each call runs in a worker
process with a time and memory limit and is classified:

- ``named``: a CutemmaError (what the bad-input table asks for);
- ``bare``: any other exception (IndexError, MemoryError, ...);
- ``value``: it returned (printed for review: a silent answer unless the input was legal);
- ``hang``: it ran past the time limit;
- ``legal``: a 'value' row reviewed by hand and found legal (``LEGAL``: why, one line each);
- ``missing``: the tree under test has no such name (an older tree, for before counts).

``--only bare,hang,value`` limits what is printed. Numbers go into the helper's report; the
rows that matter go into tests/bad_inputs_copy_table.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT_S = 8.0
MEMORY_BYTES = 3 << 30

HOSTILE = ("'x'", "None", "0", "-1", "2**40", "1.5", "float('nan')", "()", "True", "[1]")

# (callable text, valid positional args, valid keyword args): each argument is swapped in turn
# cutemma.gemm's keywords at their defaults (the eager and the traced call share them)
GEMM_KEYWORDS = {"C": "None", "alpha": "1.0", "beta": "0.0", "out": "None", "out_dtype": "None",
                 "config": "None", "scale_a": "1.0", "scale_b": "1.0"}  # fmt: skip

TEMPLATES: list[tuple[str, list[str], dict[str, str]]] = [
    # copy atoms
    ("cm.make_copy_atom", ["'SM75_U32x4_LDSM_N'", "'f16'"], {}),
    ("cm.copy_traits", ["'SM75_U32x4_LDSM_N'"], {}),
    ("cm.copy_ops", [], {"arch": "80", "family": "'sm80.cp_async'"}),
    ("cp.copy_families", ["80"], {}),
    ("cp.copy_op", ["'SM75_U32x4_LDSM_N'"], {}),
    ("cp.parse_copy_name", ["'SM75_U32x4_LDSM_N'"], {}),
    ("cp.value_type", ["'f16'"], {}),
    ("cp.Operand", ["'reg'", "'uint32_t'", "1"], {}),
    ("cp.CopyAtom", ["ldsm.op", "ldsm.traits", "ldsm.val_type"], {}),
    (
        "cp.CopyTraits",
        [
            "ldsm.traits.thr_id",
            "ldsm.traits.src_layout",
            "ldsm.traits.dst_layout",
            "ldsm.traits.ref_layout",
        ],
        {},
    ),  # noqa: E501
    ("ldsm.move", ["np.zeros((32, 4), np.uint32)"], {}),
    # TiledCopy
    ("cm.make_tiled_copy", ["uni", "cm.Layout((8, 4), (4, 1))", "cm.Layout((1, 2))"], {}),
    ("cm.make_tiled_copy_A", ["ldsm", "tiled"], {}),
    ("cm.make_tiled_copy_B", ["ldsm", "tiled"], {}),
    ("cm.make_tiled_copy_C", ["uni", "tiled"], {}),
    ("cm.make_tiled_copy_S", ["uni", "tc"], {}),
    ("cm.make_tiled_copy_D", ["uni", "tc"], {}),
    ("cm.TiledCopy", ["uni", "cm.Layout((32, 2), (2, 1))", "(8, 8)"], {}),
    ("cm.ThrCopy", ["tc", "0"], {}),
    ("tc.get_slice", ["0"], {}),
    ("tc.retile", ["cm.Layout(2)"], {}),
    ("tc.tidfrg_S", ["cm.Layout((8, 8))"], {}),
    ("tc.get_slice(0).partition_S", ["cm.make_identity_tensor((8, 8))"], {}),
    ("tc.get_slice(0).retile_D", ["cm.make_tensor(np.zeros(2), cm.Layout(2))"], {}),
    ("tcm.make_tiled_copy_impl", ["uni", "cm.Layout((32, 2), (2, 1))", "(8, 8)"], {}),
    ("tcm.make_cotiled_copy", ["uni", "cm.Layout((32, 1), (1, 32))", "cm.Layout(32)"], {}),
    ("tcm.make_tmem_copy", ["tld", "cm.Layout((128, 32), (32, 1))"], {}),
    # analysis
    ("tp.bank_conflicts", ["tc_ld", "cm.Layout(256)"], {}),
    ("tp.coalescing", ["tc_g", "cm.Layout((8, 64), (64, 1))"], {}),
    ("tp.vector_bits", ["tc", "cm.Layout((8, 8))"], {"side": "'S'"}),
    ("tp.explain", ["tc_ld"], {"smem": "cm.Layout(256)"}),
    # copy emulation
    (
        "ecopy.copy_tensors",
        [
            "tc",
            "cm.make_tensor(np.zeros(64), cm.Layout((8, 8)))",
            "cm.make_tensor(np.zeros(64), cm.Layout((8, 8)))",
        ],
        {},
    ),  # noqa: E501
    ("etmem.tmem_load", ["tld", "tmem", "0", "0"], {}),
    ("etmem.tmem_store", ["tst", "np.zeros((32, 1), np.uint32)", "tmem", "0", "0"], {}),
    # TMA host side
    ("tma.tma_box", ["sm", "'bf16'", "'K'"], {}),
    ("tma.TmaBox", ["'bf16'", "'K'", "(64, 64)", "'SW128'", "((0, 0, 0),)"], {}),
    ("tma.element_swizzle", ["tma.TMA_SWIZZLES['SW128']", "2"], {}),
    ("tma.stride_refusal", ["64", "2"], {"dim": "1"}),
    ("tma.batched_dims", ["(64, 300)", "(64,)", "8", "64"], {}),
    ("tma.tensor_map_args", ["box", "0", "(64, 64)", "(128,)"], {}),
    ("tma.encode_tensor_map", ["args"], {}),
    ("tma.tensor_map_param", ["bytes(128)"], {}),
    ("tmaa.make_tma_atom", ["'LOAD'", "sm", "'bf16'", "'K'"], {}),
    ("tmaa.tma_instructions", ["tmaa.make_tma_atom('LOAD', sm, 'bf16')", "box"], {}),
    # TMA emulation
    ("etma.tma_load", ["args", "g16", "(0, 0)"], {}),
    ("etma.tma_store", ["args", "np.zeros(4096, np.uint16)", "g16", "(0, 0)"], {}),
    ("etma.tma_reduce_add", ["args", "np.zeros(4096, np.uint16)", "g16", "(0, 0)"], {}),
    ("etma.box_addresses", ["args", "(0, 0)"], {}),
    ("etma.bulk_copy", ["b64", "b64", "0", "0", "16"], {}),
    # descriptors (the surfaces the TMA and sm90 kernels lean on)
    ("cm.make_gmma_desc", ["sm", "'K'", "'bf16'"], {}),
    ("cm.decode_instr_desc", ["0x10490", "'f16'"], {}),
    ("cm.make_instr_desc", ["'f16'", "'f16'", "'f16'", "'f32'", "128", "128"], {}),
    # kernels
    ("cm.GemmConfig", ["64", "64", "32", "(2, 2)", "4"], {"swizzle_bytes": "128", "group_m": "8"}),
    (
        "cm.Sm90Config",
        [],
        {
            "block_m": "128",
            "block_n": "128",
            "block_k": "64",
            "consumers": "2",
            "stages": "4",
            "group_m": "8",
            "cluster": "1",
            "epilogue": "'tma'",
            "promote": "True",
            "multicast": "'B'",
            "schedule": "'cooperative'",
        },
    ),  # noqa: E501
    ("kernels.GemmPlan", ["cfg", "'bf16'", "'K'", "'N'"], {}),
    ("kernels.Sm90Plan", ["cm.Sm90Config()", "'bf16'", "'K'", "'K'"], {"out": "'bf16'"}),
    ("kernels.gemm_source", ["cfg", "'bf16'", "'K'", "'N'"], {"out": "'f32'"}),
    ("kernels.gemm_sm90_source", ["cm.Sm90Config()", "'bf16'", "'K'", "'K'"], {"out": "'bf16'"}),
    ("kernels.kernel_name", ["cfg", "'bf16'", "'K'", "'N'", "'f32'", "'f32'", "True", "True"], {}),
    ("kernels.pick_config", ["64", "64", "64"], {"batch": "1", "dtype": "'bf16'"}),
    (
        "kernels.pick_sm90_config",
        ["64", "64"],
        {"sms": "132", "dtype": "'bf16'", "batch": "1"},
    ),
    # tune (no GPU: the cache logic with a timer)
    (
        "cm.tune",
        ["64", "64", "64", "'bf16'", "'K'", "'K'"],
        {"candidates": "[cfg]", "timer": "lambda c: 1.0", "device_name_": "'dev'"},
    ),  # noqa: E501
    ("tunemod.shape_class", ["64", "64", "64"], {}),
    ("tunemod.kernel_dtype", ["'bfloat16'"], {}),
    ("tunemod.kernel_majors", ["'bf16'", "'K'", "'N'"], {}),
    ("tunemod.entry_key", ["'dev'", "64", "64", "64", "'bf16'", "'K'", "'N'"], {}),
    ("tunemod.lookup", ["'dev'", "64", "64", "64", "'bf16'", "'K'", "'N'"], {}),
    ("tunemod.store", ["'dev'", "64", "64", "64", "'bf16'", "'K'", "'N'", "cfg", "{'x': 1.0}"], {}),
    ("tunefn.default_candidates", ["'bf16'", "'K'", "'K'"], {}),
    # issue 34: tensor assignment, int-tuples, basis layouts, integer emulation, emit
    ("tsr().__setitem__", ["1", "2.0"], {}),
    ("tsr(np.int8).__setitem__", ["1", "7"], {}),
    ("it.product_each", ["(2, (3, 4))"], {}),
    ("bas", ["3", "4"], {"strict": "False"}),
    ("cm.emulate.rounded_reference", ["ts8", "np.ones((16, 32))", "np.ones((8, 32))"], {}),
    ("emit.to_cpp", ["cm.Layout((4, 2))"], {"type": "False", "dtype": "None"}),
    ("emit.to_cute_dsl", ["cm.Layout((4, 2))"], {"mma": "None"}),
    ("cm.Layout.parse", ["'Layout<Shape<Int<4>,Int<2>>,Stride<Int<2>,Int<1>>>{}'"], {}),
    # cutemma.gemm: the checks that run before a GPU is needed (CPU torch tensors)
    ("cm.gemm", ["tA", "tB"], GEMM_KEYWORDS),
]

# issue 34, wave 3: designs, the call record, epilogues, the traced call, the C++ harness
TEMPLATES += [
    (
        "dsn.GemmDesign",
        ["'SM80_16x8x16_F32F16F16F32_TN'"],
        {"tile": "(128, 128, 32)", "stages": "3", "schedule": "None", "epilogue": "('bias',)"},
    ),
    ("dsn.check", ["dsg"], {"arch": "'sm_80'"}),
    ("dsn.failed_rules", ["dsg"], {"arch": "'sm_80'"}),
    ("rpt.explain", ["dsg"], {"arch": "'sm_80'", "compile": "False"}),
    (
        "traced",
        [],
        {**GEMM_KEYWORDS, "epilogue": "None", "design": "None", "tiled_mma": "None"},
    ),
    ("callmod.check_scalar", ["'alpha'", "1.0"], {}),
    ("ep.validate_ops", ["('bias', 'relu')"], {}),
    ("ep.design_check", ["('bias', 'relu')"], {"family": "'sm90'"}),
    ("ep.Epilogue", ["('bias', 'relu')", "('f32', '')"], {}),
    (
        "ep.reference",
        ["acc", "('bias',)", "{'bias': torch.zeros(64)}"],
        {"alpha": "1.0", "beta": "0.0", "C": "None", "out_dtype": "None"},
    ),
    ("it.product_each", ["((2, 3), 4)"], {}),
    ("cm.Layout", ["(4, 2)", "(2, 1)"], {}),
    ("emit.to_cpp", ["cm.Swizzle(3, 3, 3)"], {}),
    ("cm.Layout.parse", ["'Sw<3,3,3>'"], {}),
    ("dsn.GemmDesign", ["tm2"], {"tile": "(128, 128, 32)", "stages": "3", "epilogue": "('bias',)"}),
]

# hand-written cases (the issue's examples among them): (call, 'raise' or 'ok')
EXTRA: list[tuple[str, str]] = [
    ("tc.retile('x')", "raise"),
    ("tc_ld.get_slice(0).retile_S(cm.make_tensor(np.zeros(7), cm.Layout(7)))", "raise"),
    ("tma.TmaBox('bf16', 'K', (64, 64), 'SW999', ((0, 0, 0),)).swizzle_enum", "raise"),
    ("cm.Sm90Config(promote=[1])", "raise"),
    ("cm.gemm(tA, tB, scale_a=torch.ones(2))", "raise"),
    ("cm.Swizzle(2**40, 0, 2**40)", "raise"),
    ("cm.emulate.gemm(tiled, np.ones((0, 16)), np.ones((16, 16)))", "ok"),  # D is 0 x 16
    (
        "cm.emulate.gemm(tiled, np.ones((32, 0)), np.ones((16, 0)), np.ones((32, 16))).tolist() == np.ones((32, 16)).tolist() or 1/0",
        "ok",
    ),  # noqa: E501
    ("cm.Sm90Config(block_m=0)", "raise"),
    ("cm.Sm90Config(block_m=-128)", "raise"),
    ("cm.Sm90Config(block_m=2**40)", "raise"),
    ("cm.Sm90Config(group_m=0)", "raise"),
    ("cm.Sm90Config(block_k=7)", "raise"),
    (
        "cm.make_tiled_copy(uni, cm.Layout((8, 4), (4, 1)), cm.Layout((1, 2))).tiler_mn and cm.TiledCopy(uni, cm.Layout((32, 4), (4, 1)), (10, 10))",
        "raise",
    ),  # noqa: E501
    ("tp.bank_conflicts(tc_ld, cm.Layout(256), side='D')", "raise"),
    ("etma.tma_load(args, g16, (2**40, 0))", "raise"),
    ("etma.tma_load(tma.tensor_map_args(box, 0, (64, 64), (-128,)), g16, (0, 0))", "raise"),
    (
        "etma.tma_reduce_add(tma.tensor_map_args(tma.tma_box(cm.tile_to_shape(cm.gmma_layout_atom('K', 'SW128', 'tf32'), (64, 32)), 'tf32', 'K'), 0, (32, 64), (128,)), np.full(2048, 0.5, np.float32), np.zeros(4096, np.int32), (0, 0))",
        "raise",
    ),  # noqa: E501
    (
        "cm.tune(64, 64, 64, 'bf16', candidates=[cfg, cm.GemmConfig(128, 128, 32)], timer=lambda c: float('nan'), device_name_='dev')",
        "raise",
    ),  # noqa: E501
    ("cm.decode_instr_desc(0, 'f16')", "raise"),
    ("cm.crd2idx((1, 2), (2, 3), (1,))", "raise"),
    (
        "tp.bank_conflicts(cm.make_tiled_copy(uni, cm.Layout(2**19), cm.Layout(2)), cm.Layout(2**20))",
        "raise",
    ),  # noqa: E501
    ("tma.tma_box(cm.tile_to_shape(sm, (2**20, 2**20)), 'bf16', 'K')", "raise"),
    ("cm.make_gmma_desc(cm.tile_to_shape(sm, (2**20, 2**20)), 'K', 'bf16')", "raise"),
    ("cm.print_tensor(cm.make_identity_tensor((2**20, 2**20)))", "raise"),
    ("cm.make_tiled_copy(None)", "raise"),
    ("cm.shape_div(4, 0)", "raise"),
    ("cm.ComposedLayout(sw, 0, cm.Layout(64))(np.int64(5))", "ok"),
    (
        "cm.tune(64, 64, 64, 'bf16', candidates=[cfg], timer=lambda c: 1.0, device_name_='dev')",
        "ok",
    ),
    ("tp.bank_conflicts(tc_ld, cm.Layout(256))", "ok"),
    ("cm.Sm90Config(128, 128, 64, stages=4)", "ok"),
    ("cm.Sm90Config(block_n=2**40)", "raise"),
    ("cm.Sm90Config(stages=2**40)", "raise"),
    ("cm.Sm90Config(block_k=2**40)", "raise"),
    ("cm.Sm90Config(block_k=0)", "raise"),
    ("cm.Sm90Config(block_k=-64)", "raise"),
    ("cm.GemmConfig(64, 64, 32, group_m=0)", "raise"),
    ("cm.GemmConfig(64, 64, 32, stages=2**40)", "raise"),
    ("cm.GemmConfig(2**40, 64, 32)", "raise"),
    ("cm.Sm90Config(group_m=-1)", "raise"),
    ("cm.Sm90Config(group_m=2**40)", "raise"),
    ("etma.tma_load(args, g16, (-1, 0))", "ok"),  # out-of-bound boxes fill zeros (PTX)
    ("etma.bulk_copy(b64, b64, 0, 0, 2**40)", "raise"),
    ("etma.bulk_copy(b64, b64, 2**40, 0, 16)", "raise"),
    ("tma.tensor_map_args(box, 0, (64, 64), (2**40,))", "raise"),
    ("cm.gemm(tA.double(), tB.double())", "raise"),
    ("cm.gemm(tA, tB, alpha=float('nan'))", "raise"),
    ("cm.gemm(tA, tB, alpha='x')", "raise"),
    ("cm.gemm(tA, tB, config='x')", "raise"),
    ("cm.gemm(tA, tB, out_dtype='x')", "raise"),
    ("cm.gemm(tA, tB, out=torch.zeros(3, 3))", "raise"),
    ("cm.gemm(tA, tB, C=torch.zeros(3, 3))", "raise"),
    ("cm.gemm(tA, tB[:-1])", "raise"),
    ("cm.gemm(tA[:0], tB)", "raise"),
    ("cm.gemm(torch.zeros(4, 4, 4, 4), torch.zeros(4, 4))", "raise"),
    ("cm.gemm(tA, tB, scale_a=float('nan'))", "raise"),
    ("cm.gemm(tA, tB, scale_b='x')", "raise"),
    ("tunemod.store('dev', 64, 64, 64, 'bf16', 'K', 'N', cfg, {'x': float('nan')})", "raise"),
    ("etma.bulk_copy(b64, np.zeros(64, np.uint8)[::2], 0, 0, 16)", "raise"),  # dst untouched
    ("etmem.tmem_store(tst, np.full((32, 1), np.nan), tmem, 0, 0)", "raise"),
    ("etma.tma_load(args, np.array(['a'] * 8192), (0, 0))", "raise"),
    # issue 34: Tensor assignment
    ("tsr().__setitem__(1, 'x')", "raise"),
    ("tsr().__setitem__(1, [1, 2])", "raise"),
    ("tsr().__setitem__(1, 10**400)", "raise"),
    ("tsr().__setitem__(1, {1})", "raise"),
    ("tsr().__setitem__(1, iter([1]))", "raise"),
    ("tsr().__setitem__(1, None)", "raise"),  # was stored as NaN
    ("tsr(ro=True).__setitem__(1, 1.0)", "raise"),
    ("tsr(np.int8).__setitem__(1, 1000)", "raise"),  # was wrapped to -24
    ("tsr(np.int8).__setitem__(1, 1.5)", "raise"),
    ("tsr(np.uint8).__setitem__(1, -1)", "raise"),
    ("tsr(np.float16).__setitem__(1, 1e6)", "raise"),  # was stored as inf
    ("tsr(np.int8).__setitem__(1, -128)", "ok"),
    ("tsr().__setitem__(None, [1, 2, 3, 4])", "ok"),
    # int-tuples and layouts
    ("it.product_each((2, (3, 'x')))", "raise"),  # was (2, 'xxx')
    ("it.product_each(deep(3000))", "raise"),
    ("cm.product(deep(3000))", "raise"),
    ("cm.flatten(deep(3000))", "raise"),
    ("cm.congruent(deep(3000), 1)", "raise"),
    ("bas(64, 0)", "raise"),  # strict (the default): outside the shape
    ("bas(64, 0, strict=False) == (64, 0) or 1/0", "ok"),  # was (0, 1); CuTe gives (64, 0)
    ("cm.Layout((2,) * 10**6, (0,) * 10**6).size() == 1 << 10**6 or 1/0", "ok"),  # was ~30 s
    # integer atoms on the CPU
    ("cm.emulate.rounded_reference(ts8, np.full((16, 32), 200), np.ones((8, 32)))", "raise"),
    ("cm.emulate.rounded_reference(ts8, np.full((16, 32), 1.5), np.ones((8, 32)))", "raise"),
    (
        "cm.emulate.rounded_reference(ts8, np.ones((16, 32)), np.ones((8, 32)), np.full((16, 8), 2**40))",
        "raise",
    ),  # noqa: E501
    # emit
    ("emit.to_cpp(cm.Layout(2**31))", "raise"),  # was Int<2147483648>, which g++ rejects
    ("emit.to_cpp(cm.Layout(10**5000))", "raise"),
    ("emit.to_cute_dsl(cm.Layout(10**5000))", "raise"),
    ("emit.to_cpp(deep(3000))", "raise"),
    ("emit.to_cute_dsl(deep(3000))", "raise"),
    (
        "emit.to_cute_dsl(cm.ComposedLayout(cm.Layout(4, 2), 1, cm.ComposedLayout(cm.Swizzle(1, 1, 2), 0, cm.Layout(4))))",
        "raise",
    ),  # noqa: E501
    (
        "'cute.make_composed_layout(cute.make_composed_layout(' in emit.to_cute_dsl(cm.ComposedLayout(cm.Swizzle(1, 1, 2), 0, cm.ComposedLayout(cm.Layout(8, 2), 1, cm.Layout(4)))) or 1/0",
        "ok",
    ),  # noqa: E501
    ("emit.to_cpp(thr)", "raise"),
    ("emit.to_cute_dsl(tsr())", "raise"),
    (
        "cm.Layout.parse(emit.to_cpp(cm.Layout((4, 2), (2, 1)))) == cm.Layout((4, 2), (2, 1)) or 1/0",
        "ok",
    ),  # noqa: E501
    ("cm.Layout.parse(emit.to_cpp(cm.Layout.parse('Sw<3,4,3> o 0 o (8,64):(64,1)')))", "ok"),
    # issue 34, wave 3: the issue's own examples on these surfaces
    ("dsn.check(dsg, 'sm_999')", "raise"),  # passed with H100 numbers
    ("dsn.check(dsg, None)", "raise"),
    ("dsn.failed_rules(dsg, 90)", "raise"),
    ("rpt.explain(dsg, 'sm_80', compile='no')", "raise"),  # compiled anyway
    ("dsn.GemmDesign(tm2, tile={'a': 1})", "raise"),
    ("dsn.GemmDesign(tm2, tile=[64, 64, [32]])", "raise"),
    ("dsn.GemmDesign(tm2, (128, 128, 32), epilogue=[['bias']])", "raise"),
    ("dsn.GemmDesign(tm2, (128, 128, 32), epilogue=42)", "raise"),
    ("cm.gemm(tA, tB, alpha=2**2000)", "raise"),
    ("cm.gemm(tA, tB, scale_a=10**400)", "raise"),
    ("traced(alpha=2**2000)", "raise"),
    ("traced(scale_a=float('nan'))", "raise"),
    ("traced(alpha=float('inf'))", "raise"),
    ("traced(C=torch.zeros(64, 64, dtype=torch.complex64))", "raise"),
    ("traced(out_dtype='float32')", "raise"),
    ("traced(out_dtype=np.float32)", "raise"),
    ("traced(C=np.zeros((64, 64)))", "raise"),
    ("traced(out=np.zeros((64, 64)))", "raise"),
    ("traced(C=1.5)", "raise"),
    ("traced()", "ok"),
    ("traced(out_dtype=torch.float32)", "ok"),
    ("ep.validate_ops({'residual', 'relu'})", "raise"),  # order depended on the hash seed
    ("ep.validate_ops(['bias', 'relu'])", "ok"),  # a list has an order (a set has none)
    ("ep.Epilogue('relu', '')", "raise"),
    ("ep.Epilogue(['relu'], [''])", "raise"),
    ("ep.reference(acc, ('bias',), {})", "raise"),
    ("ep.reference(acc, ('bias',), {'bias': torch.zeros(3)})", "raise"),
    ("ep.reference(acc, ('bias',), {'bias': 'x'})", "raise"),
    ("ep.reference(acc, ('relu',), {})", "ok"),
    ("cachedir('~nouser/x')", "raise"),
    ("cachedir('')", "ok"),  # unset: the default folder
    ("cxx('/bin/false')", "raise"),
    ("cxx('/nonexistent/g++')", "raise"),
    ("cxx('x')", "raise"),
    ("cxx('/tmp')", "raise"),
    ("cxx('0')", "raise"),
    ("dsn.check(dsn.GemmDesign(tm2, (128, 128, 32), stages='x'), 'sm_80')", "raise"),
    ("dsn.check(dsn.GemmDesign(tm2, (128, 128, 32), stages=1.5), 'sm_80')", "raise"),
    ("dsn.check(dsn.GemmDesign(tm2, ()), 'sm_80')", "raise"),
    ("dsn.check(dsn.GemmDesign(tm2, (128, 128, 32), epilogue='x'), 'sm_80')", "raise"),
    ("dsn.check(dsn.GemmDesign(tm2, (128, 128, 32), schedule='x'), 'sm_90a')", "raise"),
]


CLI_VALUES = ("''", "0", "-1", "1099511627776", "nan", "x", "/", "/tmp", "٤", "64x64x64x64")
# (a valid command, its options that take a value): each option gets each hostile value
CLI_TEMPLATES: list[tuple[str, tuple[str, ...]]] = [
    ("layout 4:1", ("--svg", "--html", "--latex")),
    ("list", ("--arch", "--family")),
    (
        "show SM80_16x8x16_F32F16F16F32_TN",
        ("-p", "--atom-layout", "--tile", "--svg", "--html", "--latex"),
    ),
    (
        "desc --major K --swizzle 128 --dtype bf16 --tile 64x64",
        ("--major", "--swizzle", "--dtype", "--tile", "--start", "--arch"),
    ),
    ("desc --decode 0x4100910", ("--decode", "--kind", "--arch", "--major")),
    ("verify --arch sm61 --no-progress", ("--arch", "--family", "--json")),
    ("gemm --plan", ("--config", "--dtype", "--a-major", "--b-major", "--out", "--batch")),
    ("gemm --sass", ("--arch",)),
    ("emit cpp 4:1", ("--atom-layout", "--tile")),
    ("emit cpp SM75_U32x4_LDSM_N", ("-p",)),
    ("emit cpp desc -p major=K -p swizzle=128 -p dtype=bf16", ("-p",)),
    ("show SM80_16x8x16_F32F16F16F32_TN", ("--thread",)),
    # issue 34, wave 3: the options and positionals not above
    ("gemm --plan", ("--family", "--run 64 64")),
    ("emit dsl 4:1", ("--atom-layout", "--tile")),
    ("emit dsl SM75_U32x4_LDSM_N", ("-p",)),
    ("emit", ("cpp", "dsl", "")),
    ("layout", ("",)),
    ("show", ("",)),
    ("list", ("--family sm80.ldsm --arch",)),
    ("verify --copy --family ldsm --no-progress", ("--arch",)),
]
CLI_EXTRA = [
    "layout 4:1 --svg a.svg --html a.svg",
    "show SM100_MMA_F16BF16_SS -p m=64 -p m=128",
    "verify --hardware --arch sm61 --no-progress",
    "verify --copy --arch sm90",
    "gemm --dtype bf16 --out s32",
    "gemm --config 4096x4096x512/2x2/4 --plan",
    "gemm --run 64 64 64 --batch 0",
    "gemm --run 1099511627776 64 64",
    "desc --decode 0 --kind f16",
    "show SM80_16x8x16_F32F16F16F32_TN --tile 1099511627776,8,16",
    "show SM80_16x8x16_F32F16F16F32_TN --atom-layout 1000000,1000,1",
    "layout '(1048576,1048576):(1,1048576)'",
    # issue 34
    "emit cpp SM75_U32x4_LDSM_N -p dtype=f16 -p dtype=f32",
    "emit cpp '2147483648:1'",
    "emit dsl '2147483648:1'",
    "emit cpp desc -p major=K -p swizzle=128",
    "show SM80_16x8x16_F32F16F16F32_TN --thread ²",
    "show SM80_16x8x16_F32F16F16F32_TN --thread " + "9" * 5000,
    "show SM75_U32x4_LDSM_N --thread 3",
    "verify --copy --family tmem_load --no-progress",
]
# commands that must succeed (exit 0): a refusal of one of them is 'refused-legal'
CLI_OK = [
    "emit cpp 'Sw<3,3,3>'",
    "emit cpp desc -p major=K -p swizzle=128 -p dtype=bf16 -p tile=64x64",
    "emit cpp 'Layout<Shape<Int<4>,Int<2>>,Stride<Int<2>,Int<1>>>{}'",
]


# 'value' rows reviewed by hand and found legal: (regular expression on the call, why)
LEGAL: list[tuple[str, str]] = [
    (r"cm\.copy_ops\(.*(arch|family)=None", "None is 'any' (documented filter)"),
    (r"cp\.copy_families\((None|0)\)", "None: every arch; 0: the universal copies' arch"),
    (r"cp\.Operand\(", "a catalog record type (data written by cutemma), not an input surface"),
    (
        r"(cm\.make_tiled_copy|tcm\.make_tiled_copy_impl)\(uni, ",
        "a layout has no thread limit (issue 34 decision: a kernel checks its block, a layout does not)",
    ),
    (r"tp\.explain\(tc_ld, smem=None\)", "smem is optional"),
    (r"tma\.stride_refusal\(", "returns the refusal text: that is its answer"),
    (
        r"tma\.batched_dims\(",
        "a helper; None/0 mean unbatched/shared (documented); sizes are checked by tensor_map_args",
    ),
    (r"tma\.tensor_map_args\(box, (0|2\*\*40),", "an address: 16-byte aligned, what TMA asks"),
    (r"etma\.bulk_copy\(b64, b64, 0, 0, 0\)", "an empty copy (0 is a multiple of 16 bytes)"),
    (r"cm\.make_gmma_desc\(sm, None,", "major None: read from the layout (documented)"),
    (
        r"cm\.Sm90Config\(.*(block_k|stages)=None",
        "None: the default (one swizzle row / as many as fit)",
    ),
    (r"kernels\.Sm90Plan\(.*out=None", "out None: no output type known (documented)"),
    (r"kernels\.pick_(sm90_)?config\(", "a pick for a large shape or SM count is an answer"),
    (
        r"cm\.tune\(",
        "the shape is a class key and the timer decides; None candidates: the defaults",
    ),
    (r"tunemod\.(shape_class|entry_key|store)\(", "any device name and shape class is a key"),
    (r"tunemod\.lookup\(", "a cache query: a key no store wrote has no entry (None is the miss)"),
    (
        r"tsr\((np\.int8)?\)\.__setitem__\(",
        "a number that fits the element type, or index None (the whole tensor)",
    ),
    (r"it\.product_each\((0|-1|2\*\*40|\(\))\)", "an int's product is itself; () is ()"),
    (r"bas\(", "strict=False: a basis layout extends past its shape, as CuTe does"),
    (r"emit\.to_cpp\((0|-1|\(\))[,)]", "an int or an empty tile is emitted as CuTe spells it"),
    (
        r"emit\.to_cpp\(cm\.Layout\(\(4, 2\)\), type=",
        "type True/False and dtype None are the options",
    ),
    (
        r"emit\.to_cute_dsl\(",
        "ints, tuples and a list (as a tuple) are DSL values; mma None is the default",
    ),
    (
        r"dsn\.GemmDesign\(",
        "a design is data: check()/gemm name a wrong tile, stages, schedule or epilogue (the dsn.check rows)",
    ),
    (r"rpt\.explain\(dsg, arch='sm_80', compile=True\)", "compile=True is an option"),
    (r"traced\(.*(alpha|beta|scale_a|scale_b)=(0|-1|2\*\*40|1\.5)[,)]", "a finite real scalar"),
    (r"traced\(.*epilogue=\(\)", "no epilogue ops"),
    (
        r"callmod\.check_scalar\(",
        "the first argument is the name for the message; the values are finite reals",
    ),
    (r"ep\.validate_ops\((None|\(\))\)", "no epilogue"),
    (r"ep\.design_check\(", "returns the refusal text or None; family only adds a family's limits"),
    (r"ep\.reference\(acc, (None|\(\)),", "no ops: the scaled product"),
    (r"ep\.reference\(.*(alpha|beta)=(0|-1|2\*\*40|1\.5)[,)]", "a finite real scalar"),
    (r"cm\.Layout\(\(4, 2\), None\)", "stride None: the column-major default"),
    (r"cli\('(layout|show) .*--(svg|html|latex) ", "any file name"),
    (r"cli\('verify .*--json ", "any file name"),
    (
        r"cli\('desc .*--(swizzle|start|decode) (0|1099511627776)'",
        "a swizzle of 0 bytes (none), start 0, a 64-bit descriptor; argparse: the last of a repeated option wins",
    ),
    (r"cli\('gemm --plan --batch 0'", "0 is --batch's default (one 2-D problem)"),
    (r"cli\('show SM80_16x8x16_F32F16F16F32_TN --thread 0'", "thread 0 exists"),
    (
        r"cli\('show SM80_16x8x16_F32F16F16F32_TN --atom-layout 1000000,1000,1'",
        "a layout has no thread limit (issue 34); the text is bounded",
    ),
    (r"cli\(\"layout '\(1048576,1048576\):\(1,1048576\)'\"\)", "printed bounded"),
    (r"cli\('layout  1099511627776'", "a rank-1 layout; printed bounded"),
    (r"cli\('emit cpp 0'", "the int 0 as CuTe spells it"),
    (r"cli\('layout  0'", "a layout of size 0 (CuTe has them too): it prints 'no cells'"),
]


def cli_calls() -> list[tuple[str, str]]:
    """The command-line cases: ``cli('argv')`` calls (status 2 and one line is 'named')."""
    out = []
    for base, options in CLI_TEMPLATES:
        for opt in options:
            for v in CLI_VALUES:
                out.append((f"cli({base + ' ' + opt + ' ' + v!r})", "raise"))
    out += [(f"cli({argv!r})", "ok") for argv in CLI_OK]
    return out + [(f"cli({argv!r})", "raise") for argv in CLI_EXTRA]


def _cli(argv: str):
    """Run ``cutemma argv`` in-process in a scratch folder: (status, stderr) or a CliOutcome."""
    import contextlib
    import io
    import shlex
    import tempfile

    from cutemma.cli import main

    err = io.StringIO()
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                status = main(shlex.split(argv))
        finally:
            os.chdir(here)
    return status, err.getvalue().strip()


def _alias_old_layout() -> None:
    """Run on a tree from before issue 20's kernels layout (for before/after counts): the
    modules the tables name, aliased to where that tree kept them."""
    import importlib

    for new, old in (("cutemma.kernels.tuned", "cutemma.kernels.tune"),
                     ("cutemma.kernels.pick", "cutemma.kernels.dispatch_sm90")):  # fmt: skip
        try:
            importlib.import_module(new)
        except ImportError:
            sys.modules[new] = importlib.import_module(old)
    import cutemma.kernels as kernels

    if not hasattr(kernels, "pick_sm90_config"):
        kernels.pick_sm90_config = sys.modules["cutemma.kernels.pick"].pick_sm90_config


def _issue34_names(cm) -> dict:
    """The objects issue 34's rows use (each row gets fresh data to write into)."""
    import numpy as np

    import cutemma.emit as emit
    import cutemma.layout.int_tuple as it

    def tsr(dtype=np.float64, ro=False):
        data = np.zeros(4, dtype)
        data.flags.writeable = not ro
        return cm.make_tensor(data, cm.Layout(4))

    def deep(n):
        t = 1
        for _ in range(n):
            t = (t,)
        return t

    names = {
        "np": np,
        "emit": emit,
        "it": it,
        "tsr": tsr,
        "deep": deep,
    }
    for name, make in (
        ("bas", lambda: cm.Layout.parse("(_64,_64):(_1@0,_1@1)")),
        ("ts8", lambda: cm.make_tiled_mma("SM80_16x8x32_S32S8S8S32_TN")),
        ("thr", lambda: cm.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN").get_slice(0)),
    ):
        try:
            names[name] = make()
        except Exception:  # noqa: BLE001 - an older tree: the rows count as 'missing'
            pass
    names.update(_wave3_names(cm))
    return names


def _wave3_names(cm) -> dict:
    """The objects of the wave-3 rows; a name the tree under test lacks is left out (its
    rows then count as 'missing', not as bare)."""
    import importlib

    out: dict = {"cachedir": _cache_dir_with, "cxx": _compiler_with}
    for name, mod in (("dsn", "cutemma.kernels.design"), ("rpt", "cutemma.kernels.report"),
                      ("ep", "cutemma.kernels.epilogue"), ("callmod", "cutemma.kernels.call")):  # fmt: skip
        try:
            out[name] = importlib.import_module(mod)
        except ImportError:
            pass
    try:
        tm2 = cm.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1))
        out["tm2"] = tm2
        out["dsg"] = out["dsn"].GemmDesign(tm2, (128, 128, 32), stages=3, epilogue=("bias",))
    except Exception:  # noqa: BLE001 - an older tree without designs
        pass
    try:
        import torch

        out["acc"] = torch.zeros(64, 64)
        out["traced"] = _traced
    except ImportError:
        pass
    return out


_FAKE = object()


def _traced(A=_FAKE, B=_FAKE, **kw):
    """``cutemma.gemm`` on fake CUDA tensors (what torch.compile traces): D's shape."""
    import torch
    from torch._subclasses import fake_tensor

    import cutemma

    real = {k: v for k, v in kw.items() if isinstance(v, torch.Tensor)}
    with fake_tensor.FakeTensorMode():
        # a tensor row's value is rebuilt in the mode, on the GPU (a real one mixed in is
        # torch's own refusal, not the call's)
        kw.update({k: torch.empty(v.shape, dtype=v.dtype, device="cuda") for k, v in real.items()})
        a = torch.empty(64, 32, dtype=torch.bfloat16, device="cuda") if A is _FAKE else A
        b = torch.empty(32, 64, dtype=torch.bfloat16, device="cuda") if B is _FAKE else B
        return tuple(cutemma.gemm(a, b, **kw).shape)


def _cache_dir_with(value: str):
    """The kernel cache folder under ``CUTEMMA_CACHE_DIR=value`` ('' unset)."""
    from cutemma.cuda.cache import cache_dir

    old = os.environ.pop("CUTEMMA_CACHE_DIR", None)
    try:
        if value:
            os.environ["CUTEMMA_CACHE_DIR"] = value
        return str(cache_dir())
    finally:
        os.environ.pop("CUTEMMA_CACHE_DIR", None)
        if old is not None:
            os.environ["CUTEMMA_CACHE_DIR"] = old


def _compiler_with(value: str):
    """The C++ witness harness under ``CXX=value``: a program that is not in its cache built
    (a missing compiler is the harness's skip, a failing one its CompileFailed)."""
    sys.path.insert(0, os.path.join(HERE, "cute_cpp"))
    import harness

    old = os.environ.get("CXX")
    os.environ["CXX"] = value
    try:
        harness.compiler.cache_clear()
        return str(harness.build(harness.program(f"  // hostile {time.time_ns()}")))
    finally:
        harness.compiler.cache_clear()
        if old is None:
            os.environ.pop("CXX", None)
        else:
            os.environ["CXX"] = old


def _names() -> dict:
    sys.path.insert(0, HERE)
    _alias_old_layout()
    from bad_inputs_copy_table import namespace

    import cutemma as cm
    import cutemma.kernels.tune as tunefn
    import cutemma.kernels.tuned as tunemod

    names = namespace()
    names["tunemod"] = tunemod
    names["tunefn"] = tunefn
    names["cli"] = _cli
    names["cm"] = cm
    names.update(_issue34_names(cm))
    try:
        import torch

        names["torch"] = torch
        names["tA"] = torch.zeros(64, 32, dtype=torch.bfloat16)
        names["tB"] = torch.zeros(32, 64, dtype=torch.bfloat16)
    except ImportError:
        pass
    return names


def calls() -> list[tuple[str, str]]:
    """Every call: each template with one argument swapped, then EXTRA ('value' rows need review)."""
    out = []
    for fn, args, kwargs in TEMPLATES:
        kw = [f"{k}={v}" for k, v in kwargs.items()]
        for i in range(len(args)):
            for h in HOSTILE:
                if h == args[i]:  # the valid call itself
                    continue
                out.append((f"{fn}({', '.join([*args[:i], h, *args[i + 1 :], *kw])})", "raise"))
        for k in kwargs:
            for h in HOSTILE:
                if h == kwargs[k]:
                    continue
                rest = [f"{kk}={h if kk == k else v}" for kk, v in kwargs.items()]
                out.append((f"{fn}({', '.join([*args, *rest])})", "raise"))
    return out + EXTRA + cli_calls()


def _mapped_bytes() -> int:
    """This process's virtual memory size (Linux /proc; 0 where there is none)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _worker() -> None:
    import resource
    import signal

    os.environ.setdefault("XDG_CACHE_HOME", "/tmp/hostile-cache")
    names = _names()
    # the limit counts from what the imports mapped: torch alone maps more than 3 GiB of
    # address space on some machines (its import then aborts under a flat limit)
    limit = _mapped_bytes() + MEMORY_BYTES
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from cutemma.errors import CutemmaError

    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("alarm")))
    for line in sys.stdin:
        call = json.loads(line)
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT_S - 1)
        try:
            value = eval(call, dict(names))  # noqa: S307 - our own text
            signal.setitimer(signal.ITIMER_REAL, 0)
            res = {"kind": "value", "text": repr(value)[:160]}
            if call.startswith("cli("):  # a command: exit 2 with one error line is named
                status, err = value
                lines = err.splitlines()
                one = len(lines) == 1 and lines[0].startswith("cutemma: error: ")
                kind = (
                    "named" if status == 2 and one else "bare" if status not in (0, 2) else "value"
                )
                res = {"kind": kind, "text": f"exit {status}: {err[:300]}"}
        except TimeoutError:
            res = {"kind": "hang", "text": "alarm"}
        except CutemmaError as e:
            signal.setitimer(signal.ITIMER_REAL, 0)
            res = {"kind": "named", "text": f"{type(e).__name__}: {str(e)[:300]}"}
        except (NameError, ImportError, AttributeError) as e:  # a name the tree lacks?
            signal.setitimer(signal.ITIMER_REAL, 0)
            kind = "missing" if _lacks_name(e) else "bare"
            res = {"kind": kind, "text": f"{type(e).__name__}: {str(e)[:200]}"}
        except Exception as e:  # noqa: BLE001 - the C++ harness's own skip and failure
            signal.setitimer(signal.ITIMER_REAL, 0)
            harness = sys.modules.get("harness")
            own = harness and isinstance(e, (harness.CppUnavailable, harness.CompileFailed))
            res = {
                "kind": "named" if own else "bare",
                "text": f"{type(e).__name__}: {str(e)[:200]}",
            }
        except BaseException as e:  # noqa: BLE001 - classifying is the point
            signal.setitimer(signal.ITIMER_REAL, 0)
            res = {"kind": "bare", "text": f"{type(e).__name__}: {str(e)[:200]}"}
        print(json.dumps(res), flush=True)


def _lacks_name(e: BaseException) -> bool:
    """Whether ``e`` says the tree under test has no such name (an older tree, for the
    before counts): a row name of this tool left out, or a cutemma module or attribute."""
    text = str(e)
    if isinstance(e, NameError) and not isinstance(e, UnboundLocalError):
        return True
    return "cutemma" in text and ("has no attribute" in text or "cannot import" in text
                                  or "No module named" in text)  # fmt: skip


def run(cases: list[tuple[str, str]]) -> list[dict]:
    """Each case in a worker (restarted after a hang); a result dict per case."""
    results, proc = [], None
    for call, expect in cases:
        if proc is None:
            # the worker imports the cutemma this process imported (its sys.path, in order)
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
            proc = subprocess.Popen(
                [sys.executable, __file__, "--worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
        proc.stdin.write(json.dumps(call) + "\n")
        proc.stdin.flush()
        start = time.monotonic()
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        ready = sel.select(timeout=TIMEOUT_S + 30 if not results else TIMEOUT_S)
        sel.close()
        line = proc.stdout.readline() if ready else ""
        if not line:
            proc.kill()
            proc.wait()
            proc = None
            res = {"kind": "hang", "text": f"no answer in {time.monotonic() - start:.0f} s"}
        else:
            res = json.loads(line)
        res.update(call=call, expect=expect)
        if res["kind"] == "value" and expect == "ok":
            res["kind"] = "ok"
        elif res["kind"] == "value":
            why = next((w for pat, w in LEGAL if re.match(pat, call)), None)
            if why is not None:
                res.update(kind="legal", why=why)
        if res["kind"] == "named" and expect == "ok":
            res["kind"] = "refused-legal"
        results.append(res)
    if proc is not None:
        proc.stdin.close()
        proc.wait()
    return results


def main() -> None:
    if "--worker" in sys.argv:
        _worker()
        return
    only = None
    if "--only" in sys.argv:
        only = set(sys.argv[sys.argv.index("--only") + 1].split(","))
    results = run(calls())
    counts: dict[str, int] = {}
    for r in results:
        counts[r["kind"]] = counts.get(r["kind"], 0) + 1
        if only is None or r["kind"] in only:
            print(f"{r['kind']:6} {r['call'][:150]}\n       -> {r['text'][:240]}")
    print(json.dumps(counts))
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
