"""Split-K in a cluster (``Sm90Config(kcluster=S)``, cutemma.kernels.sm90.kcluster): the
kernels compile for sm_90a with the cluster size, both cluster barriers in producer and
consumers, distributed shared-memory loads and stores, no local memory; the k shares of a
cluster's ranks cover the tile's k tiles exactly; the host launches a tile per cluster and
refuses what the kernel cannot run; the model prices a wave of clusters as measured."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_cuobjdump, needs_nvrtc  # noqa: E402

from cutemma.errors import TiledMmaError  # noqa: E402
from cutemma.kernels import cost  # noqa: E402
from cutemma.kernels.sm90.config import Sm90Config  # noqa: E402
from cutemma.kernels.sm90.host import _grid  # noqa: E402
from cutemma.kernels.sm90.kcluster import clusters  # noqa: E402
from cutemma.kernels.sm90.source import gemm_sm90_source  # noqa: E402

MEASURED = {cfg.name: cfg for cfg in (Sm90Config(bm, bn, consumers=c, kcluster=kc)
            for bm, bn, c in ((128, 128, 2), (128, 256, 2), (64, 128, 1)) for kc in (2, 4, 8))}  # fmt: skip
CASES = [
    (Sm90Config(128, 128, kcluster=4), "bf16", "K", "K", "bf16"),
    (Sm90Config(128, 256, kcluster=2), "bf16", "K", "N", "bf16"),
    (Sm90Config(64, 128, consumers=1, kcluster=8), "f16", "M", "K", "f32"),
    (Sm90Config(128, 192, promote="split", kcluster=4), "e4m3", "K", "K", "bf16"),
]


def _shares(k_total: int, kc: int) -> list[tuple[int, int]]:
    # the kernel's arithmetic (loop_head), independently: rank r's [lo, lo + count)
    return [(k_total * r // kc, k_total * (r + 1) // kc - k_total * r // kc) for r in range(kc)]


@pytest.mark.parametrize("kc", [2, 4, 8])
def test_ranks_cover_every_k_tile_once(kc):
    for k_total in range(kc, 300):
        covered = [t for lo, count in _shares(k_total, kc) for t in range(lo, lo + count)]
        assert covered == list(range(k_total)) and min(c for _, c in _shares(k_total, kc)) >= 1


def test_source_has_the_cluster_and_both_barriers_in_every_role():
    src = gemm_sm90_source(*CASES[0])
    assert "__cluster_dims__(4, 1, 1)" in src
    assert src.count("cluster_sync();") >= 4  # producer 2, consumers 2 (+ helper definition)
    assert "ld.shared::cluster.v4.f32" in src and "st.shared::cluster.v4.f32" in src
    assert re.search(r"if \(krank == 0\) \{", src)
    plain = gemm_sm90_source(Sm90Config(128, 128), "bf16", "K", "K", "bf16")
    assert "__cluster_dims__" not in plain and "krank" not in plain


@needs_nvrtc
@needs_cuobjdump
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].name}-{c[1]}-{c[4]}")
def test_kcluster_kernels_compile_without_local_memory(case):
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass

    cubin = compile(gemm_sm90_source(*case), "sm_90a")
    counts = count_instructions(sass(cubin))
    local = local_memory_use(cubin)
    assert (local.local_bytes or 0) + (local.stack_bytes or 0) == 0
    assert counts.get("UCGABAR_ARV", 0) >= 2 and counts.get("UCGABAR_WAIT", 0) >= 2
    assert counts.get("HGMMA", 0) + counts.get("QGMMA", 0) > 0


def test_the_grid_is_a_tile_per_cluster():
    cfg = Sm90Config(128, 128, kcluster=4)
    assert _grid(cfg, 300, 500, None, 132, True) == 4 * 3 * 4  # not capped at the SMs
    assert _grid(cfg, 30000, 500, None, 132, True) == 4 * 235 * 4


def test_the_plan_refuses_a_ring_too_small_for_the_sums():
    from cutemma.kernels.sm90.plan import Sm90Plan

    Sm90Plan(Sm90Config(128, 256, kcluster=2), "bf16", "K", "K", "bf16")
    with pytest.raises(TiledMmaError, match="kcluster adds the tile's 131072 bytes"):
        Sm90Plan(Sm90Config(128, 256, stages=2, kcluster=2), "bf16", "K", "K", "bf16")


def test_a_cluster_more_than_fit_costs_a_second_wave_as_measured():
    # bench/results/raw/kcluster-capacity-h200.json: calls of exactly as many tiles as
    # clusters run at once, and of one more (a second wave), timed on an H200
    raw = Path(__file__).parents[2] / "bench" / "results" / "raw" / "kcluster-capacity-h200.json"
    rows = json.loads(raw.read_text())["rows"]
    for row in rows:
        cfg = MEASURED[row["config"]]
        assert clusters(cfg.kcluster, 132) == row["max_active_clusters"]
        for tiles, us in row["us_by_tiles"].items():
            m = int(tiles) * cfg.block_m
            got = cost.predict(cfg, m, cfg.block_n, 8192, "bf16", kind="h200") * 1e6
            assert abs(got / us - 1) < 0.3, (cfg.name, tiles, got, us)
        one, two = (row["us_by_tiles"][t] for t in sorted(row["us_by_tiles"], key=int))
        assert two > 1.3 * one  # (the witness itself: a second wave)


def test_the_fix_up_costs_more_with_the_tile_and_the_cluster():
    dev = cost.device("h200")
    assert cost._kcluster_us(128, 256, 2, dev) > cost._kcluster_us(128, 128, 2, dev)
    assert cost._kcluster_us(128, 128, 8, dev) > cost._kcluster_us(128, 128, 2, dev)
    # far under stream-K's fix-up that adds partials through global memory
    assert cost._kcluster_us(128, 128, 8, dev) < cost._together_us(128, 128, dev)


def test_the_host_refuses_batches_and_too_few_k_tiles():
    from cutemma.errors import LaunchError
    from cutemma.kernels.sm90.host import _check_kcluster

    cfg = Sm90Config(128, 128, kcluster=4)
    _check_kcluster(cfg, "bf16", 4 * 64 - 63, None)  # 4 k tiles of 64, the last partial
    with pytest.raises(LaunchError, match="K=192 into 4 shares"):
        _check_kcluster(cfg, "bf16", 192, None)
    with pytest.raises(LaunchError, match="batch of 3"):
        _check_kcluster(cfg, "bf16", 4096, 3)
    _check_kcluster(cfg, "e4m3", 3 * 128 + 1, None)  # fp8: 128-element k tiles
    with pytest.raises(LaunchError, match="give K > 384"):
        _check_kcluster(cfg, "e4m3", 384, None)


# clusters of kcluster pairs (Sm90Config(cluster=2, kcluster=S)): each pair multicasts the
# operand its two tiles share, and each of the pair's tiles is added over its own S CTAs
PAIRS = [
    (
        Sm90Config(64, 128, consumers=1, cluster=2, multicast="A", kcluster=4),
        "bf16",
        "K",
        "N",
        "bf16",
    ),
    (Sm90Config(128, 128, cluster=2, kcluster=2), "e4m3", "K", "K", "f32"),
]


def test_pair_clusters_split_each_tile_over_its_own_ranks():
    # the kernel's rank arithmetic (crank % 2, crank / 2; dsmem ranks 2 * q + rank),
    # independently: every (tile, k tile) of a cluster's two tiles is computed once, and
    # every rank adds only ranks of its own tile
    for kc in (2, 4):
        for k_total in (kc, kc + 1, 37):
            seen = []
            for crank in range(2 * kc):
                rank, krank = crank % 2, crank // 2
                lo, count = _shares(k_total, kc)[krank]
                seen += [(rank, t) for t in range(lo, lo + count)]
                assert {2 * q + rank for q in range(kc)} == {
                    r for r in range(2 * kc) if r % 2 == rank
                }
            assert sorted(seen) == [(p, t) for p in (0, 1) for t in range(k_total)]


def test_pair_source_multicasts_to_its_pair_and_adds_its_own_tile():
    src = gemm_sm90_source(*PAIRS[0])
    assert "__cluster_dims__(8, 1, 1)" in src
    assert "crank = cluster_rank(), rank = crank % 2" in src
    assert "(uint16_t)(0x3u << (crank - rank))" in src  # the pair of this k share, not rank 0's
    assert "mbar_arrive_cluster(prev_empty, crank ^ 1)" in src
    assert "dsmem_addr(at, 2 * q + rank)" in src and "krank = cluster_rank() / 2" in src
    lone = gemm_sm90_source(*CASES[0])  # (lone kcluster kernels unchanged: rank 0 adds)
    assert "dsmem_addr(at, q)" in lone and "crank" not in lone


@needs_nvrtc
@needs_cuobjdump
@pytest.mark.parametrize("case", PAIRS, ids=lambda c: f"{c[0].name}-{c[1]}")
def test_pair_kernels_compile_without_local_memory(case):
    test_kcluster_kernels_compile_without_local_memory(case)


def test_pairs_grid_and_price_count_two_tiles_a_cluster():
    cfg = Sm90Config(128, 128, cluster=2, kcluster=2)
    assert _grid(cfg, 300, 500, None, 132, True) == 2 * 2 * 2 * 4  # 2 pairs of M tiles x 4
    # a wave holds 2 x clusters(4) tiles: one tile more costs a second wave
    at = lambda tiles: cost.predict(cfg, 128 * tiles, 128, 8192, "bf16", kind="h200")  # noqa: E731
    full = 2 * clusters(4, 132)
    assert at(full + 2) - at(full) > 5 * (at(full) - at(full - 2))
    # the pick's fast path prices pairs as predict() does
    for m, n, k in [(300, 320, 45344), (97, 1000, 4096), (2000, 136, 20000)]:
        found = (cfg, Sm90Config(64, 128, consumers=1, cluster=2, multicast="A", kcluster=4))
        t, i = cost.kcluster_best(found, m, n, k, "bf16", "h200")
        assert (found[i], t) == cost.best(found, m, n, k, "bf16", 1, "h200")
        assert t == min(cost.predict(c, m, n, k, "bf16", kind="h200") for c in found)
