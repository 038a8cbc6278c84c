"""128-row tiles whose width is fitted to a call's few columns (space.fitted_widths) or to
one wave of the SMs (space.fitted_wave_width), and the cost model's efficiency of a width no
calibration measured (cost.efficiency)."""

from __future__ import annotations

import json

import pytest

from cutemma.kernels.cost import device, efficiency
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.sm90.index import launch_record
from cutemma.kernels.sm90.plan import Sm90Plan
from cutemma.kernels.sm90.tma_maps import Sm90Launch
from cutemma.kernels.space import (
    FIT_MAX_N,
    WIDTHS,
    candidates,
    fitted_kernels,
    fitted_wave_width,
    fitted_widths,
)


@pytest.mark.parametrize("dtype", ["bf16", "f16", "e4m3"])
def test_fitted_widths_hold_n_in_steps_of_16_and_add_only_new_widths(dtype):
    standard = WIDTHS[1 if dtype == "e4m3" else 2][128]
    for n in range(16, FIT_MAX_N + 1, 16):
        for t in fitted_widths(n, dtype):
            count = -(-n // t)
            assert t % 16 == 0 and 16 <= t <= 256 and t not in standard
            assert count * t - n < 16 * count, (n, t)  # each tile under 16 columns past its share
    assert fitted_widths(FIT_MAX_N + 16, dtype) == ()


@pytest.mark.parametrize("n", [256, 288, 336, 544, 592, 1104, 1328, FIT_MAX_N])
@pytest.mark.parametrize(("dtype", "a_major", "out"), [("bf16", "K", "bf16"), ("bf16", "M", "f32"),
                                                       ("e4m3", "K", "bf16")])  # fmt: skip
def test_every_fitted_kernel_plans_as_its_record_says(n, dtype, a_major, out):
    for cfg in fitted_kernels(4096, n, 8192, dtype):
        plan = Sm90Plan(cfg, dtype, a_major, "K", out)
        record = launch_record(cfg, dtype, a_major, "K", out)
        assert record == json.loads(Sm90Launch.of(plan).to_json()), cfg.name


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_a_wave_fitted_width_is_the_narrowest_that_fills_one_wave(dtype):
    """Each 128-row tile row takes its share of the SMs' tile columns: at the width, the
    tiles fit one wave of 132; 16 columns narrower, the call would need more columns than
    the wave leaves a tile row (or the width is the space's own, or out of bounds: 0)."""
    standard = WIDTHS[2][128]
    seen = 0
    for m in (129, 200, 300, 700, 1071, 1500, 2200, 4000):
        rows = -(-m // 128)
        for n in range(256, 8192, 80):
            w = fitted_wave_width(m, n, dtype)
            if not w:
                continue
            seen += 1
            assert w % 16 == 0 and 64 <= w <= 256 and w not in standard, (m, n, w)
            assert rows * -(-n // w) <= 132, (m, n, w)  # one wave
            assert -(-n // (w - 16)) > 132 // rows, (m, n, w)  # the narrowest such
    assert seen > 50
    assert fitted_wave_width(128, 1808, dtype) == 0  # (one tile row: the swapped kernels' calls)


def test_wave_fitted_tiles_are_candidates_of_one_problem_with_a_k_major_b():
    plain = {c.block_n for c in candidates(1071, 1808, 2560, "bf16") if not c.swap_ab}
    assert 144 in plain and fitted_wave_width(1071, 1808, "bf16") == 144
    for kwargs in ({"b_major": "N"}, {"batch": 2}):  # (swapped token tiles may be 144 wide)
        found = candidates(1071, 1808, 2560, "bf16", **kwargs)
        assert 144 not in {c.block_n for c in found if not c.swap_ab}
    # fp8's 128x80-144 tiles ran slower than the picks they replaced
    # (bench/results/raw/wave128-ab-drawn-h200-fp8-rejected.json): 16-bit only
    assert fitted_wave_width(1071, 1808, "e4m3") == 0


def test_fitted_widths_only_for_a_k_major_b():
    """An N-major B's tile of a width that is not a multiple of 64 takes a narrow swizzle
    (one measured 1.6x slower: bench/results/raw/calibrate-h200-skinny.json)."""
    k_major = {c.block_n for c in candidates(2802, 288, 12032, "bf16") if not c.swap_ab}
    n_major = {c.block_n for c in candidates(2802, 288, 12032, "bf16", b_major="N")}
    assert set(fitted_widths(288, "bf16")) <= k_major
    assert not set(fitted_widths(288, "bf16")) & n_major


def test_an_unmeasured_width_is_priced_between_its_neighbours():
    dev = device("h200")
    # (one wgmma's widths: 320 is two side by side; 'pp': pingpong tiles' own rates)
    widths = (k.split("x")[1] for k in dev.eff if k.startswith("16/128x"))
    known = sorted(w for w in map(int, filter(str.isdigit, widths)) if w <= 256)
    for w in known:
        assert efficiency(Sm90Config(128, w), "bf16", dev) == dev.eff[f"16/128x{w}"]
    effs = [efficiency(Sm90Config(128, w), "bf16", dev) for w in range(known[0], known[-1] + 1, 16)]
    for w, e in zip(range(known[0], known[-1] + 1, 16), effs):
        lo = max(x for x in known if x <= w)
        hi = min(x for x in known if x >= w)
        a, b = dev.eff[f"16/128x{lo}"], dev.eff[f"16/128x{hi}"]
        assert min(a, b) <= e <= max(a, b), w
    # past the widest measured width: the widest's
    assert efficiency(Sm90Config(128, 16), "bf16", dev) == dev.eff[f"16/128x{known[0]}"]


@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_a_swapped_128_row_tile_runs_no_faster_than_the_plain_tile_of_its_token_width(dtype):
    # its class is fitted where loads set the pace (decode); its wgmmas are a plain 128-row
    # tile's (bench/results/raw/swapeff-ab-drawn-h200.json); fp8 token tiles wider than the
    # tile's 128 rows run at the plain tile's rate (raw/wide-fp8-swap-ab-drawn-h200.json)
    dev = device("h200")
    tc = "fp8" if dtype == "e4m3" else "16"
    for w in range(16, 257, 8):
        swapped = Sm90Config(128, w, swap_ab=True, epilogue="regs")
        plain = efficiency(Sm90Config(128, w), dtype, dev)
        want = plain if tc == "fp8" and w > 128 else min(dev.eff[f"{tc}/swap128"], plain)
        assert efficiency(swapped, dtype, dev) == want, w
    # one wide enough runs at the class's rate (16-bit); fp8's class sits under every plain
    # fp8 tile's, so there a wide one is priced above the narrow ones' rate
    wide = Sm90Config(128, 256, swap_ab=True, epilogue="regs")
    assert efficiency(wide, "bf16", dev) == dev.eff["16/swap128"]
    narrow, wide = (Sm90Config(128, w, swap_ab=True, epilogue="regs") for w in (128, 136))
    assert efficiency(narrow, "e4m3", dev) == dev.eff["fp8/swap128"]
    assert efficiency(wide, "e4m3", dev) > 1.1 * dev.eff["fp8/swap128"]
