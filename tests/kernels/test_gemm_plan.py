"""The sm80 GEMM's layouts, tables and generated text, checked on the CPU (no NVRTC needed)."""

from __future__ import annotations

import numpy as np
import pytest
from gemm_sim import simulate, thread_values

from cutemma.errors import TiledMmaError
from cutemma.kernels import BUILTIN_CONFIGS, GemmConfig, GemmPlan, gemm_source
from cutemma.kernels.sm80.ldmatrix import LdMatrix, bank_phases

MAJORS = [("K", "K"), ("K", "N"), ("M", "K"), ("M", "N")]


@pytest.mark.parametrize("a_major,b_major", MAJORS)
def test_simulated_kernel_computes_a_times_b(a_major, b_major):
    """cp.async -> swizzled smem -> ldmatrix -> mma -> epilogue, thread by thread, with edges."""
    rng = np.random.default_rng(7)
    cfg = GemmConfig(64, 64, 32, (2, 2), 3)
    M, N, K = 67, 70, 45  # two block rows/cols, a K tail, none a multiple of a tile
    A = rng.integers(-3, 4, (M, K)).astype(float)
    B = rng.integers(-3, 4, (K, N)).astype(float)
    plan = GemmPlan(cfg, "bf16", a_major, b_major)
    D = simulate(plan, gemm_source(cfg, "bf16", a_major, b_major), A, B)
    np.testing.assert_array_equal(D, A @ B)


@pytest.mark.parametrize("dtype", ["tf32", "s8"])
def test_simulated_kernel_32_and_8_bit(dtype):
    """tf32 (one value per register) and s8 (four): ldmatrix moves their 16-bit halves."""
    rng = np.random.default_rng(3)
    cfg = GemmConfig(64, 64, 32, (2, 2), 3)
    M, N, K = 70, 67, 75
    A = rng.integers(-3, 4, (M, K)).astype(float)
    B = rng.integers(-3, 4, (K, N)).astype(float)
    plan = GemmPlan(cfg, dtype, "K", "K")
    D = simulate(plan, gemm_source(cfg, dtype, "K", "K", "s32" if dtype == "s8" else "f32"), A, B)
    np.testing.assert_array_equal(D, A @ B)


def test_narrow_types_need_k_major():
    with pytest.raises(TiledMmaError, match="tf32: ldmatrix reads 32-bit elements only K-major"):
        GemmPlan(GemmConfig(), "tf32", "M", "K")


def test_a_wrong_ldmatrix_rule_is_caught():
    """The simulation is a real witness: swapping plain/.trans for A gives a wrong product."""
    rng = np.random.default_rng(1)
    cfg = GemmConfig(64, 64, 32, (2, 2), 3)
    A = rng.integers(-3, 4, (64, 32)).astype(float)
    B = rng.integers(-3, 4, (32, 64)).astype(float)
    plan = GemmPlan(cfg, "bf16", "K", "K")
    la, sa = plan.ldmatrix("A")
    plan._ldmatrix["A"] = (type(la)(LdMatrix(la.atom.num, not la.atom.trans), la.rows), sa)
    D = simulate(plan, gemm_source(cfg, "bf16", "K", "K"), A, B)
    assert not np.array_equal(D, A @ B)


@pytest.mark.parametrize("name", sorted(BUILTIN_CONFIGS))
@pytest.mark.parametrize("a_major,b_major", MAJORS)
def test_ldmatrix_is_bank_conflict_free(name, a_major, b_major):
    plan = GemmPlan(BUILTIN_CONFIGS[name], "f16", a_major, b_major)
    assert plan.bank_conflicts("A") == 1
    assert plan.bank_conflicts("B") == 1


def test_unswizzled_rows_would_conflict():
    """The bank check can fail: 8 rows 64 bytes apart share bank groups pairwise... 4-way."""
    assert bank_phases([r * 32 for r in range(8)], 1) == 4


@pytest.mark.parametrize("a_major,b_major", MAJORS)
def test_every_thread_constant_equals_its_layout(a_major, b_major):
    """Each `const int` in the source, evaluated per thread, equals the plan's layout table."""
    cfg = BUILTIN_CONFIGS["large"]
    plan = GemmPlan(cfg, "bf16", a_major, b_major)
    src = gemm_source(cfg, "bf16", a_major, b_major)
    names = ["A_copy_base", "B_copy_base", "A_ldsm_base", "B_ldsm_base", "C_m", "C_n"]
    got = thread_values(src, names, plan.threads)
    (_, sa), (_, sb) = plan.ldmatrix("A"), plan.ldmatrix("B")
    m_t, n_t, _ = plan.epilogue
    want = {
        "A_copy_base": plan.copy("A").smem.thread.table,
        "B_copy_base": plan.copy("B").smem.thread.table,
        "A_ldsm_base": sa.thread.table,
        "B_ldsm_base": sb.thread.table,
        "C_m": m_t.table,
        "C_n": n_t.table,
    }
    for name in names:
        assert tuple(got[name]) == want[name], name
    # and the tables are the layouts evaluated: the smem offset of each thread's first chunk
    cp = plan.copy("A")
    cpr = cp.thr_layout.shape[0]
    for t in range(plan.threads):
        c, o = (t % cpr) * 8, t // cpr
        mn_k = (o, c) if cp.k_contiguous else (c, o)
        assert cp.smem.thread.table[t] == plan.smem_A(*mn_k)


def test_source_is_deterministic():
    cfg = BUILTIN_CONFIGS["wide"]
    assert gemm_source(cfg, "f16", "M", "N", "f32") == gemm_source(cfg, "f16", "M", "N", "f32")
    assert gemm_source(cfg, "f16", "M", "N", "f32") != gemm_source(cfg, "bf16", "M", "N", "f32")


def test_config_errors_name_the_rule():
    with pytest.raises(TiledMmaError, match="block_m 100 a multiple of 8\\*2"):
        GemmConfig(block_m=100)
    # 48 rows are whole 8-row (SM70) atoms, not whole tiles of the default 2x2 16x8x16 TiledMMA
    with pytest.raises(TiledMmaError, match="multiples of the TiledMMA's M = 32 and N = 16"):
        GemmPlan(GemmConfig(block_m=48), "f16", "K", "K")
    with pytest.raises(TiledMmaError, match="takes f16, bf16, tf32, s8"):
        GemmPlan(GemmConfig(), "f32", "K", "K")
    with pytest.raises(
        TiledMmaError, match="block_k 16 must be a multiple of the s8 atom's K = 32"
    ):
        GemmPlan(GemmConfig(block_k=16), "s8", "K", "K")
    with pytest.raises(TiledMmaError, match="A is 'K' or 'M'"):
        GemmPlan(GemmConfig(), "f16", "N", "K")


@pytest.mark.parametrize("a_major,b_major", [("K", "N"), ("M", "K")])
def test_interior_fast_path_taken_and_not_taken(a_major, b_major):
    """Inside blocks copy full k tiles past the prologue unpredicated; edge blocks never do."""
    rng = np.random.default_rng(5)
    cfg = GemmConfig(64, 64, 32, (2, 2), 3)
    M, N, K = 64 + 5, 64 + 9, 5 * 32  # block (0, 0) inside; the other three at an edge
    A = rng.integers(-3, 4, (M, K)).astype(float)
    B = rng.integers(-3, 4, (K, N)).astype(float)
    plan = GemmPlan(cfg, "bf16", a_major, b_major)
    src = gemm_source(cfg, "bf16", a_major, b_major)
    stats = {}
    np.testing.assert_array_equal(simulate(plan, src, A, B, stats), A @ B)
    assert stats == {"full": 5 - 2, "edge": 4 * 5 - 3}
    # one more k element: the last tile is a K tail, so block (0, 0) copies one tile fewer
    A, B = np.pad(A, ((0, 0), (0, 1)), constant_values=1), np.pad(B, ((0, 1), (0, 0)))
    stats = {}
    np.testing.assert_array_equal(simulate(plan, src, A, B, stats), A @ B)
    assert stats["full"] == 5 - 2
    full = src[src.index("auto copy_full") : src.index("const int k_fast")]
    assert "bytes" not in full and full.count("cp_async_16_full(") == 2 + 2


def test_unaligned_operands_have_no_fast_path():
    src = gemm_source(GemmConfig(64, 64, 32, (2, 2), 3), "f16", "K", "K", vec_a=False)
    assert "copy_full" not in src and "k_fast" not in src
