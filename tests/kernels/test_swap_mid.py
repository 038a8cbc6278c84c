"""Swapped kernels past one token tile (calls of 257..SWAP_MAX_M rows, and 16-bit calls of
any rows past it) and the "tmat" epilogue that stores their column-major D^T through an
MN-major staging tile and TMA."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from cutemma.errors import TiledMmaError
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.sm90.index import launch_record
from cutemma.kernels.sm90.plan import Sm90Plan
from cutemma.kernels.sm90.tma_maps import Sm90Launch, output_map_args
from cutemma.kernels.space import (
    MID_WAVE_TOKEN_TILES,
    SWAP_MAX_M,
    SWAP_TOKENS,
    WAVE_TOKEN_TILES,
    candidates,
    fits,
    mid_swapped_kernel,
    swap_classes,
    swapped_groups,
    swapped_kernels,
    swaps_call,
    token_pair,
    token_pairs,
    token_quads,
    token_tiles,
    wave_tokens,
)

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_nvrtc  # noqa: E402

MS = [257, 287, 300, 399, 512, 513, 651, 1000, 1029, 1535, 2047, SWAP_MAX_M]


@pytest.mark.parametrize("dtype", ["bf16", "f16", "e4m3"])
def test_token_tiles_hold_the_rows_in_steps_of_8(dtype):
    widest = max(
        t for t in range(8, SWAP_TOKENS + 1, 8) if fits(mid_swapped_kernel(t, dtype, False), dtype)
    )
    for m in range(SWAP_TOKENS + 1, SWAP_MAX_M + 1, 7):
        tiles = token_tiles(m, dtype)
        least = -(-m // widest)
        assert [-(-m // t) for t in tiles] == list(range(least, least + len(tiles)))
        for t in tiles:
            count = -(-m // t)
            assert t % 8 == 0 and t <= widest
            assert count * t - m < 8 * count  # each tile at most 7 columns past its share


@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_wave_tokens_fill_whole_waves_of_128_row_tiles_best(dtype):
    """No token width of 64..widest (steps of 8) gives a grid of fewer token-column slots
    over its whole waves (waves x SMs x width: the time of waves of equal tiles) than the
    chosen ones, which come fewest first, the wider first on a tie."""
    import random

    widest = max(
        t for t in range(8, SWAP_TOKENS + 1, 8) if fits(mid_swapped_kernel(t, dtype, False), dtype)
    )
    rng = random.Random(3)
    for _ in range(300):
        m, n, sms = (
            rng.randint(SWAP_MAX_M + 1, 16384),
            rng.randint(1, 65536),
            rng.choice((78, 132)),
        )
        tiles = wave_tokens(m, n, dtype, sms)
        slots = {
            t: -(-(-(-n // 128) * -(-m // t)) // sms) * sms * t for t in range(64, widest + 1, 8)
        }
        assert len(tiles) == WAVE_TOKEN_TILES and len(set(tiles)) == WAVE_TOKEN_TILES
        assert all(t % 8 == 0 and 64 <= t <= widest for t in tiles)
        worst_kept = max(slots[t] for t in tiles)
        assert all(slots[t] >= worst_kept for t in slots if t not in tiles), (m, n)
        ranks = [(slots[t], -t) for t in tiles]
        assert ranks == sorted(ranks), (m, n)


def test_16_bit_calls_past_swap_max_m_swap_on_wave_tokens_fp8_ones_do_not():
    # (5798, 528): 5 tile rows of the weights; 224 tokens give 26 columns, 130 tiles, one wave
    assert wave_tokens(5798, 528, "bf16")[0] == 224
    for m in (SWAP_MAX_M + 1, 5798, 16384):
        assert swaps_call(m, "bf16") and swaps_call(m, "f16")
        assert not swaps_call(m, "e4m3") and not swaps_call(m, "tf32")
        for n in (16, 528, 8192, 65536):
            swapped = [c for c in candidates(m, n, 4096, "bf16", b_major="N") if c.swap_ab]
            assert {c.block_n for c in swapped} == set(wave_tokens(m, n, "bf16"))
            assert all(c.block_m == 128 and c.epilogue == "tmat" for c in swapped)
            assert any(c.stream_k for c in swapped) and any(not c.stream_k for c in swapped)
            assert not any(c.swap_ab for c in candidates(m, n, 4096, "e4m3"))
    with pytest.raises(TiledMmaError, match="SWAP_MAX_M = 2048"):
        swapped_kernels(5000, 512, 4096, "e4m3")


@pytest.mark.parametrize("m", MS)
def test_mid_size_16_bit_calls_add_the_wave_fitted_token_tiles(m):
    """Past SWAP_TOKENS rows a 16-bit call's token tiles are token_tiles' (the fewest, and
    one more: they come first and so win a tie) then wave_tokens' first MID_WAVE_TOKEN_TILES
    (cuBLAS's own widths on such calls, bench/results/raw/k-ladder-clusters-h200.json), each
    once; fp8's are token_tiles' alone (its moved calls ran slower:
    raw/fp8mid-ab-h200-rejected.json)."""
    for n in (1584, 8192, 28672):
        got = [t for t, _, _ in swap_classes(m, n, 4096, "bf16")]
        fewest = list(token_tiles(m, "bf16"))
        assert got[: len(fewest)] == fewest and len(set(got)) == len(got)
        assert set(got) == {*fewest, *wave_tokens(m, n, "bf16")[:MID_WAVE_TOKEN_TILES]}
        assert [t for t, _, _ in swap_classes(m, n, 4096, "e4m3")] == list(token_tiles(m, "e4m3"))
    # (1187, 1584): ten token tiles of 120 by thirteen weight tiles, one wave of 130 CTAs
    assert 120 in {t for t, _, _ in swap_classes(1187, 1584, 4096, "bf16")}


def test_one_token_tile_up_to_swap_tokens():
    for m in (1, 8, 9, 100, SWAP_TOKENS):
        assert token_tiles(m, "bf16") == (max(16, -(-m // 8) * 8),)
        assert len(swap_classes(m, 8192, 8192, "bf16")) == 1


@pytest.mark.parametrize("m", MS)
@pytest.mark.parametrize(("dtype", "a_major"), [("bf16", "K"), ("bf16", "M"), ("e4m3", "K")])
def test_every_mid_swapped_kernel_plans_as_its_record_says(m, dtype, a_major):
    """Each swapped kernel of a mid-size call builds its plan for the swapped operands (A' =
    B^T: M-major for 16-bit N-major B), stores D^T through an MN-major tile, and the launch
    record the host derives without a plan is the plan's."""
    swapped = [c for c in candidates(m, 8192, 4096, dtype) if c.swap_ab]
    assert swapped and all(c.block_m == 128 and c.epilogue == "tmat" for c in swapped)
    waves = wave_tokens(m, 8192, dtype)[:MID_WAVE_TOKEN_TILES] if dtype == "bf16" else ()
    assert {c.block_n for c in swapped} == {*token_tiles(m, dtype), *waves}
    for cfg in swapped:
        plan = Sm90Plan(cfg, dtype, a_major, "K", "bf16")
        assert plan.tma_store and plan.d_major == "MN" and plan.tma_D.contiguous == "MN"
        # fp8 promoted by token halves: 1.5% faster than a batch at a time over 34 such
        # kernels (bench/results/raw/swap-fp8-split-h200.json); pairs promote whole
        assert plan.split_n == (dtype == "e4m3" and cfg.cluster == 1)
        record = launch_record(cfg, dtype, a_major, "K", "bf16")
        assert record["tma_D"] == _as_record(Sm90Launch.of(plan))["tma_D"]
        assert record["shared_bytes"] == plan.shared_bytes


@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_several_token_tiles_offer_pairs_where_rows_sit_half_a_sector_off(dtype):
    """Where a row sits half a sector off, the swapped kernels of several token tiles come
    with their whole kernels in pairs along the tokens (space.token_pairs): clusters of the
    two token tiles of one weight tile, each loading half of the weights' k tile for both;
    listed after the swapped kernels, so they win no tie. Aligned rows: none."""
    for m in (257, 300, 651, 1535, SWAP_MAX_M):
        for b_major in ("K", "N") if dtype == "bf16" else ("K",):
            pairs = token_pairs(m, 8192, 4104, dtype, b_major=b_major)
            wholes = [g[0] for g in swapped_groups(m, 8192, 4104, dtype, b_major=b_major)]
            assert pairs == tuple(token_pair(w) for w in wholes if not w.stream_k)
            for pair in pairs:
                assert (pair.cluster, pair.multicast, pair.cluster_mn) == (2, "A", (1, 2))
                assert (pair.block_m, pair.epilogue, pair.evict_first) == (128, "tmat", "")
                assert pair.promote is True or dtype != "e4m3"  # (whole: 'split' spills)
            off = candidates(m, 8192, 4104, dtype, rows16=(True, False), b_major=b_major)
            lone = max(i for i, c in enumerate(off) if c.swap_ab and c.cluster == c.kcluster == 1)
            assert off[lone + 1 : lone + 1 + len(pairs)] == pairs
            aligned = candidates(m, 8192, 4096, dtype, b_major=b_major)
            assert not any(c.cluster > 1 and c.swap_ab for c in aligned)
    # one token tile: no pair (its tokens are one tile)
    assert token_pairs(200, 8192, 4104, dtype) == ()


@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_token_quads_plan_for_every_major_the_call_may_have(dtype):
    """space.token_quads: the swapped kernels of several token tiles in 2 x 2 clusters,
    each class's token width rounded up to 16, kept where each CTA's halves are whole
    swizzle atoms in either major (the pick does not know A's major): their plans build
    for every major pair the dtype reads, and the pick weighs them only where a row sits
    half a sector off."""
    majors = (("K", "K"), ("K", "N"), ("M", "K"), ("M", "N")) if dtype == "bf16" else (("K", "K"),)
    seen = set()
    for m in (257, 300, 651, 1000, 1535, SWAP_MAX_M):
        for quad in token_quads(m, 8192, 4104, dtype):
            assert (quad.cluster, quad.multicast, quad.cluster_mn) == (4, "AB", (2, 2))
            assert quad.swap_ab and quad.epilogue == "tmat" and quad.block_n % 16 == 0
            seen.add(quad.block_n)
            for am, bm in majors:  # (the swapped problem's operands: A' = B^T, B' = A^T)
                Sm90Plan(replace(quad, swap_ab=False), dtype, am, bm, "bf16")
    assert seen and (dtype == "e4m3" or seen <= {128, 256})
    aligned = candidates(651, 8192, 4096, dtype)
    assert not any(c.cluster == 4 and c.swap_ab for c in aligned)


@needs_nvrtc
@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_token_pairs_compile_to_hgmma_multicast_loads_without_local_memory(dtype):
    """A pair's kernel text loads its half of A's k tile with a multicast TMA to both CTAs
    and compiles to GMMA (HGMMA, fp8's QGMMA) with no local memory (its registers fit)."""
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass
    from cutemma.kernels.sm90.source import gemm_sm90_source

    pair = replace(token_pair(mid_swapped_kernel(200, dtype, True)), swap_ab=False)
    src = gemm_sm90_source(pair, dtype, "K", "K", "bf16")
    assert ".multicast::cluster" in src
    cubin = compile(src, "sm_90a")
    gmma = "QGMMA" if dtype == "e4m3" else "HGMMA"  # (fp8's GMMA is QGMMA in SASS)
    assert count_instructions(sass(cubin)).get(gmma, 0) > 0
    use = local_memory_use(cubin)
    assert not use.local_bytes and not use.stack_bytes


def _as_record(launch: Sm90Launch) -> dict:
    import json

    return json.loads(launch.to_json())


@pytest.mark.parametrize("cfg", [
    Sm90Config(128, 144, epilogue="tmat"),
    Sm90Config(128, 256, epilogue="tmat", stream_k=True),
    Sm90Config(64, 40, consumers=1, epilogue="tmat"),
    Sm90Config(128, 16, epilogue="tmat"),
], ids=lambda c: c.name)  # fmt: skip
def test_tmat_staging_addresses_are_a_few_bases_plus_a_constant(cfg):
    """The emitted epilogue (tma_store_lines' text, read back) writes accumulator i of
    thread t at base dzJ (swizzle(d_thr + low_J)) plus an immediate: that must be where the
    staging layout puts C(m, n) of that thread and value, for every thread and value."""
    import re

    from cutemma.kernels.sm90.epilogue import tma_store_lines

    plan = Sm90Plan(cfg, "bf16", "K", "K", "bf16")
    text = tma_store_lines(plan, "bf16")
    lows = {
        int(j): int(low)
        for j, low in re.findall(
            r"const uint32_t dz(\d+) = d_smem \+ 2 \* \(\(d_thr \+ (\d+)\)", text
        )
    }
    stores = re.findall(
        r"st_shared_b16x2\(dz(\d+) \+ (\d+), dz(\d+) \+ (\d+), pack_bf16x2\(alpha \* acc\[(\d+)\], alpha \* acc\[(\d+)\]\)\)",
        text,
    )
    m_t, n_t, consts = plan.epilogue
    assert len(stores) * 2 == len(consts) and len(lows) <= 4
    sw = plan.smem_D.outer
    thr, _ = plan.epilogue_smem
    for t, (m, n) in enumerate(zip(m_t.table, n_t.table)):
        for ja, xa, jb, xb, ia, ib in stores:
            for j, x, i in ((ja, xa, ia), (jb, xb, ib)):
                _, dm, dn = consts[int(i)]
                emitted = sw(thr.table[t] + lows[int(j)]) + int(x) // 2
                assert emitted == int(plan.smem_D(m + dm, n + dn)), (t, dm, dn)


def test_tmat_stores_a_column_major_output_and_nothing_else():
    box = Sm90Plan(Sm90Config(128, 144, epilogue="tmat"), "bf16", "K", "K", "bf16").tma_D
    row_box = Sm90Plan(Sm90Config(128, 144), "bf16", "K", "K", "bf16").tma_D
    ptr = 0x7F0000000000
    col = output_map_args(box, ptr, (8192, 300), (1, 8192))  # D^T of a (300, 8192) D
    assert col is not None and col.global_dim == (8192, 300) and col.box_dim == (64, 144)
    assert output_map_args(box, ptr, (300, 8192), (8192, 1)) is None  # row-major: registers
    assert output_map_args(row_box, ptr, (8192, 300), (1, 8192)) is None
    assert output_map_args(box, ptr, (2, 8192, 300), (8192 * 300, 1, 8192)) is None  # a batch
    assert output_map_args(box, ptr, (8192, 300), (1, 8000)) is None  # columns overlapping
