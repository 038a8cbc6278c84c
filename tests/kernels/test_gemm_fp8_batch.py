"""fp8 (sm89 mma.sync) and batched GEMM kernels on the CPU: the simulated kernel, the source's
batch plumbing, and the SASS ptxas really emits for the fp8 atoms."""

from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from gemm_sim import simulate

from cutemma.kernels import GemmConfig, GemmPlan, gemm_source
from cutemma.kernels.pick import BUILTIN_CONFIGS, FP8_LARGE
from cutemma.kernels.sm80.plan import ATOMS
from cutemma.kernels.sm80.source import params
from cutemma.mma import mma_ops

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_cuobjdump, needs_nvrtc  # noqa: E402

FP8 = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def test_fp8_kernel_dtypes_are_the_catalog_atoms():
    """Every e4m3/e5m2 pair, mixed ones included, has its sm89 atom (F32 accumulate)."""
    names = {str(op) for op in mma_ops(family="sm89.fp8")}
    for dt in ("e4m3", "e5m2", "e4m3_e5m2", "e5m2_e4m3"):
        a, b = (dt.split("_") * 2)[:2]
        assert ATOMS[dt] == f"SM89_16x8x32_F32{a.upper()}{b.upper()}F32_TN" in names


@pytest.mark.parametrize("dtype", ["e4m3", "e5m2_e4m3"])
def test_simulated_fp8_kernel(dtype):
    """Inputs rounded to their fp8 formats; the kernel's product equals theirs in float64."""
    rng = np.random.default_rng(11)
    cfg = GemmConfig(64, 64, 32, (2, 2), 3)
    M, N, K = 70, 67, 75  # edges in m, n and a K tail
    ta, tb = FP8[dtype.split("_")[0]], FP8[dtype.split("_")[-1]]
    A = rng.standard_normal((M, K)).astype(ta).astype(float)
    B = rng.standard_normal((K, N)).astype(tb).astype(float)
    plan = GemmPlan(cfg, dtype, "K", "K")
    D = simulate(plan, gemm_source(cfg, dtype, "K", "K", "bf16"), A, B)
    np.testing.assert_allclose(D, A @ B, rtol=1e-5, atol=1e-5)


def test_fp8_source_reads_bytes_and_accumulates_in_f32():
    src = gemm_source(BUILTIN_CONFIGS["small"], "e4m3_e5m2", "K", "K", "f16")
    assert "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32" in src
    assert "const uint8_t* __restrict__ A" in src and "float acc[" in src


def test_every_kernel_takes_batch_strides_and_offsets_by_block_y():
    """Batched calls run one launch with gridDim.y problems; 2-D calls pass zero strides."""
    names = [p.name for p in params("bf16", "bf16", "bf16")]
    assert names[-4:] == ["batch_a", "batch_b", "batch_c", "batch_d"]
    src = gemm_source(BUILTIN_CONFIGS["small"], "bf16", "K", "N", "bf16")
    assert "const long long batch = blockIdx.y;" in src
    assert (
        "A += batch * batch_a; B += batch * batch_b; C += batch * batch_c; D += batch * batch_d;"
        in src
    )
    # ... before any pointer is read: the offsets precede the copy setup
    assert src.index("A += batch") < src.index("A_src =")


@needs_nvrtc
@needs_cuobjdump
@pytest.mark.parametrize(
    "arch,cfg,dtype",
    [("sm_89", BUILTIN_CONFIGS["small"], "e5m2_e4m3"), ("sm_90a", FP8_LARGE, "e4m3")],
)
def test_fp8_sass(arch, cfg, dtype):
    """What ptxas emits for fp8 mma.sync (checked with NVRTC 13 + cuobjdump 13):

    sm_89: one QMMA.16832.F32 per mma.sync.
    sm_90a: no QMMA; each mma.sync becomes F2FP conversions of the fp8 pairs to f16x2, two
    HMMA.16816.F32 and FADDs.
    ptxas may emit the unrolled k tile more than once (the small config: 3 copies, 24 QMMA
    for 8 mma.sync), so the counts are multiples of the per-k-tile numbers. The 4-warp 128x128 tile spills there (16 B of stack):
    FP8_LARGE uses 8 warps and spills nothing.
    """
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass

    plan = GemmPlan(cfg, dtype, "K", "K")
    cubin = compile(gemm_source(cfg, dtype, "K", "K", "bf16"), arch)
    counts = count_instructions(sass(cubin))
    mmas = plan.mma_m * plan.mma_n * plan.k_blocks
    if arch == "sm_89":
        qmma = counts.get("QMMA", 0)
        assert counts.get("HMMA", 0) == 0 and qmma > 0 and qmma % mmas == 0
    else:
        hmma = counts.get("HMMA", 0)
        assert counts.get("QMMA", 0) == 0 and hmma > 0 and hmma % (2 * mmas) == 0
        assert counts.get("F2FP", 0) > 0
    assert counts.get("LDSM", 0) > 0 and counts.get("LDGSTS", 0) > 0
    assert not local_memory_use(cubin), local_memory_use(cubin)


def test_cli_shows_fp8_and_batched_source(capsys):
    from cutemma.cli import main

    assert main(["gemm", "--show-source", "--dtype", "e4m3_e5m2", "--out", "f32"]) == 0
    src = capsys.readouterr().out
    assert "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32" in src
    assert "A += batch * batch_a" in src and "b128x128x32_w4x2_s4" in src  # fp8's large tile
    assert main(["gemm", "--plan", "--dtype", "e5m2", "--config", "small"]) == 0
    assert "SM89_16x8x32_F32E5M2E5M2F32_TN" in capsys.readouterr().out
