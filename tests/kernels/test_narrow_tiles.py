"""64-row tiles narrower than the space's own (space.narrow_kernels): where the space
offers them, what they are, that the pick weighs them as the cost model prices them, and
that their kernels plan as their launch records say."""

from __future__ import annotations

import json
import random

import pytest

from cutemma.errors import TiledMmaError
from cutemma.kernels.cost import best
from cutemma.kernels.pick import builtin_sm90_config
from cutemma.kernels.sm90.index import launch_record
from cutemma.kernels.sm90.plan import Sm90Plan
from cutemma.kernels.sm90.tma_maps import Sm90Launch
from cutemma.kernels.space import (
    NARROW_MIN_M,
    NARROW_WIDTHS,
    candidates,
    narrow_kernels,
    wave_width,
)


def _offered(m: int, n: int, sms: int) -> bool:
    # the definition: two 64-row tile rows or more, fewer 64x128 tiles than SMs
    return m >= NARROW_MIN_M and -(-m // 64) * -(-n // 128) < sms


@pytest.mark.parametrize("sms", [132, 114])
@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_narrow_tiles_are_offered_where_64x128_tiles_leave_sms_idle(sms, dtype):
    rng = random.Random(11)
    seen = 0
    for _ in range(2000):
        m, n, k = rng.randint(1, 3000), 16 * rng.randint(1, 600), 16 * rng.randint(1, 600)
        found = narrow_kernels(m, n, k, dtype, 1, sms)
        assert bool(found) == _offered(m, n, sms), (m, n)
        if found:
            seen += 1
            assert [c.block_n for c in found] == list(NARROW_WIDTHS)
            assert all(c.block_m == 64 and c.consumers == 1 for c in found)
            # (k tiles 256 bytes deep: twice the 128-byte swizzle row the other tiles take)
            assert all(c.block_k * (1 if dtype == "e4m3" else 2) == 256 for c in found)
            assert not any(c.stream_k or c.swap_ab or c.cluster > 1 for c in found)
    assert seen > 100


def test_the_boundary_of_the_sms():
    # 2 tile rows x 65 columns of 128 = 130 tiles < 132; 2 x 66 = 132 does not leave one idle
    assert narrow_kernels(100, 65 * 128, 1024, "bf16")
    assert not narrow_kernels(100, 66 * 128, 1024, "bf16")
    assert not narrow_kernels(NARROW_MIN_M - 1, 512, 1024, "bf16")  # (the swapped kernels')


def test_not_for_batches_nor_tf32():
    assert narrow_kernels(300, 320, 2048, "bf16", batch=2) == ()
    assert not any(c.block_n in NARROW_WIDTHS for c in candidates(300, 320, 2048, "tf32"))
    with pytest.raises(TiledMmaError, match="tf32"):  # (as wave_kernels refuses it)
        narrow_kernels(300, 320, 2048, "tf32")


@pytest.mark.parametrize("b_major", ["K", "N"])
def test_they_are_candidates_in_either_b_major(b_major):
    found = narrow_kernels(298, 320, 2048, "bf16")
    assert set(found) <= set(candidates(298, 320, 2048, "bf16", b_major=b_major))


def test_a_wave_as_narrow_as_64_comes_from_the_narrow_tiles():
    # 300 rows are 5 tile rows, which leave 26 columns of a wave: 1600 columns fill it at 64
    assert wave_width(300, 1600, "bf16") == 0
    names = [c.name for c in candidates(300, 1600, 2048, "bf16")]
    assert names.count("b64x64x128_c1_sauto") == 1


def test_the_pick_takes_a_narrow_tile_where_the_model_prices_it_lowest():
    # (298, 320, 5520) e4m3: 64x32 ran 10.9 us where the pick without it ran 15.3
    # (bench/results/raw/narrow-clusters-h200.json)
    found = candidates(298, 320, 5520, "e4m3")
    want, _ = best(found, 298, 320, 5520, "e4m3", kind="h200")
    got = builtin_sm90_config(298, 320, 5520, "e4m3", kind="h200", swap=True)
    assert got == want and got.block_m == 64 and got.block_n in NARROW_WIDTHS


@pytest.mark.parametrize("dtype", ["bf16", "f16", "e4m3", "e5m2"])
def test_every_narrow_kernel_plans_as_its_record_says(dtype):
    majors = [("K", "K")] if dtype.startswith("e") else [("K", "K"), ("M", "N")]
    for cfg in narrow_kernels(300, 320, 8192, dtype) + narrow_kernels(300, 320, 512, dtype):
        for a_major, b_major in majors:
            for out in ("bf16", "f32"):
                plan = Sm90Plan(cfg, dtype, a_major, b_major, out)
                record = launch_record(cfg, dtype, a_major, b_major, out)
                assert record == json.loads(Sm90Launch.of(plan).to_json()), cfg.name


def test_bad_arguments_are_named():
    with pytest.raises(TiledMmaError, match="narrow_kernels"):
        narrow_kernels(0, 320, 512, "bf16")
    with pytest.raises(TiledMmaError, match="dtype"):
        narrow_kernels(300, 320, 512, "s8")
