"""Split-K inside a cluster for the sm90 GEMM (``Sm90Config(kcluster=S)``): the S CTAs of a
cluster (``__cluster_dims__(S, 1, 1)``) compute one output tile, CTA rank ``r`` the k tiles
``[r * K_t / S, (r + 1) * K_t / S)``, and add their sums through distributed shared memory
instead of a workspace in global memory.

Why: stream-K's fix-up through global memory costs a flat 6-8 us where 5 or more CTAs share
a tile (two rounds of flags, each slot written and read at one SM's L2 bandwidth;
notes/kernels-journal.md "Where mid-size calls lose"), which is most of what mid-size calls
lose to cuBLAS. A cluster's CTAs run at the same time on SMs of one GPC and may read and
write each other's shared memory (PTX ISA: ``ld``/``st`` with the ``.shared::cluster`` state
space, ``mapa``; ``barrier.cluster`` orders them), so the partial sums never leave the chip.

The fix-up, after a CTA's mainloop (the ring's stages are free then: every k tile was
consumed, and the grid has one tile per cluster, so no next tile is being loaded):

1. every consumer thread stores its f32 sums into its own CTA's stages, thread-major
   float4s (the accumulator fragment as it is, the stream-K slot's order);
2. ``barrier.cluster`` (release / acquire): every rank's sums are in its shared memory;
3. rank ``r`` adds part ``r`` of the tile, the float4s ``[r * F / S, (r + 1) * F / S)`` of
   the ``F`` per CTA, reading them from ranks ``0, 1, ..., S - 1`` in that order
   (deterministic: the same sums in the same order every run) and writes the total into
   rank 0's shared memory at the same place;
4. ``barrier.cluster``: rank 0 holds the tile's sums; it loads its float4s back into the
   accumulators and runs the epilogue; the other ranks are done.

Each CTA reads one tile's bytes (``(S - 1) / S`` of them from its peers) and writes a part of
one, whatever S; measured, the fix-up still costs more with S (the peers' reads contend, and
the slowest CTA sets the pace: :func:`cutemma.kernels.cost._kcluster_us`). The producer
warpgroup takes part in both cluster barriers (``barrier.cluster`` waits for every thread of
every CTA of the cluster).

>>> print(loop_head(4).splitlines()[0])
if (blockIdx.x / 4 < tiles) {  // one tile per cluster (the host launches tiles x kcluster CTAs)
"""

from __future__ import annotations

from cutemma.errors import TiledMmaError
from cutemma.hardware import PORTABLE_CLUSTER
from cutemma.kernels.sm90.streamk import ACC_VECTOR, QUAD_BYTES  # float4s, as stream-K's slots

# CTAs of a cluster that share a tile: powers of 2 up to the portable cluster size
KCLUSTERS = tuple(1 << i for i in range(PORTABLE_CLUSTER.bit_length()))
# clusters of S CTAs that run at once on a 132-SM H200, one CTA per SM (the driver's
# cuOccupancyMaxActiveClusters for these kernels, bench/results/raw/kcluster-capacity-h200.json;
# a cluster's CTAs share a GPC, and the GPCs' SM counts differ, so not 132 // S): one cluster
# more ran a second wave (66 -> 67 clusters of 128x128 tiles: 50 -> 71 us)
ACTIVE_CLUSTERS = {2: 66, 4: 30, 8: 15}
ACTIVE_SMS = 132

HELPERS_KCLUSTER = r"""
// split-K in a cluster (cutemma.kernels.sm90.kcluster): the address of the same byte of
// shared memory in CTA `rank` of the cluster (PTX ISA mapa), and float4 loads and stores
// through the cluster's shared window (a CTA's own addresses are in it too)
__device__ __forceinline__ uint32_t dsmem_addr(uint32_t local, uint32_t rank) {
  uint32_t r; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(local), "r"(rank));
  return r;
}
__device__ __forceinline__ float4 ld_dsmem_f4(uint32_t a) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a) : "memory");
  return v;
}
__device__ __forceinline__ void st_dsmem_f4(uint32_t a, float4 v) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};\n"
               :: "r"(a), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
}
"""


def loop_head(kc: int, cl: int = 1) -> str:
    """The tile block of a ``kcluster`` kernel (producer and consumers alike): it opens a
    block in which ``tile``, ``krank``, ``k_lo`` and ``k_tiles`` (this rank's k tiles,
    shadowing the tile's count ``k_total``) are defined. One tile per cluster, so the
    fix-up may reuse the ring's stages. ``cl`` > 1: the cluster is ``kc`` groups of ``cl``
    CTAs that multicast a shared operand (a pair's ``rank``: cluster rank % cl), group
    ``krank`` taking the same k share of each of its ``cl`` tiles; ``tile`` is then the
    cluster tile.

    >>> "k_lo" in loop_head(2) and "cluster_rank()" in loop_head(2)
    True
    >>> "cluster_rank() / 2" in loop_head(4, 2)
    True
    """
    if cl > 1:
        head = f"""\
if (blockIdx.x / {kc * cl} < tiles) {{  // one cluster tile per cluster (tiles x {kc * cl} CTAs)
  const int tile = blockIdx.x / {kc * cl}, k_total = k_tiles;
  const uint32_t krank = cluster_rank() / {cl};  // this pair's k share of its tiles"""
    else:
        head = f"""\
if (blockIdx.x / {kc} < tiles) {{  // one tile per cluster (the host launches tiles x kcluster CTAs)
  const int tile = blockIdx.x / {kc}, k_total = k_tiles;
  const uint32_t krank = cluster_rank();  // this CTA's k share of the tile"""
    return (
        head
        + f"""
  const int k_lo = (int)((long long)k_total * krank / {kc});
  const int k_tiles = (int)((long long)k_total * (krank + 1) / {kc}) - k_lo;  // >= 1: K_t >= kcluster"""
    )


def producer_syncs(kc: int, cl: int = 1) -> str:
    """The producer warpgroup's part in the fix-up's two cluster barriers (after its loads);
    ``cl``: as :func:`loop_head`'s.

    >>> producer_syncs(2)[:40]
    'if (blockIdx.x / 2 < tiles) { cluster_sy'
    """
    return (
        f"if (blockIdx.x / {kc * cl} < tiles) {{ cluster_sync(); cluster_sync(); }}"
        "  // the consumers' fix-up barriers (kcluster)"
    )


def fixup(acc_name: str, n_acc: int, threads: int, kc: int, cl: int = 1) -> str:
    """After a rank's mainloop: its sums into its stages, rank ``r`` adds part ``r`` of every
    rank's into rank 0's, and rank 0 loads the total into its accumulators (module doc).
    ``n_acc`` accumulators per thread of ``threads`` consumer threads (``tid``). ``cl`` > 1
    (:func:`loop_head`): each of a pair's tiles is added over its own ``kc`` CTAs, cluster
    ranks ``cl * q + rank``.

    >>> "ld.shared" in HELPERS_KCLUSTER, "krank == 0" in fixup("acc", 64, 256, 4)
    (True, True)
    """
    if n_acc % ACC_VECTOR:
        raise TiledMmaError(f"kcluster: {n_acc} accumulators per thread, not whole float4s")
    if kc not in KCLUSTERS[1:]:
        raise TiledMmaError(f"kcluster: {kc} CTAs per tile; need one of {KCLUSTERS[1:]}")
    quads, a = n_acc // ACC_VECTOR, acc_name
    slot = threads * quads  # float4s per CTA
    store = ", ".join(f"{a}[{ACC_VECTOR} * i + {j}]" for j in range(ACC_VECTOR))
    load = " ".join(f"{a}[{ACC_VECTOR} * i + {j}] = v.{c};" for j, c in enumerate("xyzw"))
    add = " ".join(f"s.{c} += v.{c};" for c in "xyzw")
    first, peer = ("rank", f"{cl} * q + rank") if cl > 1 else ("0", "q")
    return f"""\
{{  // kcluster: the cluster's k shares of this tile added in shared memory, rank 0's
  named_sync(EPI_BAR, {threads});  // every consumer's wgmma are done with the stages
  #pragma unroll
  for (int i = 0; i < {quads}; ++i)
    st_dsmem_f4(smem + (i * {threads} + tid) * {QUAD_BYTES}, make_float4({store}));
  cluster_sync();  // every rank's sums are in its shared memory
  const int lo = {slot} * (int)krank / {kc}, hi = {slot} * ((int)krank + 1) / {kc};
  for (int e = lo + tid; e < hi; e += {threads}) {{  // part krank: ranks 0, 1, ... in order
    const uint32_t at = smem + e * {QUAD_BYTES};
    float4 s = ld_dsmem_f4(dsmem_addr(at, {first}));
    #pragma unroll
    for (int q = 1; q < {kc}; ++q) {{ const float4 v = ld_dsmem_f4(dsmem_addr(at, {peer})); {add} }}
    st_dsmem_f4(dsmem_addr(at, {first}), s);
  }}
  cluster_sync();  // rank 0 holds the sums; no rank reads a peer's shared memory after this
  if (krank == 0) {{
    #pragma unroll
    for (int i = 0; i < {quads}; ++i) {{
      const float4 v = ld_dsmem_f4(smem + (i * {threads} + tid) * {QUAD_BYTES}); {load}
    }}
  }}
}}"""


def clusters(kc: int, sms: int) -> int:
    """How many clusters of ``kc`` CTAs (one per SM) run at once on ``sms`` SMs: as measured
    on 132 (:data:`ACTIVE_CLUSTERS`), in proportion on other counts.

    >>> clusters(2, 132), clusters(4, 132), clusters(8, 132), clusters(4, 114)
    (66, 30, 15, 25)
    """
    if kc not in ACTIVE_CLUSTERS or type(sms) is not int or sms < 1:
        raise TiledMmaError(
            f"kcluster: clusters({kc!r}, {sms!r}); give a cluster size of {sorted(ACTIVE_CLUSTERS)} "
            "and an SM count >= 1"
        )
    return ACTIVE_CLUSTERS[kc] * sms // ACTIVE_SMS


def reduce_bytes(n_acc: int, threads: int) -> int:
    """Shared bytes the fix-up takes from the stages: every consumer's f32 sums.

    >>> reduce_bytes(64, 256)  # 128x128 at 2 consumers
    65536
    """
    return n_acc * threads * 4
