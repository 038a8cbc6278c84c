"""GemmDesign (issue 20): built-in configs are designs whose kernels do not change, custom
designs (atom layouts, the seeds' kind of M permutation, other atoms, smem swizzles) compute
A @ B in the CPU model of the generated kernel (gemm_sim: cp.async, ldmatrix by the PTX
fragment rule, mma.sync by the atom's emulation), and compile to tensor-core SASS without
local memory."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from gemm_sim import simulate

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_cuobjdump, needs_nvrtc  # noqa: E402

from cutemma.errors import DesignError, LaunchError
from cutemma.kernels import (
    BUILTIN_CONFIGS,
    GemmConfig,
    GemmDesign,
    Sm90Config,
    check,
    explain,
    failed_rules,
    gemm_sm90_source,
    gemm_source,
    pick_config,
    pick_sm90_config,
)
from cutemma.kernels.pick import builtin_sm90_config
from cutemma.kernels.sm80.plan import ATOMS, GemmPlan, smem_layout
from cutemma.kernels.sm80.source import kernel_name
from cutemma.layout import Layout
from cutemma.tiled import make_tiled_mma

F16 = "SM80_16x8x16_F32F16F16F32_TN"
# the seeds' M permutation, for 16-row atoms: rows 8i..8i+7 of each atom interleaved
PERM_M = Layout((8, 2, 2), (1, 16, 8))


def SEED_SM70():  # noqa: N802 - a constant, built lazily
    """The seeds' SM70 TiledMMA: 2x2 atoms N-major, M permutation (4,4,2):(1,8,4), tile
    32x32x4 (each thread runs 2x2 atoms per tile)."""
    return make_tiled_mma(
        "SM70_8x8x4_F32F16F16F32_NT", Layout((2, 2), (2, 1)), (Layout((4, 4, 2), (1, 8, 4)), 32, 4)
    )


def _name_free(src: str) -> str:
    return re.sub(r"cutemma_gemm_sm80_\w+", "NAME", src)


@pytest.mark.parametrize("name", sorted(BUILTIN_CONFIGS))
@pytest.mark.parametrize("dtype", ["bf16", "tf32"])
def test_builtin_config_as_a_custom_design_gives_the_same_kernel(name, dtype):
    """The plan generalised to a design's TiledMMA reproduces each built-in kernel exactly
    when handed the built-in TiledMMA (only the kernel's name says it is a design)."""
    cfg = BUILTIN_CONFIGS[name]
    tiled = make_tiled_mma(ATOMS[dtype], (*cfg.warps, 1))
    d = GemmDesign(tiled, (cfg.block_m, cfg.block_n, cfg.block_k), stages=cfg.stages)
    assert not d.custom and d.config == cfg  # the config path: the very same kernel
    out = "f32"
    plain = gemm_source(cfg, dtype, "K", "K", out)
    forced = gemm_source(cfg, dtype, "K", "K", out, design=d)
    assert forced != plain and _name_free(forced) == _name_free(plain)


def test_pickers_return_designs_of_the_configs():
    d = pick_config(8192, 8192, 8192, dtype="e4m3")
    assert isinstance(d, GemmDesign) and d.config == GemmConfig(128, 128, 32, (4, 2), 4)
    assert d.name == d.config.name and d.warps == (4, 2)
    s = pick_sm90_config(4096, 4096, 4096)
    assert s.config == builtin_sm90_config(4096, 4096, 4096) and s.config.wgmma_n is None
    assert s.tiled_mma.atom.shape_mnk == (64, s.config.block_n, 16)
    src = gemm_sm90_source(GemmDesign.from_config(Sm90Config(128, 256), "bf16").config,
                           "bf16", "K", "N", "bf16")  # fmt: skip
    assert src == gemm_sm90_source(Sm90Config(128, 256), "bf16", "K", "N", "bf16")


def test_designs_hash_by_value():
    a = GemmDesign(make_tiled_mma(F16, (2, 2, 1), (PERM_M, None, None)), (64, 64, 32))
    b = GemmDesign(make_tiled_mma(F16, (2, 2, 1), (Layout((8, 2, 2), (1, 16, 8)), None, None)),
                   (64, 64, 32))  # fmt: skip
    c = GemmDesign(make_tiled_mma(F16, (2, 2, 1)), (64, 64, 32))
    assert a == b and hash(a) == hash(b) and a != c and a.name != c.name
    assert {a: 1}[b] == 1
    # configs that differ beyond the design's fields stay apart (the fast path's key)
    x2 = GemmDesign.from_config(Sm90Config(128, 256, cluster=2), "bf16")
    assert x2 != GemmDesign.from_config(Sm90Config(128, 256), "bf16")


CUSTOM = {
    "seed-style M permutation, 2x2 warps": (
        lambda: GemmDesign(make_tiled_mma(F16, (2, 2, 1), (PERM_M, None, None)), (64, 64, 32)),
        "f16", "K", "K",
    ),
    "N-major atom layout, MN-major operands": (
        lambda: GemmDesign(make_tiled_mma(F16, Layout((2, 2, 1), (2, 1, 0))), (64, 64, 32)),
        "f16", "M", "N",
    ),
    "tf32 4x2 warps": (
        lambda: GemmDesign(make_tiled_mma(ATOMS["tf32"], (4, 2, 1)), (128, 64, 16)), "tf32", "K", "K",
    ),
    "int8 1x4 warps, bk 64": (
        lambda: GemmDesign(make_tiled_mma(ATOMS["s8"], (1, 4, 1)), (32, 128, 64)), "s8", "K", "K",
    ),
    "e4m3 2x1 warps": (
        lambda: GemmDesign(make_tiled_mma(ATOMS["e4m3"], (2, 1, 1)), (64, 32, 64)), "e4m3", "K", "K",
    ),
    "the seeds' SM80_16x8x8 atom (A in 2 registers, B in 1), 2x2 warps": (
        lambda: GemmDesign(make_tiled_mma("SM80_16x8x8_F32F16F16F32_TN", (2, 2, 1)), (64, 64, 32)),
        "f16", "M", "N",
    ),
    "tf32 k4 atom, B of one N atom per warp": (
        lambda: GemmDesign(make_tiled_mma("SM80_16x8x4_F32TF32TF32F32_TN", (2, 1, 1)), (32, 8, 32)),
        "tf32", "K", "K",
    ),
    "the seeds' F16-accumulating SM80_16x8x8 atom, 2x2 warps": (
        lambda: GemmDesign(make_tiled_mma("SM80_16x8x8_F16F16F16F16_TN", (2, 2, 1)), (64, 64, 32)),
        "f16", "K", "K",
    ),
    "F16-accumulating 16x8x16 atom, M permutation, MN-major operands": (
        lambda: GemmDesign(make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", (2, 2, 1),
                                          (PERM_M, None, None)), (64, 64, 32)),
        "f16", "M", "N",
    ),
    "the seeds' SM70 quadpair atom alone (a warp of 4 quadpairs)": (
        lambda: GemmDesign("SM70_8x8x4_F32F16F16F32_NT", (16, 16, 32)), "f16", "M", "N",
    ),
    "SM70 quadpair atom alone, K-major operands (scalar loads)": (
        lambda: GemmDesign("SM70_8x8x4_F32F16F16F32_NT", (16, 16, 32)), "f16", "K", "K",
    ),
    "the seeds' SM70 2x2 with M permutation (4,4,2):(1,8,4) over 32x32x4": (
        lambda: GemmDesign(SEED_SM70(), (32, 32, 32)), "f16", "K", "K",
    ),
    "the seeds' SM70 2x2 TiledMMA, MN-major operands": (
        lambda: GemmDesign(SEED_SM70(), (64, 32, 32)), "f16", "M", "N",
    ),
    "F16-accumulating SM70 TN atom, 2x2": (
        lambda: GemmDesign(make_tiled_mma("SM70_8x8x4_F16F16F16F16_TN", (2, 2, 1)), (32, 32, 32)),
        "f16", "K", "K",
    ),
    "UniversalCopy for A and B on an SM80 16x8x16 TiledMMA": (
        lambda: GemmDesign(make_tiled_mma(F16, (2, 2, 1)), (64, 64, 32),
                           copy_a="UniversalCopy<uint32_t>", copy_b="UniversalCopy<uint32_t>"),
        "f16", "K", "N",
    ),
    "UniversalCopy for B only, int8": (
        lambda: GemmDesign(make_tiled_mma(ATOMS["s8"], (2, 1, 1)), (32, 16, 64),
                           copy_b="UniversalCopy<uint32_t>"),
        "s8", "K", "K",
    ),
    "bf16, 64-byte swizzle smem for A": (
        lambda: GemmDesign(make_tiled_mma(ATOMS["bf16"], (2, 1, 1)), (64, 32, 32),
                           smem_a=smem_layout(64, 32, "K", 64, 2)),
        "bf16", "K", "N",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CUSTOM))
def test_custom_design_computes_the_product(case):
    make, dtype, am, bm = CUSTOM[case]
    d = check(make())  # plain atom layouts run the config path in gemm; here the design's
    rng = np.random.default_rng(7)
    M, N, K = 70, 67, 75  # edges in every mode
    A = rng.integers(-3, 4, (M, K)).astype(float)
    B = rng.integers(-3, 4, (K, N)).astype(float)
    out = "s32" if dtype == "s8" else "f32"
    plan = GemmPlan(d.config, dtype, am, bm, d)
    D = simulate(plan, gemm_source(d.config, dtype, am, bm, out, design=d), A, B)
    np.testing.assert_array_equal(D, A @ B)


def test_a_wrong_permutation_reading_is_caught():
    """The model is a witness for permutations: the permuted TiledMMA's plan with the
    unpermuted C partition stores rows in the wrong places."""
    d = GemmDesign(make_tiled_mma(F16, (2, 2, 1), (PERM_M, None, None)), (64, 64, 32))
    plain = GemmDesign(make_tiled_mma(F16, (2, 2, 1)), (64, 64, 32))
    plan = GemmPlan(d.config, "f16", "K", "K", d)
    plan.__dict__["epilogue"] = GemmPlan(plain.config, "f16", "K", "K", plain).epilogue
    rng = np.random.default_rng(1)
    A, B = rng.integers(-3, 4, (64, 32)).astype(float), rng.integers(-3, 4, (32, 64)).astype(float)
    src = gemm_source(d.config, "f16", "K", "K", "f32", design=d)
    assert not np.array_equal(simulate(plan, src, A, B), A @ B)


def test_kernel_names_of_designs_differ():
    a = GemmDesign(make_tiled_mma(F16, (2, 2, 1), (PERM_M, None, None)), (64, 64, 32))
    c = GemmDesign(make_tiled_mma(F16, Layout((2, 2, 1), (2, 1, 0))), (64, 64, 32))
    names = {kernel_name(d.config, "f16", "K", "K", "f32", "f32", True, True, d) for d in (a, c)}
    assert len(names) == 2


@needs_nvrtc
@needs_cuobjdump
def test_designs_compile_to_tensor_core_sass_without_local_memory():
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass

    for make, dtype, am, bm in (CUSTOM["seed-style M permutation, 2x2 warps"],
                                CUSTOM["int8 1x4 warps, bk 64"],
                                CUSTOM["the seeds' F16-accumulating SM80_16x8x8 atom, 2x2 warps"]):  # fmt: skip
        d = make()
        out = "s32" if dtype == "s8" else "f32"
        cubin = compile(gemm_source(d.config, dtype, am, bm, out, design=d), "sm_90a")
        counts = count_instructions(sass(cubin))
        per_k_tile = d.tile[0] * d.tile[1] * d.tile[2] // (16 * 8 * d.tiled_mma.tile_size_mnk[2])
        tc = counts.get("IMMA" if dtype == "s8" else "HMMA", 0)
        assert tc >= per_k_tile // (d.threads // 32), counts  # one per atom per warp, unrolled
        use = local_memory_use(cubin)
        assert not use.local_bytes and not use.stack_bytes


@needs_nvrtc
@needs_cuobjdump
def test_regload_designs_compile_without_local_memory():
    """UniversalCopy on an sm80 atom keeps HMMA; the SM70 quadpair TiledMMA compiles for
    sm_90a too (ptxas lowers m8n8k4 to a called routine there, PTX ISA: "substantially
    reduced performance on other target architectures"), neither spilling to local memory."""
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass

    for case, hmma in (("UniversalCopy for A and B on an SM80 16x8x16 TiledMMA", True),
                       ("the seeds' SM70 2x2 with M permutation (4,4,2):(1,8,4) over 32x32x4", False)):  # fmt: skip
        make, dtype, am, bm = CUSTOM[case]
        d = make()
        src = gemm_source(d.config, dtype, am, bm, "f32", design=d)
        assert ("m8n8k4" in src) != hmma and "ldmatrix.sync" not in src
        cubin = compile(src, "sm_90a")
        if hmma:
            assert count_instructions(sass(cubin)).get("HMMA", 0) >= 2 * 2 * 2  # mma_m x mma_n x k
        use = local_memory_use(cubin)
        assert not use.local_bytes and not use.stack_bytes


def test_explain_reports_conflicts_from_the_layouts():
    ok = explain(GemmDesign(make_tiled_mma(F16, (2, 2, 1)), (64, 64, 32)), compile=False)
    assert set(ok.conflicts.values()) == {1} and ok.smem_bytes == 4 * 2 * (64 + 64) * 32
    assert "occupancy" in str(ok)
    # a 32-byte swizzle atom under 128-byte rows of K: the 8 lanes of a cp.async phase write
    # one row's 8 chunks, which land in 4 atoms 256 bytes apart (the same 8 banks, 4 times);
    # ldmatrix still reads 8 rows of one atom (32 bytes apart, swizzled): conflict-free
    narrow = GemmDesign(make_tiled_mma(F16, (2, 2, 1)), (64, 64, 64),
                        smem_a=smem_layout(64, 64, "K", 32, 2))  # fmt: skip
    r = explain(narrow, compile=False)
    assert r.conflicts["A cp.async (global -> smem)"] == 4
    assert r.conflicts["A ldmatrix (smem -> registers)"] == 1


def test_gemm_takes_one_of_config_design_tiled_mma():
    from cutemma.kernels import gemm

    d = GemmDesign(F16, (64, 64, 32))
    with pytest.raises(LaunchError, match="one of config=, design= and tiled_mma="):
        gemm(None, None, config=GemmConfig(), design=d)
    with pytest.raises(DesignError, match="takes a cutemma.kernels.GemmDesign"):
        gemm(None, None, design="SM80_16x8x16_F32F16F16F32_TN")


def test_rules_are_named_and_say_what_would_satisfy_them():
    d = GemmDesign(F16, (64, 64, 32), stages=1)
    assert failed_rules(d) == ["stages"]
    with pytest.raises(DesignError, match=r"rule stages: .*need stages >= 2"):
        check(d)
    assert failed_rules(GemmDesign(ATOMS["e4m3"], (64, 64, 64)), "sm_80") == ["atom_arch"]
    assert failed_rules(GemmDesign(ATOMS["e4m3"], (64, 64, 64)), "sm_89") == []


_EPI = re.compile(
    r"m = m0 \+ C_m \+ (\d+), n = n0 \+ C_n \+ (\d+);.*?f16_to_f32\(\(uint16_t\)\(?acc\[(\d+)\]( >> 16)?"
)


@pytest.mark.parametrize("atom", ["SM80_16x8x8_F16F16F16F16_TN", "SM80_16x8x16_F16F16F16F16_TN"])
def test_f16_accumulators_are_read_as_the_ptx_packs_them(atom):
    """The CPU model moves values, not registers: this checks the packing. PTX ISA
    (mma.m16n8k8 / m16n8k16, .f16 C/D fragments): register r of an atom holds c{2r}, c{2r+1}
    as one .f16x2, lower half first, at row groupID + 8r and columns 2*threadID_in_group
    + {0, 1}; lane 0 (groupID 0, threadID_in_group 0) thus reads (8r, half)."""
    d = GemmDesign(make_tiled_mma(atom, (1, 1, 1)), (32, 16, 32))
    src = gemm_source(d.config, "f16", "K", "K", "f32", design=d)
    stores = _EPI.findall(src)
    assert len(stores) == 2 * 2 * 4 and "uint32_t acc[8];" in src
    for dm, dn, reg, high in stores:
        atom_i, r = divmod(int(reg), 2)
        im, jn = divmod(atom_i, 2)  # mma_m = 2, mma_n = 2 atoms, n fastest
        assert (int(dm), int(dn)) == (16 * im + 8 * r, 8 * jn + (1 if high else 0))


def test_sm90_warpgroups_side_by_side_along_n_are_the_design():
    """A TiledMMA of two warpgroups along N (atom layout (1, 2, 1)) is the sm90 config with
    ``consumers_n=2``, whose kernel multiplies with that very TiledMMA: each warpgroup every
    row of the tile by its half of the columns. Before, such a design was refused by
    ``sm90_shape`` while its ``config`` named a one-warpgroup kernel of another TiledMMA."""
    from cutemma.kernels.design import check, failed_rules
    from cutemma.kernels.sm90.plan import Sm90Plan

    tiled = make_tiled_mma("SM90_64x96x16_F32BF16BF16_SS<K,K>", (1, 2, 1))
    d = GemmDesign(tiled, (192, 192, 64))
    assert failed_rules(d) == [] and check(d) is d
    cfg = d.config
    assert (cfg.consumers, cfg.consumers_n, cfg.atom_n, cfg.name) == (
        2, 2, 96, "b192x192x64_c2_sauto_wn2"
    )  # fmt: skip
    plan = Sm90Plan(cfg, "bf16", "K", "K", "bf16")
    assert plan.tiled.atom_layout_mnk == tiled.atom_layout_mnk
    # warpgroup w's accumulators: every (row, column) of rows 0..191 (three m64 wgmmas) by
    # columns 96 w .. 96 w + 95, each once
    m_t, n_t, consts = plan.epilogue
    for w in range(2):
        got = [(m_t(t) + dm, n_t(t) + dn) for t in range(128 * w, 128 * w + 128)
               for _, dm, dn in consts]  # fmt: skip
        assert sorted(got) == [(m, n) for m in range(192) for n in range(96 * w, 96 * w + 96)]
    # and warpgroups (2, 1, 1) remain the config they were
    stacked = GemmDesign(make_tiled_mma("SM90_64x192x16_F32BF16BF16_SS<K,K>", (2, 1, 1)),
                         (128, 192, 64))  # fmt: skip
    assert stacked.config.consumers_n == 1 and stacked.config.consumers == 2
