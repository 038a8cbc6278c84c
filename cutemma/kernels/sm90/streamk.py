"""Stream-K for the sm90 GEMM (``Sm90Config(stream_k=True)``): the persistent CTAs take
whole tiles, then share the k iterations of the tiles a last partial wave would leave to
few SMs, so a grid of tiles that leaves the last wave mostly empty (decode: 80 tiles for
132 SMs; a mid-size call's last partial wave) keeps every SM busy to the end
(:func:`sk_split` chooses; notes/kernels-journal.md "Stream-K and swap-AB").

The work: every CTA ``b`` of the grid ``G`` takes tiles ``sk_tiles + b``, ``+ G``, ...
whole (the same count each); then the first ``sk_tiles`` tiles (tile order, grouped
raster) have ``I = sk_tiles * k_tiles`` k iterations, and share ``s`` of the first
``S = sk_ctas`` is iterations ``[s * I / S, (s + 1) * I / S)``, cut at tile boundaries
into *pieces*. CTA ``b`` takes share ``b``, but where every tile is shared in whole
tiles' k chunks (``sk_tiles == tiles``, ``S`` a multiple of it) it takes them chunk-major
(:data:`HELPERS_STREAMK`'s ``sk_block``: CTA ``j * sk_tiles + t`` takes chunk ``j`` of tile
``t``), so that the CTAs reading the same lines of A or B start side by side and L2's
request coalescer serves one read to several: on 16 drawn calls whose kernel that
changed, 1.015x as fast (up to 1.17x), and up to 1.26x on long-K calls of few tiles
(bench/results/raw/sk-chunk-major-*.json; raw/ncu-splitk-lrc-h200.csv for the coalescer).
A piece that starts a tile (``k_lo == 0``) belongs to the tile's *owner*; every other
piece is the first piece of its share (a share runs on from one tile into the next), so
each CTA hands over at most one partial tile: slot ``s`` of the workspace.

The fix-up is deterministic: a non-owner stores its f32 sums (thread-major float4s, the
accumulator fragment as it is) in its slot and releases its flag (``st.release.gpu``) with
the launch's epoch; the owner, whose piece is the last of its share, waits for the flags
of shares ``s + 1, s + 2, ...`` in that order and adds their slots in that order (the same
sums in the same order every run, no atomics): through the TMA-store staging tile when
the kernel has one (the TMA unit copies each slot into shared memory, chunk by chunk),
else by register loads. Then it runs the epilogue. The owner resets each flag it
consumed, so the flags are zero again when the launch ends (a CUDA graph replays with the
same epoch). All CTAs are resident (the grid is at most one CTA per SM), and a CTA hands
its partial over before it waits on anyone, so no CTA waits on one that cannot run.

The owner adds its peers' slots one after another, so that fix-up costs about 1.2-1.7 us
per CTA sharing the tile. A config with a ``split`` compiles a second fix-up beside it,
taken where the launch's shares are whole tiles' k chunks, :data:`TOGETHER_MIN` or more to
a tile: the non-owners add the partials together, each a part of every slot, and the
owner adds one slot (:func:`_fixup_together`; about 6 us whatever the count:
bench/results/raw/calibrate-h200-small-together.json).

>>> sk_split(1, 80, 128, 132), sk_split(2, 132, 64, 132), sk_split(4, 40, 128, 132)
((80, 132), (0, 132), (28, 112))
"""

from __future__ import annotations

from collections.abc import Sequence

from cutemma.errors import TiledMmaError
from cutemma.kernels.common.scheduler import FULL_WAVE  # whole tiles this full: no stream-K

# the workspace (partials and flags) is the runtime's, allocated at each launch
from cutemma.kernels.runtime.workspace import FLAG_BYTES, MAX_GRID, Workspace, workspace  # noqa: F401

ACC_VECTOR = 4  # a partial is stored and read as float4s
QUAD_BYTES = ACC_VECTOR * 4  # one float4
LOAD_CHUNK = 8  # float4s of a peer's partial read before they are added
SHARED_GROUP = 4  # the same, read from the shared staging tile

HELPERS_STREAMK = r"""
// stream-K (cutemma.kernels.sm90.streamk): every CTA takes whole tiles sk_tiles + b, + G,
// ...; then CTA b < sk_ctas an equal share of the first sk_tiles tiles' k iterations, cut
// at tile boundaries into pieces
struct SkUnit { int it, end, dp, tile, k_lo, k_count, at_tile, at_k; };
// CTA b's share of the shared tiles' iters k iterations ends here (the next one's starts):
// floor(iters * (b + 1) / sk_ctas) in 32-bit ints (iters < 2^31: sk_split); the CTAs from
// sk_ctas on have none
__device__ __forceinline__ int sk_share_end(int b, int iters, int sk_ctas) {
  if (b >= sk_ctas) return iters;
  const int q = iters / sk_ctas, r = iters - q * sk_ctas;
  return q * (b + 1) + r * (b + 1) / sk_ctas;
}
// the share CTA blockIdx.x takes: where every tile is shared in whole tiles' k chunks
// (sk_tiles == tiles, sk_ctas a multiple of it), chunk-major, so that the CTAs on one k
// chunk of neighbouring tiles, which read the same lines of A or B, start side by side and
// L2's request coalescer serves one read to several (raw/ncu-splitk-lrc-h200.csv,
// raw/sk-chunk-major-h200.json); else (whole tiles first) the CTA's own. (Not inlined:
// inlined, its divisions left one more R2UR in fp8's promoted 128x192 k loop.)
__device__ __noinline__ int sk_block(int sk_tiles, int sk_ctas, int tiles) {
  const int b = blockIdx.x;
  if (b >= sk_ctas || sk_tiles != tiles || sk_ctas % sk_tiles != 0) return b;
  return (b % sk_tiles) * (sk_ctas / sk_tiles) + b / sk_tiles;
}
__device__ __forceinline__ SkUnit sk_start(int sk_tiles, int sk_ctas, int k_total, int b) {
  const int iters = sk_tiles * k_total;
  SkUnit u;
  u.it = b == 0 ? 0 : sk_share_end(b - 1, iters, sk_ctas);
  u.end = sk_share_end(b, iters, sk_ctas);
  u.dp = sk_tiles + blockIdx.x;  // (whole tiles in the CTAs' order: neighbours share lines)
  u.at_tile = u.it / k_total;  // where the next piece starts
  u.at_k = u.it - u.at_tile * k_total;
  u.tile = u.k_lo = u.k_count = 0;
  return u;
}
// whole tiles first (every CTA the same count: the waves run in step, tiles that share an
// operand slice together), then the share (all CTAs reach it together)
__device__ __forceinline__ bool sk_next(SkUnit& u, int tiles, int k_total) {
  if (u.dp < tiles) {  // a whole tile
    u.tile = u.dp; u.k_lo = 0; u.k_count = k_total;
    u.dp += gridDim.x;
    return true;
  }
  if (u.it < u.end) {  // the next piece of the share: up to the end of its tile
    u.tile = u.at_tile; u.k_lo = u.at_k;
    u.k_count = min(u.end - u.it, k_total - u.at_k);
    u.it += u.k_count; u.at_k += u.k_count;
    if (u.at_k == k_total) { ++u.at_tile; u.at_k = 0; }
    return true;
  }
  return false;
}
// how many units (whole tiles, then pieces) sk_next yields from sk_start's u: the kernel
// loops over a count, because a loop that exits when sk_next says so is one the compiler
// cannot prove warp-uniform, and then the mainloop's descriptor arithmetic leaves the
// uniform datapath (an R2UR per wgmma and a WARPSYNC per k tile: fp8's promoted loop ran
// 7-13% slower than the plain kernel's, raw/sk-probe-aligned-run4.json)
__device__ __forceinline__ int sk_units(const SkUnit& u, int tiles, int k_total) {
  const int pieces = u.it < u.end ? (u.end - 1) / k_total - u.at_tile + 1 : 0;
  const int whole = u.dp < tiles ? (tiles - u.dp + (int)gridDim.x - 1) / (int)gridDim.x : 0;
  return pieces + whole;
}
"""

HELPERS_STREAMK_SYNC = r"""
__device__ __forceinline__ unsigned long long ld_acquire_u64(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release_u64(unsigned long long* p, unsigned long long v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;\n" :: "l"(p), "l"(v) : "memory");
}
// a peer's partial (generic-proxy stores, seen through the acquire) read by the TMA unit
__device__ __forceinline__ void fence_async_global() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}
// cp.async.bulk (PTX ISA 9.7.9.25.4.1): `bytes` of global memory into shared memory, the
// bytes counted on mbarrier `bar`
__device__ __forceinline__ void bulk_load(uint32_t dst, const void* src, uint32_t bytes,
                                          uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1], %2, [%3];\n"
               :: "r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
__device__ __forceinline__ float4 ld_shared_f4(uint32_t a) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a) : "memory");
  return v;
}
"""


def unit_loop() -> str:
    """The persistent loop of a stream-K kernel (producer and consumers walk the same
    pieces): opens a block in which ``tile``, ``k_lo`` and ``k_tiles`` (this piece's k
    tiles, shadowing the tile's count ``k_total``) are defined."""
    return """\
const int k_total = k_tiles;  // a whole tile's k tiles
const int sk_b = sk_block(sk_tiles, sk_ctas, tiles);  // this CTA's share (its slot, its flag)
SkUnit u = sk_start(sk_tiles, sk_ctas, k_total, sk_b);
const int units = sk_units(u, tiles, k_total);
for (int unit = 0; unit < units; ++unit) {
  sk_next(u, tiles, k_total);  // this piece: k tiles [k_lo, k_lo + k_tiles) of tile `tile`
  const int tile = u.tile, k_lo = u.k_lo, k_tiles = u.k_count;"""


def fixup(
    acc_name: str,
    n_acc: int,
    threads: int,
    staging: tuple[str, int] | None = None,
    together: bool = False,
) -> str:
    """After a piece's mainloop: a non-owner stores its sums in its slot and releases its
    flag; an owner with later pieces adds them in k order. ``n_acc`` accumulators per
    thread of ``threads`` consumer threads (``tid`` 0..threads-1). ``staging`` (the
    TMA-store epilogue's shared tile: its address expression and bytes): the owner has the
    TMA unit copy each peer's slot into it chunk by chunk (mbarrier ``sk_bar``, parity
    ``sk_phase``) and adds from shared memory; without one it loads the slot into
    registers a few float4s at a time (the accumulators leave few registers free, so those
    loads are latency-bound: raw/sk-probe-fixup-run2.json, ~10 us per 128 KB slot).

    ``together`` (a config with a ``split``): where the launch's shares are whole tiles' k
    chunks, :data:`TOGETHER_MIN` or more CTAs to a tile (``sk_ctas`` a multiple of
    ``sk_tiles``: every CTA's share lies in one tile), the tile's non-owners add their
    partials together instead (:func:`_fixup_together`), and the owner adds one slot."""
    if n_acc % ACC_VECTOR:
        raise TiledMmaError(f"stream-K: {n_acc} accumulators per thread, not whole float4s")
    quads, slot = n_acc // ACC_VECTOR, threads * n_acc // ACC_VECTOR
    a = acc_name
    store = ", ".join(f"{a}[{ACC_VECTOR} * i + {j}]" for j in range(ACC_VECTOR))
    add = " ".join(f"{a}[{ACC_VECTOR} * i + {j}] += v.{c};" for j, c in enumerate("xyzw"))
    if staging is None:
        # a few float4s in flight at a time (the compiler barrier between chunks): all of
        # them at once would need as many registers again as the accumulators
        adds = "\n".join(
            f"    #pragma unroll\n    for (int i = {c}; i < {min(c + LOAD_CHUNK, quads)}; ++i) "
            f"{{ const float4 v = __ldcg(w + i * {threads}); {add} }}\n"
            '    asm volatile("" ::: "memory");'
            for c in range(0, quads, LOAD_CHUNK)
        )
        wait = f"named_sync(EPI_BAR, {threads});  // its sums are visible to every consumer"
    else:
        adds = _adds_through_shared(staging, quads, threads, add)
        wait = "// the chunks' mbarrier orders the rest"
    serial = f"""\
if (k_lo > 0) {{  // stream-K: not the tile's first piece: its sums to slot sk_b
{_store_slot(store, slot, quads, threads, "  ")}
  if (tid == 0) {{ __threadfence(); st_release_u64(sk_flags + sk_b, sk_epoch); }}
}} else if (k_tiles < k_total) {{  // the owner: add the later pieces, CTA by CTA (k order)
  const int iters = sk_tiles * k_total, tile_end = (tile + 1) * k_total;
  int next = tile * k_total + k_tiles;
  for (int peer = sk_b + 1; next < tile_end; ++peer) {{
    const int peer_end = sk_share_end(peer, iters, sk_ctas);
    if (peer_end == next) continue;  // an empty share: that CTA has no piece
    if (tid == 0) {{
      while (ld_acquire_u64(sk_flags + peer) != sk_epoch) {{}}
      sk_flags[peer] = 0ull;  // consumed: zero again for the next launch
    }}
    {wait}
    const float4* w = reinterpret_cast<const float4*>(sk_ws) + (long long)peer * {slot} + tid;
{adds}
    next = peer_end;
  }}
}}"""
    if not together:
        return serial
    return _fixup_together(store, slot, quads, threads, adds) + " else {\n" + serial + "\n}"


# CTAs per tile from which the non-owners add together: at 3-4 the serial fix-up ran 8-10%
# faster than this one, at 5 3% slower, at 8 1.3x and at 16 2.1x slower (medians over
# bench/results/raw/calibrate-h200-small.json's kernels against -small-together.json's)
TOGETHER_MIN = 5


def _store_slot(store: str, slot: int, quads: int, threads: int, indent: str) -> str:
    """A non-owner's sums to its slot (thread-major float4s, ``store`` the four accumulators
    of float4 ``i``), then a barrier: every consumer's are written."""
    return "\n".join(
        indent + line
        for line in (
            f"float4* w = reinterpret_cast<float4*>(sk_ws) + (long long)sk_b * {slot} + tid;",
            "#pragma unroll",
            f"for (int i = 0; i < {quads}; ++i) __stcg(w + i * {threads}, make_float4({store}));",
            f"named_sync(EPI_BAR, {threads});  // every consumer's sums are written",
        )
    )


def _fixup_together(store: str, slot: int, quads: int, threads: int, adds: str) -> str:
    """The fix-up of a launch whose shares are whole tiles' k chunks, ``per`` CTAs to a
    tile (share ``g0 + j`` is chunk ``j`` of tile ``tile``, ``g0 = tile * per``): each
    non-owner stores its sums in its slot and releases its flag; once every non-owner's
    flag is up, non-owner ``j`` adds part ``j - 1`` of the ``per - 1`` slots, in slot
    order, into that part of slot ``g0 + 1`` (no other CTA reads or writes that part), and
    releases its second flag; the owner waits for those, adds slot ``g0 + 1`` to its own
    sums and resets every flag of the tile (a wait on several flags has a thread for each,
    so the waits overlap). Each element is ``own + ((p1 + p2) + ...)``,
    whichever CTA ends first: deterministic. The owner reads one slot instead of
    ``per - 1``, and the non-owners' reads run side by side (each reads one slot's bytes
    in all). No CTA waits before it has stored its own sums, and every CTA is resident, so
    no wait is on one that cannot run."""
    done = f"(sk_flags + {MAX_GRID})"  # the second set of flags (workspace.FLAG_SETS)
    return f"""\
const int sk_per = sk_ctas / sk_tiles;  // CTAs per shared tile (uniform over the grid)
if (sk_ctas % sk_tiles == 0 && sk_per >= {TOGETHER_MIN} && k_tiles < k_total) {{
  const int g0 = tile * sk_per;  // the tile's owner; its non-owners g0 + 1 .. g0 + sk_per - 1
  float4* const sums = reinterpret_cast<float4*>(sk_ws) + (long long)(g0 + 1) * {slot};
  if (k_lo > 0) {{  // a non-owner: its sums to its slot, then its part of everyone's
{_store_slot(store, slot, quads, threads, "    ")}
    const int parts = sk_per - 1, part = sk_b - g0 - 1;
    if (tid == 0) {{ __threadfence(); st_release_u64(sk_flags + sk_b, sk_epoch); }}
    for (int q = tid; q < parts; q += {threads})  // a thread per flag: the waits overlap
      while (ld_acquire_u64(sk_flags + g0 + 1 + q) != sk_epoch) {{}}
    named_sync(EPI_BAR, {threads});  // every non-owner's slot is written
    const int lo = (int)((long long){slot} * part / parts), hi = (int)((long long){slot} * (part + 1) / parts);
    for (int e = lo + tid; e < hi; e += {threads}) {{
      float4 s = __ldcg(sums + e);
      #pragma unroll 4
      for (int q = 1; q < parts; ++q) {{
        const float4 v = __ldcg(sums + (long long)q * {slot} + e);
        s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
      }}
      __stcg(sums + e, s);
    }}
    named_sync(EPI_BAR, {threads});  // every consumer's part is written
    if (tid == 0) {{ __threadfence(); st_release_u64({done} + sk_b, sk_epoch); }}
  }} else {{  // the owner: its sums plus slot g0 + 1, which holds the others' in k order
    for (int q = g0 + 1 + tid; q < g0 + sk_per; q += {threads}) {{  // a thread per flag
      while (ld_acquire_u64({done} + q) != sk_epoch) {{}}
      sk_flags[q] = 0ull; {done}[q] = 0ull;  // consumed: zero again for the next launch
    }}
    named_sync(EPI_BAR, {threads});  // every part is added
    const float4* w = sums + tid;
{adds}
  }}
}}"""


def _adds_through_shared(staging: tuple[str, int], quads: int, threads: int, add: str) -> str:
    """The owner's adds of one peer's slot through the shared tile ``staging``: per chunk
    (as many float4s per thread as the tile holds), thread 0 has the TMA unit copy it (the
    slot is thread-major, so a chunk is contiguous) and every consumer adds its float4s."""
    buf, nbytes = staging
    per = nbytes // (threads * QUAD_BYTES)
    if per < 1:
        raise TiledMmaError(f"stream-K: a {nbytes}-byte staging tile holds no float4 per thread")
    lines = []
    for c in range(0, quads, per):
        e = min(c + per, quads)
        # SHARED_GROUP float4s read, then added, at a time (all of a chunk's reads hoisted
        # ahead of their adds spilled 128x192 fp8's registers)
        reads = "\n".join(
            f"    #pragma unroll\n    for (int i = {g}; i < {min(g + SHARED_GROUP, e)}; ++i) "
            f"{{ const float4 v = ld_shared_f4({buf} + ((i - {c}) * {threads} + tid) * {QUAD_BYTES}); {add} }}\n"
            '    asm volatile("" ::: "memory");'
            for g in range(c, e, SHARED_GROUP)
        )
        first = (
            "fence_async_global(); bulk_wait_read0();  // the peer's stores; the last D store read"
            if c == 0
            else "fence_async_smem();  // every consumer's reads of the last chunk"
        )
        lines.append(f"""\
    if (tid == 0) {{
      {first}
      mbar_expect_tx(sk_bar, {(e - c) * threads * QUAD_BYTES});
      bulk_load({buf}, w - tid + {c * threads}, {(e - c) * threads * QUAD_BYTES}, sk_bar);
    }}
    mbar_wait(sk_bar, sk_phase); sk_phase ^= 1;
{reads}
    fence_async_smem();  // these reads before the TMA unit's next write of the tile
    named_sync(EPI_BAR, {threads});  // every consumer has read the chunk""")
    return "\n".join(lines)


SPLIT_MAX = 4  # CTAs per tile of the last partial wave (the owner adds split - 1 slots)
ITERS_MAX = 2**31 - 1  # the kernel walks the shared k iterations in 32-bit ints


def sk_split(
    tiles_m: int, tiles_n: int, k_tiles: int, grid: int, split: int | None = None
) -> tuple[int, int]:
    """``(sk_tiles, sk_ctas)``: every CTA takes whole tiles, then the first ``sk_tiles``
    tiles (in tile order) are shared by k iterations among CTAs ``0 .. sk_ctas - 1``
    (equal shares). ``(0, grid)``, nothing shared, when the whole tiles fill their last
    wave to :data:`FULL_WAVE` or the shared iterations would not fit the kernel's 32-bit
    count (:data:`ITERS_MAX`). ``split`` (``Sm90Config.split``): at most that many CTAs
    per shared tile, ``sk_ctas`` a multiple of ``sk_tiles`` (each tile's owner then adds
    ``split - 1`` partials; over the whole grid a few tiles' owners add 16 or more, one
    after another: bench/results/raw/sk-split-cap-run1.json).

    - One wave or less, or a single tile row or column (decode's swapped calls): every
      tile over the whole grid, or the last partial wave and one full wave (each CTA's
      share then spans more than a tile's k iterations).
    - Several waves of a grid of tiles: the tiles of the last partial wave, each cut into
      ``split`` equal k chunks (up to :data:`SPLIT_MAX`, as many as the grid holds), share
      ``t * split + j`` being chunk ``j`` of tile ``t``. The chunks of tiles that share
      B's columns (or A's rows) run at the same time over the same k, so each operand
      slice is read from DRAM once while the others hit L2: shares over the whole grid
      left them at unrelated k (raw/sk-probe-run1.json: 0.63x cuBLAS against 0.70x for
      no sharing, (512, 10240, 8192) at 128x256).

    >>> sk_split(1, 80, 128, 132), sk_split(4, 40, 128, 132), sk_split(8, 40, 128, 132)
    ((80, 132), (28, 112), (56, 112))
    >>> sk_split(2, 66, 16, 132), sk_split(1, 300, 64, 132)
    ((0, 132), (168, 132))
    >>> sk_split(1, 8, 198, 132), sk_split(1, 8, 198, 132, split=4), sk_split(4, 40, 128, 132, 2)
    ((8, 132), (8, 32), (28, 56))
    """
    if min(tiles_m, tiles_n, k_tiles, grid) < 1:
        raise TiledMmaError(
            f"stream-K: tiles_m={tiles_m}, tiles_n={tiles_n}, k_tiles={k_tiles}, grid={grid}; "
            "each must be >= 1"
        )
    sk, ctas = sk_shares(tiles_m, tiles_n, k_tiles, grid, (split,))
    return (sk, ctas[0]) if sk else (0, grid)


def sk_shares(
    tiles_m: int, tiles_n: int, k_tiles: int, grid: int, splits: tuple
) -> tuple[int, Sequence[int]]:
    """:func:`sk_split`'s rule for several splits at once (its shared tiles do not depend on
    the split; the cost model prices every split of a tile in one pass): ``(sk_tiles, the
    sk_ctas of each split)``, or ``(0, ())`` where nothing is shared. Counts >= 1 (unchecked).

    >>> sk_shares(1, 8, 198, 132, (None, 4)), sk_shares(2, 66, 16, 132, (None,))
    ((8, [132, 32]), (0, ()))
    """
    sk = shared_tiles(tiles_m, tiles_n, grid)
    if not sk or sk * k_tiles > ITERS_MAX:
        return 0, ()
    return sk, split_ctas(sk, tiles_m * tiles_n <= grid, min(grid // sk, k_tiles), grid, splits)


def shared_tiles(tiles_m: int, tiles_n: int, grid: int) -> int:
    """How many tiles of a ``tiles_m`` x ``tiles_n`` grid stream-K shares over ``grid`` CTAs
    (:func:`sk_split`), before the cap on the shared k iterations (:data:`ITERS_MAX`); 0
    where the whole tiles' last wave is full enough. Counts >= 1 (unchecked).

    >>> shared_tiles(1, 80, 132), shared_tiles(1, 300, 132), shared_tiles(4, 40, 132), shared_tiles(2, 66, 132)
    (80, 168, 28, 0)
    """
    tiles = tiles_m * tiles_n
    if tiles / (-(-tiles // grid) * grid) >= FULL_WAVE:
        return 0
    if tiles <= grid or tiles_m == 1 or tiles_n == 1:
        return tiles if tiles < 2 * grid else tiles % grid + grid
    return tiles % grid


def split_ctas(sk: int, one_wave: bool, room: int, grid: int, splits: tuple) -> Sequence[int]:
    """The ``sk_ctas`` of each split of ``splits`` where ``sk`` tiles are shared
    (:func:`shared_tiles`, > 0) over ``grid`` CTAs: ``one_wave``, whether all the tiles fit
    the grid (then an uncapped split takes every CTA); ``room``, how many CTAs each shared
    tile may take: ``min(grid // sk, k_tiles)``. More shared tiles than CTAs take the grid.

    >>> split_ctas(8, True, 16, 132, (None, 4)), split_ctas(28, False, 4, 132, (16, None))
    ([132, 32], [112, 112])
    """
    if sk > grid:
        return (grid,) * len(splits)
    if one_wave:
        return [grid if s is None else sk * min(room, s) for s in splits]
    return [sk * min(room, s or SPLIT_MAX) for s in splits]


def sk_params() -> list:
    """The stream-K kernel's extra parameters (after the plain kernel's): the workspace's
    partial tiles and flags, the counts of shared tiles and of the CTAs sharing them, the
    launch's epoch.

    >>> [p.name for p in sk_params()]
    ['sk_ws', 'sk_flags', 'sk_tiles', 'sk_ctas', 'sk_epoch']
    """
    from cutemma.cuda.source import Param

    return [
        Param("float*", "sk_ws"),
        Param("unsigned long long*", "sk_flags"),
        Param("int", "sk_tiles"),
        Param("int", "sk_ctas"),
        Param("unsigned long long", "sk_epoch"),
    ]
