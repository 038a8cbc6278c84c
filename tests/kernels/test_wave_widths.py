"""64-row tiles as wide as fills one wave of the SMs (space.wave_width, space.wave_kernels):
the width's definition, where the space offers them, and that their kernels plan as their
launch records say."""

from __future__ import annotations

import json
import random

import pytest

from cutemma.errors import TiledMmaError
from cutemma.kernels.sm90.index import launch_record
from cutemma.kernels.sm90.plan import Sm90Plan
from cutemma.kernels.sm90.tma_maps import Sm90Launch
from cutemma.kernels.space import (
    NARROW_WIDTHS,
    WAVE_MIN_M,
    WAVE_WIDTH_MIN,
    WIDTHS,
    candidates,
    wave_kernels,
    wave_width,
)


def _tiles(m: int, n: int, width: int) -> int:
    return -(-m // 64) * -(-n // width)


@pytest.mark.parametrize("sms", [132, 114])
def test_a_wave_width_is_the_narrowest_step_of_16_whose_tiles_fill_one_wave(sms):
    rng = random.Random(7)
    seen = 0
    for _ in range(3000):
        m, n = rng.randint(1, 6000), 16 * rng.randint(1, 400)
        w = wave_width(m, n, "bf16", sms)
        if not w:
            continue
        seen += 1
        assert w % 16 == 0 and WAVE_WIDTH_MIN <= w <= 256 and w not in WIDTHS[2][64]
        assert w not in NARROW_WIDTHS  # (space.narrow_kernels offers those)
        assert m >= WAVE_MIN_M
        # at most one tile per SM, each tile row the same number of columns ...
        assert _tiles(m, n, w) <= sms, (m, n, w)
        # ... and 16 columns fewer would not hold n in the columns a wave leaves a row
        assert -(-n // (w - 16)) > sms // -(-m // 64), (m, n, w)
    assert seen > 200


def test_the_sweeps_mid_size_calls_get_the_widths_measured():
    # bench/results/raw/wave-widths-h200.json: the widths that ran 0.99-1.07 of cuBLAS
    assert wave_width(763, 1040, "bf16") == 96
    assert wave_width(788, 1600, "bf16") == 160
    assert wave_width(411, 3072, "bf16") == 176


@pytest.mark.parametrize(
    ("m", "n", "dtype"),
    [
        (WAVE_MIN_M - 1, 4096, "bf16"),  # one or two tile rows: the swapped kernels' calls
        (8192, 1040, "bf16"),  # more tile rows than fit two to a wave
        (763, 1040, "e4m3"),  # fp8 ran slower (raw/wave-widths-h200.json)
        (763, 500, "bf16"),  # 48 columns: under WAVE_WIDTH_MIN
        (300, 40960, "bf16"),  # wider than one wgmma
    ],
)
def test_no_wave_width_where_the_space_offers_none(m, n, dtype):
    assert wave_width(m, n, dtype) == 0
    assert wave_kernels(m, n, 4096, dtype) == ()


def test_the_wave_tiles_are_candidates_of_a_k_major_b_alone():
    found = wave_kernels(763, 1040, 5280, "bf16")
    assert [c.name for c in found] == ["b64x96_c1_sauto"]
    assert set(found) <= set(candidates(763, 1040, 5280, "bf16", b_major="K"))
    assert not set(found) & set(candidates(763, 1040, 5280, "bf16", b_major="N"))
    assert wave_kernels(763, 1040, 5280, "bf16", batch=2) == ()


def test_a_long_k_streams_b_under_the_evict_first_hint():
    (cfg,) = wave_kernels(300, 3584, 18944, "bf16")
    assert cfg.evict_first == "B" and not cfg.stream_k
    (cfg,) = wave_kernels(763, 1040, 2048, "bf16")
    assert cfg.evict_first == ""


@pytest.mark.parametrize(
    "width",
    [w for w in range(WAVE_WIDTH_MIN, 257, 16) if w not in WIDTHS[2][64] + NARROW_WIDTHS],
)
@pytest.mark.parametrize(("a_major", "out"), [("K", "bf16"), ("M", "f32")])
def test_every_wave_kernel_plans_as_its_record_says(width, a_major, out):
    # 763 rows are 12 tile rows, which leave each 11 tile columns of a wave: 11 x width
    # columns take that width
    found = wave_kernels(763, 11 * width, 8192, "bf16")
    assert found
    for cfg in found:
        plan = Sm90Plan(cfg, "bf16", a_major, "K", out)
        record = launch_record(cfg, "bf16", a_major, "K", out)
        assert record == json.loads(Sm90Launch.of(plan).to_json()), cfg.name


def test_bad_arguments_are_named():
    with pytest.raises(TiledMmaError, match="wave_width"):
        wave_width(0, 1024, "bf16")
    with pytest.raises(TiledMmaError, match="dtype"):
        wave_kernels(763, 1040, 5280, "tf32")
