"""What an sm80 design leaves unset is chosen from the rules, not refused (issue 32,
acceptance 3): B's ldmatrix takes the widest count (x4, x2, x1) that splits a row of B atoms
into whole instructions, so any number of N tiles runs; a stage without an smem layout
takes the widest swizzle (128, 64, 32, 16 bytes) whose atom rows its contiguous extent
holds; offsets that split into thread part + constant only before the stage's swizzle are
written as swizzle(thread + constant) (Split op 's+'). Each design here was refused on main
at b395b7f (rule atom_pairs, or rule plan: a 128-byte swizzle wider than the stage, or
offsets that do not split).

Witnesses: check accepts them; the plan's choice is what hand arithmetic on the tile says;
the CPU model of the generated kernel (gemm_sim: cp.async, ldmatrix by the PTX fragment
rule, plain loads at the addresses the text computes, mma.sync by the atom's emulation)
computes A @ B exactly on shapes with partial tiles in M, N and K; NVRTC compiles them to
tensor-core SASS without local memory. Asking for an ldmatrix that cannot serve is still
refused, by name.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from gemm_sim import simulate

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_cuobjdump, needs_nvrtc  # noqa: E402

from cutemma.errors import DesignError
from cutemma.kernels import GemmDesign, check, gemm_source
from cutemma.kernels.design import _call_majors, failed_rules
from cutemma.kernels.sm80.plan import ATOMS, GemmPlan, smem_layout, widest_smem_layout
from cutemma.layout import Layout
from cutemma.tiled import make_tiled_mma

F16, TF32, S8 = ATOMS["f16"], ATOMS["tf32"], ATOMS["s8"]
K8 = "SM80_16x8x8_F32F16F16F32_TN"
BF16_K8_ATOM = "SM80_16x8x8_F32BF16BF16F32_TN"
N_ORDER = {2: Layout((1, 2, 1), (2, 1, 0)), 3: Layout((1, 3, 1), (3, 1, 0))}


def _sw(ext: int, bk: int, major: str, width: int, eb: int = 2):
    return lambda: smem_layout(ext, bk, major, width, eb)


# label -> (atom, atom layout, tile, dtype, {field: factory}); B ldmatrix count by hand
ODD_N = {
    # 16x8x16: B is 2 registers an atom; 3 N tiles of (2,2) are 6 registers: not whole x4s
    "f16 (2,2) 64x48x32: 3 N tiles": (F16, (2, 2, 1), (64, 48, 32), "f16", {}, 2),
    # tf32 16x8x8: 2 B registers an atom, 5 atoms: 10 registers
    "tf32 (1,1) 16x40x16: 5 N tiles": (TF32, (1, 1, 1), (16, 40, 16), "tf32", {}, 2),
    # the k8 atom's B is 1 register: 3 atoms are 3 registers, x1 each
    "f16 k8 (2,1) 32x24x16: 3 one-register B atoms": (K8, (2, 1, 1), (32, 24, 16), "f16", {}, 1),
    # int8 16x8x32: 2 B registers an atom, (1,2) -> 3 N tiles of 16
    "s8 (1,2) 32x48x64: 3 N tiles": (S8, (1, 2, 1), (32, 48, 64), "s8", {}, 2),
    "f16 (1,1) 16x24x32, copy_b ldmatrix.x2 asked": (
        F16, (1, 1, 1), (16, 24, 32), "f16", {"copy_b": lambda: "SM75_U32x2_LDSM_N"}, 2),
}  # fmt: skip
# label -> (atom, layout, tile, dtype, fields, (A's, B's) swizzle by hand, K-major)
SWIZZLE = {
    # K rows of 96 f16 = 12 chunks: a 128-byte atom row (8 chunks) does not divide them,
    # a 64-byte one (4 chunks, Sw<2,..>) does
    "f16 (2,2) 64x64x96: 96-element K rows": (
        F16, (2, 2, 1), (64, 64, 96), "f16", {}, ("Sw<2,3,3>", "Sw<2,3,3>")),
    # tf32 K rows of 56 = 224 bytes = 14 chunks: only 2-chunk (32-byte, Sw<1,..>) atoms divide
    "tf32 (2,1) 64x48x56: 56-element K rows": (
        TF32, (2, 1, 1), (64, 48, 56), "tf32", {}, ("Sw<1,2,3>", "Sw<1,2,3>")),
}  # fmt: skip
# label -> (atom, layout, tile, dtype, fields): some split is op 's+'
BEFORE_SWIZZLE = {
    "tf32 (7,1) N-ordered 112x64x48: ldmatrix A": (
        TF32, Layout((7, 1, 1), (1, 7, 0)), (112, 64, 48), "tf32", {}),
    "bf16 k8 128x8x56, 128-byte smem B: cp.async and ldmatrix B": (
        BF16_K8_ATOM, (1, 1, 1), (128, 8, 56), "bf16", {"smem_b": _sw(8, 56, "K", 128)}),
    "bf16 (1,3) N-ordered 64x72x48, 128-byte smem A, UniversalCopy A: plain loads": (
        ATOMS["bf16"], N_ORDER[3], (64, 72, 48), "bf16",
        {"smem_a": _sw(64, 48, "K", 128), "copy_a": lambda: "UniversalCopy<uint32_t>"}),
    "SM70 (2,4) N-ordered 96x32x24, M-major A: cp.async A": (
        "SM70_8x8x4_F16F16F16F16_TN", Layout((2, 4, 1), (4, 1, 0)), (96, 32, 24), "f16",
        {"copy_b": lambda: "UniversalCopy<uint32_t>"}),
}  # fmt: skip
ALL = {k: v[:5] for k, v in (ODD_N | SWIZZLE).items()} | BEFORE_SWIZZLE


def _design(label: str) -> tuple[GemmDesign, str]:
    atom, lay, tile, dtype, fields = ALL[label]
    return GemmDesign(make_tiled_mma(atom, lay), tile, **{k: f() for k, f in fields.items()}), dtype


def _check(d: GemmDesign) -> GemmDesign:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SM70 atoms on sm_90a: a software routine
        return check(d)


@pytest.mark.parametrize("label", sorted(ALL))
def test_designs_refused_on_main_pass_check(label):
    d, _ = _design(label)
    assert _check(d) is d


@pytest.mark.parametrize("label", sorted(ODD_N))
def test_odd_n_tiles_take_the_widest_ldmatrix_that_tiles_them(label):
    d, dtype = _design(label)
    want = ODD_N[label][5]
    for am, bm in _call_majors(d):
        plan = GemmPlan(d.config, dtype, am, bm, d)
        assert plan.ldmatrix("B")[0].atom.num == want, (am, bm)
        assert plan.ldmatrix_groups("B") * want == plan.mma_n * plan.regs_b


def test_an_asked_ldmatrix_that_cannot_serve_is_refused_by_name():
    """x4 over 3 N tiles of 2-register atoms (6 registers): asked, it is refused by rule
    atom_pairs, with the count that would serve; left None the same tile runs (x2)."""
    t = make_tiled_mma(F16, (1, 1, 1))
    bad = GemmDesign(t, (16, 24, 32), copy_b="SM75_U32x4_LDSM_N")
    assert failed_rules(bad) == ["atom_pairs"]
    with pytest.raises(DesignError, match=r"rule atom_pairs: copy_b SM75_U32x4_LDSM_N: .*of 2"):
        check(bad)
    assert check(GemmDesign(t, (16, 24, 32))) is not None


@pytest.mark.parametrize("label", sorted(SWIZZLE))
def test_stage_takes_the_widest_swizzle_its_rows_hold(label):
    d, dtype = _design(label)
    want_a, want_b = SWIZZLE[label][5]
    plan = GemmPlan(d.config, dtype, "K", "K", d)
    assert (str(plan.smem_A.outer), str(plan.smem_B.outer)) == (want_a, want_b)
    bm, bn, bk = d.tile
    eb = plan.elem_bytes
    # the built-in 128-byte width cannot take this stage at all
    with pytest.raises(Exception, match="must be a multiple of the swizzle width"):
        smem_layout(bm, bk, "K", 128, eb)


def test_widest_swizzle_keeps_the_built_in_width_where_it_fits():
    """Every stage the 128-byte swizzle takes with rows of a power of two of chunks keeps
    it (the built-in configs' kernels do not change)."""
    for ext in (16, 32, 64, 128, 256):
        for bk in (16, 32, 64, 128):
            for major in ("K", "MN"):
                for eb in (1, 2, 4):
                    try:
                        want = smem_layout(ext, bk, major, 128, eb)
                    except Exception:
                        continue
                    assert widest_smem_layout(ext, bk, major, 128, eb) == want


@pytest.mark.parametrize("label", sorted(BEFORE_SWIZZLE))
def test_offsets_split_before_the_swizzle(label):
    d, dtype = _design(label)
    ops = set()
    for am, bm in _call_majors(d):
        plan = GemmPlan(d.config, dtype, am, bm, d)
        for w in "AB":
            ops |= {plan.copy(w).smem.op, plan.smem_read(w).op}
            # the split reproduces the stage's offsets for every thread and value
            split = plan.smem_read(w)
            assert all(
                0 <= split.at(t, i) < (plan.stage_elems_A if w == "A" else plan.stage_elems_B)
                for t in range(plan.threads)
                for i in range(len(split.consts))
            )
    assert "s+" in ops


def _majors(d: GemmDesign) -> list[tuple[str, str]]:
    pairs = _call_majors(d)
    return [pairs[0], pairs[-1]] if len(pairs) > 1 else pairs


@pytest.mark.parametrize("label", sorted(ALL))
def test_simulated_kernel_is_exact_on_partial_tiles(label):
    d, dtype = _design(label)
    bm, bn, bk = d.tile
    rng = np.random.default_rng(5)
    # partial tiles in M, N and K (and a second block row where the tile is small)
    M, N, K = bm + bm // 2 + 3 if bm < 64 else bm - 5, bn + 3, bk + bk // 2 + 1
    A = rng.integers(-3, 4, (M, K)).astype(float)
    B = rng.integers(-3, 4, (K, N)).astype(float)
    for am, bmj in _majors(d):
        plan = GemmPlan(d.config, dtype, am, bmj, d)
        out = "s32" if dtype == "s8" else "f32"
        src = gemm_source(d.config, dtype, am, bmj, out, design=d)
        np.testing.assert_array_equal(simulate(plan, src, A, B), A @ B, err_msg=f"{am}{bmj}")


@needs_nvrtc
@needs_cuobjdump
@pytest.mark.parametrize(
    "label", sorted(k for k in ALL if not ALL[k][0].startswith("SM70_"))
)  # SM70 atoms compile on sm_90a to a called routine (test_design_arch)
def test_kernels_compile_to_tensor_core_sass_without_local_memory(label):
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass

    d, dtype = _design(label)
    am, bmj = _majors(d)[-1]
    src = gemm_source(d.config, dtype, am, bmj, "s32" if dtype == "s8" else "f32", design=d)
    cubin = compile(src, "sm_90a")
    counts = count_instructions(sass(cubin))
    assert counts.get("IMMA" if dtype == "s8" else "HMMA", 0) > 0, counts
    use = local_memory_use(cubin)
    assert not use.local_bytes and not use.stack_bytes
