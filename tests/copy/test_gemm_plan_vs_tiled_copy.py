"""The sm80 GEMM takes its ldmatrix and cp.async addresses from TiledCopy partitions
(GemmPlan.ldmatrix_copy: make_tiled_copy_A/B of its TiledMMA; CopyPlan.make: make_tiled_copy of
the cp.async atom). This checks them against the GEMM's former private derivation, kept here as
the reference: ldmatrix rows found by inverting the instruction's destination layout against
the MMA fragment each lane must receive (kernels.ldmatrix.plan_ldmatrix), cp.async chunks
walked by hand. Every (thread, instruction) offset equal = the same generated kernel source
(the source writes only these tables; checked by hash of 47 sources when the switch was made).
"""

from __future__ import annotations

import dataclasses

import pytest

from cutemma.kernels.sm80.ldmatrix import plan_ldmatrix
from cutemma.kernels.sm80.plan import GemmConfig, GemmPlan, _combine
from cutemma.mma.traits import tv_table

CONFIGS = [
    GemmConfig(64, 64, 32, (2, 2), 4),
    GemmConfig(128, 128, 32, (4, 2), 4),
    GemmConfig(128, 64, 64, (2, 2), 3, swizzle_bytes=64),
    GemmConfig(32, 16, 64, (2, 2), 4),  # one N atom: B by ldmatrix.x2
]
COMBOS = [
    ("f16", "K", "K"),
    ("f16", "M", "N"),
    ("bf16", "K", "N"),
    ("f16", "M", "K"),
    ("tf32", "K", "K"),
    ("s8", "K", "K"),
    ("e4m3", "K", "K"),
]


def _fragment(plan, which, t, i, ik):
    """Tile coordinates of the values one ldmatrix of thread t fills (group i, k block ik)."""
    tv = tv_table(plan.tiled.tv_layout_A_tiled if which == "A" else plan.tiled.tv_layout_B_tiled)
    if which == "A":
        extent, groups = plan.tm, [i]
    else:
        extent, groups = plan.tn, ([2 * i, 2 * i + 1] if plan.mma_n > 1 else [i])
    return [
        (int(tv[t, v]) % extent + g * extent, int(tv[t, v]) // extent + ik * plan.tk)
        for g in groups
        for v in range(tv.shape[1])
    ]


def _b16(plan, values):
    """ldmatrix moves 16-bit halves: (mn, k) values as (mn, k16) halves."""
    eb = plan.elem_bytes
    if eb == 2:
        return values
    if eb == 4:
        return [(mn, 2 * k + h) for mn, k in values for h in (0, 1)]
    return [(mn, k // 2) for mn, k in values[0::2]]


def former_ldmatrix_table(plan, which):
    tab, eb = plan.smem_tables[which], plan.elem_bytes

    def smem16(c):
        if eb == 2:
            return int(tab[c])
        if eb == 4:
            return 2 * int(tab[c[0], c[1] // 2]) + c[1] % 2
        lo = int(tab[c[0], 2 * c[1]])
        return lo // 2 if lo % 2 == 0 and tab[c[0], 2 * c[1] + 1] == lo + 1 else -1

    table = [[] for _ in range(plan.threads)]
    atom = None
    for i in range(plan.ldmatrix_groups(which)):
        for ik in range(plan.k_blocks):
            for w in range(plan.threads // 32):
                lanes = range(32 * w, 32 * w + 32)
                wanted = [_b16(plan, _fragment(plan, which, t, i, ik)) for t in lanes]
                p = plan_ldmatrix(wanted, smem16, which)
                atom = p.atom
                for lane, (mn, k16) in enumerate(p.rows):
                    table[32 * w + lane].append(int(tab[mn, k16 * 2 // eb]))
    return atom, table


def former_cp_async_table(plan, which, cp=None):
    cp = cp or plan.copy(which)  # its thread layout (cpr, rpp) and passes; offsets walked here
    cpr, rpp = cp.thr_layout.shape
    tab, vec = plan.smem_tables[which], plan.vec
    major = plan.a_major if which == "A" else plan.b_major
    out = []
    for t in range(plan.threads):
        c, o = t % cpr, t // cpr
        crds = [
            (o + i * rpp, c * vec) if major == "K" else (c * vec, o + i * rpp)
            for i in range(cp.iters)
        ]
        out.append([int(tab[x]) for x in crds])
    return out


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
@pytest.mark.parametrize("dtype, a_major, b_major", COMBOS)
def test_gemm_copies_equal_the_former_private_plan(cfg, dtype, a_major, b_major):
    plan = GemmPlan(cfg, dtype, a_major, b_major)
    if cfg.block_n == 16 and plan.elem_bytes == 1:
        pytest.skip("128 threads do not tile 16 x 64 8-bit elements in 16-byte chunks")
    for which in ("A", "B"):
        lp, split = plan.ldmatrix(which)
        atom, table = former_ldmatrix_table(plan, which)
        assert lp.atom == atom
        for t in range(plan.threads):
            assert [_combine(split, t, j) for j in range(len(table[t]))] == table[t]
        cp_table = former_cp_async_table(plan, which)
        cp = plan.copy(which)
        for t in range(plan.threads):
            assert [_combine(cp.smem, t, i) for i in range(cp.iters)] == cp_table[t]


def test_the_ldmatrix_copies_are_cute_constructions():
    plan = GemmPlan(GemmConfig(128, 128, 32, (2, 2), 4), "f16", "M", "K")
    a, b = plan.ldmatrix_copy("A"), plan.ldmatrix_copy("B")
    assert (a.atom.name, b.atom.name) == ("SM75_U16x8_LDSM_T", "SM75_U32x4_LDSM_N")
    # A: the TiledMMA's (M, K) tile; B: two N atoms per warp (N tile 2 x 16)
    assert a.tiler_mn == (32, 16) and b.tiler_mn == (32, 16)


@pytest.mark.parametrize(
    "cfg, dtype, a_major, b_major",
    [
        (CONFIGS[0], "f16", "K", "K"),
        (CONFIGS[1], "f16", "M", "N"),
        (CONFIGS[2], "tf32", "K", "K"),
        (CONFIGS[3], "bf16", "M", "K"),
        (GemmConfig(128, 128, 64, (2, 2), 3), "e4m3", "K", "K"),
    ],
    ids=lambda x: getattr(x, "name", x),
)
def test_generated_source_is_byte_identical_to_the_former_plan(
    monkeypatch, cfg, dtype, a_major, b_major
):
    """gemm_source with the TiledCopy partitions = gemm_source with the former private plan
    patched back in (same generator, only the planning differs)."""
    from cutemma.kernels.sm80 import plan as plan_mod
    from cutemma.kernels.sm80.source import gemm_source

    new = gemm_source(cfg, dtype, a_major, b_major)

    def former_ldmatrix(self, which):
        atom, table = former_ldmatrix_table(self, which)
        rows = tuple((0, 0) for _ in range(32))  # not read by the generator
        outer = (self.smem_A if which == "A" else self.smem_B).outer
        return plan_mod.LdmatrixPlan(atom, rows), plan_mod.split_offsets(
            table, outer, f"ldmatrix {which}"
        )

    real_copy = plan_mod.GemmPlan.copy

    def former_copy(self, which):
        cp = real_copy(self, which)  # its thread layout and pass count; its table replaced
        outer = (self.smem_A if which == "A" else self.smem_B).outer
        split = plan_mod.split_offsets(
            former_cp_async_table(self, which, cp), outer, f"cp.async {which}"
        )
        return dataclasses.replace(cp, smem=split)

    monkeypatch.setattr(plan_mod.GemmPlan, "_plan_ldmatrix", former_ldmatrix)
    monkeypatch.setattr(plan_mod.GemmPlan, "copy", former_copy)
    old = gemm_source(cfg, dtype, a_major, b_major)
    assert old == new
