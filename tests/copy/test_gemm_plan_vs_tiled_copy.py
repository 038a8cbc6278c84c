"""The sm80 GEMM's private ldmatrix / cp.async plans (cutemma.kernels.plan) address exactly what
this layer's TiledCopy partitions say: make_tiled_copy_A(LDSM, its TiledMMA) for A's ldmatrix
rows, make_tiled_copy(cp.async 128-bit, thread layout, 1x8 values) for the cp.async chunks.

Each plan entry (thread t, instruction j) is a shared-memory offset; the TiledCopy gives the
tile coordinate of the first value of thread t's instruction j (partition_S of an identity
tile), and the smem layout maps that coordinate to the offset. Equal everywhere = the kernel's
address constants could be generated from the TiledCopy without changing its source.
"""

from __future__ import annotations

import pytest

from cutemma.copy import make_copy_atom
from cutemma.kernels.plan import GemmConfig, GemmPlan, _combine
from cutemma.layout import Layout
from cutemma.tensor import make_identity_tensor
from cutemma.tiled import make_tiled_copy, make_tiled_copy_A

CONFIGS = [
    GemmConfig(64, 64, 32, (2, 2), 4),
    GemmConfig(128, 128, 32, (2, 2), 4),
    GemmConfig(128, 128, 32, (4, 2), 4),
    GemmConfig(128, 64, 64, (2, 2), 3, swizzle_bytes=64),
]


def _first_values(tc, t, shape, nval):
    """Tile coordinate of the first value of each instruction of thread t (instruction order
    colexicographic over the partition's rest modes)."""
    coords = tc.get_slice(t).partition_S(make_identity_tensor(shape)).tolist()
    return coords[::nval]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_ldmatrix_rows_of_A_are_make_tiled_copy_A(cfg):
    plan = GemmPlan(cfg, "f16", "K", "K")
    lp, split = plan.ldmatrix("A")
    assert lp.atom.copy_atom.name == "SM75_U32x4_LDSM_N"
    tc = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), plan.tiled)
    tab = plan.smem_tables["A"]
    for t in range(0, plan.threads, 5):
        firsts = _first_values(tc, t, (cfg.block_m, cfg.block_k), 8)
        assert len(firsts) == plan.mma_m * plan.k_blocks
        for i in range(plan.mma_m):
            for ik in range(plan.k_blocks):
                m, k = firsts[i + ik * plan.mma_m]  # rest modes (CPY_M, CPY_K), M fastest
                assert _combine(split, t, i * plan.k_blocks + ik) == tab[m, k]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
@pytest.mark.parametrize("which", ["A", "B"])
def test_cp_async_chunks_are_make_tiled_copy(cfg, which):
    plan = GemmPlan(cfg, "f16", "K", "K")
    cp = plan.copy(which)
    cpr, rpp = cp.thr_layout.shape
    extent = cfg.block_m if which == "A" else cfg.block_n
    atom = make_copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "f16")
    # threads row-major over (rows, 16-byte chunks); each copies 8 consecutive k
    tc = make_tiled_copy(atom, Layout((rpp, cpr), (cpr, 1)), Layout((1, 8)))
    tab = plan.smem_tables[which]
    for t in range(plan.threads):
        firsts = _first_values(tc, t, (extent, cfg.block_k), 8)
        assert len(firsts) == cp.iters
        for i, (mn, k) in enumerate(firsts):
            assert _combine(cp.smem, t, i) == tab[mn, k]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_ldmatrix_rows_of_B_are_make_tiled_copy_B(cfg):
    """B's ldmatrix.x4 serves two N atoms (tn apart): CuTe's TiledMMA with its N tile doubled
    (permutation N = 2 tn, values repeated) and make_tiled_copy_B of the x4 atom."""
    from cutemma.tiled import make_tiled_copy_B, make_tiled_mma

    plan = GemmPlan(cfg, "f16", "K", "K")
    if plan.mma_n < 2:
        pytest.skip("one N atom: an x2 ldmatrix")
    lp, split = plan.ldmatrix("B")
    assert lp.atom.copy_atom.name == "SM75_U32x4_LDSM_N"
    tm = make_tiled_mma(plan.tiled.atom, (*cfg.warps, 1), (None, 2 * plan.tn, None))
    tc = make_tiled_copy_B(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), tm)
    tab, groups = plan.smem_tables["B"], plan.ldmatrix_groups("B")
    for t in range(0, plan.threads, 3):
        firsts = _first_values(tc, t, (cfg.block_n, cfg.block_k), 8)
        assert len(firsts) == groups * plan.k_blocks
        for i in range(groups):
            for ik in range(plan.k_blocks):
                n, k = firsts[i + ik * groups]
                assert _combine(split, t, i * plan.k_blocks + ik) == tab[n, k]
