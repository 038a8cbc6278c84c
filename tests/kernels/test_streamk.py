"""Stream-K (issue 21): the schedule the kernel runs, checked by compiling its own device
helpers with g++ for every CTA of a grid, and the fix-up's protocol on those pieces; the
kernel text and its SASS (NVRTC, no GPU); the config rules; the decode picker.

The schedule is the kernel's text (``HELPERS_STREAMK``: ``sk_start``, ``sk_next``,
``sk_share_end``) run on the CPU with ``blockIdx``/``gridDim`` as plain variables, so what is
checked is what runs on the GPU. The fix-up's rules (a CTA hands over at most one partial,
its first piece, after its whole tiles; an owner's walk of ``b + 1, b + 2, ...`` meets exactly the tile's other
pieces, in k order, and never waits on a CTA without a piece) are the deadlock- and
determinism-freedom arguments of :mod:`cutemma.kernels.sm90.streamk`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import replace

import pytest

from cutemma.errors import TiledMmaError
from cutemma.kernels.decode import decode_config
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.sm90.streamk import HELPERS_STREAMK, SPLIT_MAX, sk_split

HARNESS = r"""
#include <cstdio>
#include <algorithm>
#define __device__
#define __forceinline__ inline
struct Dim { unsigned x; };
static Dim blockIdx, gridDim;
using std::min;
%s
int main() {
  int tiles, k_total, grid, sk_tiles, sk_ctas;
  while (std::scanf("%%d %%d %%d %%d %%d", &tiles, &k_total, &grid, &sk_tiles, &sk_ctas) == 5) {
    gridDim.x = grid;
    for (int b = 0; b < grid; ++b) {
      blockIdx.x = b;
      SkUnit u = sk_start(sk_tiles, sk_ctas, k_total);
      const int units = sk_units(u, tiles, k_total);  // what the kernel loops over
      int walked = 0;
      while (sk_next(u, tiles, k_total)) {
        std::printf("%%d %%d %%d %%d\n", b, u.tile, u.k_lo, u.k_count);
        ++walked;
      }
      if (walked != units) std::printf("units %%d %%d %%d\n", b, units, walked);
    }
    std::printf("end\n");
  }
}
"""


@pytest.fixture(scope="module")
def schedule():
    """run(cases) -> per case, the pieces (cta, tile, k_lo, k_count) the kernel's helpers make."""
    cxx = os.environ.get("CXX") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++")
    d = tempfile.mkdtemp()
    src, exe = os.path.join(d, "sk.cpp"), os.path.join(d, "sk")
    with open(src, "w") as f:
        f.write(HARNESS % HELPERS_STREAMK)
    subprocess.run([cxx, "-O1", "-std=c++17", src, "-o", exe], check=True)

    def run(cases):
        text = "\n".join(" ".join(map(str, c)) for c in cases) + "\n"
        out = subprocess.run([exe], input=text, capture_output=True, text=True, check=True)
        runs, cur = [], []
        for line in out.stdout.splitlines():
            assert not line.startswith("units"), f"sk_units disagrees with sk_next: {line}"
            if line == "end":
                runs.append(cur)
                cur = []
            else:
                cur.append(tuple(map(int, line.split())))
        return runs

    return run


def share_end(b, iters, ctas):
    return iters if b >= ctas else iters * (b + 1) // ctas


def owner_walk(b, tile, k_count, k_total, iters, ctas):
    """The CTAs an owner waits for, as the fix-up's loop visits them (skipping empty shares)."""
    peers, nxt, peer = [], tile * k_total + k_count, b + 1
    while nxt < (tile + 1) * k_total:
        pend = share_end(peer, iters, ctas)
        if pend != nxt:
            peers.append(peer)
            nxt = pend
        peer += 1
    return peers


# (tiles_m, tiles_n, k_total, grid): decode's single tile column, mid sizes' grids of tiles
CASES = [(80, 1, 128, 132), (4, 40, 128, 132), (2, 64, 448, 132), (7, 128, 128, 132),
         (4, 54, 128, 132), (3, 1, 2, 132), (1, 1, 1, 132), (7, 1, 5, 3), (300, 1, 64, 132),
         (2, 132, 64, 132), (1, 40, 1, 132), (7, 19, 17, 132), (8, 40, 128, 132),
         (16, 43, 448, 132), (10, 100, 3, 7), (5, 27, 2, 132)]  # fmt: skip


def policy_cases(policy):
    for tm, tn, k_total, grid in CASES:
        tiles = tm * tn
        sk, ctas = {
            "picked": sk_split(tm, tn, k_total, grid),
            "all": (tiles, grid),
            "some": (tiles // 3, grid),
            "split": (tiles % grid, min(grid, (tiles % grid) * 3)),
        }[policy]
        yield tiles, k_total, grid, sk, ctas


@pytest.mark.parametrize("policy", ["picked", "all", "some", "split"])
def test_pieces_cover_every_iteration_once_and_the_fixup_meets_each(schedule, policy):
    cases = list(policy_cases(policy))
    for (tiles, k_total, grid, sk, ctas), pieces in zip(cases, schedule(cases), strict=True):
        seen = {}
        for b, tile, lo, count in pieces:
            assert count >= 1 and 0 <= lo and lo + count <= k_total and 0 <= tile < tiles
            for k in range(lo, lo + count):
                assert (tile, k) not in seen, (tiles, k_total, grid, sk, tile, k)
                seen[tile, k] = b
        assert len(seen) == tiles * k_total  # every (tile, k) exactly once
        iters = sk * k_total
        partial_of = {}  # a non-owner piece: (tile, k_lo) -> the CTA whose slot holds it
        firsts = {}
        for b, tile, lo, _ in pieces:
            if tile < sk:  # a piece of the share (whole tiles come first)
                firsts.setdefault(b, (tile, lo))
            if lo > 0:
                assert tile < sk, "a whole tile is never cut"
                assert firsts[b] == (tile, lo), "a CTA hands over only its first piece"
                assert b not in partial_of.values()
                partial_of[tile, lo] = b
        for b, tile, lo, count in pieces:
            if lo == 0 and count < k_total:  # an owner: it adds exactly the tile's other pieces
                want = sorted((k, c) for (t, k), c in partial_of.items() if t == tile)
                walk = owner_walk(b, tile, count, k_total, iters, ctas)
                assert walk == [c for _, c in want], (tiles, k_total, grid, sk, b, tile)
                assert all(c > b for c in walk)  # waits only on later CTAs, which never wait
        owners = {t for _, t, lo, c in pieces if lo == 0 and c < k_total}
        assert {t for t, _ in partial_of} <= owners  # every partial is consumed
        for b in {b for b, *_ in pieces}:  # whole tiles first, then the share
            mine = [(t, lo, c) for bb, t, lo, c in pieces if bb == b]
            whole = [i for i, (t, _, _) in enumerate(mine) if t >= sk]
            assert whole == list(range(len(whole)))


@pytest.mark.parametrize(("tm", "tn", "k_total", "grid"), CASES)
def test_the_shared_tiles_leave_whole_waves(tm, tn, k_total, grid):
    tiles = tm * tn
    sk, ctas = sk_split(tm, tn, k_total, grid)
    assert 0 <= sk <= tiles and 1 <= ctas <= grid
    if sk == 0:  # no stream-K: the whole tiles fill their last wave to FULL_WAVE
        assert tiles / (-(-tiles // grid) * grid) >= 0.95
    else:
        assert (tiles - sk) % grid == 0  # the rest run as whole waves


@pytest.mark.parametrize(("tm", "tn", "k_total", "grid"), [c for c in CASES if min(c[:2]) > 1])
def test_a_grid_of_tiles_splits_its_last_wave_into_aligned_chunks(schedule, tm, tn, k_total, grid):
    """Several waves of a grid of tiles: each tile of the last partial wave is cut into the
    same k chunks (so tiles that share an operand slice read it at the same time), one per
    CTA, at most SPLIT_MAX, and no whole wave is cut."""
    tiles = tm * tn
    sk, ctas = sk_split(tm, tn, k_total, grid)
    if tiles <= grid or sk == 0:
        return
    assert sk == tiles % grid and ctas % sk == 0 and ctas // sk <= SPLIT_MAX
    (pieces,) = schedule([(tiles, k_total, grid, sk, ctas)])
    shared = [p for p in pieces if p[1] < sk]
    cuts = {t: sorted((lo, c) for _, tt, lo, c in shared if tt == t) for t in range(sk)}
    assert len({tuple(v) for v in cuts.values()}) == 1  # the same chunks in every tile
    per_cta = [b for b, *_ in shared]
    assert sorted(per_cta) == list(range(ctas))  # one chunk per sharing CTA


def test_sk_split_refuses_nonsense():
    with pytest.raises(TiledMmaError, match="each must be >= 1"):
        sk_split(0, 4, 4, 132)


def sk_source(cfg=None, dtype="bf16", a="K", b="N"):
    from cutemma.kernels.sm90.source import gemm_sm90_source

    return gemm_sm90_source(cfg or Sm90Config(128, 128, stream_k=True), dtype, a, b, "bf16")


def test_the_kernel_walks_pieces_and_only_owners_store():
    src = sk_source()
    assert src.count("for (int unit = 0; unit < units; ++unit)") == 2  # producer, consumers
    assert "(k_lo + kt) * BLOCK_K" in src  # a piece's k tiles start at k_lo
    assert "if (k_lo == 0) {" in src and "st_release_u64(sk_flags + blockIdx.x, sk_epoch)" in src
    plain = sk_source(Sm90Config(128, 128))
    assert "sk_next" not in plain and "k_lo" not in plain


def k_loop(text: str) -> tuple[list[str], list[str]]:
    """(the consumers' k loop, every instruction line) of a kernel's SASS: the GMMAs and the
    shortest backward branch around one of them (the k loop, not the persistent loop)."""
    lines = [ln for ln in text.splitlines() if re.search(r"/\*[0-9a-f]{4,}\*/", ln)]
    addr = [int(re.search(r"/\*([0-9a-f]{4,})\*/", ln).group(1), 16) for ln in lines]
    at = {a: i for i, a in enumerate(addr)}
    gmma = [i for i, ln in enumerate(lines) if "GMMA" in ln]
    back = [
        (at[int(m.group(1), 16)], i)
        for i, ln in enumerate(lines)
        if (m := re.search(r"BRA\S* (0x[0-9a-f]+)", ln)) and int(m.group(1), 16) in at
    ]
    loops = [(i - t, t, i) for t, i in back if t < i and any(t <= g <= i for g in gmma)]
    _, t, i = min(loops)
    return lines[min(t, *gmma) : max(i, *gmma) + 1], lines


def opcode_count(lines: list[str], op: str) -> int:
    return sum(bool(re.search(rf"\*/\s+(@!?U?P\w+\s+)?{op}\b", ln)) for ln in lines)


@pytest.mark.parametrize(
    ("cfg", "dtype", "a", "b"),
    [
        (Sm90Config(128, 128, stream_k=True), "bf16", "K", "N"),
        (Sm90Config(128, 256, stream_k=True), "bf16", "K", "N"),
        (Sm90Config(128, 192, promote="split", stream_k=True), "e4m3", "K", "K"),
        (Sm90Config(128, 128, promote="overlap", stream_k=True), "e4m3", "K", "K"),
        (decode_config(16, 8192, 8192, "bf16"), "bf16", "M", "K"),
        (decode_config(1, 10240, 8192, "bf16"), "bf16", "M", "K"),
        (decode_config(64, 8192, 8192, "e4m3"), "e4m3", "K", "K"),
        (decode_config(40, 10240, 8192, "e4m3"), "e4m3", "K", "K"),  # 128-row whole tiles
    ],
)
def test_stream_k_kernels_compile_without_local_memory(cfg, dtype, a, b):
    """No local memory (the 128x256 and 128x192 fp8 tiles spilled a few values while the
    unit loop left the uniform datapath); a kernel with a staging tile adds peers' slots
    through it (bulk copies, UBLKCP)."""
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass

    src = sk_source(cfg, dtype, a, b)
    cubin = compile(src, "sm_90a")
    use = local_memory_use(cubin)
    assert (use.local_bytes or 0) + (use.stack_bytes or 0) == 0
    counts = count_instructions(sass(cubin))
    assert counts.get("HGMMA", 0) + counts.get("QGMMA", 0) > 0
    assert (counts.get("UBLKCP", 0) >= 2) == ("bulk_load(d_smem" in src)


@pytest.mark.parametrize(
    ("kw", "dtype", "b"),
    [({}, "e4m3", "K"), ({"block_n": 192, "promote": "split"}, "e4m3", "K"),
     ({"block_n": 256}, "bf16", "N")],
)  # fmt: skip
def test_the_stream_k_mainloop_is_the_plain_kernels(kw, dtype, b):
    """The k loop of a stream-K kernel issues its wgmma as the plain kernel does: descriptor
    arithmetic on the uniform datapath (as many R2UR), no WARPSYNC (the compiler knows the
    warp is converged). A unit loop that exits on sk_next's answer lost both (fp8 7-13%
    slower, raw/sk-probe-aligned-run4.json)."""
    from cutemma.cuda import compile, sass

    loops = {}
    for sk in (False, True):
        src = sk_source(Sm90Config(128, **{"block_n": 128, **kw}, stream_k=sk), dtype, "K", b)
        loops[sk], _ = k_loop(sass(compile(src, "sm_90a")))
    assert opcode_count(loops[True], "WARPSYNC") == opcode_count(loops[False], "WARPSYNC") == 0
    assert opcode_count(loops[True], "R2UR") == opcode_count(loops[False], "R2UR")
    gmma = "QGMMA" if dtype == "e4m3" else "HGMMA"
    assert opcode_count(loops[True], gmma) == opcode_count(loops[False], gmma) > 0


@pytest.mark.parametrize(
    ("kw", "why"),
    [
        ({"schedule": "pingpong"}, "stream_k with schedule='cooperative'"),
        ({"cluster": 2}, "stream_k with schedule='cooperative' and cluster=1"),
        ({"stream_k": "yes"}, "stream_k 'yes' True or False"),
    ],
)
def test_stream_k_config_rules(kw, why):
    with pytest.raises(TiledMmaError, match=why):
        Sm90Config(128, 128, **({"stream_k": True} | kw))


def test_batched_stream_k_is_refused():
    from cutemma.kernels.sm90.source import gemm_sm90_source

    with pytest.raises(TiledMmaError, match="stream_k is for 2-D kernels"):
        gemm_sm90_source(Sm90Config(stream_k=True), "bf16", "K", "N", "bf16", batched=True)


@pytest.mark.parametrize(
    ("m", "n", "dtype", "rows", "tokens", "consumers", "shared"),
    [
        (1, 8192, "bf16", 64, 16, 1, True),
        (16, 10240, "bf16", 128, 16, 2, False),  # 80 tiles under a wave: whole (run 9)
        (33, 57344, "f16", 64, 40, 1, True),
        (64, 8192, "e4m3", 64, 64, 1, True),
        (9, 10240, "e4m3", 128, 16, 2, False),  # between waves: as 16-bit (fp8 run 2)
        (40, 14336, "e4m3", 128, 40, 2, False),
        (64, 8192, "f16", 64, 64, 1, True),
    ],  # fmt: skip
)
def test_decode_config_follows_the_measured_rules(m, n, dtype, rows, tokens, consumers, shared):
    cfg = decode_config(m, n, 8192, dtype)
    got = (cfg.block_m, cfg.block_n, cfg.consumers, cfg.stream_k, cfg.swap_ab)
    assert got == (rows, tokens, consumers, shared, True)
    assert cfg.block_n >= m  # every token in one tile column
    # 64-row tiles never between one and two waves
    assert -(-n // cfg.block_m) <= 132 or -(-n // cfg.block_m) >= 264 or rows == 128


@pytest.mark.parametrize("n", [256, 4096, 8192, 10240, 14336, 28672, 57344])
@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_decode_rings_hold_about_the_in_flight_bytes(n, dtype):
    """The weights requested over the grid (stages x a tile's weight bytes x CTAs) stay
    within a stage of decode.IN_FLIGHT_BYTES, unless the ring is at its floor (2) or at the
    plan's own depth (stages None: the plan holds fewer bytes than the rule asks)."""
    from cutemma.kernels import decode
    from cutemma.kernels.sm90.plan import Sm90Plan

    cfg = decode_config(16, n, 8192, dtype)
    es = 1 if dtype == "e4m3" else 2
    k_bytes = cfg.block_k * es if cfg.block_k else 128
    ctas = 132 if cfg.stream_k else min(-(-n // cfg.block_m), 132)
    per_stage = cfg.block_m * k_bytes * ctas
    stages = Sm90Plan(cfg, dtype, "K" if es == 1 else "M", "K", "bf16").stages
    if cfg.stages is None:
        assert stages * per_stage <= decode.IN_FLIGHT_BYTES + per_stage / 2
    elif cfg.stages > 2:
        assert abs(stages * per_stage - decode.IN_FLIGHT_BYTES) <= per_stage / 2


def test_decode_rings_of_the_measured_shapes():
    """The depths measured as fastest: fp8 64-row tiles shared by 132 SMs 4, 16-bit
    128-row tiles on 80 CTAs 6, 16-bit 64-row tiles the plan's 8 (raw/decode-stages-run6.json);
    fp8 128-row tiles on 80 CTAs 3 (against the plan's 8: raw/fp8-between-waves-run2.json)."""
    assert decode_config(16, 8192, 8192, "e4m3").stages == 4
    assert decode_config(16, 10240, 8192, "bf16").stages == 6
    assert decode_config(16, 10240, 8192, "e4m3").stages == 3
    assert decode_config(16, 8192, 8192, "bf16").stages is None


@pytest.mark.parametrize("m", range(1, 65))
@pytest.mark.parametrize(("n", "dtype", "a"), [(8192, "bf16", "M"), (14336, "f16", "K"),
                                              (8192, "e4m3", "K")])  # fmt: skip
def test_every_decode_config_plans(m, n, dtype, a):
    """Every token width of both row counts has a plan (its smem, its epilogue) for the
    swapped operands (A' = B^T: M-major for 16-bit row-major B; B' = A^T K-major)."""
    from cutemma.kernels.sm90.plan import Sm90Plan

    plan = Sm90Plan(
        decode_config(m, n, 4096, dtype), dtype, a, "K", "f16" if dtype == "f16" else "bf16"
    )
    assert not plan.tma_store and plan.stages >= 4


def test_no_swap_past_decode_or_for_tf32():
    assert decode_config(65, 8192, 8192, "bf16") is None
    assert decode_config(8, 8192, 8192, "tf32") is None


def test_a_swapped_config_refuses_batches_and_fused_epilogues():
    """swap_ab runs D^T = B^T A^T of a 2-D call: a batch or a fused epilogue is refused by
    name (the policy's choice for a call record of CPU tensors that asks for the config)."""
    import types

    from cutemma.errors import LaunchError
    from cutemma.kernels.policy import choose

    torch = pytest.importorskip("torch")
    cfg = decode_config(16, 256, 256, "bf16")
    A, B = torch.zeros(16, 256, dtype=torch.bfloat16), torch.zeros(256, 256, dtype=torch.bfloat16)
    for batch, epi in ((3, None), (None, object())):
        call = types.SimpleNamespace(batch=batch, epilogue=epi, A=A, B=B, M=16, N=256, K=256,
                                     dtype="bf16", arch="sm_90a", sms=132, device=0,
                                     design=None, config=cfg, C=None, a_major="K", b_major="N")  # fmt: skip
        with pytest.raises(LaunchError, match="swaps A and B, which runs 2-D calls"):
            choose(call)


def test_the_picker_takes_stream_k_where_its_waves_say_so():
    """builtin_sm90_config picks stream-K for a single grid of tiles whose last wave is
    partial, when the cut last wave (whole waves + 1/split + pick.SK_WAVES) beats whole
    waves; never for batches, short K, a single tile row, or full waves."""
    from cutemma.kernels.pick import LONG_K, SK_WAVES, builtin_sm90_config

    # (4096, 8192, 28672) e4m3 at 128x192: 1376 tiles, 10 waves + 56 tiles cut in 2 chunks
    cfg = builtin_sm90_config(4096, 8192, 132, "e4m3", 1, 28672)
    assert (cfg.block_n, cfg.promote, cfg.stream_k) == (192, "split", True)
    assert not builtin_sm90_config(2048, 8192, 132, "e4m3", 2, 28672).stream_k  # a batch
    assert not builtin_sm90_config(2048, 8192, 132, "e4m3", 1, LONG_K - 1).stream_k
    assert not builtin_sm90_config(2048, 8192, 132, "e4m3").stream_k  # K unknown
    assert not builtin_sm90_config(128, 57344, 132, "bf16", 1, 8192).stream_k  # one tile row
    assert not builtin_sm90_config(8192, 8192, 132, "bf16", 1, 8192).stream_k  # 68 left: uncut
    for m in (256, 512, 1024, 2048, 4096):
        for n in (8192, 10240, 28672, 57344):
            cfg = builtin_sm90_config(m, n, 132, "bf16", 1, 8192)
            if cfg.stream_k:
                tm, tn = -(-m // 128), -(-n // cfg.block_n)
                sk, ctas = sk_split(tm, tn, 8192 // 64, 132)
                assert (
                    sk
                    and tm * tn > 132
                    and tm * tn // 132 + sk / ctas + SK_WAVES < -(-tm * tn // 132)
                )


def test_fp8_128x128_takes_the_stream_k_kernel_wherever_stream_k_may_run():
    """pick.FP8_SK_KERNEL_SPEEDS: fp8's 128x128 tile runs as its stream-K kernel over more
    than a wave of tiles on one 2-D call with a long K, also where sk_split shares no tile
    (its whole tiles ran faster so); under a wave, with a batch or a short K it stays plain."""
    from cutemma.kernels.pick import FP8_SK_KERNEL_SPEEDS, LONG_K, builtin_sm90_config

    assert set(FP8_SK_KERNEL_SPEEDS) == {128}
    # (2048, 8192, 28672): 1024 tiles of 128x128, 97% of 8 waves: nothing shared
    assert sk_split(2048 // 128, 8192 // 128, 28672 // 128, 132) == (0, 132)
    cfg = builtin_sm90_config(2048, 8192, 132, "e4m3", 1, 28672)
    assert (cfg.block_n, cfg.promote, cfg.stream_k) == (128, "overlap", True)
    for m, batch, k in ((128, 1, 28672), (2048, 2, 28672), (2048, 1, LONG_K - 1)):
        cfg = builtin_sm90_config(m, 8192, 132, "e4m3", batch, k)
        assert not (cfg.block_n == 128 and cfg.stream_k), (m, batch, k, cfg.name)
    for m in (512, 1024, 2048, 4096, 8192):  # wherever 128x128 is picked over a wave
        for n in (8192, 10240, 28672, 57344):
            cfg = builtin_sm90_config(m, n, 132, "e4m3", 1, 8192)
            if cfg.block_n == 128 and (m // 128) * (n // 128) > 132:
                assert cfg.stream_k, cfg.name


def test_every_decode_call_swaps_and_between_waves_takes_whole_128_row_tiles():
    """Every M <= 64 of both families swaps. Where N/64 tiles would fall between one and
    two waves (N = 10240, 14336 on 132 SMs), the tiles are 128 rows, whole; elsewhere 64
    rows shared by stream-K (fp8: raw/fp8-between-waves-run2.json)."""
    for m in range(1, 65):
        for n, between in ((8192, False), (10240, True), (14336, True), (28672, False)):
            for dtype in ("bf16", "e4m3"):
                cfg = decode_config(m, n, 8192, dtype)
                got = (cfg.block_m, cfg.consumers, cfg.stream_k)
                assert got == ((128, 2, False) if between else (64, 1, True)), (m, n, cfg.name)


@pytest.mark.parametrize("dtype", ["bf16", "f16", "e4m3"])
def test_decode_alternatives_are_both_tilings_built_in_first(dtype):
    """cutemma.tune times both swapped tilings of a decode call: decode_config's first,
    then 128-row whole tiles where that shares 64-row tiles by stream-K, and the reverse;
    each builds a plan for the swapped problem."""
    from cutemma.kernels.decode import decode_alternatives
    from cutemma.kernels.sm90.plan import Sm90Plan

    majors = ("K", "K") if dtype == "e4m3" else ("M", "K")
    for m in (1, 16, 40, 64):
        for n in (4096, 10240, 28672):
            first, other = decode_alternatives(m, n, 8192, dtype)
            assert first == decode_config(m, n, 8192, dtype)
            tilings = {(c.block_m, c.consumers, c.stream_k) for c in (first, other)}
            assert tilings == {(64, 1, True), (128, 2, False)}, (first.name, other.name)
            assert first.block_n == other.block_n >= m and other.swap_ab
            Sm90Plan(replace(other, swap_ab=False), dtype, *majors, "bf16")
    assert decode_alternatives(65, 8192, 8192, dtype) == []
