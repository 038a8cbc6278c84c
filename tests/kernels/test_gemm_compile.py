"""The built-in GEMM configs compile for sm_80 and sm_90a to HMMA + LDSM + LDGSTS, no local memory."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_cuobjdump, needs_nvrtc  # noqa: E402

from cutemma.kernels import BUILTIN_CONFIGS, GemmPlan, gemm_source  # noqa: E402


@needs_nvrtc
@needs_cuobjdump
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("name", sorted(BUILTIN_CONFIGS))
def test_builtin_config_sass(name, arch):
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass

    cfg = BUILTIN_CONFIGS[name]
    plan = GemmPlan(cfg, "bf16", "K", "N")
    cubin = compile(gemm_source(cfg, "bf16", "K", "N", "bf16"), arch)
    counts = count_instructions(sass(cubin))
    # every mma.sync of every k block of one k tile, unrolled: mma_m * mma_n * k_blocks HMMA,
    # once in the unpredicated steady-state loop and once in the edge loop
    assert counts.get("HMMA", 0) == 2 * plan.mma_m * plan.mma_n * plan.k_blocks
    # ... and the prologue's ldmatrix of k block 0
    ldsm = (plan.ldmatrix_groups("A") + plan.ldmatrix_groups("B")) * (2 * plan.k_blocks + 1)
    assert counts.get("LDSM", 0) == ldsm
    assert counts.get("LDGSTS", 0) > 0
    assert not local_memory_use(cubin), local_memory_use(cubin)


@needs_nvrtc
@needs_cuobjdump
def test_unaligned_variant_has_no_cp_async():
    """Operands whose rows are not 16-byte aligned load element by element (no LDGSTS)."""
    from cutemma.cuda import compile, count_instructions, sass

    cfg = BUILTIN_CONFIGS["small"]
    src = gemm_source(cfg, "f16", "K", "K", "f32", vec_a=False, vec_b=False)
    counts = count_instructions(sass(compile(src, "sm_80")))
    assert counts.get("LDGSTS", 0) == 0 and counts.get("HMMA", 0) > 0


@needs_nvrtc
@needs_cuobjdump
@pytest.mark.parametrize("dtype,out,kind", [("tf32", "f32", "HMMA"), ("s8", "s32", "IMMA")])
def test_tf32_and_int8_sass(dtype, out, kind):
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass

    cfg = BUILTIN_CONFIGS["large"]
    plan = GemmPlan(cfg, dtype, "K", "K")
    cubin = compile(gemm_source(cfg, dtype, "K", "K", out), "sm_90a")
    counts = count_instructions(sass(cubin))
    assert counts.get(kind, 0) == 2 * plan.mma_m * plan.mma_n * plan.k_blocks
    assert counts.get("LDSM", 0) > 0 and counts.get("LDGSTS", 0) > 0
    assert not local_memory_use(cubin)


@needs_nvrtc
@needs_cuobjdump
def test_steady_state_loop_is_lean():
    """The default config's unpredicated loop: per k tile 64 HMMA, 16 LDSM, 8 LDGSTS and at
    most 48 other instructions (it was ~180 before the addresses left the loop)."""
    sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
    from gemm_sass import mix

    r = mix(BUILTIN_CONFIGS["large"], "bf16", "KN", "sm_90a")
    assert (r["mma"], r["ldsm"], r["ldgsts"]) == (64, 16, 8)
    assert r["other"] <= 48 and r["regs"] <= 255 and not r["local"], r
