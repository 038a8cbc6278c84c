"""The built-in sm90 pick's one-pass pricing (issue 33, acceptance 4): ``pick.builtin`` prices
the kernel space through ``cost.price_table`` and ``cost.cheapest``; the reference definition
is ``cost.best(space.candidates(...))``, each config priced by ``cost.price``. The two must
give the same config and the same predicted time on every shape."""

from __future__ import annotations

import math
import random

import pytest

from cutemma.kernels.cost import best, cheapest, price_table
from cutemma.kernels.pick import builtin
from cutemma.kernels.sm90.streamk import sk_shares, sk_split
from cutemma.kernels.space import (
    SPLITS,
    SWAP_MAX_M,
    candidates,
    kcluster_kernels,
    kernel_reads,
    kernels_of,
    quad_kernels,
    swaps_call,
    token_quads,
)

KIND, SMS = "h200", 132


def _draw(count: int, seed: int) -> list[tuple[int, int, int]]:
    rng = random.Random(seed)

    def log_uniform(lo: int, hi: int) -> float:
        return math.exp(rng.uniform(math.log(lo), math.log(hi)))

    return [
        (
            max(1, round(log_uniform(1, 16384))),
            max(16, round(log_uniform(256, 65536) / 16) * 16),
            max(16, round(log_uniform(256, 65536) / 16) * 16),
        )
        for _ in range(count)
    ]


def _same_pick(
    m: int,
    n: int,
    k: int,
    batch: int,
    dtype: str,
    swap: bool,
    kind: str = KIND,
    rows16: tuple[bool, bool] = (False, False),
    b_major: str = "K",
):
    found = candidates(m, n, k, dtype, batch, SMS, swap, rows16, b_major)
    want, want_t = best(found, m, n, k, dtype, batch, kind, rows16)
    got, got_t = builtin(m, n, k, batch, dtype, SMS, kind, swap, rows16, b_major)
    what = (m, n, k, batch, dtype, swap, rows16, b_major)
    assert got == want, (*what, got.name, want.name)
    assert math.isclose(got_t, want_t, rel_tol=1e-9, abs_tol=0), what


@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_the_pick_is_best_of_candidates_on_random_shapes(dtype):
    # as the policy passes it, and the other way (a call with C never swaps)
    for m, n, k in _draw(3000, 4033 if dtype == "bf16" else 4034):
        _same_pick(m, n, k, 1, dtype, swaps_call(m, dtype))
        if swaps_call(m, dtype):
            _same_pick(m, n, k, 1, dtype, False)


@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_the_pick_is_best_of_candidates_where_rows_sit_half_a_sector_off(dtype):
    # clusters join the candidates, and every kernel's loads are priced by its rows
    rng = random.Random(4035)
    for m, n, k in _draw(600, 4035 if dtype == "bf16" else 4036):
        rows16 = (rng.random() < 0.7, rng.random() < 0.7)
        b_major = "N" if dtype == "bf16" and rng.random() < 0.5 else "K"
        _same_pick(m, n, k, 1, dtype, swaps_call(m, dtype), KIND, rows16, b_major)
        _same_pick(m, n, k, 2, dtype, False, KIND, rows16)


@pytest.mark.parametrize("dtype", ["bf16", "e4m3", "f16", "tf32"])
@pytest.mark.parametrize(
    "m, n, k, batch",
    [
        (1, 4096, 4096, 1),
        (1, 256, 16, 1),
        (4096, 4096, 16, 1),
        (SWAP_MAX_M, 8192, 8192, 1),
        (SWAP_MAX_M + 1, 8192, 8192, 1),
        (17, 1 << 20, 4096, 1),  # a vocabulary-sized N: many waves of tiles
        (8192, 1 << 20, 8192, 1),
        (1, 1 << 22, 16, 1),
        (64, 4096, 4096, 3),  # batched: whole tiles only, never swapped
        (1024, 1024, 1024, 40),
        (1, 16, 16, 1),
        (2802, 288, 12032, 1),  # few columns: the widths fitted to N (space.fitted_widths)
        (8099, 544, 14864, 2),
        (1029, 35840, 5120, 1),  # several token tiles (space.token_tiles)
        (5798, 528, 2688, 1),  # few columns past SWAP_MAX_M: token tiles fitted to waves
        (16384, 1024, 57728, 1),
        (SWAP_MAX_M + 1, 16, 16, 1),
    ],
)
def test_the_pick_is_best_of_candidates_on_edge_shapes(m, n, k, batch, dtype):
    for swap in (True, False):
        for kind in ("h100", "h200"):
            _same_pick(m, n, k, batch, dtype, swap and swaps_call(m, dtype), kind)


def test_cheapest_breaks_ties_and_skips_nothing_as_best_does():
    """Any order of configs: duplicates (a tie the earlier one wins), stream-K configs whose
    whole kernel comes later or not at all (sharing nothing, they cost the whole kernel's
    price and must still be found), swapped configs first."""
    rng = random.Random(7)
    for m, n, k in _draw(300, 4035):
        # (cheapest prices the space but for its kcluster kernels and clusters of 4, which the
        # pick weighs apart)
        found = [
            c
            for c in candidates(m, n, k, "bf16", 1, SMS, swaps_call(m, "bf16"), (True, True))
            if c.kcluster == 1 and c.cluster <= 2
        ]
        picked = found + rng.sample(found, len(found) // 2)
        rng.shuffle(picked)
        picked = [c for c in picked if c.stream_k or rng.random() < 0.5] or found
        configs = tuple(picked)
        t, _, i = cheapest((price_table(configs, "bf16", KIND),), m, n, k)
        want, want_t = best(configs, m, n, k, "bf16", 1, KIND)
        assert (configs[i], i) == (want, configs.index(want))
        assert math.isclose(t, want_t, rel_tol=1e-9, abs_tol=0)


@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_kcluster_best_is_best_of_the_kcluster_kernels(dtype):
    from cutemma.kernels.cost import kcluster_best

    rng = random.Random(12)
    seen = 0
    for m, n, k in _draw(3000, 4036):
        m = m if rng.random() < 0.5 else max(1, m // 16)  # more calls that may swap
        rows16 = (rng.random() < 0.2, rng.random() < 0.2)
        found = kcluster_kernels(m, n, k, dtype, 1, SMS, m <= 256)
        if not found:
            assert kcluster_best(found, m, n, k, dtype, KIND, rows16) == (math.inf, -1)
            continue
        seen += 1
        t, i = kcluster_best(found, m, n, k, dtype, KIND, rows16)
        want, want_t = best(found, m, n, k, dtype, 1, KIND, rows16)
        assert found[i] == want and t == want_t, (m, n, k, rows16)
    assert seen > 300


def test_price_table_refuses_kcluster_configs():
    from cutemma.errors import TiledMmaError
    from cutemma.kernels.sm90.config import Sm90Config

    with pytest.raises(TiledMmaError, match="kcluster"):
        price_table((Sm90Config(128, 128), Sm90Config(128, 128, kcluster=4)), "bf16", KIND)


def test_the_pick_takes_kcluster_kernels_where_they_price_lowest():
    # few tiles over a long K (sweep 532424160's worst rows): split-K in a cluster
    for m, n, k in [(399, 448, 4160), (842, 464, 5152), (133, 384, 6432)]:
        _same_pick(m, n, k, 1, "bf16", True)
        assert builtin(m, n, k, 1, "bf16", SMS, KIND, True)[0].kcluster > 1, (m, n, k)
    # the swapped kernels as kcluster kernels: few rows over few tiles of B^T, and decode's
    for m, n, k, dtype in [
        (106, 576, 7168, "bf16"),
        (16, 4096, 4096, "bf16"),
        (33, 272, 6336, "e4m3"),
    ]:
        _same_pick(m, n, k, 1, dtype, True)
        got = builtin(m, n, k, 1, dtype, SMS, KIND, True)[0]
        assert got.kcluster > 1 and got.swap_ab, (m, n, k, got.name)
    # unswapped: many tiles, few rows, or fp8: none in the space
    for m, n, k, dtype in [(4096, 4096, 4096, "bf16"), (96, 4096, 14336, "bf16"),
                           (399, 448, 4160, "e4m3")]:  # fmt: skip
        found = candidates(m, n, k, dtype, 1, SMS, swap=False)
        assert all(c.kcluster == 1 for c in found), (m, n, k)


def test_the_stream_k_split_of_every_split_at_once_is_sk_split():
    rng = random.Random(11)
    cases = [(1, 80, 128), (2, 132, 64), (4, 40, 128), (1, 8, 198), (1, 300, 64), (2, 66, 16)]
    cases += [
        (rng.randint(1, 300), rng.randint(1, 300), rng.choice((1, 2, 7, 64, 1 << 14, 1 << 26)))
        for _ in range(3000)
    ]
    for tm, tn, kt in cases:
        for grid in (132, 114, 1):
            sk, ctases = sk_shares(tm, tn, kt, grid, SPLITS)
            for split, ctas in zip(SPLITS, ctases or (grid,) * len(SPLITS)):
                assert (sk, ctas) == sk_split(tm, tn, kt, grid, split), (tm, tn, kt, grid, split)


def test_a_repeated_signature_is_priced_once():
    # a repeated shape with new tensors misses the fast path (keyed by pointers): the pick
    # itself is kept per exact signature (pick.PICKS_KEPT of them)
    from cutemma.kernels import pick

    args = (777, 4104, 2056, 1, "bf16", SMS, KIND, False, (True, False), "N")
    first = builtin(*args)
    hits = pick._sm90_pick.cache_info().hits
    again = builtin(*args)
    assert again[0] is first[0] and again[1] == first[1]
    assert pick._sm90_pick.cache_info().hits == hits + 1
    assert pick._sm90_pick.cache_info().maxsize == pick.PICKS_KEPT


def test_equal_kernel_reads_give_the_same_kernels():
    # the pick keeps its tables per space.kernel_reads: calls whose reads are equal must get
    # the same kernels, and kernels_of must give them as candidates does (but for the
    # kcluster kernels and the clusters of 2 x 2, swapped or not, which the pick weighs
    # apart: candidates lists them last)
    rng = random.Random(13)
    kept: dict[tuple, tuple] = {}
    for m, n, k in _draw(4000, 4037):
        m = m if rng.random() < 0.5 else rng.randint(1, SWAP_MAX_M)
        n = n if rng.random() < 0.7 else rng.randint(1, 2048)
        dtype = rng.choice(("bf16", "f16", "e4m3", "tf32"))
        batch, sms = rng.choice((1, 1, 2)), rng.choice((78, 132))
        rows16 = (rng.random() < 0.2, rng.random() < 0.2)
        b_major = "N" if dtype in ("bf16", "f16") and rng.random() < 0.3 else "K"
        swap = rng.random() < 0.8
        swaps = swap and batch == 1 and swaps_call(m, dtype)
        reads = kernel_reads(m, n, k, dtype, batch, sms, swaps, b_major)
        found = kernels_of(reads, m, n, k, dtype, batch, sms, rows16, b_major)
        what = (m, n, k, dtype, batch, sms, rows16, b_major, swap)
        listed = candidates(m, n, k, dtype, batch, sms, swap, rows16, b_major)
        apart = kcluster_kernels(m, n, k, dtype, batch, sms, swaps)
        apart += quad_kernels(m, dtype, batch, rows16)
        if swaps and rows16 != (False, False):  # (swapped 2 x 2 clusters: weighed apart too)
            apart += token_quads(m, n, k, dtype, sms, b_major)
        assert sum(found, ()) + apart == listed, what
        key = (reads, dtype, batch == 1, sms, rows16, b_major)
        assert kept.setdefault(key, found) == found, what


@pytest.mark.parametrize("b_major", ["K", "N"])
def test_a_swapped_class_keeps_each_kernel_that_fits_and_builds(b_major):
    # space._swapped_of_class checks fits and builds once for all of a class's splits (they
    # read no split): it must keep what checking each kernel keeps
    from dataclasses import replace

    from cutemma.errors import TiledMmaError
    from cutemma.kernels.space import (
        EVICT_FIRST_MAX_BYTES,
        SWAP_ROWS,
        SWAP_SPLITS,
        SWAP_TOKENS,
        SWAP_WIDE_SPLIT,
        SWAP_WIDE_TOKENS,
        _swapped_of_class,
        builds,
        fits,
        mid_swapped_kernel,
        swapped_kernel,
    )

    def kept(cfgs, dtype):
        return tuple(c for c in cfgs if c is not None and fits(c, dtype) and builds(c, dtype))

    def swap(tokens, n, k, dtype, whole, split=None, rows=SWAP_ROWS):
        try:
            cfg = swapped_kernel(tokens, n, k, dtype, SMS, whole, rows)
        except TiledMmaError:
            return None
        return replace(cfg, split=split) if split else cfg

    splits = SWAP_SPLITS[b_major]
    for dtype in ("bf16", "e4m3"):
        for tokens in range(16, SWAP_TOKENS + 1, 24):
            for hint in (1, EVICT_FIRST_MAX_BYTES):
                want = kept([swap(tokens, 128, hint, dtype, False, s) for s in splits], dtype)
                if tokens > SWAP_WIDE_TOKENS:  # (128-row stream-K tiles past 128 tokens)
                    wide = swap(tokens, 128, hint, dtype, False, SWAP_WIDE_SPLIT, 2 * SWAP_ROWS)
                    want += kept([wide], dtype)
                want += kept([swap(tokens, 2048, hint, dtype, True)], dtype)
                assert _swapped_of_class((tokens, 2048, hint), dtype, SMS, b_major) == want
            for hint in (0, 1):  # (several token tiles: whether the weights stream)
                whole = mid_swapped_kernel(tokens, dtype, bool(hint))
                shared = [replace(whole, stream_k=True, split=s) for s in splits]
                want = kept([whole, *shared], dtype)
                assert _swapped_of_class((tokens, 0, hint), dtype, SMS, b_major) == want


def test_a_fused_pick_is_best_of_its_kernels_on_random_shapes():
    # a fused call (fused=True: the plain model) prices the space's unswapped kernels as
    # they run an epilogue (space.fused_kernels) and the swapped ones as they are: the best
    # of those kernels, listed as kernels_of gives them, then the kcluster kernels (no
    # clusters of 4)
    from cutemma.kernels.space import fused_kernels, unswapped_groups

    rng = random.Random(15)
    for m, n, k in _draw(800, 4039):
        dtype = rng.choice(("bf16", "f16", "e4m3", "e5m2"))
        rows16 = (rng.random() < 0.3, rng.random() < 0.3)
        b_major = "N" if dtype in ("bf16", "f16") and rng.random() < 0.3 else "K"
        swaps = swaps_call(m, dtype)
        reads = kernel_reads(m, n, k, dtype, 1, SMS, swaps, b_major)
        groups = kernels_of(reads, m, n, k, dtype, 1, SMS, rows16, b_major)
        plain = unswapped_groups(reads)
        found = sum((fused_kernels(g, dtype) for g in groups[:plain]), ())
        found += sum(groups[plain:], ()) + kcluster_kernels(m, n, k, dtype, 1, SMS, swaps)
        want, want_t = best(found, m, n, k, dtype, 1, KIND, rows16)
        got, got_t = builtin(m, n, k, 1, dtype, SMS, KIND, swaps, rows16, b_major, fused=True)
        assert (got, got_t) == (want, want_t), (m, n, k, dtype, rows16, b_major)


def test_the_pick_is_best_of_candidates_across_dtypes_majors_and_rows():
    # every sm90 dtype, either B major, rows half a sector off or not, and a swap allowed
    # or not
    rng = random.Random(16)
    for m, n, k in _draw(800, 4040):
        m = m if rng.random() < 0.5 else max(1, m // 32)  # (more calls that swap)
        dtype = rng.choice(("bf16", "f16", "e4m3", "e5m2", "tf32"))
        rows16 = (rng.random() < 0.3, rng.random() < 0.3)
        b_major = "N" if dtype in ("bf16", "f16") and rng.random() < 0.3 else "K"
        _same_pick(m, n, k, 1, dtype, rng.random() < 0.8, KIND, rows16, b_major)
