"""sm80 designs the family once refused and CuTe builds (issue 32, acceptance 3): an asked
ldmatrix of fewer matrices than an atom's fragment (more instructions, as CuTe's
make_tiled_copy_A/B issues them), tiles whose rows are not whole 16-byte chunks (8- and
4-byte cp.async.ca chunks), and register reads whose offsets have no one thread part (a
shared address per group of values). Each is accepted, and its generated kernel computes A @ B in the
CPU model of the kernel (gemm_sim: the ldmatrix statements and registers read from the
kernel text, ldmatrix by the PTX fragment rule), edge tiles included; a sample compiles
with NVRTC for sm_80 and sm_90a without local memory."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from gemm_sim import simulate

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_cuobjdump, needs_nvrtc  # noqa: E402

from cutemma.kernels import GemmDesign, failed_rules, gemm_source
from cutemma.kernels.sm80.plan import GemmPlan
from cutemma.layout import Layout
from cutemma.tiled import make_tiled_mma

F16 = "SM80_16x8x16_F32F16F16F32_TN"
TF32 = "SM80_16x8x8_F32TF32TF32F32_TN"
QUAD = "SM70_8x8x4_F32F16F16F32_TN"
F16K8 = "SM80_16x8x8_F16F16F16F16_TN"
F16F16 = "SM80_16x8x16_F16F16F16F16_TN"


def _tiled(atom: str, wm: int, wn: int):
    return make_tiled_mma(atom, Layout((wm, wn, 1), (1, wm, 0)))


# label -> (design maker, dtype, A major, B major)
CASES = {
    "A x2 on a 4-register atom, K-major": (
        lambda: GemmDesign(_tiled(F16, 1, 2), (32, 48, 32), copy_a="SM75_U32x2_LDSM_N"),
        "f16", "K", "K",
    ),
    "A x1 .trans, B x2 .trans, M/N-major": (
        lambda: GemmDesign(
            _tiled(F16, 2, 1), (64, 24, 32), copy_a="SM75_U16x2_LDSM_T",
            copy_b="SM75_U16x4_LDSM_T",
        ),
        "bf16", "M", "N",
    ),
    "B x1 over 5 atoms of 2 registers": (
        lambda: GemmDesign(_tiled(F16, 1, 1), (16, 40, 16), copy_b="SM75_U32x1_LDSM_N"),
        "f16", "K", "K",
    ),
    "tf32 A x1": (
        lambda: GemmDesign(_tiled(TF32, 2, 2), (32, 32, 16), copy_a="SM75_U32x1_LDSM_N"),
        "tf32", "K", "K",
    ),
    "quadpair, K-major rows of 24 bytes (8-byte chunks)": (
        lambda: GemmDesign(_tiled(QUAD, 2, 2), (16, 16, 12)),
        "f16", "K", "K",
    ),
    "quadpair, MN-major, k 20 (16-byte rows, 4-row atoms)": (
        lambda: GemmDesign(_tiled(QUAD, 2, 2), (16, 32, 20)),
        "f16", "M", "N",
    ),
    "quadpair, K-major rows of 56 bytes (8-byte chunks, one unswizzled row)": (
        lambda: GemmDesign(_tiled(QUAD, 2, 2), (16, 32, 28)),
        "f16", "K", "K",
    ),
    # offsets with no one thread part: 3 warps of 16 rows cross the 32-row swizzle atoms at
    # different values, so each group of values keeps its own shared address (Split 'k+')
    "keyed: A M-major ldmatrix over 3 warps": (
        lambda: GemmDesign(_tiled(F16K8, 3, 1), (192, 8, 8)),
        "f16", "M", "K",
    ),
    "keyed: B N-major ldmatrix x1 over 1x3 warps": (
        lambda: GemmDesign(
            _tiled("SM80_16x8x8_F32F16F16F32_TN", 1, 3), (48, 96, 16), copy_b="SM75_U16x2_LDSM_T"
        ),
        "f16", "K", "N",
    ),
    "keyed: B N-major plain loads over 1x3 warps": (
        lambda: GemmDesign(
            make_tiled_mma(F16F16, Layout((1, 3, 1), (3, 1, 0))), (16, 96, 32),
            copy_b="UniversalCopy<uint32_t>",
        ),
        "f16", "K", "N",
    ),
    "quadpair alone, rows of 8 bytes": (
        lambda: GemmDesign(make_tiled_mma(QUAD, (1, 1, 1)), (8, 8, 4)),
        "f16", "K", "K",
    ),
}  # fmt: skip


@pytest.mark.parametrize("label", sorted(CASES))
def test_design_is_accepted_and_its_kernel_computes_a_at_b(label):
    make, dtype, am, bm = CASES[label]
    d = make()
    assert failed_rules(d) == [], label
    plan = GemmPlan(d.config, dtype, am, bm, d)
    src = gemm_source(d.config, dtype, am, bm, "f32", design=d)
    rng = np.random.default_rng(3)
    bm_, bn_, bk_ = d.tile
    # one whole block and one cut in M, N and K (the edge copies and stores)
    for m, n, k in ((bm_, bn_, 2 * bk_), (bm_ + bm_ // 2 + 1, 2 * bn_ - 3, 3 * bk_ - 1)):
        A = rng.integers(-3, 4, (m, k)).astype(float)
        B = rng.integers(-3, 4, (k, n)).astype(float)
        np.testing.assert_array_equal(simulate(plan, src, A, B), A @ B, err_msg=label)


def test_narrow_chunks_are_cp_async_ca_and_16_byte_ones_stay_cg():
    """cp.async.cg moves 16 bytes only (PTX ISA, cp.async: ".cg ... cp-size 16"): an 8-byte
    chunk is .ca, and a tile of whole 16-byte chunks keeps the old text."""
    d = CASES["quadpair, K-major rows of 24 bytes (8-byte chunks)"][0]()
    src = gemm_source(d.config, "f16", "K", "K", "f32", design=d)
    assert "cp_async_8(" in src and "cp.async.ca.shared.global [%0], [%1], 8, %2;" in src
    w = GemmDesign(_tiled(QUAD, 2, 2), (16, 16, 16))
    whole = gemm_source(w.config, "f16", "K", "K", "f32", design=w)
    assert "cp.async.ca" not in whole and "cp_async_16_full(" in whole


@needs_nvrtc
@needs_cuobjdump
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_new_copies_compile_without_local_memory(arch):
    from cutemma.cuda import compile, local_memory_use

    for label in ("A x2 on a 4-register atom, K-major", "B x1 over 5 atoms of 2 registers",
                  "quadpair, K-major rows of 24 bytes (8-byte chunks)",
                  "keyed: A M-major ldmatrix over 3 warps",
                  "keyed: B N-major plain loads over 1x3 warps"):  # fmt: skip
        make, dtype, am, bm = CASES[label]
        d = make()
        use = local_memory_use(compile(gemm_source(d.config, dtype, am, bm, design=d), arch))
        assert not use.local_bytes and not use.stack_bytes, label


def test_an_ldmatrix_wider_than_the_atoms_fragment_is_refused_as_cute_refuses_it():
    """x4 over the 2 registers of a 16x8x8 atom's A: CuTe's make_tiled_copy_A fails its static
    assertion (tests/cute_cpp/test_ldmatrix_vals.py); the rule names it and what fits."""
    from cutemma.errors import DesignError
    from cutemma.kernels import check

    d = GemmDesign(_tiled("SM80_16x8x8_F32F16F16F32_TN", 2, 2), (64, 32, 16),
                   copy_a="SM75_U32x4_LDSM_N")  # fmt: skip
    assert "atom_pairs" in failed_rules(d)
    with pytest.raises(DesignError, match="TiledCopy uses too few vals.*2 or 1 matrices"):
        check(d)
