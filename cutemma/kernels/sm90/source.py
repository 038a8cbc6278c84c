"""CUDA C++ of the Hopper GEMM, D = alpha * A @ B + beta * C, generated from an Sm90Plan.

A warp-specialised, persistent kernel (everything inline PTX: NVRTC has no headers):

- warpgroup 0 is the producer: it gives registers back (``setmaxnreg.dec``) and one
  thread loops over the CTA's tiles and their k tiles, waiting on each stage's *empty*
  mbarrier, arming its *full* mbarrier with the stage's byte count (``expect_tx``) and
  issuing the TMA loads (``cp.async.bulk.tensor``) of A and B into it;
- warpgroups 1..C are consumers (``setmaxnreg.inc``): for each k tile they wait on the
  stage's full barrier, issue the wgmma of every k block (descriptors = shared bits from
  ``make_gmma_desc`` | stage address + the slice's offset), ``commit_group``, then
  ``wait_group 1`` so one batch stays in flight, and release the *previous* stage;
- tiles: persistent CTAs (grid = SMs) walk tile indices blockIdx.x, +gridDim.x, ...
  in grouped raster order (GROUP_M tile rows sweep the columns together, L2 reuse);
  schedule "pingpong": each consumer warpgroup takes every other tile of its CTA and the
  two mainloops take turns (order barrier: named barriers 4 + warpgroup); "alternate":
  the warpgroups of a shared tile issue each k tile's batch in turn;
- epilogue: the consumers write alpha * acc + beta * C from registers through
  partition_C (pairs of adjacent n as one 32-bit store for 16-bit outputs), predicated at
  the edges; meanwhile the producer already loads the next tile's stages.

The ring protocol (phases, parities, who arrives where) is :mod:`cutemma.kernels.sm90.ring`,
which a CPU model runs in the tests.

>>> from cutemma.kernels.sm90.plan import Sm90Config
>>> src = gemm_sm90_source(Sm90Config(), "bf16", "K", "K", "bf16")
>>> "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16" in src, "cp.async.bulk.tensor.2d" in src
(True, True)
"""

from __future__ import annotations

from cutemma.cuda.source import (
    FIXED_WIDTH_TYPES,
    FLOAT_CONVERSIONS,
    SMEM_ADDR,
    Param,
    block,
    comment,
    indent,
    translation_unit,
)
from cutemma.errors import TiledMmaError
from cutemma.kernels.common.expr import check_outs, thread_expr
from cutemma.kernels.common.scheduler import raster_sm90, tile_counts_sm90, tile_loop_sm90
from cutemma.kernels.common.types import OUT_TYPES
from cutemma.kernels.epilogue import NO_EPILOGUE, Epilogue
from cutemma.kernels.sm90.batched import (
    HELPERS_EVICT_FIRST_3D,
    HELPERS_SM90_BATCHED,
    batch_epilogue,
    tma_lines_batched,
)
from cutemma.kernels.sm90.config import kernel_name_sm90
from cutemma.kernels.sm90.epilogue import epilogue_lines, tma_store_lines
from cutemma.kernels.sm90.kcluster import HELPERS_KCLUSTER, loop_head, producer_syncs
from cutemma.kernels.sm90.kcluster import fixup as kcluster_fixup
from cutemma.kernels.sm90.mainloop import by_warpgroup, mainloop
from cutemma.kernels.sm90.plan import BARRIER_BYTES as MB
from cutemma.kernels.sm90.plan import REGISTER_SPLIT, Sm90Config, Sm90Plan
from cutemma.kernels.sm90.ring import CONSUMER, EPI_BAR, ORDER_BAR, PRODUCER
from cutemma.kernels.sm90.streamk import (
    HELPERS_STREAMK,
    HELPERS_STREAMK_SYNC,
    fixup,
    sk_params,
    unit_loop,
)

# Sm90Config(epilogue="tmat"): D column-major, an accumulator pair's halves a staging row
# apart (only kernels that store so carry it)
HELPERS_TMAT = r"""
__device__ __forceinline__ void st_shared_b16x2(uint32_t a, uint32_t b, uint32_t v) {
  asm volatile("st.shared.b16 [%0], %2;\nst.shared.b16 [%1], %3;\n"
               :: "r"(a), "r"(b), "h"((unsigned short)(v & 0xffffu)), "h"((unsigned short)(v >> 16))
               : "memory");
}
"""

# Sm90Config.evict_first: a TMA load with an L2 cache policy (PTX ISA createpolicy,
# cp.async.bulk.tensor .L2::cache_hint); only kernels that hint carry these
HELPERS_EVICT_FIRST = r"""
// tma_load_2d with an L2 cache policy
__device__ __forceinline__ void tma_load_2d_hint(uint32_t dst, const TmaMap* map, int c0, int c1,
                                                 uint32_t bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5;\n"
      :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar),
         "l"(policy) : "memory");
}
// every line a load under this policy brings into L2 is among the first to leave it
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
"""

# Sm90Config.pdl: programmatic dependent launch (PTX ISA griddepcontrol, sm_90) and a tensor
# tile fetched into L2 only (cp.async.bulk.prefetch.tensor); only pdl kernels carry these
HELPERS_PDL = r"""
// wait until the grids this one depends on have completed and their writes are visible
__device__ __forceinline__ void griddep_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
// the grid launched after this one (with programmatic serialization) may start
__device__ __forceinline__ void griddep_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}
// a TMA tile of a 2-D map brought into L2, nothing written to shared memory
__device__ __forceinline__ void tma_prefetch_2d(const TmaMap* map, int c0, int c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];\n"
               :: "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1) : "memory");
}
"""

HELPERS_SM90 = (
    r"""
struct __align__(64) TmaMap { uint64_t words[16]; };  // CUtensorMap: 128 opaque bytes

"""
    + SMEM_ADDR
    + r"""// mbarrier (PTX ISA 9.7.13.15): init with an arrival count; a phase completes when the
// pending arrivals and the expected transaction bytes both reach zero.
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n"
               :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n"
               :: "r"(bar) : "memory");
}
// wait until the phase of parity `parity` has completed (try_wait suspends a while)
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  } while (!done);
}
// TMA: a 2-D box of the tensor map at (c0, c1) into shared memory, completing on `bar`
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const TmaMap* map, int c0, int c1,
                                            uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n"
      :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
// the same box into every CTA of `mask` (same shared offset; each CTA's barrier at `bar`)
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const TmaMap* map, int c0,
                                                      int c1, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n"
      :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
}
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r; asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r)); return r;
}
// arrive on the barrier at the same offset in CTA `rank` of the cluster (PTX ISA: mapa).
// Default semantics (.release at .cta scope): the arrival only says our wgmma reads are
// done (wait_group retired them); .release.cluster made ptxas put MEMBAR.ALL.GPU before
// every arrival, in the mainloop.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
  asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
               "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n"
               :: "r"(bar), "r"(rank) : "memory");
}
__device__ __forceinline__ void cluster_sync() {  // every thread; may follow divergent code
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
__device__ __forceinline__ void tma_prefetch(const TmaMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" :: "l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
// TMA-store epilogue (PTX ISA 9.7.9.25-27): the consumers write the staging tile with
// ordinary stores, make them visible to the async proxy, sync, and one thread stores it
__device__ __forceinline__ void named_sync(uint32_t id, uint32_t n) {
  asm volatile("bar.sync %0, %1;\n" :: "r"(id), "r"(n) : "memory");
}
// pingpong's order barrier: count n = both warpgroups; one syncs (waits), the other arrives
__device__ __forceinline__ void named_arrive(uint32_t id, uint32_t n) {
  asm volatile("bar.arrive %0, %1;\n" :: "r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void st_shared_b32(uint32_t a, uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;\n" :: "r"(a), "r"(v) : "memory");
}
__device__ __forceinline__ void fence_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void tma_store_2d(const TmaMap* map, uint32_t src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
               :: "l"(reinterpret_cast<uint64_t>(map)), "r"(src), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// .read: the stores have read their shared source (it may be overwritten)
__device__ __forceinline__ void bulk_wait_read0() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait0() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory"); }
// keep the compiler from moving accumulator reads/writes across the async wgmma
__device__ __forceinline__ void fence_acc(float& x) { asm volatile("" : "+f"(x) :: "memory"); }

"""
    + FLOAT_CONVERSIONS
    + r"""__device__ __forceinline__ uint32_t pack_f16x2(float lo, float hi) {
  uint32_t r; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  uint32_t r; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
"""
)


# a fused epilogue's vectors asked into L1 at a tile's start (Epilogue.prefetch)
HELPERS_PREFETCH = r"""__device__ __forceinline__ void prefetch_l1(const void* p) {
  asm volatile("prefetch.global.L1 [%0];" :: "l"(p));
}
"""


def params_sm90(
    out: str,
    c_type: str,
    tma_store: bool = False,
    batched: bool = False,
    epilogue: Epilogue = NO_EPILOGUE,
    stream_k: bool = False,
) -> list[Param]:
    """The kernel signature: the tensor maps by value (D's with the TMA-store epilogue),
    then C, D and the scalars (``tma_d`` nonzero: store D through its map); a stream-K
    kernel its workspace, shared-tile count and epoch (:func:`.streamk.sk_params`); a batched
    kernel appends the problem count, C's and D's batch strides and ``bat`` (BAT_A |
    BAT_B: which operands have rank-3 maps); a fused epilogue its tensors and strides
    (:meth:`~cutemma.kernels.epilogue.Epilogue.params`).

    >>> [p.name for p in params_sm90("bf16", "bf16")][:4]
    ['tmap_a', 'tmap_b', 'C', 'D']
    >>> [p.name for p in params_sm90("bf16", "bf16", True)][-1]
    'tma_d'
    >>> [p.name for p in params_sm90("bf16", "bf16", True, batched=True)][-5:]
    ['tma_d', 'L', 'ldc_l', 'ldd_l', 'bat']
    """
    batch = [Param("int", "L"), Param("long long", "ldc_l"), Param("long long", "ldd_l"),
             Param("int", "bat")]  # fmt: skip
    maps = ["tmap_a", "tmap_b"] + (["tmap_d"] if tma_store else [])
    return [
        *(Param("const __grid_constant__ TmaMap", m) for m in maps),
        Param(f"const {OUT_TYPES[c_type]}*", "C", restrict=False),
        Param(f"{OUT_TYPES[out]}*", "D", restrict=False),
        Param("int", "M"),
        Param("int", "N"),
        Param("int", "K"),
        Param("long long", "ldc_m"),
        Param("long long", "ldc_n"),
        Param("long long", "ldd_m"),
        Param("long long", "ldd_n"),
        Param("float", "alpha"),
        Param("float", "beta"),
        *([Param("int", "tma_d")] if tma_store else []),
        *(sk_params() if stream_k else []),
        *(batch if batched else []),
        *epilogue.params(),
    ]


def _tma_lines(
    plan: Sm90Plan, ops: str = "AB", rank3: bool = False, kt: str = "kt", prefetch: bool = False
) -> str:
    """The loads of one k tile (index kt) into stage `stage`, completing on its full barrier.

    In a cluster, this CTA loads its share of the shared operand (rank r: rows
    r * extent / cluster on) and multicasts it to every CTA of the cluster (same stage
    offset, their full barrier); the other operand it loads alone. ``ops``: the operands
    to load; ``rank3``: through rank-3 maps, problem ``l`` the third coordinate (a batched
    kernel, :func:`~cutemma.kernels.sm90.batched.tma_lines_batched`); ``kt``: the k tile's
    index in K (a stream-K piece's ``k_lo + kt``); ``prefetch``: the same tiles fetched into
    L2 only (``Sm90Config.pdl``, 2-D maps, clusters of 1).
    """
    out = []
    d, bl = ("3d", ", l") if rank3 else ("2d", "")
    for which, mn0 in (("A", "m0"), ("B", "n0")):
        if which not in ops:
            continue
        box = plan.tma[which]
        base = "a_dst" if which == "A" else "b_dst"
        multicast = plan.split(which) > 1
        sc, so, se = plan.share_shift(which)
        for dc, do, off in box.copies:
            if box.contiguous == "K":  # tensor dims (K, MN): coordinates (k, mn)
                c0, c1 = f"{kt} * BLOCK_K + {dc}", f"{mn0} + {do}"
            else:  # tensor dims (MN, K)
                c0, c1 = f"{mn0} + {dc}", f"{kt} * BLOCK_K + {do}"
            c0, c1 = c0.replace(" + 0", ""), c1.replace(" + 0", "")
            dst = f"{base} + {off * plan.elem_bytes}" if off else base
            tmap = f"&tmap_{which.lower()}"
            if prefetch:
                out.append(f"tma_prefetch_2d({tmap}, {c0}, {c1});")
            elif multicast:
                share, mask = _multicast(plan.config, which)
                c0 += f" + {share} * {sc}" if sc else ""
                c1 += f" + {share} * {so}" if so else ""
                dst += f" + {share} * {se * plan.elem_bytes}"
                out.append(f"tma_load_{d}_multicast({dst}, {tmap}, {c0}, {c1}{bl}, full, {mask});")
            elif plan.config.evict_first == which:
                out.append(f"tma_load_{d}_hint({dst}, {tmap}, {c0}, {c1}{bl}, full, l2_first);")
            else:
                out.append(f"tma_load_{d}({dst}, {tmap}, {c0}, {c1}{bl}, full);")
    return "\n".join(out)


def _multicast(config: Sm90Config, which: str) -> tuple[str, str]:
    """(this CTA's share of operand ``which``, the CTAs its copy lands in) as C expressions.
    In a line of CTAs (pairs) every CTA shares the operand: its share is its rank. In a
    cm x cn cluster (rank r at M position r % cm, N position r / cm: Sm90Config.cluster_mn)
    A is shared by the CTAs of its M position, its share its N position; B the other way.

    >>> _multicast(Sm90Config(cluster=2), "B"), _multicast(Sm90Config(cluster=4, multicast="AB"), "A")
    (('rank', '3'), ('(rank >> 1)', '(uint16_t)(0x5u << (rank & 1))'))
    """
    if config.multicast != "AB" and config.kcluster > 1:  # (the pair of this k share)
        cl = config.cluster
        return "rank", f"(uint16_t)({(1 << cl) - 1:#x}u << (crank - rank))"
    if config.multicast != "AB":
        return "rank", str((1 << config.cluster) - 1)
    cm, cn = config.cluster_mn  # (powers of 2)
    if which == "A":  # the CTAs of this M position: bits cm * j + i
        along_n = sum(1 << (cm * j) for j in range(cn))
        return f"(rank >> {cm.bit_length() - 1})", f"(uint16_t)({along_n:#x}u << (rank & {cm - 1}))"
    return (
        f"(rank & {cm - 1})",
        f"(uint16_t)({(1 << cm) - 1:#x}u << (rank & {config.cluster - cm}))",
    )


def peers(config: Sm90Config) -> tuple[int, ...]:
    """The XOR masks from this CTA's rank to each peer whose producer writes into its
    stages (and whose consumers so release them): every other CTA of a line; in a 2 x 2
    cluster the CTA of the same M position (A's sharer, rank ^ 2) and of the same N
    position (B's, rank ^ 1), not the diagonal one.

    >>> peers(Sm90Config(cluster=2)), peers(Sm90Config(cluster=4, multicast="AB"))
    ((1,), (1, 2))
    """
    cm, cn = config.cluster_mn
    return tuple(range(1, cm)) + tuple(d * cm for d in range(1, cn))


def _a_offsets(plan: Sm90Plan) -> str:
    """a_off[im][kb] of this warpgroup: the slice offsets, chosen once by warpgroup index."""
    offs = plan.descriptors["A"][1]
    rows = (
        ", ".join(by_warpgroup([offs[w, im, kb] for w in range(plan.tile_wgs)])
                  for kb in range(plan.k_blocks))
        for im in range(plan.mma_m)
    )  # fmt: skip
    return ", ".join("{" + row + "}" for row in rows)


def _release_stmt(config: Sm90Config) -> str:
    """Release a stage: this CTA's empty barrier, and in a cluster every peer's (their
    producers multicast into this CTA's stage too: :func:`peers`)."""
    if config.cluster == 1:
        return "mbar_arrive(prev_empty);"
    me = "crank" if config.kcluster > 1 else "rank"  # (the cluster rank: pairs are r, r ^ 1)
    arrive = " ".join(f"mbar_arrive_cluster(prev_empty, {me} ^ {p});" for p in peers(config))
    return f"{{ mbar_arrive(prev_empty); {arrive} }}"


def _accumulators(plan: Sm90Plan) -> str:
    """The consumer's accumulator arrays: one set, or fp8's promoted sets."""
    n = plan.acc_per_thread
    if plan.overlap:
        return (
            f"float acc0[{n}], acc1[{n}], accf[{n}];"
            "  // fp8: k tiles alternate acc0/acc1, promoted into accf"
        )
    if plan.split_n:
        lo, hi = (op.c.count for op in plan.split_halves[0])
        return (
            f"float accL[{lo}], accH[{hi}], accf[{n}];"
            "  // fp8: the N halves' wgmma sums, promoted into accf"
        )
    if plan.promote:
        return f"float acc[{n}], accf[{n}];  // fp8: each k tile's sums promoted into accf"
    out = f"float acc[{n}];"  # acc_f16: the f32 values (2 per register) the epilogue reads
    if plan.acc_f16:
        out += f"\nuint32_t acch[{n // 2}];  // F16 accumulators: f16x2 wgmma D registers"
    if plan.a_regs:
        out += "\n" + _a_register_setup(plan)
    return out


def _a_register_setup(plan: Sm90Plan) -> str:
    """RS: the A fragment registers and each thread's stage offsets (bytes) of its A values,
    one per key of the split (thread part from tid, the TiledMMA thread)."""
    split = plan.a_regload
    keys, _ = split.parts()
    tables: list[str] = []
    base = thread_expr("A_ld_base", split.thread, tables)
    if tables:  # pragma: no cover - the GMMA A layouts are layouts of tid
        raise TiledMmaError("RS A offsets: no layout of tid reproduces them")
    eb, regs = plan.elem_bytes, plan.tiled.atom.op.a.count
    lines = [
        f"// RS: A values at tv_layout_A_tiled {plan.tiled.tv_layout_A_tiled} of smem A",
        base,
        *(
            f"const uint32_t A_ld{j} = {eb} * "
            + (f"(A_ld_base ^ {key})" if key else "A_ld_base")
            + ";"
            for j, key in enumerate(keys)
        ),
        f"uint32_t a_frag[{plan.mma_m}][{plan.k_blocks}][{regs}];  // wgmma A registers",
    ]
    return "\n".join(lines)


def _epilogue(
    plan: Sm90Plan, out: str, c_type: str, batched: bool, epilogue: Epilogue = NO_EPILOGUE
) -> str:
    """TMA store through the staging tile when the output allows it (``tma_d``), else (and
    without a staging tile) stores from registers; batched: offset by the problem. A fused
    epilogue's ops (:mod:`cutemma.kernels.epilogue`) run in both, after its per-tile
    tensor pointers (``setup``)."""
    acc_name = "accf" if plan.promote else "acc"
    text = epilogue_lines(plan, out, c_type, acc_name, epilogue)
    if plan.tma_store:
        text = (
            block("if (tma_d)", tma_store_lines(plan, out, acc_name, batched, epilogue))
            + " else {\n"
            + indent(text)
            + "\n}"
        )
    if epilogue:
        text = epilogue.setup() + "\n" + text
    return batch_epilogue(text, out, c_type) if batched else text


def _lines(*parts: str) -> str:
    """The non-empty ``parts``, each one line or several: an option that does not apply
    gives "" and leaves no line behind.

    >>> _lines("a;", "", "b;\\nc;")
    'a;\\nb;\\nc;'
    """
    return "\n".join(p for p in parts if p)


def _loop(head: str, *body: str) -> str:
    """A loop whose opening text ``head`` ends inside its block
    (:func:`~cutemma.kernels.common.scheduler.tile_loop_sm90`, or stream-K's
    :func:`~cutemma.kernels.sm90.streamk.unit_loop` with its per-piece lines): ``body``
    indented under it, then the closing brace."""
    return _lines(head, indent(_lines(*body)), "}")


def _kernel(
    plan: Sm90Plan, name: str, signature: str, batched: bool, producer: str, consumer: str
) -> str:
    """The kernel, top to bottom: the aligned shared base, the ring's barriers (full[S] then
    empty[S], after the stages and the staging tile) initialised by thread 0, then
    warpgroup 0 runs ``producer`` and the others ``consumer``."""
    config, S, CL = plan.config, plan.stages, plan.config.cluster
    # the consumers of this CTA and of each peer whose stage this CTA's producer writes
    empty_arrivals = (1 + len(peers(config))) * plan.tile_wgs * 128 // CONSUMER.arrive_every
    init = _lines(
        block(
            f"for (int s = 0; s < {S}; ++s)",
            f"mbar_init(bars + {MB} * s, {PRODUCER.arrivals});  // full: the producer's expect_tx\n"
            f"mbar_init(bars + {MB * S} + {MB} * s, {empty_arrivals});"
            "  // empty: the consumers' signalling threads",
        ),
        f"mbar_init(bars + {plan.sk_bar_offset}, 1);  // stream-K fix-up: thread 0's copies"
        if plan.sk_bar_bytes
        else "",
        'asm volatile("fence.mbarrier_init.release.cluster;\\n" ::: "memory");',
        'asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");',
    )
    vec_d_batch = "(ldd_l % 2) == 0 && " if batched else ""
    body = _lines(
        "extern __shared__ __align__(1024) uint8_t smem_raw[];",
        "const uint32_t smem = (smem_addr(smem_raw) + 1023u) & ~1023u;  // SW128 pattern",
        f"const uint32_t bars = smem + {S * plan.stage_bytes + plan.bytes_D};"
        f"  // full[{S}] then empty[{S}]",
        "const int tiles_m = (M + BLOCK_M - 1) / BLOCK_M, tiles_n = (N + BLOCK_N - 1) / BLOCK_N;",
        tile_counts_sm90(CL, config.multicast, batched, config.cluster_mn, config.kcluster),
        f"const bool vec_d = ldd_n == 1 && (ldd_m % 2) == 0 && {vec_d_batch}"
        "(reinterpret_cast<uint64_t>(D) % 4) == 0;",
        block("if (threadIdx.x == 0)", init),
        "__syncthreads();" if CL == 1 else "cluster_sync();  // peers' barriers are initialised",
        block("if (threadIdx.x < 128)", producer) + " else {\n" + indent(consumer) + "\n}",
        "cluster_sync();  // no CTA leaves while a peer may still arrive on its barriers"
        if CL > 1
        else "",
    )
    ctas = CL * config.kcluster  # a cluster multicasts (CL) or shares a tile's k tiles
    cluster_dims = "" if ctas == 1 else f"__cluster_dims__({ctas}, 1, 1) "
    bounds = f"__launch_bounds__({config.threads}, 1)"
    return block(f'extern "C" __global__ void {cluster_dims}{bounds} {name}({signature})', body)


def _producer(plan: Sm90Plan, batched: bool) -> str:
    """Warpgroup 0: it gives registers back, and one thread waits for each stage to be
    empty, arms its full barrier with the stage's bytes and issues the TMA loads of A and B
    (:func:`cutemma.kernels.sm90.ring.producer_ops`)."""
    config, S = plan.config, plan.stages
    sk, pdl, kc = config.stream_k, config.pdl, config.kcluster
    if batched:
        loads = tma_lines_batched(plan, _tma_lines)
    else:
        loads = _tma_lines(plan, kt="(k_lo + kt)" if sk or kc > 1 else "kt")
    k_tile = _lines(
        _pdl_producer_wait(plan) if pdl else "",
        f"const uint32_t full = bars + {MB} * stage, empty = bars + {MB * S} + {MB} * stage;",
        f"mbar_wait(empty, phase ^ {PRODUCER.wait_flip});  // the consumers released it",
        f"mbar_expect_tx(full, {plan.bytes_A + plan.bytes_B});",
        f"const uint32_t a_dst = smem + stage * {plan.stage_bytes}, b_dst = a_dst + {plan.bytes_A};",
        loads,
        f"if (++stage == {S}) {{ stage = 0; phase ^= 1; }}",
    )
    issuer = _lines(
        "tma_prefetch(&tmap_a); tma_prefetch(&tmap_b);",
        "const uint64_t l2_first = l2_evict_first_policy();  // Sm90Config.evict_first"
        if config.evict_first
        else "",
        "bool pdl_first = true;  // Sm90Config.pdl: before the first load" if pdl else "",
        f"int stage = 0; uint32_t phase = {PRODUCER.start_phase};",
        _loop(
            _tile_head(config),
            raster_sm90(config.cluster, _along(config), batched, config.cluster_mn),
            block("for (int kt = 0; kt < k_tiles; ++kt)", k_tile),
        ),
        "griddep_launch_dependents();  // Sm90Config.pdl: every load issued, the "
        "next grid may take the SMs this one leaves"
        if pdl
        else "",
    )
    regs = REGISTER_SPLIT[config.consumers][0]
    return _lines(
        f'asm volatile("setmaxnreg.dec.sync.aligned.u32 {regs};\\n" ::: "memory");',
        "if (threadIdx.x == 0) {  // one thread issues every TMA load",
        indent(issuer),
        "}",
        producer_syncs(kc, config.cluster) if kc > 1 else "",
    )


def _tile_head(config: Sm90Config, pingpong: bool = False) -> str:
    """The opening of the tile loop (or block) both roles walk: stream-K's pieces, a
    kcluster kernel's one tile per cluster, or the persistent loop over tiles."""
    if config.stream_k:
        return unit_loop()
    if config.kcluster > 1:
        return loop_head(config.kcluster, config.cluster)
    return tile_loop_sm90(config, pingpong)


def _pdl_producer_wait(plan: Sm90Plan) -> str:
    """Sm90Config.pdl, before the producer's first load: the first piece's first ring of k
    tiles fetched into L2 while the previous grid may still run (a prefetch cannot read
    stale data: L2 is where every SM's writes meet), then the wait for that grid."""
    pk = "(k_lo + pk)" if plan.config.stream_k else "pk"
    body = _tma_lines(plan, kt=pk, prefetch=True)
    return block(
        "if (kt == 0 && pdl_first)",
        block(f"for (int pk = 0; pk < k_tiles && pk < {plan.stages}; ++pk)", body)
        + "\ngriddep_wait();  // the previous grid's writes are visible from here on"
        + "\npdl_first = false;",
    )


def _consumer(
    plan: Sm90Plan,
    out: str,
    c_type: str,
    batched: bool,
    tables: list[str],
    epilogue: Epilogue = NO_EPILOGUE,
) -> str:
    config, S = plan.config, plan.stages
    pingpong = config.schedule == "pingpong"
    m_t, n_t, _ = plan.epilogue
    # pingpong (cutemma.kernels.sm90.ring.pingpong_consumer_ops): warpgroup wg takes every
    # other tile of the CTA; its ring position skips the other's tile's k tiles; the
    # TiledMMA is one warpgroup's; the order barrier hands the tensor cores over after
    # each mainloop
    skip = f"{{ const int pos = stage + k_tiles; stage = pos % {S}; phase ^= (pos / {S}) & 1; }}"
    if pingpong:
        ids = (
            "const int wg = (threadIdx.x - 128) / 128, tid = threadIdx.x % 128;"
            "  // consumer warpgroup; TiledMMA thread (one warpgroup per tile)"
        )
    else:
        ids = "const int tid = threadIdx.x - 128, wg = tid / 128;  // TiledMMA thread, consumer"
    # thread tables (when no layout gives a value) in the order the kernel declares them
    c_m, c_n = thread_expr("C_m", m_t, tables), thread_expr("C_n", n_t, tables)
    staging = ""
    if plan.tma_store:  # the staging tile (if any) lies after the stages: 1024-aligned
        d_base = S * plan.stage_bytes
        half = f" + wg * {plan.bytes_D // 2};" if pingpong else ";"
        staging = (
            f"const uint32_t d_smem = smem + {d_base}{half}  // staging tile {plan.smem_D}\n"
            + thread_expr("d_thr", plan.epilogue_smem[0], tables)
        )
    hand_over = (
        f"if (tile + gridDim.x < tiles) named_arrive({ORDER_BAR} + (wg ^ 1), 256);"
        "  // its turn (it has a next tile)"
    )
    main = mainloop(plan, _release_stmt(config), hand_over if pingpong else "")
    epi = _epilogue(plan, out, c_type, batched, epilogue)
    if config.stream_k:  # a piece's sums: handed over, or the later pieces' added in
        staging_tile = ("d_smem", plan.bytes_D) if plan.sk_bar_bytes else None
        main += "\n" + fixup("accf" if plan.promote else "acc", plan.acc_per_thread,
                             plan.consumer_threads, staging_tile,
                             together=config.split is not None)  # fmt: skip
        epi = block("if (k_lo == 0)", epi) + "  // the tile's owner stores it"
    if config.kcluster > 1:  # the cluster's k shares added; rank 0 stores the tile
        main += "\n" + kcluster_fixup("accf" if plan.promote else "acc", plan.acc_per_thread,
                                      plan.consumer_threads, config.kcluster,
                                      config.cluster)  # fmt: skip
        epi = block("if (krank == 0)", epi) + "  // rank 0 holds the tile's sums"
    regs = REGISTER_SPLIT[config.consumers][1]
    return _lines(
        f'asm volatile("setmaxnreg.inc.sync.aligned.u32 {regs};\\n" ::: "memory");',
        "griddep_wait();  // Sm90Config.pdl: C, D and the stream-K slots after the previous grid"
        if config.pdl
        else "",
        ids,
        f"const bool signals = tid % {CONSUMER.arrive_every} == 0;  // arrives on empty",
        comment(f"partition_C: tv_layout_C_tiled {plan.tiled.tv_layout_C_tiled}"),
        c_m,
        c_n,
        f"const uint32_t a_off[{plan.mma_m}][{plan.k_blocks}] = {{{_a_offsets(plan)}}};",
        _accumulators(plan),
        staging,
        f"int stage = 0; uint32_t phase = {CONSUMER.start_phase};",
        f"uint32_t sk_phase = 0; const uint32_t sk_bar = bars + {plan.sk_bar_offset};"
        "  // stream-K: the fix-up's copies into the staging tile"
        if plan.sk_bar_bytes
        else "",
        "bool turned = false;  // alternate: issued a batch yet"
        if config.schedule == "alternate"
        else "",
        f"if (wg == 1) {skip}  // warpgroup 1 starts at the CTA's second tile" if pingpong else "",
        _loop(
            _tile_head(config, pingpong),
            raster_sm90(config.cluster, _along(config), batched, config.cluster_mn),
            epilogue.prefetch("m0", "n0", config.block_m, config.block_n, "tid")
            if epilogue and plan.tma_store
            else "",
            f"if (tile != blockIdx.x) named_sync({ORDER_BAR} + wg, 256);"
            "  // my turn: the other warpgroup issued its tile's last wgmma"
            if pingpong
            else "",
            main,
            "// epilogue: alpha * acc + beta * C, partition_C, predicated at the edges",
            epi,
            f"{skip}  // the other warpgroup's tile" if pingpong else "",
        ),
        "if (tid == 0) bulk_wait0();  // the last store is done before the CTA leaves"
        if plan.tma_store
        else "",
    )


def _along(config: Sm90Config) -> str:
    """Which way a cluster's pairs run: along N when they share A, else along M."""
    return {"A": "N", "B": "M", "AB": "MN"}[config.multicast]


def _header(plan: Sm90Plan, dtype: str, a_major: str, b_major: str, out: str) -> str:
    """The comment that opens the source: the config, types, TiledMMA, shared layouts with
    their descriptors, TMA boxes."""
    config, A, B = plan.config, plan.tma["A"], plan.tma["B"]
    # (M x) N x k repeats; one wgmma across N keeps the text built-in kernels always had
    grid = (
        (plan.mma_m, plan.mma_n, plan.k_blocks) if plan.mma_n > 1 else (plan.mma_m, plan.k_blocks)
    )
    wgmma_grid = " x ".join(map(str, grid))
    desc_A, desc_B = (f"{plan.descriptors[w][0]:#018x}" for w in "AB")
    return comment(
        _lines(
            f"cutemma sm90 GEMM: D = alpha * A @ B + beta * C; config {config.name}, "
            f"{plan.stages} stages",
            f"{dtype} in, f32 accumulate, {out} out; A {a_major}-major, B {b_major}-major",
            f"TiledMMA {plan.atom_name} x ({config.consumers // config.consumers_n},"
            f"{config.consumers_n},1): tile "
            f"{plan.tiled.tile_size_mnk}, {wgmma_grid} wgmma per k tile per warpgroup",
            f"smem A {plan.smem_A} (desc {desc_A} | window addr >> 4)",
            f"smem B {plan.smem_B} (desc {desc_B} | window addr >> 4)",
            f"TMA A box {A.box} x {len(A.copies)} {A.swizzle}; "
            f"B box {B.box} x {len(B.copies)} {B.swizzle}",
            f"A slice offsets per warpgroup {plan.desc_offsets('A')}",
        )
    )


def _defines(plan: Sm90Plan) -> str:
    config = plan.config
    pingpong = config.schedule == "pingpong"
    return "\n".join(
        f"#define {k} {v}"
        for k, v in (
            ("BLOCK_M", config.block_m),
            ("BLOCK_N", config.block_n),
            ("BLOCK_K", plan.block_k),
            ("GROUP_M", config.group_m),
            ("EPI_BAR", f"({EPI_BAR} + wg)" if pingpong else EPI_BAR),
            ("DESC_A", f"{plan.descriptors['A'][0]:#x}ull"),
            ("DESC_B", f"{plan.descriptors['B'][0]:#x}ull"),
        )
    )


def gemm_sm90_source(
    config: Sm90Config,
    dtype: str,
    a_major: str,
    b_major: str,
    out: str = "f32",
    c_type=None,
    batched: bool = False,
    epilogue: Epilogue = NO_EPILOGUE,
) -> str:
    """The CUDA C++ translation unit of one sm90 GEMM kernel (deterministic).

    ``epilogue``: fused ops on each value before the output cast, in both the register and
    the TMA-store epilogue (:mod:`cutemma.kernels.epilogue`; 2-D kernels only); without
    one the source is what it always was.

    ``batched``: L problems in one launch (the tile index walks L x tiles, problem
    outermost; rank-3 TMA maps for the operands with a batch, C and D offset by their
    batch strides); False gives the 2-D kernel, its source unchanged by the option.

    >>> src = gemm_sm90_source(Sm90Config(128, 256), "f16", "M", "N", "f32")
    >>> "setmaxnreg.inc.sync.aligned.u32" in src, "m64n256k16.f32.f16.f16" in src
    (True, True)
    >>> "cp.async.bulk.tensor.3d" in gemm_sm90_source(Sm90Config(), "bf16", "K", "N", "bf16",
    ...                                               batched=True)
    True
    """
    if epilogue and batched:
        raise TiledMmaError("gemm_sm90_source: a fused epilogue is for 2-D kernels, not batched")
    plan = Sm90Plan(config, dtype, a_major, b_major, out)
    c_type = c_type or out
    name = kernel_name_sm90(config, dtype, a_major, b_major, out, c_type, batched, epilogue)
    if config.stream_k and batched:
        raise TiledMmaError("gemm_sm90_source: stream_k is for 2-D kernels, not batched")
    if config.pdl and batched:
        raise TiledMmaError("gemm_sm90_source: pdl is for 2-D kernels, not batched")
    if config.kcluster > 1 and batched:
        raise TiledMmaError("gemm_sm90_source: kcluster is for 2-D kernels, not batched")
    check_outs("gemm_sm90_source", out, c_type)
    tables: list[str] = []  # filled by the renderers that index thread tables
    signature = ", ".join(
        p.declaration
        for p in params_sm90(out, c_type, plan.tma_store, batched, epilogue, plan.config.stream_k)
    )
    producer = _producer(plan, batched)
    consumer = _consumer(plan, out, c_type, batched, tables, epilogue)
    kern = _kernel(plan, name, signature, batched, producer, consumer)
    helpers = HELPERS_SM90 + (HELPERS_SM90_BATCHED if batched else "") + epilogue.helpers()
    helpers += HELPERS_PREFETCH if plan.tma_store and epilogue.reads_vectors else ""
    helpers += HELPERS_STREAMK + HELPERS_STREAMK_SYNC if config.stream_k else ""
    helpers += HELPERS_KCLUSTER if config.kcluster > 1 else ""
    if config.evict_first:
        helpers += HELPERS_EVICT_FIRST + (HELPERS_EVICT_FIRST_3D if batched else "")
    if config.pdl:
        helpers += HELPERS_PDL
    if plan.tma_store and plan.d_major == "MN":
        helpers += HELPERS_TMAT
    header = _header(plan, dtype, a_major, b_major, out)
    return translation_unit(header, FIXED_WIDTH_TYPES, _defines(plan), helpers, *tables, kern)


def sass_summary(
    config: Sm90Config, dtype: str, a_major: str, b_major: str, out: str = "f32"
) -> dict[str, int]:
    """Compile one sm90 kernel (NVRTC, sm_90a, no GPU needed) and count what matters in its
    SASS: tensor-core ops, TMA loads, mbarrier ops, registers, local memory bytes.

    >>> s = sass_summary(Sm90Config(), "bf16", "K", "K", "bf16")  # doctest: +SKIP
    >>> s["HGMMA"], s["UTMALDG"], s["local_bytes"]  # doctest: +SKIP
    (4, 2, 0)
    """
    from cutemma.cuda import compile, count_instructions, local_memory_use, resource_usage, sass

    cubin = compile(gemm_sm90_source(config, dtype, a_major, b_major, out), "sm_90a")
    counts = count_instructions(sass(cubin))
    usage = next(iter(resource_usage(cubin).values()))
    local = local_memory_use(cubin)
    keys = ("HGMMA", "QGMMA", "UTMALDG", "UTMASTG", "SYNCS", "USETMAXREG", "STG", "LDG", "STS")
    return {k: counts.get(k, 0) for k in keys} | {
        "registers": usage.get("REG", 0),
        "local_bytes": (local.local_bytes or 0) + (local.stack_bytes or 0),
    }
