"""sm90 designs with their own shared-memory layouts and copy atoms (issue 32, "What to
build" 2): a canonical GMMA stage of any swizzle mode the stage tiles in, in the operand's
major, runs as the kernel's stage (the config carries its mode, the plan lays the stage out
in it, TMA and the wgmma descriptors follow); anything else, and a copy atom other than
TMA's, is refused by name. Witness: the stage layout the plan builds equals the user's at
every (row, k), and the kernel's TMA boxes carry the mode."""

from __future__ import annotations

import pytest

from cutemma import make_mma_atom, make_tiled_mma
from cutemma.errors import DesignError
from cutemma.kernels.design import GemmDesign, check, failed_rules, gmma_stage_swizzle
from cutemma.kernels.sm90.plan import Sm90Plan
from cutemma.layout import tile_to_shape
from cutemma.smem import gmma_layout_atom

TILE = (128, 128, 64)


def _tiled(a_major="K", b_major="K", atom="SM90_64x128x16_F32BF16BF16_SS"):
    return make_tiled_mma(make_mma_atom(atom, a_major=a_major, b_major=b_major), (2, 1, 1))


def _stage(major, mode, rows=128, k=64, dtype="bf16"):
    order = (1, 0) if major == "MN" else None  # MN-major: K first, as TMA fills the stage
    return tile_to_shape(gmma_layout_atom(major, mode, dtype), (rows, k), order)


def _same(a, b, rows, k):
    return all(a(i, j) == b(i, j) for i in range(rows) for j in range(k))


@pytest.mark.parametrize("mode_a, mode_b", [("SW64", "SW32"), ("SW32", None), (None, "SW64")])
def test_a_k_major_canonical_stage_of_any_mode_is_the_kernels_stage(mode_a, mode_b):
    smem = {f"smem_{w}": _stage("K", m) for w, m in (("a", mode_a), ("b", mode_b)) if m}
    d = check(GemmDesign(_tiled(), tile=TILE, **smem))
    assert d.config.swizzle == (mode_a, mode_b)
    plan = Sm90Plan(d.config, "bf16", "K", "K", "bf16")
    for which, mode in (("A", mode_a), ("B", mode_b)):
        stage = plan.smem_A if which == "A" else plan.smem_B
        if mode is not None:
            assert _same(stage, smem[f"smem_{which.lower()}"], 128, 64)
        assert plan.tma[which].swizzle == (mode or "SW128")


def test_the_mode_the_plan_takes_anyway_is_the_built_in_kernel():
    d = check(GemmDesign(_tiled(), tile=TILE, smem_a=_stage("K", "SW128")))
    assert d.config == check(GemmDesign(_tiled(), tile=TILE)).config
    assert d.config.swizzle == (None, None)


def test_an_mn_major_stage_fixes_the_major_and_its_mode():
    d = GemmDesign(_tiled("MN", "MN"), tile=TILE, smem_a=_stage("MN", "SW64"),
                   smem_b=_stage("MN", "SW32"))  # fmt: skip
    d = check(d)
    assert (d.major("A"), d.major("B")) == ("M", "N")
    assert d.config.swizzle == ("SW64", "SW32")
    plan = Sm90Plan(d.config, "bf16", "M", "N", "bf16")
    assert _same(plan.smem_A, _stage("MN", "SW64"), 128, 64)
    # a K,K atom of a 16-bit type leaves the major to the layout
    k_atom = check(GemmDesign(_tiled(), tile=TILE, smem_b=_stage("MN", "SW128")))
    assert k_atom.major("B") == "N" and k_atom.major("A") is None


def test_a_stage_in_another_order_or_layout_is_refused_by_name():
    m_first = tile_to_shape(gmma_layout_atom("MN", "SW64", "bf16"), (128, 64))  # M first
    with pytest.raises(DesignError, match=r"rule smem_layout: smem_a: not a canonical GMMA"):
        check(GemmDesign(_tiled("MN", "MN"), tile=TILE, smem_a=m_first))
    assert "order=(1, 0)" in gmma_stage_swizzle(m_first, 128, 64, "bf16")
    wrong_size = _stage("K", "SW64", rows=64)
    assert "smem_layout" in failed_rules(GemmDesign(_tiled(), tile=TILE, smem_b=wrong_size))
    # a stage twice as deep in K agrees with the (128, 64) one wherever both are defined
    deeper = _stage("K", "SW64", k=128)
    with pytest.raises(DesignError, match=r"smem_a covers \(128, 128\), not the \(128, 64\)"):
        check(GemmDesign(_tiled(), tile=TILE, smem_a=deeper))


def test_tma_is_the_copy_atom_it_takes():
    d = check(GemmDesign(_tiled(), tile=TILE, copy_a="SM90_TMA_LOAD", copy_b="SM90_TMA_LOAD"))
    assert d.config == check(GemmDesign(_tiled(), tile=TILE)).config
    with pytest.raises(DesignError, match="copy_a 'SM75_U32x4_LDSM_N'.*SM90_TMA_LOAD"):
        check(GemmDesign(_tiled(), tile=TILE, copy_a="SM75_U32x4_LDSM_N"))


def test_an_fp8_stage_takes_its_modes_too():
    atom = "SM90_64x128x32_F32E4M3E4M3_SS_TN"
    t = make_tiled_mma(make_mma_atom(atom), (2, 1, 1))
    d = check(GemmDesign(t, tile=(128, 128, 128), smem_a=_stage("K", "SW64", k=128, dtype="e4m3")))
    assert d.config.swizzle == ("SW64", None)


def test_a_mode_that_does_not_tile_the_stage_is_named():
    from cutemma.errors import TiledMmaError
    from cutemma.kernels.sm90.config import Sm90Config

    cfg = Sm90Config(128, 128, block_k=16, swizzle=("SW128", None))  # 32-byte K rows
    with pytest.raises(TiledMmaError, match="no SW128 GMMA atom tiles a 128 x 16 K-major"):
        Sm90Plan(cfg, "bf16", "K", "K", "bf16").stage("A", 128)


def test_an_rs_atoms_a_keeps_its_default_stage():
    rs = make_tiled_mma(make_mma_atom("SM90_64x128x16_F32BF16BF16_RS"), (2, 1, 1))
    with pytest.raises(DesignError, match="rule smem_layout: smem_a in SW64: an RS atom"):
        check(GemmDesign(rs, tile=TILE, smem_a=_stage("K", "SW64")))
    # its B takes any mode; its A the default spelled out
    d = check(GemmDesign(rs, tile=TILE, smem_a=_stage("K", "SW128"), smem_b=_stage("K", "SW32")))
    assert d.config.swizzle == (None, "SW32")
