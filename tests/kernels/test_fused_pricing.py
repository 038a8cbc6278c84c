"""A fused epilogue in the cost model (issue 33, acceptance 3): each op's cost per output
element (cost.epilogue_us, the device file's ``epilogue_ns``), a fused call's price
(cost.predict_fused: the epilogue waits for the tensor cores in a cooperative tile, runs
under the other warpgroup's mainloop in a pingpong one), and the fused pick that weighs
the space's kernel against the pingpong tiles (pick._with_epilogue)."""

from __future__ import annotations

import pytest

from cutemma.kernels.cost import KINDS, device, epilogue_us, predict, predict_fused, tile_class
from cutemma.kernels.epilogue import OPS
from cutemma.kernels.pick import builtin
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.space import fused_pingpong

OPS_BG = ("bias", "gelu_tanh")


@pytest.mark.parametrize("kind", KINDS)
def test_every_device_file_prices_every_op_and_the_pingpong_tiles(kind):
    dev = device(kind)
    assert set(dev.epilogue_ns) == set(OPS)
    assert all(v >= 0 for v in dev.epilogue_ns.values())
    for cfg in fused_pingpong("bf16"):
        assert tile_class(cfg, "bf16") in dev.eff  # a measured rate, not a guess


def test_an_epilogue_costs_by_element_and_the_warpgroups_sharing_it():
    dev = device("h200")
    coop, pp = Sm90Config(128, 128), Sm90Config(128, 128, schedule="pingpong")
    one = epilogue_us(coop, ("bias",), dev)
    assert one == pytest.approx(128 * 128 * dev.epilogue_ns["bias"] / 2 * 1e-3)
    assert epilogue_us(pp, ("bias",), dev) == pytest.approx(2 * one)  # one warpgroup's
    assert epilogue_us(coop, OPS_BG, dev) > one and epilogue_us(coop, (), dev) == 0


@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (700, 8192, 28672), (37, 10240, 8192)])
def test_no_epilogue_prices_as_the_plain_model(shape):
    for cfg in (Sm90Config(128, 256), Sm90Config(128, 128, stream_k=True, split=8)):
        assert predict_fused(cfg, *shape, "bf16", (), "h200") == predict(
            cfg, *shape, "bf16", 1, "h200"
        )


def test_a_pingpong_tile_hides_its_epilogue_under_a_long_mainloop():
    # at a long K the epilogue is a small share: pingpong's price barely moves with it,
    # the cooperative tile's by its whole epilogue per tile
    pp, coop = Sm90Config(128, 128, schedule="pingpong"), Sm90Config(128, 128)
    m, n, k = 4096, 4096, 8192
    ops = ("gelu",)
    pp_cost = predict_fused(pp, m, n, k, "bf16", ops, "h200") - predict_fused(
        pp, m, n, k, "bf16", (), "h200"
    )
    coop_cost = predict_fused(coop, m, n, k, "bf16", ops, "h200") - predict(
        coop, m, n, k, "bf16", 1, "h200"
    )
    assert 0 < pp_cost < coop_cost / 4


@pytest.mark.parametrize("shape", [(9643, 15616, 352), (38, 64480, 432), (36, 32768, 512)])
def test_a_short_k_fused_call_takes_a_pingpong_tile(shape):
    # where the fused call ran its cooperative kernel at 1.19-1.52x the plain call and a
    # pingpong tile at 1.04-1.21x (bench/results/raw/epilogue-schedules-h200.json)
    m, n, k = shape
    cfg, t = builtin(m, n, k, 1, "bf16", 132, "h200", m <= 2048, fused=OPS_BG)
    assert cfg.schedule == "pingpong" and cfg in fused_pingpong("bf16")
    assert t == predict_fused(cfg, m, n, k, "bf16", OPS_BG, "h200")


@pytest.mark.parametrize("shape", [(8192, 8192, 8192), (16, 4096, 4096), (813, 8192, 32768)])
def test_a_long_k_fused_call_keeps_the_plain_pick(shape):
    m, n, k = shape
    plain, _ = builtin(m, n, k, 1, "bf16", 132, "h200", m <= 2048, fused=True)
    fused, _ = builtin(m, n, k, 1, "bf16", 132, "h200", m <= 2048, fused=OPS_BG)
    assert fused == plain


def test_fp8_fused_calls_have_no_pingpong_tiles():
    assert fused_pingpong("e4m3") == ()
    cfg, _ = builtin(9643, 15616, 352, 1, "e4m3", 132, "h200", False, fused=OPS_BG)
    assert cfg.schedule == "cooperative"


def test_the_policy_weighs_the_epilogue_only_where_pingpong_tiles_ran_it():
    import types

    from cutemma.kernels.policy import _fused

    bound = types.SimpleNamespace(epilogue=types.SimpleNamespace(ops=OPS_BG))
    call = types.SimpleNamespace(epilogue=bound, C=None, out_type="bf16")
    assert _fused(call) == OPS_BG
    assert _fused(types.SimpleNamespace(**{**vars(call), "out_type": "f32"})) is True
    assert _fused(types.SimpleNamespace(**{**vars(call), "C": object()})) is True
    assert _fused(types.SimpleNamespace(**{**vars(call), "epilogue": None})) is False
