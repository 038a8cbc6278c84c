"""GMMA RS designs (issue 20): the consumers load A from the stage into the wgmma A
registers. The registers each thread loads are checked against the PTX ISA's register
fragment of wgmma's A (written out here), through the addresses the kernel text computes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from gemm_sim import thread_values

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_cuobjdump, needs_nvrtc  # noqa: E402

from cutemma.kernels import GemmDesign, failed_rules, gemm_sm90_source  # noqa: E402
from cutemma.kernels.sm90.plan import Sm90Config, Sm90Plan  # noqa: E402


def ptx_a_fragment(t: int, i: int) -> tuple[int, int]:
    """(row, col) of 16-bit value ``i`` (0..7) of wgmma A in thread ``t`` of a warpgroup,
    m64nNk16 (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts", wgmma A for
    .f16/.bf16): warp w owns rows 16w..16w+15; a0,a1 at (groupID, 2*threadID_in_group +
    {0,1}), a2,a3 eight rows down, a4..a7 the same eight columns to the right."""
    lane, warp = t % 32, (t % 128) // 32
    g, q = lane // 4, lane % 4
    return 16 * warp + g + 8 * ((i // 2) % 2), 2 * q + (i % 2) + 8 * (i // 4)


@pytest.mark.parametrize("majors", [("K", "K"), ("M", "N")])
@pytest.mark.parametrize("consumers", [1, 2])
def test_rs_registers_hold_the_ptx_a_fragment(majors, consumers):
    cfg = Sm90Config(128, 64, 64, consumers=consumers, a_regs=True)
    plan = Sm90Plan(cfg, "f16", *majors, "f32")
    src = gemm_sm90_source(cfg, "f16", *majors, "f32")
    keys, parts = plan.a_regload.parts()
    T = plan.consumer_threads
    tv = thread_values(src, ["A_ld_base"] + [f"A_ld{j}" for j in range(len(keys))], T)
    tab = {}  # stage element -> (m, k)
    for m in range(cfg.block_m):
        for k in range(plan.block_k):
            tab[int(plan.smem_A(m, k))] = (m, k)
    regs = plan.tiled.atom.op.a.count
    for t in range(T):
        for im in range(plan.mma_m):
            for kb in range(plan.k_blocks):
                for i in range(2 * regs):
                    j, add = parts[(im * plan.k_blocks + kb) * 2 * regs + i]
                    byte = tv[f"A_ld{j}"][t] + 2 * add
                    row, col = ptx_a_fragment(t, i)
                    want = (im * plan.tm + 64 * (t // 128) + row, kb * 16 + col)
                    assert tab[byte // 2] == want, (t, im, kb, i)


def test_rs_seed_design_passes_the_rules():
    d = GemmDesign("SM90_64x128x16_F32F16F16_RS<K,K>")
    assert failed_rules(d) == [] and d.config.a_regs and d.config.name.endswith("_rs")
    assert failed_rules(GemmDesign("SM90_64x64x32_F32E4M3E4M3_RS_TN")) == ["atom_family"]
    h = GemmDesign("SM90_64x128x16_F16F16F16_SS<K,K>")
    assert failed_rules(h) == [] and h.config.acc_f16 and h.config.name.endswith("_h16")


@needs_nvrtc
@needs_cuobjdump
def test_rs_kernel_compiles_to_hgmma_without_local_memory():
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass

    d = GemmDesign("SM90_64x128x16_F32F16F16_RS<K,K>")
    src = gemm_sm90_source(d.config, "f16", "K", "K", "f32")
    assert (
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" in src and "a_frag[0][0][3]" in src
    )
    cubin = compile(src, "sm_90a")
    assert count_instructions(sass(cubin)).get("HGMMA", 0) >= 2 * 4  # mma_m x k blocks
    use = local_memory_use(cubin)
    assert not use.local_bytes and not use.stack_bytes


def test_f16_accumulators_unpack_as_the_ptx_d_fragment():
    """F16-accumulating GMMA: value ``v`` of row block ``im`` is half ``v % 2`` of register
    ``im * regs + v // 2`` (the wgmma statements name acch[im * regs ..]); its (m, n) must be
    the PTX ISA's wgmma D fragment (the A pattern, columns in groups of 8 across N)."""
    d = GemmDesign("SM90_64x64x16_F16F16F16_SS<K,K>", (128, 64, 64))
    cfg = d.config
    plan = Sm90Plan(cfg, "f16", "K", "K", "f32")
    src = gemm_sm90_source(cfg, "f16", "K", "K", "f32")
    regs = plan.tiled.atom.op.c.count  # f16x2 registers per wgmma (16 for N = 64)
    assert f"uint32_t acch[{plan.mma_m * regs}];" in src and f'"+r"(acch[{regs}])' in src
    assert "acc[2 * i] = f16_to_f32((uint16_t)(acch[i] & 0xffffu))" in src
    assert "acc[2 * i + 1] = f16_to_f32((uint16_t)(acch[i] >> 16))" in src
    tv = thread_values(src, ["C_m", "C_n"], plan.consumer_threads)
    _, _, consts = plan.epilogue
    per = 2 * regs
    for t in range(plan.consumer_threads):
        for idx, dm, dn in consts:
            im, v = divmod(idx, per)
            lane, warp = t % 32, t // 32
            row = 16 * warp + lane // 4 + 8 * ((v // 2) % 2)
            col = 8 * (v // 4) + 2 * (lane % 4) + v % 2
            assert (tv["C_m"][t] + dm, tv["C_n"][t] + dn) == (im * plan.tm + row, col)
