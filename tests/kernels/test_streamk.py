"""Stream-K (issue 21): the schedule the kernel runs, checked by compiling its own device
helpers with g++ for every CTA of a grid, and the fix-up's protocol on those pieces; the
kernel text and its SASS (NVRTC, no GPU); the config rules; the swapped kernels.

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
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.sm90.streamk import HELPERS_STREAMK, SPLIT_MAX, sk_split
from cutemma.kernels.space import IN_FLIGHT_BYTES, RING_FLOOR, candidates, swapped_kernel

HARNESS = r"""
#include <cstdio>
#include <algorithm>
#define __device__
#define __forceinline__ inline
#define __noinline__
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
      const int sk_b = sk_block(sk_tiles, sk_ctas, tiles);  // as unit_loop() opens
      SkUnit u = sk_start(sk_tiles, sk_ctas, k_total, sk_b);
      const int units = sk_units(u, tiles, k_total);  // what the kernel loops over
      int walked = 0;
      while (sk_next(u, tiles, k_total)) {
        std::printf("%%d %%d %%d %%d %%d\n", sk_b, u.tile, u.k_lo, u.k_count, b);
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

    def run(cases, blocks=False):
        """(share, tile, k_lo, k_count) per piece (the share index: the CTA's slot and flag,
        streamk.sk_block), with the CTA's blockIdx.x last where ``blocks``."""
        text = "\n".join(" ".join(map(str, c)) for c in cases) + "\n"
        out = subprocess.run([exe], input=text, capture_output=True, text=True, check=True)
        runs, cur = [], []
        for line in out.stdout.splitlines():
            assert not line.startswith("units"), f"sk_units disagrees with sk_next: {line}"
            if line == "end":
                runs.append(cur)
                cur = []
            else:
                cur.append(tuple(map(int, line.split()))[: 5 if blocks else 4])
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


@pytest.mark.parametrize(
    ("tiles", "k_total", "per"), [(6, 65, 4), (2, 33, 16), (12, 17, 11), (9, 708, 14)]
)
def test_every_tile_shared_in_chunks_runs_chunk_major(schedule, tiles, k_total, per):
    """Every tile shared, ``per`` CTAs to a tile: CTAs ``j * tiles .. (j + 1) * tiles - 1``
    take chunk ``j`` of tiles 0, 1, ... (neighbours on the same lines of A or B start side
    by side); a grid that takes whole tiles first keeps its CTAs' own shares."""
    grid, ctas = 132, tiles * per
    (pieces,) = schedule([(tiles, k_total, grid, tiles, ctas)], blocks=True)
    chunks = sorted({lo for _, _, lo, _, _ in pieces})
    for share, tile, lo, _, b in pieces:
        assert (tile, chunks.index(lo)) == (b % tiles, b // tiles), (b, tile, lo)
        assert share == tile * per + chunks.index(lo)  # the slot the owner's walk reads
    (mixed,) = schedule([(tiles + grid, k_total, grid, tiles, ctas)], blocks=True)
    assert all(share == b for share, *_, b in mixed)


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
    assert "if (k_lo == 0) {" in src and "st_release_u64(sk_flags + sk_b, sk_epoch)" in src
    assert src.count("const int sk_b = sk_block(sk_tiles, sk_ctas, tiles);") == 2
    fix = src[src.index("stream-K: not the tile's first piece") :]
    assert "blockIdx" not in fix[: fix.index("the tile's owner stores it")]  # slots by share
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
        # a split: the fix-up together (its non-owners' adds) beside the serial one
        (Sm90Config(128, 256, stream_k=True, split=16), "bf16", "K", "N"),
        (Sm90Config(128, 192, promote="split", stream_k=True, split=8), "e4m3", "K", "K"),
        (Sm90Config(64, 128, consumers=1, stream_k=True, split=4), "bf16", "K", "K"),
        (replace(swapped_kernel(16, 8192, 8192, "bf16", 132, False), split=16), "bf16", "M", "K"),
        (swapped_kernel(16, 8192, 8192, "bf16", 132, False), "bf16", "M", "K"),
        (swapped_kernel(1, 10240, 8192, "bf16", 132, True), "bf16", "M", "K"),
        (swapped_kernel(64, 8192, 8192, "e4m3", 132, False), "e4m3", "K", "K"),
        (swapped_kernel(40, 10240, 8192, "e4m3", 132, True), "e4m3", "K", "K"),  # whole tiles
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


def test_swapped_kernels_are_64_rows_shared_or_128_rows_whole():
    """A swapped kernel holds every token in one tile column (a multiple of wgmma's N step
    8, at least 16): 64-row tiles of one warpgroup shared by stream-K, or 128-row tiles of
    two run whole."""
    for m in (1, 7, 8, 9, 16, 33, 64, 65, 100, 200, 256):
        for n in (4096, 10240, 57344):
            for dtype in ("bf16", "f16", "e4m3"):
                for whole in (False, True):
                    try:
                        cfg = swapped_kernel(m, n, 8192, dtype, 132, whole)
                    except TiledMmaError:  # wide token tiles: the ring outgrows smem
                        assert m > 64
                        continue
                    got = (cfg.block_m, cfg.consumers, cfg.stream_k, cfg.swap_ab)
                    assert got == ((128, 2, False, True) if whole else (64, 1, True, True))
                    assert cfg.block_n >= max(m, 16) and cfg.block_n % 8 == 0
                    assert cfg.block_n - m < 8 or cfg.block_n == 16


@pytest.mark.parametrize("n", [256, 4096, 8192, 10240, 14336, 28672, 57344])
@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
@pytest.mark.parametrize("whole", [False, True])
def test_swapped_rings_hold_about_the_in_flight_bytes(n, dtype, whole):
    """fp8: the weights requested over the grid (stages x a tile's weight bytes x CTAs)
    stay within a stage of space.IN_FLIGHT_BYTES, unless the ring is at its floor
    (space.RING_FLOOR) or at the plan's own depth (stages None: the plan holds fewer bytes
    than the rule asks). 16-bit: the plan's own depth, as deep as fits."""
    from cutemma.kernels.sm90.plan import Sm90Plan

    cfg = swapped_kernel(16, n, 8192, dtype, 132, whole)
    es = 1 if dtype == "e4m3" else 2
    if es == 2:
        assert cfg.stages is None, cfg.name
        return
    k_bytes = cfg.block_k * es if cfg.block_k else 128
    ctas = 132 if cfg.stream_k else min(-(-n // cfg.block_m), 132)
    per_stage = cfg.block_m * k_bytes * ctas
    stages = Sm90Plan(cfg, dtype, "K" if es == 1 else "M", "K", "bf16").stages
    if cfg.stages is None:
        assert stages * per_stage <= IN_FLIGHT_BYTES + per_stage / 2
    elif cfg.stages > RING_FLOOR:
        assert abs(stages * per_stage - IN_FLIGHT_BYTES) <= per_stage / 2
    else:  # (the floor holds more than the rule asks)
        assert cfg.stages == RING_FLOOR and stages * per_stage > IN_FLIGHT_BYTES - per_stage / 2


@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_a_swapped_kernel_whose_ring_outgrows_smem_takes_a_shallower_one(dtype):
    """Every token tile's swapped kernel builds (its ring and staging tile fit shared
    memory, space.builds) wherever its sums fit registers: fp8's ring of 256-byte k tiles
    is at most the in-flight rule's depth and at least space.RING_FLOOR, one stage
    shallower at a time where a wide token tile's staging tile takes the room; where not
    even the floor fits, 128-byte k tiles whose ring holds at most the rule's bytes and
    more stages than the floor (raw/fp8-k128-ring-ab-drawn-h200.json); 16-bit's is the
    plan's (as many as fit)."""
    from cutemma.kernels.space import FP8_BLOCK_K, builds, fits, stream_stages

    shallower = narrower = 0
    for tokens in range(16, 257, 8):
        for n in (4096, 14336, 57344):
            for whole in (False, True):
                cfg = swapped_kernel(tokens, n, 8192, dtype, 132, whole)  # (refused: raises)
                if not fits(cfg, dtype):
                    continue
                assert builds(cfg, dtype), cfg.name
                ctas = min(-(-n // cfg.block_m), 132) if whole else 132
                rule = stream_stages(cfg.block_m, ctas, dtype == "e4m3")
                if rule is None:
                    assert dtype == "e4m3" or cfg.stages is None, cfg.name
                elif cfg.block_k == FP8_BLOCK_K:
                    assert RING_FLOOR <= cfg.stages <= rule, cfg.name
                    shallower += cfg.stages < rule
                else:  # 128-byte k tiles: the 256-byte ring would sit under the floor
                    assert cfg.block_k is None and RING_FLOOR < cfg.stages, cfg.name
                    assert cfg.stages * 128 <= rule * FP8_BLOCK_K, cfg.name
                    narrower += 1
    assert dtype == "bf16" or (shallower and narrower)  # fp8's wide token tiles need both


def test_swapped_rings_of_the_measured_shapes():
    """The depths measured as fastest: fp8 64-row tiles shared by 132 SMs 4, 16-bit
    64-row tiles the plan's 8 (raw/decode-stages-run6.json); fp8 128-row tiles on 80 CTAs 3
    (against the plan's 8: raw/fp8-between-waves-run2.json); 16-bit 128-row tiles on 80
    CTAs the plan's 8 on the H200 (6 on the H100, raw/decode-stages-run6.json; 8 ran the
    70B decode step 0.5-0.9% faster in raw/decode-step-variants-h200.json)."""
    assert swapped_kernel(16, 8192, 8192, "e4m3", 132, False).stages == 4
    assert swapped_kernel(16, 10240, 8192, "bf16", 132, True).stages is None
    assert swapped_kernel(16, 10240, 8192, "e4m3", 132, True).stages == 3
    assert swapped_kernel(16, 8192, 8192, "bf16", 132, False).stages is None


@pytest.mark.parametrize("m", [*range(1, 65, 3), 64, 72, 128, 200, 256])
@pytest.mark.parametrize(("n", "dtype", "a"), [(8192, "bf16", "M"), (14336, "f16", "K"),
                                              (8192, "e4m3", "K")])  # fmt: skip
def test_every_swapped_kernel_plans(m, n, dtype, a):
    """Every token width of both row counts has a plan (its smem, its epilogue) for the
    swapped operands (A' = B^T: M-major for 16-bit row-major B; B' = A^T K-major)."""
    from cutemma.kernels.sm90.plan import Sm90Plan

    out = "f16" if dtype == "f16" else "bf16"
    swapped = [c for c in candidates(m, n, 4096, dtype) if c.swap_ab]
    tilings = {(c.block_m, c.stream_k) for c in swapped}  # (stream-K's with each split)
    assert tilings == {(64, True), (128, False)} or m > 64  # (wide tokens: smem, registers)
    for cfg in swapped:
        plan = Sm90Plan(cfg, dtype, a, "K", out)
        # D^T is column-major: stored through an MN-major staging tile ("tmat")
        assert plan.tma_store and plan.d_major == "MN" and plan.stages >= 2


def test_no_swap_past_swap_max_m_rows_for_tf32_or_a_batch():
    from cutemma.kernels.space import SWAP_MAX_M

    assert any(c.swap_ab for c in candidates(SWAP_MAX_M, 8192, 8192, "bf16"))
    # (past SWAP_MAX_M rows only 16-bit calls swap)
    assert not any(c.swap_ab for c in candidates(SWAP_MAX_M + 1, 8192, 8192, "e4m3"))
    assert any(c.swap_ab for c in candidates(SWAP_MAX_M + 1, 8192, 8192, "bf16"))
    assert not any(c.swap_ab for c in candidates(8, 8192, 8192, "tf32"))
    assert not any(c.swap_ab for c in candidates(8, 8192, 8192, "bf16", batch=2))


def test_a_swapped_config_refuses_batches_and_a_residual():
    """swap_ab runs D^T = B^T A^T of a 2-D call whose fused ops each have a transposed twin:
    a batch or a residual (a matrix read by D's rows) is refused by name (the policy's
    choice for a call record of CPU tensors that asks for the config)."""
    import types

    from cutemma.errors import LaunchError
    from cutemma.kernels.epilogue import bind
    from cutemma.kernels.policy import choose

    torch = pytest.importorskip("torch")
    cfg = swapped_kernel(16, 256, 256, "bf16", 132, False)
    A, B = torch.zeros(16, 256, dtype=torch.bfloat16), torch.zeros(256, 256, dtype=torch.bfloat16)
    res = bind(("residual",), {"residual": torch.zeros(16, 256)}, 16, 256, torch.device("cpu"))
    for batch, epi in ((3, None), (None, res)):
        call = types.SimpleNamespace(batch=batch, epilogue=epi, A=A, B=B, M=16, N=256, K=256,
                                     dtype="bf16", arch="sm_90a", sms=132, device=0,
                                     design=None, config=cfg, C=None, a_major="K", b_major="N")  # fmt: skip
        with pytest.raises(LaunchError, match="swaps A and B, which runs 2-D calls"):
            choose(call)


def test_the_space_offers_stream_k_for_2d_calls_only():
    """Each tile of a 2-D call comes whole and as stream-K (320 wide only whole: its
    stream-K kernel spills); a batch takes whole tiles only."""
    two_d = candidates(4096, 8192, 28672, "e4m3")
    assert {c.block_n for c in two_d if c.stream_k} == {c.block_n for c in two_d if not c.stream_k}
    assert not any(c.stream_k for c in candidates(4096, 8192, 28672, "e4m3", batch=2))
    wide = [c for c in candidates(4096, 10240, 8192, "bf16") if c.block_n == 320]
    assert wide and not any(c.stream_k for c in wide)


def test_split_caps_the_ctas_per_shared_tile_and_aligns_them():
    """Sm90Config.split: at most that many CTAs share each shared tile, sk_ctas a whole
    multiple of sk_tiles (the probe raw/sk-split-cap-run1.json ran 4-8 per tile 1.3-3.5x
    faster than the whole grid's 16-33 on few-tile long-K calls); the kernel is the same."""
    from cutemma.kernels.sm90.host import kernel_key

    for tiles_m, tiles_n, k_tiles in ((1, 8, 198), (3, 5, 712), (2, 7, 3), (4, 40, 128)):
        for split in (2, 4, 8, 16):
            sk, ctas = sk_split(tiles_m, tiles_n, k_tiles, 132, split)
            if sk:
                per = ctas // sk
                assert ctas % sk == 0 and 1 <= per <= min(split, k_tiles) and ctas <= 132
    assert sk_split(1, 8, 198, 132, 4) == (8, 32) and sk_split(1, 8, 198, 132) == (8, 132)
    keys = {s: kernel_key(Sm90Config(stream_k=True, split=s), "bf16", "K", "K", "bf16", "bf16").name
            for s in (None, 4, 8, 16)}  # fmt: skip
    # every split one kernel (the fix-up together where its launch allows), None another
    assert len({keys[4], keys[8], keys[16]}) == 1 and keys[None] != keys[4]
    assert Sm90Config(stream_k=True, split=4).name.endswith("_sk4")
    for bad in ({"split": 4}, {"stream_k": True, "split": 1}, {"stream_k": True, "split": "4"}):
        with pytest.raises(TiledMmaError, match="split"):
            Sm90Config(**bad)


def test_configs_hash_once_and_pickle_without_their_hash():
    import pickle

    a, b = (
        Sm90Config(128, 256, stream_k=True, split=4),
        Sm90Config(128, 256, stream_k=True, split=4),
    )
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    c = pickle.loads(pickle.dumps(a))
    assert c == a and "_hash" not in c.__dict__ and hash(c) == hash(a)
    assert a != Sm90Config(128, 256, stream_k=True, split=8)


def test_only_split_kernels_add_together_and_each_flag_has_a_thread():
    """The fix-up together (streamk._fixup_together) is in a split's kernel only, behind
    the launch's own check (whole tiles' chunks, TOGETHER_MIN or more to a tile); its waits
    poll one flag per thread (one after another, each acquire is a round trip to L2); the
    serial fix-up stays as its fallback."""
    from cutemma.kernels.sm90.streamk import TOGETHER_MIN

    plain = sk_source(Sm90Config(128, 128, stream_k=True))
    split = sk_source(Sm90Config(128, 128, stream_k=True, split=8))
    guard = f"if (sk_ctas % sk_tiles == 0 && sk_per >= {TOGETHER_MIN} && k_tiles < k_total)"
    assert guard in split and "sk_per" not in plain
    assert split.count("for (int q = tid; q < parts; q += 256)") == 1
    assert "for (int q = g0 + 1 + tid; q < g0 + sk_per; q += 256)" in split
    assert "for (int peer = sk_b + 1; next < tile_end; ++peer)" in split  # the fallback
