"""cutemma.tune over sm90 configs, without a GPU (timer= and device_name_= stand in)."""

from __future__ import annotations

import pytest

from cutemma.kernels import tune, tuned
from cutemma.kernels.sm80.plan import GemmConfig
from cutemma.kernels.sm90.plan import Sm90Config


@pytest.fixture()
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path))
    tuned.reload()
    yield tmp_path
    tuned.reload()


def test_sm90_winner_round_trips_through_the_file(fresh_cache):
    cands = [GemmConfig(), Sm90Config(128, 256), Sm90Config(128, 128, cluster=2)]
    times = {cands[0].name: 3.0, cands[1].name: 1.0, cands[2].name: 2.0}
    best = tune.tune(4000, 4096, 4096, "bfloat16", "K", "K", cands,
                     timer=lambda c: times[c.name], device_name_="GPU X")  # fmt: skip
    assert best == Sm90Config(128, 256)
    tuned.reload()  # a new process: read back from gemm-tune.json
    got = tuned.lookup("GPU X", 4096, 4096, 4096, "bf16", "K", "K")
    assert isinstance(got, Sm90Config) and got == Sm90Config(128, 256)


def test_sm80_winner_stays_an_sm80_config(fresh_cache):
    cands = [GemmConfig(), Sm90Config(128, 256)]
    times = {cands[0].name: 1.0, cands[1].name: 2.0}
    tune.tune(512, 512, 512, "float16", "M", "N", cands,
              timer=lambda c: times[c.name], device_name_="GPU X")  # fmt: skip
    tuned.reload()
    assert tuned.lookup("GPU X", 512, 512, 512, "f16", "M", "N") == GemmConfig()


def test_sm90_candidates_build_plans():
    """On sm_90 the candidates add the sm90 configs whose plans build: clusters with either
    B major, fp8 only promoted tiles whose two f32 accumulator sets (block_m x block_n
    over the tile's threads, each) fit in the consumer's registers (232 with 2 consumer
    warpgroups, 160 with 3) beside 32 others; the 128x192 default and a pingpong among them."""
    kn = [
        c for c in tune.default_candidates("bf16", "K", "N", sm90=True) if isinstance(c, Sm90Config)
    ]
    kk = [
        c for c in tune.default_candidates("bf16", "K", "K", sm90=True) if isinstance(c, Sm90Config)
    ]
    fp8 = [
        c for c in tune.default_candidates("e4m3", "K", "K", sm90=True) if isinstance(c, Sm90Config)
    ]
    assert any(c.cluster == 2 for c in kn) and any(c.cluster == 2 for c in kk)
    assert fp8 and all(c.promote for c in fp8)
    for c in fp8:
        threads = 128 * (1 if c.schedule == "pingpong" else c.consumers)
        regs = 232 if c.consumers == 2 else 160
        assert 2 * c.block_m * c.block_n // threads <= regs - 32, c.name
    assert Sm90Config(128, 192) in fp8 and Sm90Config(128, 256) not in fp8
    assert Sm90Config(128, 192, promote="split") in fp8
    assert any(c.schedule == "pingpong" for c in kn)
    assert not any(isinstance(c, Sm90Config) for c in tune.default_candidates("bf16"))


def test_reload_forgets_prepared_launches(tmp_path, monkeypatch):
    """A repeated call's prepared launch holds the config the old table chose, so reading
    the table again (tune.reload) drops them, as storing a new winner does."""
    from cutemma.kernels.runtime.fastpath import FAST

    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path))
    FAST[("a", "b", True, None)] = ("an entry",)
    tuned.reload()
    assert FAST == {}
