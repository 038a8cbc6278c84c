"""Stream-K for the sm90 GEMM (``Sm90Config(stream_k=True)``): the persistent CTAs share
the k iterations of the first ``sk_tiles`` tiles equally, then take the remaining tiles
whole, so a grid whose tiles leave the last wave mostly empty (decode: 80 tiles for 132
SMs) keeps every SM streaming to the end. (With several tile rows sharing B's columns the
shares' scattered k cost B's L2 reuse: the built-in configs use it for decode only,
kernels/NOTES.md "Stream-K and swap-AB".)

The work: the first ``sk_tiles`` tiles (tile order, grouped raster) have ``sk_tiles *
k_tiles`` k iterations; CTA ``b`` of ``G`` takes iterations ``[b * I / G, (b + 1) * I / G)``
(I the total), cut at tile boundaries into *pieces*; then tiles ``sk_tiles + b``,
``+ G``, ... whole. A piece that starts a tile (``k_lo == 0``) belongs to the tile's
*owner*; every other piece is the first piece of its CTA's range (a range runs on from one
tile into the next), so each CTA hands over at most one partial tile: slot ``b`` of the
workspace.

The fix-up is deterministic: a non-owner stores its f32 sums (thread-major float4s, the
accumulator fragment as it is) in its slot and releases its flag (``st.release.gpu``) with
the launch's epoch; the owner, which reaches the tile's end last (its piece is the end of
its range), waits for the flags of CTAs ``b + 1, b + 2, ...`` in that order, adds their
slots into its registers in that order (the same sums in the same order every run, no
atomics) and runs the epilogue. The owner resets each flag it consumed, so the flags are
zero again when the launch ends (a CUDA graph replays with the same epoch). All CTAs are
resident (the grid is at most one CTA per SM), and a non-owner never waits, so no CTA
waits on one that cannot run.

>>> sk_tiles_for(80, 128, 132), sk_tiles_for(264, 64, 132), sk_tiles_for(300, 64, 132)
(80, 0, 168)
"""

from __future__ import annotations

import threading

from cutemma.errors import TiledMmaError
from cutemma.kernels.scheduler import FULL_WAVE  # whole tiles this full: no stream-K

FLAG_BYTES = 8  # one u64 flag per CTA (the epoch a slot was written in)
ACC_VECTOR = 4  # a partial is stored and read as float4s
LOAD_CHUNK = 8  # float4s of a peer's partial read before they are added

HELPERS_STREAMK = r"""
// stream-K (cutemma.kernels.sm90.streamk): CTA b's equal share of the first sk_tiles tiles'
// k iterations, cut at tile boundaries into pieces, then whole tiles sk_tiles + b, + G, ...
struct SkUnit { long long it, end; int dp, tile, k_lo, k_count; };
// CTA b's share of the shared tiles' iters k iterations ends here (the next one's starts)
__device__ __forceinline__ long long sk_share_end(int b, long long iters) {
  return iters * (b + 1) / gridDim.x;
}
__device__ __forceinline__ SkUnit sk_start(int sk_tiles, int k_total) {
  const long long iters = (long long)sk_tiles * k_total;
  SkUnit u;
  u.it = blockIdx.x == 0 ? 0 : sk_share_end(blockIdx.x - 1, iters);
  u.end = sk_share_end(blockIdx.x, iters);
  u.dp = sk_tiles + blockIdx.x;
  u.tile = u.k_lo = u.k_count = 0;
  return u;
}
__device__ __forceinline__ bool sk_next(SkUnit& u, int tiles, int k_total) {
  if (u.it < u.end) {  // the next piece of the share: up to the end of its tile
    u.tile = (int)(u.it / k_total);
    u.k_lo = (int)(u.it - (long long)u.tile * k_total);
    u.k_count = (int)min((long long)(k_total - u.k_lo), u.end - u.it);
    u.it += u.k_count;
    return true;
  }
  if (u.dp < tiles) {  // a whole tile
    u.tile = u.dp; u.k_lo = 0; u.k_count = k_total;
    u.dp += gridDim.x;
    return true;
  }
  return false;
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
"""


def unit_loop() -> str:
    """The persistent loop of a stream-K kernel (producer and consumers walk the same
    pieces): opens a block in which ``tile``, ``k_lo`` and ``k_tiles`` (this piece's k
    tiles, shadowing the tile's count ``k_total``) are defined."""
    return """\
const int k_total = k_tiles;  // a whole tile's k tiles
SkUnit u = sk_start(sk_tiles, k_total);
while (sk_next(u, tiles, k_total)) {
  // this piece: k tiles [k_lo, k_lo + k_tiles) of tile `tile`
  const int tile = u.tile, k_lo = u.k_lo, k_tiles = u.k_count;"""


def fixup(acc_name: str, n_acc: int, threads: int) -> str:
    """After a piece's mainloop: a non-owner stores its sums in its slot and releases its
    flag; an owner with later pieces adds them in k order. ``n_acc`` accumulators per
    thread of ``threads`` consumer threads (``tid`` 0..threads-1)."""
    if n_acc % ACC_VECTOR:
        raise TiledMmaError(f"stream-K: {n_acc} accumulators per thread, not whole float4s")
    quads, slot = n_acc // ACC_VECTOR, threads * n_acc // ACC_VECTOR
    a = acc_name
    store = ", ".join(f"{a}[{ACC_VECTOR} * i + {j}]" for j in range(ACC_VECTOR))
    add = " ".join(f"{a}[{ACC_VECTOR} * i + {j}] += v.{c};" for j, c in enumerate("xyzw"))
    # a few float4s in flight at a time (the compiler barrier between chunks): all of them
    # at once would need as many registers again as the accumulators (128x256 spilled)
    adds = "\n".join(
        f"    #pragma unroll\n    for (int i = {c}; i < {min(c + LOAD_CHUNK, quads)}; ++i) "
        f"{{ const float4 v = __ldcg(w + i * {threads}); {add} }}\n"
        '    asm volatile("" ::: "memory");'
        for c in range(0, quads, LOAD_CHUNK)
    )
    return f"""\
if (k_lo > 0) {{  // stream-K: not the tile's first piece: its sums to slot blockIdx.x
  float4* w = reinterpret_cast<float4*>(sk_ws) + (long long)blockIdx.x * {slot} + tid;
  #pragma unroll
  for (int i = 0; i < {quads}; ++i) __stcg(w + i * {threads}, make_float4({store}));
  named_sync(EPI_BAR, {threads});  // every consumer's sums are written
  if (tid == 0) {{ __threadfence(); st_release_u64(sk_flags + blockIdx.x, sk_epoch); }}
}} else if (k_tiles < k_total) {{  // the owner: add the later pieces, CTA by CTA (k order)
  const long long iters = (long long)sk_tiles * k_total, tile_end = (long long)(tile + 1) * k_total;
  long long next = (long long)tile * k_total + k_tiles;
  for (int peer = blockIdx.x + 1; next < tile_end; ++peer) {{
    const long long peer_end = sk_share_end(peer, iters);
    if (peer_end == next) continue;  // an empty share: that CTA has no piece
    if (tid == 0) {{
      while (ld_acquire_u64(sk_flags + peer) != sk_epoch) {{}}
      sk_flags[peer] = 0ull;  // consumed: zero again for the next launch
    }}
    named_sync(EPI_BAR, {threads});  // its sums are visible to every consumer
    const float4* w = reinterpret_cast<const float4*>(sk_ws) + (long long)peer * {slot} + tid;
{adds}
    next = peer_end;
  }}
}}"""


def sk_tiles_for(tiles: int, k_tiles: int, grid: int) -> int:
    """How many of ``tiles`` (in tile order) the CTAs share by k iterations: none when the
    whole tiles fill their last wave to :data:`FULL_WAVE`; all of them under two waves;
    else the last partial wave and one full wave (so each CTA's share spans more than a
    tile's k iterations: fewer partial tiles per unit of work).

    >>> sk_tiles_for(64, 16, 132), sk_tiles_for(132, 16, 132), sk_tiles_for(140, 16, 132)
    (64, 0, 140)
    """
    if tiles < 1 or k_tiles < 1 or grid < 1:
        raise TiledMmaError(
            f"stream-K: tiles={tiles}, k_tiles={k_tiles}, grid={grid}; each must be >= 1"
        )
    waves = -(-tiles // grid)
    if tiles / (waves * grid) >= FULL_WAVE:
        return 0
    if tiles < 2 * grid:
        return tiles
    return tiles % grid + grid


def sk_params() -> list:
    """The stream-K kernel's extra parameters (after the plain kernel's): the workspace's
    partial tiles and flags, the count of shared tiles, the launch's epoch.

    >>> [p.name for p in sk_params()]
    ['sk_ws', 'sk_flags', 'sk_tiles', 'sk_epoch']
    """
    from cutemma.cuda.source import Param

    return [
        Param("float*", "sk_ws"),
        Param("unsigned long long*", "sk_flags"),
        Param("int", "sk_tiles"),
        Param("unsigned long long", "sk_epoch"),
    ]


class Workspace:
    """One stream's stream-K workspace: device memory from the driver (``cuMemAlloc``:
    outside torch's allocator, so no CUDA-graph pool ever holds it and torch.compile's
    graph trees see no stray tensor) holding the flags of up to MAX_GRID CTAs, then the
    partial tiles; grown to the largest launch seen, never freed (a captured graph may
    still point at an outgrown one). The flags are zeroed once, on the launch's stream
    (``cuMemsetD8Async``: under capture a memset node of the graph, ahead of its kernel);
    every launch leaves them zero, and launches on one stream run in order, so they share
    it. ``epoch``: the counter of its launches (the value their flags are set to).
    """

    __slots__ = ("ptr", "size", "epoch", "device")

    def __init__(self, device: int) -> None:
        self.ptr, self.size, self.epoch, self.device = 0, 0, 0, device

    def pointers(self, grid: int, slot_floats: int, stream: int) -> tuple[int, int]:
        """(partials, flags) addresses for a launch of ``grid`` CTAs whose partial tiles
        are ``slot_floats`` floats each, on CUstream ``stream``."""
        if grid > MAX_GRID:
            raise TiledMmaError(f"stream-K: a grid of {grid} CTAs; at most {MAX_GRID} flags")
        need = MAX_GRID * FLAG_BYTES + grid * slot_floats * 4
        if self.size < need:
            size = max(need, 2 * self.size)
            self.ptr, self.size = _device_zeroed(self.device, size, MAX_GRID * FLAG_BYTES, stream)
        return self.ptr + MAX_GRID * FLAG_BYTES, self.ptr

    def next_epoch(self) -> int:
        """A new nonzero epoch for the next launch (the value its flags are set to)."""
        self.epoch = (self.epoch + 1) % (1 << 64) or 1
        return self.epoch


def _device_zeroed(device: int, size: int, zeroed: int, stream: int) -> tuple[int, int]:
    """``size`` bytes of device memory, the first ``zeroed`` set to zero on ``stream``."""
    from cutemma.libcuda import alloc_zeroed

    return alloc_zeroed(device, size, zeroed, stream), size


MAX_GRID = 1024  # flags kept per workspace: more than any GPU's SMs
_WORKSPACES: dict[tuple[int, int], Workspace] = {}
_WS_LOCK = threading.Lock()


def workspace(device: int, stream: int) -> Workspace:
    """The stream-K workspace of ``stream`` on ``device`` (made on first use)."""
    ws = _WORKSPACES.get((device, stream))
    if ws is None:
        with _WS_LOCK:
            ws = _WORKSPACES.setdefault((device, stream), Workspace(device))
    return ws
