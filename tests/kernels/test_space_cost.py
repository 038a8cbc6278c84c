"""The sm90 kernel space (cutemma.kernels.space), the cost model (cutemma.kernels.cost) and
the policy's use of them (issue 33). Expected values come from the family's own rules
(Sm90Plan), from stream-K's split (sk_split) and from the model's stated form, never from
running the code under test on the same inputs.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from cutemma.errors import TiledMmaError
from cutemma.kernels.cost import (
    DEVICES,
    READS_ONCE_ROWS,
    Device,
    best,
    device,
    device_kind,
    predict,
    price,
    shape_free,
    tile_class,
)
from cutemma.kernels.sm90.config import ATOMS_SM90, Sm90Config
from cutemma.kernels.sm90.plan import Sm90Plan
from cutemma.kernels.sm90.streamk import sk_split
from cutemma.kernels.space import (
    SPLITS,
    SWAP_MAX_M,
    _groups_of_classes,
    _swapped_groups,
    _tiles,
    candidates,
    cluster_kernels,
    fits,
    fused_pingpong,
    swapped_kernel,
)

DTYPES = sorted(ATOMS_SM90)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_tile_of_the_space_builds_its_plan(dtype):
    majors = [("K", "K")] if dtype in ("tf32", "e4m3", "e5m2") else [("K", "K"), ("M", "N")]
    if dtype in ("bf16", "f16"):  # a cluster splits its shared tile: every major counts
        majors += [("K", "N"), ("M", "K")]
    for cfg in _tiles(dtype) + cluster_kernels(dtype):
        for a, b in majors:
            for out in (None, "f32", "bf16"):
                Sm90Plan(cfg, dtype, a, b, out)  # raises if the family refuses it


@pytest.mark.parametrize(
    "cfg, dtype",
    [
        (Sm90Config(64, 256, consumers=1, promote="split"), "e4m3"),
        (Sm90Config(256, 128, promote="overlap"), "e4m3"),
        (Sm90Config(128, 224, block_k=256, epilogue="regs", swap_ab=True), "e4m3"),
        (Sm90Config(128, 256), "bf16"),
        (Sm90Config(256, 128), "bf16"),
        (Sm90Config(64, 256, consumers=1), "bf16"),
        # pingpong: each warpgroup holds a whole tile
        (Sm90Config(128, 256, schedule="pingpong"), "bf16"),
        (Sm90Config(128, 192, schedule="pingpong"), "bf16"),
        (Sm90Config(64, 256, schedule="pingpong"), "bf16"),
        (Sm90Config(128, 128, schedule="pingpong", promote=True), "e4m3"),
    ],
)
def test_fits_agrees_with_the_plans_register_rule(cfg, dtype):
    try:
        Sm90Plan(cfg, dtype, "K", "K", "bf16")
        planned = True
    except Exception as exc:
        planned = "registers" not in str(exc)
    assert fits(cfg, dtype) == planned


@pytest.mark.parametrize(
    "shape", [(4096, 4096, 4096), (700, 8192, 28672), (37, 10240, 8192), (1536, 1408, 4096)]
)
def test_a_stream_k_variant_that_shares_nothing_never_beats_its_whole_kernel(shape):
    """Each tile comes whole, then as stream-K with each split of space.SPLITS; where
    sk_split shares no tile the stream-K kernel runs whole tiles, so the model prices it as
    the whole kernel and the pick (ties to the earlier) never takes it."""
    m, n, k = shape
    found = candidates(m, n, k, "bf16")
    assert len(set(found)) == len(found)
    wholes = {replace(c, evict_first=""): c for c in found if not c.stream_k}
    for cfg in found:
        if cfg.stream_k and not cfg.swap_ab:
            whole = wholes[replace(cfg, stream_k=False, split=None, evict_first="")]
            assert found.index(whole) < found.index(cfg)
            bk = cfg.block_k or 64
            tiles = (-(-m // cfg.block_m), -(-n // cfg.block_n), -(-k // bk), 132)
            if sk_split(*tiles, cfg.split)[0] == 0:
                assert predict(cfg, m, n, k, "bf16") == predict(whole, m, n, k, "bf16")
                assert best(found, m, n, k, "bf16")[0] != cfg
    splits = {c.split for c in found if c.stream_k and not c.swap_ab}
    assert splits == set(SPLITS)


@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_an_n_major_b_s_swapped_calls_of_few_tokens_over_a_long_k_run_whole_tiles(dtype):
    """space._n_major_whole: an N-major B's swapped call of at most SWAP_WIDE_TOKENS rows
    over a K of at least N_MAJOR_SHARED_MIN_K would read the weights at unrelated k under
    stream-K: it runs whole swapped kernels only, the K-major call's 128-row ones and
    64-row ones beside them (one warpgroup, the same tokens and hint, a ring at least as
    deep), over any count of tiles. Of one wider token tile, only where most tiles would be
    shared, and no 64-row tiles. A short K, several token tiles, or a K-major B keep
    stream-K."""

    def swapped(m, n, k, major):
        return [c for c in candidates(m, n, k, dtype, b_major=major) if c.swap_ab]

    sms = 132
    whole = ((17, 21520, 9392), (16, 57344, 8192), (4, 12288, 12288), (1, 133 * 64, 2048),
             (16, sms * 64, 8192), (100, 4608, 36864), (3, 2496, 2752))  # fmt: skip
    for m, n, k in whole:
        n_major, k_major = swapped(m, n, k, "N"), swapped(m, n, k, "K")
        assert n_major and not any(c.stream_k for c in n_major), (m, n, k)
        assert any(c.stream_k for c in k_major)
        wide = [c for c in n_major if c.block_m == 128 and c.kcluster == 1]
        assert wide and set(wide) <= set(k_major)
        narrow = [c for c in n_major if c.block_m == 64 and c.kcluster == 1]  # (kcluster: apart)
        assert [replace(c, block_m=128, consumers=2, stages=None) for c in narrow] == [
            replace(c, stages=None) for c in wide
        ]
        assert all(c.consumers == 1 and (c.stages or 8) >= (w.stages or 8)
                   for c, w in zip(narrow, wide))  # fmt: skip
    wide = swapped(150, 21520, 9392, "N")  # (152 tokens: 205 of 337 tiles shared)
    assert wide and not any(c.stream_k or c.block_m == 64 for c in wide)
    kept = ((2, 9376, 2047), (200, 36864, 7168), (700, 21520, 9392))
    for m, n, k in kept:  # K under 2048; 180 of 576 tiles shared; several token tiles
        assert any(c.stream_k for c in swapped(m, n, k, "N")), (m, n, k)


def test_swapped_groups_kept_per_what_their_classes_read_are_each_shapes_own():
    """space._swapped_groups keeps its answer per set of swapped classes (space._groups_of;
    the pick's space.kernels_of per what the classes read, tests/kernels/test_pick_fast.py):
    every drawn shape, many sharing a key with an earlier one, gets the groups its own
    classes give."""
    rng = random.Random(33)
    for _ in range(4000):
        m = rng.choice((rng.randint(1, 300), rng.randint(1, SWAP_MAX_M)))
        n, k = (16 * rng.randint(1, 4096) for _ in range(2))
        for dtype in ("bf16", "e4m3"):
            for major in ("K", "N"):
                want = _groups_of_classes(m, n, k, dtype, 132, major)
                assert _swapped_groups(m, n, k, dtype, 132, major) == want, (m, n, k, dtype)


def test_swapped_kernels_only_for_few_rows_and_plain_calls():
    assert any(c.swap_ab for c in candidates(SWAP_MAX_M, 8192, 8192, "bf16"))
    # (past SWAP_MAX_M rows only 16-bit calls swap)
    assert not any(c.swap_ab for c in candidates(SWAP_MAX_M + 1, 8192, 8192, "e4m3"))
    assert any(c.swap_ab for c in candidates(SWAP_MAX_M + 1, 8192, 8192, "bf16"))
    assert not any(c.swap_ab for c in candidates(16, 8192, 8192, "bf16", swap=False))
    assert not any(c.swap_ab for c in candidates(16, 8192, 8192, "bf16", batch=2))
    assert not any(c.swap_ab for c in candidates(16, 8192, 8192, "tf32"))


def test_the_model_charges_more_k_more_time_and_prices_a_swap_transposed():
    cfg = Sm90Config(128, 128)
    times = [predict(cfg, 1024, 4096, k, "bf16", kind="h200") for k in (1024, 4096, 16384)]
    assert times == sorted(times) and times[0] < times[-1]
    swapped = Sm90Config(64, 16, consumers=1, swap_ab=True, epilogue="regs")
    plain = Sm90Config(64, 16, consumers=1, epilogue="regs")
    assert predict(swapped, 16, 8192, 8192, "bf16") == predict(plain, 8192, 16, 8192, "bf16")


def test_shares_pay_re_reads_but_aligned_swapped_ones_or_over_many_rows_and_each_pays_a_fix_up():
    """cost._reads_once: a swapped kernel whose shares are whole tiles' k chunks (a split),
    of one token tile or several, reads each byte once, and so do an unswapped kernel's
    such shares on more than READS_ONCE_ROWS rows; grid-wide shares (split None) and an
    unswapped kernel's aligned ones on fewer rows pay ``reread``. A launch sharing more
    tiles than it has CTAs still adds a partial per CTA (``fixup_us``)."""
    dev = device("h200")

    def priced(cfg, m, n, k, **constants):
        d = replace(dev, **constants)
        return price(shape_free(cfg, "bf16", d), cfg, m, n, k, "bf16", 1, d)

    # 16 tokens by 4096 weight rows: 64 tiles of 64 rows, split 16 over 128 CTAs, 2 a tile
    column = swapped_kernel(16, 4096, 8192, "bf16", 132, False)
    aligned, grid = (replace(column, split=s) for s in (16, None))
    assert sk_split(64, 1, 8192 // 64, 132, 16) == (64, 128)
    assert sk_split(64, 1, 8192 // 64, 132) == (64, 132)
    shape = (16, 4096, 8192)
    assert priced(aligned, *shape) == priced(aligned, *shape, reread=0.0)
    assert priced(grid, *shape) > priced(grid, *shape, reread=0.0)
    # the same shares of an unswapped kernel: 66 tiles of 128x128, split 16 over 132 CTAs
    plain = Sm90Config(128, 128, stream_k=True, split=16)
    assert sk_split(6, 11, 8192 // 64, 132, 16) == (66, 132)
    shape = (6 * 128, 11 * 128, 8192)
    assert priced(plain, *shape) == priced(plain, *shape, reread=0.0)
    grid_wide = replace(plain, split=None)
    assert priced(grid_wide, *shape) > priced(grid_wide, *shape, reread=0.0)
    # one tile row's worth of rows (READS_ONCE_ROWS): 64-row tiles over 128 rows, 2 a tile
    narrow = Sm90Config(64, 128, consumers=1, stream_k=True, split=16)
    assert READS_ONCE_ROWS == 128 and sk_split(2, 32, 8192 // 64, 132, 16) == (64, 128)
    shape = (READS_ONCE_ROWS, 32 * 128, 8192)
    assert priced(narrow, *shape) > priced(narrow, *shape, reread=0.0)
    # one row more, in 128-row tiles: again 64 tiles, 2 a tile, now read once
    over = (READS_ONCE_ROWS + 1, 32 * 128, 8192)
    assert priced(plain, *over) == priced(plain, *over, reread=0.0)
    # a swapped kernel of several token tiles: 600 tokens by 1536 weight rows, 12 x 5 tiles
    # of 128 x 128, split 16 over 120 CTAs, 2 a tile: read once too; split None pays
    tokens = Sm90Config(128, 128, swap_ab=True, stream_k=True, split=16, epilogue="tmat")
    assert sk_split(12, 5, 8192 // 64, 132, 16) == (60, 120)
    shape = (600, 1536, 8192)
    assert priced(tokens, *shape) == priced(tokens, *shape, reread=0.0)
    tokens_grid = replace(tokens, split=None)
    assert priced(tokens_grid, *shape) > priced(tokens_grid, *shape, reread=0.0)
    # swapped: 160 tiles of 64 rows over 132 CTAs, each CTA's share ending inside a tile
    many = swapped_kernel(16, 10240, 8192, "bf16", 132, False)
    assert sk_split(160, 1, 8192 // 64, 132, many.split)[0] > 132
    shape = (16, 10240, 8192)
    assert priced(many, *shape, fixup_us=0.0) < priced(many, *shape)


def test_best_is_the_least_predicted():
    found = candidates(300, 28672, 4096, "e4m3")
    cfg, t = best(found, 300, 28672, 4096, "e4m3", 1, "h200")
    assert t == min(predict(c, 300, 28672, 4096, "e4m3", 1, "h200") for c in found)
    assert cfg in found


def test_the_model_names_what_it_cannot_price():
    from cutemma.errors import TiledMmaError

    with pytest.raises(TiledMmaError, match="dtype of"):
        predict(Sm90Config(128, 128), 64, 64, 64, "s8")
    with pytest.raises(TiledMmaError, match="an Sm90Config"):
        predict("b128x128", 64, 64, 64, "bf16")
    with pytest.raises(TiledMmaError, match="no configs"):
        best((), 64, 64, 64, "bf16")
    with pytest.raises(TiledMmaError, match="takes"):
        candidates(64, 64, 64, "s8")


def test_device_files_load_and_name_their_kind():
    for path in DEVICES.glob("*.json"):
        data = json.loads(path.read_text())
        dev = device(path.stem)
        assert isinstance(dev, Device) and dev.kind == path.stem == data["kind"]
        assert dev.sms > 0 and dev.dram_gbps > 0 and "note" in data
        for cls, eff in dev.eff.items():
            assert 0 < eff <= 1.5, (cls, eff)
    assert device_kind("NVIDIA H200") == "h200" and device_kind("NVIDIA H100 PCIe") == "h100"


def test_every_fitted_class_is_a_class_of_the_space():
    classes = {tile_class(c, d) for d in DTYPES for c in candidates(40, 8192, 8192, d)}
    classes |= {tile_class(c, d) for d in DTYPES for c in candidates(4000, 8192, 8192, d)}
    classes |= {tile_class(c, d) for d in DTYPES for c in fused_pingpong(d)}  # fused calls'
    assert set(device("h200").eff) <= classes


def test_the_policy_takes_the_cheapest_kernel(monkeypatch):
    import types

    from cutemma.kernels import policy

    torch = pytest.importorskip("torch")
    BF = torch.bfloat16
    A, B = torch.zeros(300, 4096, dtype=BF), torch.zeros(4096, 8192, dtype=BF)
    call = types.SimpleNamespace(A=A, B=B, M=300, N=8192, K=4096, batch=None, dtype="bf16",
                                 arch="sm_90a", sms=132, gpu="NVIDIA H200", device=7,
                                 design=None, config=None,
                                 epilogue=None, C=None, a_major="K", b_major="N",
                                 rows16=(False, False))  # fmt: skip
    monkeypatch.setattr(policy, "lookup_device", lambda *a: None)  # nothing tuned
    chosen = policy.choose(call)
    found = candidates(300, 8192, 4096, "bf16", b_major="N")
    want, seconds = best(found, 300, 8192, 4096, "bf16", 1, "h200")
    # (a swapped choice runs the kernel with swap_ab cleared on the swapped views)
    assert replace(chosen.config, swap_ab=chosen.swap) == want and chosen.predicted_s == seconds


def test_a_fused_call_may_run_swapped_with_its_chain_transposed(monkeypatch):
    """A decode-sized call with vector ops (bias, scales) is priced with the swapped kernels
    too; taken swapped, the kernel runs the chain as D^T's (bias -> bias_row); a residual
    (no transposed twin) keeps the call unswapped."""
    import types

    from cutemma.kernels import policy
    from cutemma.kernels.epilogue import bind

    torch = pytest.importorskip("torch")
    BF, cpu = torch.bfloat16, torch.device("cpu")
    M, N, K = 16, 8192, 8192
    A, B = torch.zeros(M, K, dtype=BF), torch.zeros(N, K, dtype=BF).t()
    monkeypatch.setattr(policy, "lookup_device", lambda *a: None)

    def call(ops, tensors):
        return types.SimpleNamespace(A=A, B=B, M=M, N=N, K=K, batch=None, dtype="bf16",
                                     arch="sm_90a", sms=132, gpu="NVIDIA H200", device=0,
                                     design=None, config=None, C=None, a_major="K", b_major="K",
                                     rows16=(False, False), out_type="bf16",
                                     epilogue=bind(ops, tensors, M, N, cpu))  # fmt: skip

    plain = types.SimpleNamespace(**{**vars(call(("relu",), {})), "epilogue": None})
    assert policy.choose(plain).swap  # the plain call runs swapped here
    fused = policy.choose(call(("bias", "gelu_tanh"), {"bias": torch.zeros(N, dtype=BF)}))
    assert fused.swap and fused.epilogue.epilogue.ops == ("bias_row", "gelu_tanh")
    assert fused.config == policy.choose(plain).config
    res = call(("residual",), {"residual": torch.zeros(M, N, dtype=BF)})
    assert not policy.choose(res).swap and policy.choose(res).epilogue is None


def test_the_sweep_draws_its_documented_distribution():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from gemm_sweep import MODELS, PROJECTIONS, draw_shapes

    assert len(MODELS) >= 20
    shapes = draw_shapes(400, 12345)
    assert shapes == draw_shapes(400, 12345) and shapes != draw_shapes(400, 54321)
    assert all(1 <= m <= 16384 for m, _, _ in shapes)
    named = [s for i, s in enumerate(shapes) if i % 2 == 0]
    drawn = [s for i, s in enumerate(shapes) if i % 2 == 1]
    assert all((n, k) in PROJECTIONS for _, n, k in named)
    assert all(n % 16 == 0 and k % 16 == 0 and 256 <= n <= 65536 for _, n, k in drawn)
    assert min(m for m, _, _ in shapes) < 8 and max(m for m, _, _ in shapes) > 4096


@pytest.mark.parametrize("dtype", ["bf16", "e4m3", "f16"])
def test_a_swapped_kernel_depends_on_n_and_k_only_through_its_class(dtype):
    """candidates builds a swapped kernel once per (tokens, ring, hint) class
    (space._swap_class): the class's kernel must be the one space.swapped_kernel builds for the
    call's own n and k, across the evict-first and ring-depth boundaries."""
    from cutemma.kernels.space import _swap_class
    from cutemma.kernels.space import swapped_kernel as _swapped

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from gemm_sweep import draw_shapes

    shapes = [s for s in draw_shapes(200, 4242) if s[0] <= 256] + [
        (m, n, k) for m in (1, 64, 200) for n in (1024, 16896, 17000, 57344) for k in (4096, 30000)
    ]
    for m, n, k in shapes:
        tokens = max(16, -(-m // 8) * 8)
        for whole in (False, True):
            try:
                own = _swapped(tokens, n, k, dtype, 132, whole)
            except Exception:
                own = None
            try:
                cls = _swapped(tokens, *_swap_class(n, k, dtype, 132), dtype, 132, whole)
            except Exception:
                cls = None
            assert own == cls, (m, n, k, whole)


@pytest.mark.parametrize("fp8", [False, True])
def test_the_fewest_ctas_of_a_ring_depth_by_bisection_are_the_first_of_a_scan(fp8):
    """space._fewest_ctas bisects (a ring's depth never grows with the CTAs): it must give
    the first count whose depth (space.stream_stages) is the given count's, as a scan
    from one CTA up finds it, at every count, past the SMs too (16-bit: one depth, the
    deepest, so one CTA)."""
    from cutemma.kernels.space import SWAP_ROWS, _fewest_ctas, stream_stages

    depths = [stream_stages(2 * SWAP_ROWS, c, fp8) for c in range(1, 300)]
    # fp8: the counts cross several depths and the deepest, None; 16-bit: always None
    assert len(set(depths)) > 3 if fp8 else set(depths) == {None}
    for ctas in range(1, 300):
        first = 1 + depths.index(depths[ctas - 1])
        assert _fewest_ctas(ctas, fp8, 132) == first, ctas


@pytest.mark.parametrize("rows", [32, 96, 256, 128.0, True])
def test_a_swapped_stream_k_tile_of_other_rows_is_refused_by_name(rows):
    with pytest.raises(TiledMmaError, match=r"swapped_kernel rows=.*64 rows .* or 128"):
        swapped_kernel(166, 6000, 42432, "bf16", 132, False, rows)


@pytest.mark.parametrize("majors", [("N", "K"), ("K", "M"), "KN", ("K",)])
def test_builds_refuses_majors_it_does_not_know_by_name(majors):
    from cutemma.kernels.space import builds

    with pytest.raises(TiledMmaError, match=r"builds majors=.*A 'K' or 'M', B 'K' or 'N'"):
        builds(Sm90Config(128, 128), "bf16", majors)


def test_numpy_counts_give_the_plain_ints_picks():
    """numpy's integers pass the checks as whole numbers, so they must pick as the same ints
    do: a numpy m of 257-2048 rows once reached the mid-size swapped kernel's token check
    unconverted and was refused there, unless the plain call had been cached first."""
    import numpy as np

    from cutemma.kernels import pick

    for m in (300, 1500):
        got = pick.builtin_sm90_config(np.int64(m), np.int32(8192), 8192, swap=True, kind="h200")
        assert got == pick.builtin_sm90_config(m, 8192, 8192, swap=True, kind="h200")
    assert candidates(np.int64(300), 8192, 8192, "bf16") == candidates(300, 8192, 8192, "bf16")
