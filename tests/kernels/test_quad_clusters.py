"""Clusters of 2 x 2 CTAs sharing both operands (``Sm90Config(cluster=4, multicast="AB")``):
which CTA loads what into whom, read from the generated kernel's own expressions; where the
space offers them; how the model and the pick price them. The GPU runs them in
tests/kernels/gpu_sm90_checks.py and gpu_sm90_sanitize.py (``quad``)."""

from __future__ import annotations

import math
import random
import re

import pytest

from cutemma.errors import TiledMmaError
from cutemma.kernels.common.scheduler import raster_sm90
from cutemma.kernels.cost import best, cluster_grid, device, loaded_rows, price_table, quad_best
from cutemma.kernels.pick import builtin
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.sm90.kcluster import clusters
from cutemma.kernels.sm90.plan import Sm90Plan
from cutemma.kernels.sm90.ring import CONSUMER
from cutemma.kernels.sm90.source import _multicast, gemm_sm90_source, peers
from cutemma.kernels.space import QUAD_MIN_M, QUAD_WIDTHS, candidates, quad_kernels

QUAD = Sm90Config(128, 128, cluster=4, multicast="AB")


def _c(expr: str, rank: int, **names: int) -> int:
    """A C integer expression of the kernel text, evaluated for CTA ``rank``."""
    py = re.sub(r"\((?:int|uint16_t)\)", "", expr).replace("/", "//")
    py = re.sub(r"\b(0x[0-9a-f]+|\d+)u\b", lambda m: str(int(m.group(1), 0)), py)
    return eval(py, {}, {"rank": rank, **names})  # noqa: S307 - the generator's own text


def _tile_of(rank: int) -> tuple[int, int]:
    """(M tile, N tile) of CTA ``rank`` in cluster tile 0, from the raster's m0 / n0 lines."""
    text = raster_sm90(4, "MN")
    env = {"tile": 0, "per_group": 8, "first_m": 0, "rows_in_group": 1, "BLOCK_M": 1, "BLOCK_N": 1}
    m0 = re.search(r"const int m0 = (.*);", text).group(1)
    n0 = re.search(r"const int n0 = (.*);", text).group(1)
    return _c(m0, rank, **env), _c(n0, rank, **env)


def test_the_raster_puts_the_four_ctas_on_a_2x2_block_of_tiles():
    assert sorted(_tile_of(r) for r in range(4)) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert QUAD.cluster_mn == (2, 2)


@pytest.mark.parametrize("which, index", [("A", 0), ("B", 1)])
def test_each_stage_gets_each_half_of_its_own_tile_once(which, index):
    # operand A is the tile row's: its halves must come from the CTAs of the same M tile,
    # one half each; B likewise from the CTAs of the same N tile
    share, mask = _multicast(QUAD, which)
    for dest in range(4):
        got = [
            _c(share, src)
            for src in range(4)
            if _c(mask, src) >> dest & 1
        ]  # fmt: skip
        sources = [src for src in range(4) if _c(mask, src) >> dest & 1]
        assert sorted(got) == [0, 1], (which, dest)
        assert all(_tile_of(s)[index] == _tile_of(dest)[index] for s in sources), (which, dest)


def test_the_consumers_release_every_stage_that_peers_write_into():
    writers = {
        dest: {src for which in "AB" for src in range(4)
               if _c(_multicast(QUAD, which)[1], src) >> dest & 1} - {dest}
        for dest in range(4)
    }  # fmt: skip
    for dest, found in writers.items():
        assert found == {dest ^ p for p in peers(QUAD)}
    src = gemm_sm90_source(QUAD, "bf16", "K", "K", "bf16")
    arrivals = (1 + len(peers(QUAD))) * 2 * 128 // CONSUMER.arrive_every
    empty = re.search(r"mbar_init\(bars \+ \d+ \+ \d+ \* s, (\d+)\);  // empty", src)
    assert int(empty.group(1)) == arrivals
    for p in peers(QUAD):
        assert f"mbar_arrive_cluster(prev_empty, rank ^ {p});" in src
    assert "rank ^ 3" not in src  # the diagonal CTA writes nothing into this one
    assert "__cluster_dims__(4, 1, 1)" in src


@pytest.mark.parametrize("dtype, a_majors, b_majors", [("bf16", "KM", "KN"), ("e4m3", "K", "K")])
def test_every_offered_quad_builds_its_plan(dtype, a_majors, b_majors):
    for cfg in quad_kernels(QUAD_MIN_M, dtype, 1, (True, True)):
        for a in a_majors:
            for b in b_majors:
                plan = Sm90Plan(cfg, dtype, a, b, "bf16")
                assert plan.split("A") == plan.split("B") == 2
                # each CTA's copies fill half of each operand's stage
                assert plan.tma["A"].bytes * 2 == plan.bytes_A
                assert plan.tma["B"].bytes * 2 == plan.bytes_B


def test_quads_are_offered_only_where_rows_sit_half_a_sector_off():
    rng = random.Random(5)
    for _ in range(2000):
        m = rng.randint(1, 20000)
        dtype = rng.choice(("bf16", "f16", "e4m3", "e5m2", "tf32"))
        batch = rng.choice((1, 1, 3))
        rows16 = (rng.random() < 0.5, rng.random() < 0.5)
        found = quad_kernels(m, dtype, batch, rows16)
        offered = m >= QUAD_MIN_M and batch == 1 and rows16 != (False, False)
        assert bool(found) == (offered and dtype != "tf32"), (m, dtype, batch, rows16)
        for cfg in found:
            assert (cfg.cluster, cfg.multicast, cfg.block_m) == (4, "AB", 128)
            assert cfg.block_n in QUAD_WIDTHS
        listed = candidates(m, 4096, 4096, dtype, batch, 132, False, rows16)
        assert listed[len(listed) - len(found) :] == found  # listed last: they lose ties


def test_a_quad_cluster_runs_the_clusters_that_fit_at_once_and_loads_half_of_each_operand():
    dev = device("h200")
    assert cluster_grid(QUAD, 132) == 4 * clusters(4, 132) < 132
    assert cluster_grid(Sm90Config(cluster=2), 132) == cluster_grid(Sm90Config(), 132) == 132
    plain = loaded_rows(Sm90Config(128, 128), (True, False), dev)
    assert loaded_rows(QUAD, (True, False), dev) == plain / 2
    with pytest.raises(TiledMmaError, match="clusters of 4"):
        price_table((QUAD,), "bf16", "h200")


@pytest.mark.parametrize("dtype, kind", [("e4m3", "h200"), ("bf16", "h200"), ("f16", "h100")])
def test_quad_best_is_best_of_the_quads_and_the_pick_weighs_them(dtype, kind):
    # quad_best prices by price()'s operations from kept constants: the same floats
    rng = random.Random(9)
    moved = 0
    for _ in range(400):
        m = rng.randint(QUAD_MIN_M, 16384)
        n = rng.choice((rng.randint(1, 300), rng.randint(16, 65536) // 16 * 16))
        k = rng.randint(1, 4096) * 16 + 16 * rng.randint(0, 1)
        rows16 = (rng.random() < 0.7, rng.random() < 0.7)
        found = quad_kernels(m, dtype, 1, rows16)
        if not found:
            continue
        t, i = quad_best(found, m, n, k, dtype, kind, rows16)
        want, want_t = best(found, m, n, k, dtype, 1, kind, rows16)
        assert (found[i], t) == (want, want_t), (m, n, k, rows16)
        got, got_t = builtin(m, n, k, 1, dtype, 132, kind, False, rows16)
        everything = best(candidates(m, n, k, dtype, 1, 132, False, rows16), m, n, k,
                          dtype, 1, kind, rows16)  # fmt: skip
        assert got == everything[0] and math.isclose(got_t, everything[1], rel_tol=1e-9)
        moved += got.cluster == 4
    assert moved  # the pick takes them somewhere
