"""cutemma.tune over sm90 configs, without a GPU (timer= and device_name_= stand in)."""

from __future__ import annotations

import pytest

from cutemma.kernels import tune
from cutemma.kernels.plan import GemmConfig
from cutemma.kernels.plan_sm90 import Sm90Config


@pytest.fixture()
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path))
    tune.reload()
    yield tmp_path
    tune.reload()


def test_sm90_winner_round_trips_through_the_file(fresh_cache):
    cands = [GemmConfig(), Sm90Config(128, 256), Sm90Config(128, 128, cluster=2)]
    times = {cands[0].name: 3.0, cands[1].name: 1.0, cands[2].name: 2.0}
    best = tune.tune(4000, 4096, 4096, "bfloat16", "K", "K", cands,
                     timer=lambda c: times[c.name], device_name_="GPU X")  # fmt: skip
    assert best == Sm90Config(128, 256)
    tune.reload()  # a new process: read back from gemm-tune.json
    got = tune.lookup("GPU X", 4096, 4096, 4096, "bf16", "K", "K")
    assert isinstance(got, Sm90Config) and got == Sm90Config(128, 256)


def test_sm80_winner_stays_an_sm80_config(fresh_cache):
    cands = [GemmConfig(), Sm90Config(128, 256)]
    times = {cands[0].name: 1.0, cands[1].name: 2.0}
    tune.tune(512, 512, 512, "float16", "M", "N", cands,
              timer=lambda c: times[c.name], device_name_="GPU X")  # fmt: skip
    tune.reload()
    assert tune.lookup("GPU X", 512, 512, 512, "f16", "M", "N") == GemmConfig()


def test_sm90_candidates_build_plans():
    """On sm_90 the candidates add the sm90 configs whose plans build: clusters with either
    B major, fp8 only promoted 128x128 tiles."""
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
    assert fp8 and all(c.block_n == 128 and c.promote for c in fp8)
    assert not any(isinstance(c, Sm90Config) for c in tune.default_candidates("bf16"))
