"""Probe kernels for the sm90 TMA and bulk-copy atoms, checked against :mod:`cutemma.emulate.tma`.

Each probe is one small CTA program per box (the grid walks a table of box coordinates,
some inside the tensor, some across its edges or at negative coordinates):

- ``LOAD``: one thread arms an mbarrier with the box's bytes and issues
  ``cp.async.bulk.tensor`` into a shared buffer pre-filled with 0xAB; every thread waits and
  writes the buffer out. It must equal :func:`~cutemma.emulate.tma.tma_load` (swizzle, zeros
  outside the tensor).
- ``LOAD_MULTICAST``: a cluster of 2 CTAs (``__cluster_dims__``); rank 0 loads the box into
  both (mask 0b11), each CTA waits on its own barrier and writes its copy out.
- ``STORE`` / ``REDUCE_ADD``: the CTA fills shared memory from the input, fences it to the
  async proxy, one thread stores (adds) the box; global memory must equal
  :func:`~cutemma.emulate.tma.tma_store` / :func:`~cutemma.emulate.tma.tma_reduce_add` applied
  box after box to the same starting tensor (clipped at the edges).
- ``BULK_COPY_G2S`` / ``S2G``: ``cp.async.bulk`` of a byte range, no tensor map.

The tensor map is built on the GPU machine with the driver (:func:`cutemma.copy.tma.
encode_tensor_map`) for the device buffer and passed in global memory (the kernel acquires it
with ``fence.proxy.tensormap::generic``). Compiled anywhere; the SASS must hold the TMA unit's
instruction (UTMALDG, UTMASTG, UTMAREDG, UBLKCP) and no local memory.

>>> p = tma_probes()[0]
>>> p.name, p.sass_kind, "cp.async.bulk.tensor.2d" in p.source
('SM90_TMA_LOAD<8192> SW128 bf16 box (64, 8)', 'UTMALDG', True)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from cutemma.copy import make_copy_atom
from cutemma.copy.tma import TMA_DTYPES, TensorMapArgs, TmaBox, tensor_map_args
from cutemma.cuda.source import (
    FIXED_WIDTH_TYPES,
    SMEM_ADDR,
    Param,
    comment,
    constant_table,
    kernel,
    translation_unit,
)

SASS_KIND = {
    "LOAD": "UTMALDG",
    "LOAD_MULTICAST": "UTMALDG",
    "STORE": "UTMASTG",
    "REDUCE_ADD": "UTMAREDG",
    "BULK_COPY_G2S": "UBLKCP",
    "BULK_COPY_S2G": "UBLKCP",
}
THREADS = 128
FILL = 0xAB  # shared memory before a load: a byte no box element may keep

HELPERS = (
    "\n"
    + SMEM_ADDR
    + r"""// PTX ISA 9.7.13.15 mbarrier: init with one arrival; the phase completes when that arrival
// and the expected transaction bytes are both done
__device__ __forceinline__ void arm(uint32_t bar, uint32_t bytes) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n"
               :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void wait0(uint32_t bar) {
  uint32_t done;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(bar) : "memory");
  } while (!done);
}
// the tensor map lives in global memory, written by the host before the launch
__device__ __forceinline__ void acquire_map(const void* map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n"
               :: "l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
"""
)


@dataclass(frozen=True)
class TmaProbe:
    """One TMA or bulk-copy probe: kernel source, the box, and the coordinates of each CTA."""

    name: str
    kind: str
    source: str
    kernel_name: str
    dtype: str
    box: tuple[int, ...]
    swizzle: str
    dims: tuple[int, ...]
    strides: tuple[int, ...]  # element strides of dims 1..
    coords: tuple[tuple[int, ...], ...]  # one per box (for bulk copies: (src byte, dst byte))
    cluster: int = 1
    arch: str = "sm_90"
    threads: int = THREADS

    @property
    def sass_kind(self) -> str:
        return SASS_KIND[self.kind]

    @property
    def elem_bytes(self) -> int:
        return TMA_DTYPES[self.dtype][2]

    @property
    def box_bytes(self) -> int:
        return int(np.prod(self.box)) * self.elem_bytes

    @property
    def grid(self) -> int:
        return len(self.coords) * self.cluster

    @property
    def global_bytes(self) -> int:
        """Bytes of the global tensor (up to its last element)."""
        last = (self.dims[0] - 1) + sum((d - 1) * s for d, s in zip(self.dims[1:], self.strides))
        return (last + 1) * self.elem_bytes

    def map_args(self, address: int) -> TensorMapArgs:
        """The tensor-map arguments for the global tensor at ``address``.

        >>> tma_probes()[0].map_args(0).box_dim
        (64, 8)
        """
        box = TmaBox(self.dtype, "K", self.box[:2], self.swizzle, ((0, 0, 0),))
        args = tensor_map_args(box, address, self.dims, self.strides)
        return dataclasses.replace(args, box_dim=tuple(self.box))


def _coords_table(p_coords) -> str:
    return constant_table("int", "coords", [c for cs in p_coords for c in cs])


def _crd_operands(rank: int, first: int) -> str:
    return "{" + ", ".join(f"%{first + d}" for d in range(rank)) + "}"


def _crd_inputs(rank: int, box_index: str) -> str:
    return ", ".join(f'"r"(coords[{box_index} * {rank} + {d}])' for d in range(rank))


def _tensor_source(kind: str, name: str, rank: int, nbytes: int, coords, cluster: int) -> str:
    """Kernel text of a TMA load / multicast load / store / reduce-add probe."""
    crd = _crd_operands(rank, 2 if kind in ("STORE", "REDUCE_ADD") else 3)
    b = "(blockIdx.x / 2)" if cluster == 2 else "blockIdx.x"
    lines = [
        f"__shared__ __align__(1024) uint8_t box[{nbytes}];",
        "__shared__ __align__(8) uint64_t bar;",
        "const int t = threadIdx.x;",
        "const uint32_t s = smem_addr(box), mb = smem_addr(&bar);",
    ]
    if kind in ("LOAD", "LOAD_MULTICAST"):
        rank_id = "(blockIdx.x % 2)" if cluster == 2 else "0"
        ptx = (
            f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            + (".multicast::cluster" if kind == "LOAD_MULTICAST" else "")
            + f" [%0], [%1, {crd}], [%2]"
            + (f", %{3 + rank};" if kind == "LOAD_MULTICAST" else ";")
        )
        mask = ', "h"((uint16_t)3)' if kind == "LOAD_MULTICAST" else ""
        lines += [
            f"for (int i = t; i < {nbytes}; i += blockDim.x) box[i] = {FILL};",
            "if (t == 0) {",
            '  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\\n" :: "r"(mb) : "memory");',
            '  asm volatile("fence.mbarrier_init.release.cluster;\\n" ::: "memory");',
            "}",
            "// the fill (generic proxy) before the TMA's writes (async proxy)",
            'asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");',
            "__syncthreads();",
            f"if (t == 0) arm(mb, {nbytes});",
            "cluster_sync();" if cluster == 2 else "",
            f"if (t == 0 && {rank_id} == 0) {{",
            "  acquire_map(map);",
            f'  asm volatile("{ptx}\\n" :: "r"(s), "l"(reinterpret_cast<uint64_t>(map)), '
            f'"r"(mb), {_crd_inputs(rank, b)}{mask} : "memory");',
            "}",
            "wait0(mb);",
            f"for (int i = t; i < {nbytes}; i += blockDim.x) out[blockIdx.x * {nbytes} + i] = box[i];",
            "cluster_sync();  // no CTA leaves while its peer's copy may still land"
            if cluster == 2
            else "",
        ]
    else:
        op = "cp.async.bulk.tensor" if kind == "STORE" else "cp.reduce.async.bulk.tensor"
        add = ".add" if kind == "REDUCE_ADD" else ""
        ptx = f"{op}.{rank}d.global.shared::cta{add}.tile.bulk_group [%0, {crd}], [%1];"
        lines += [
            f"for (int i = t; i < {nbytes}; i += blockDim.x) box[i] = in[blockIdx.x * {nbytes} + i];",
            "// each writer's stores made visible to the async proxy, then one thread copies",
            'asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");',
            "__syncthreads();",
            "if (t == 0) {",
            "  acquire_map(map);",
            f'  asm volatile("{ptx}\\n" :: "l"(reinterpret_cast<uint64_t>(map)), "r"(s), '
            f'{_crd_inputs(rank, b)} : "memory");',
            '  asm volatile("cp.async.bulk.commit_group;\\n" ::: "memory");',
            '  asm volatile("cp.async.bulk.wait_group 0;\\n" ::: "memory");',
            "}",
            "__syncthreads();  // the warp stays whole while lane 0 drives the TMA unit",
        ]
    params = [Param("const uint8_t*", "in"), Param("uint8_t*", "out"), Param("const void*", "map")]
    k = kernel(name, params, "\n".join(x for x in lines if x), THREADS)
    if cluster == 2:
        k = k.replace("__global__ void ", "__global__ void __cluster_dims__(2, 1, 1) ", 1)
    return translation_unit(
        FIXED_WIDTH_TYPES,
        comment(f"copy probe of {kind}: a TMA box per CTA at coords[], checked on the CPU"),
        HELPERS,
        _coords_table(coords),
        k,
    )


def _bulk_source(kind: str, name: str, nbytes: int, offsets) -> str:
    lines = [
        f"__shared__ __align__(128) uint8_t buf[{nbytes}];",
        "__shared__ __align__(8) uint64_t bar;",
        "const int t = threadIdx.x, b = blockIdx.x;",
        "const uint32_t s = smem_addr(buf), mb = smem_addr(&bar);",
        "const uint8_t* src = in + coords[2 * b];",
        "uint8_t* dst = out + coords[2 * b + 1];",
    ]
    if kind == "BULK_COPY_G2S":
        lines += [
            f"for (int i = t; i < {nbytes}; i += blockDim.x) buf[i] = {FILL};",
            "if (t == 0) {",
            '  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\\n" :: "r"(mb) : "memory");',
            '  asm volatile("fence.mbarrier_init.release.cluster;\\n" ::: "memory");',
            "}",
            'asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");',
            "__syncthreads();",
            "if (t == 0) {",
            f"  arm(mb, {nbytes});",
            '  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes'
            f' [%0], [%1], {nbytes}, [%2];\\n" :: "r"(s), "l"(src), "r"(mb) : "memory");',
            "}",
            "wait0(mb);",
            f"for (int i = t; i < {nbytes}; i += blockDim.x) dst[i] = buf[i];",
        ]
    else:
        lines += [
            f"for (int i = t; i < {nbytes}; i += blockDim.x) buf[i] = src[i];",
            'asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");',
            "__syncthreads();",
            "if (t == 0) {",
            '  asm volatile("cp.async.bulk.global.shared::cta.bulk_group'
            f' [%0], [%1], {nbytes};\\n" :: "l"(dst), "r"(s) : "memory");',
            '  asm volatile("cp.async.bulk.commit_group;\\n" ::: "memory");',
            '  asm volatile("cp.async.bulk.wait_group 0;\\n" ::: "memory");',
            "}",
            "__syncthreads();  // the warp stays whole while lane 0 drives the TMA unit",
        ]
    params = [Param("const uint8_t*", "in"), Param("uint8_t*", "out"), Param("const void*", "map")]
    return translation_unit(
        FIXED_WIDTH_TYPES,
        comment(f"copy probe of {kind}: {nbytes} bytes per CTA, (source, destination) offsets"),
        HELPERS,
        constant_table("int", "coords", [c for cs in offsets for c in cs]),
        kernel(name, params, "\n".join(lines), THREADS),
    )


# (kind, dtype, swizzle, box, dims, row strides, coords): edges, negative coordinates,
# every swizzle, rank 3, and overlapping reduction boxes. Stores and reductions stay where
# emulate.tma models them (coordinates >= 0; rows a whole number of 16 bytes where a box
# crosses them): on the H100 a store at a negative coordinate traps (illegal instruction)
# and a u8 store crossing a 50-byte row wrote past it (bench/results/verify-copy-h100.json).
PLAN = [
    ("LOAD", "bf16", "SW128", (64, 8), (100, 20), (104,), ((0, 0), (64, 16), (-8, -3))),
    ("LOAD", "bf16", "SW64", (32, 8), (40, 9), (48,), ((0, 0), (16, 4))),
    ("LOAD", "f32", "SW32", (8, 8), (12, 10), (12,), ((0, 0), (8, 6))),
    ("LOAD", "u8", "INTER", (48, 3), (50, 5), (64,), ((0, 0), (16, 4))),
    ("LOAD", "f32", "SW128", (32, 4, 2), (50, 6, 3), (56, 336), ((0, 0, 0), (20, 3, 2))),
    ("LOAD_MULTICAST", "bf16", "SW128", (64, 8), (100, 20), (104,), ((0, 0), (64, 16))),
    ("STORE", "bf16", "SW128", (64, 8), (96, 20), (104,), ((0, 0), (64, 16), (8, 8))),
    ("STORE", "bf16", "SW64", (32, 8), (40, 9), (48,), ((0, 0), (32, 4))),
    ("STORE", "f32", "SW32", (8, 8), (12, 10), (12,), ((4, 0), (8, 8))),
    ("STORE", "u8", "INTER", (48, 3), (48, 5), (64,), ((0, 0), (16, 4))),
    ("REDUCE_ADD", "f32", "SW128", (32, 8), (40, 12), (40,), ((0, 0), (16, 4), (20, 8))),
    ("REDUCE_ADD", "f32", "INTER", (16, 4, 2), (20, 5, 3), (20, 100), ((0, 0, 0), (8, 2, 2))),
]
BULK_PLAN = [
    ("BULK_COPY_G2S", 1008, ((0, 0), (48, 1024))),
    ("BULK_COPY_S2G", 1008, ((16, 0), (1040, 1024))),
]


def _kname(*parts) -> str:
    raw = "probe_" + "_".join(str(p) for p in parts)
    return "".join(c if c.isalnum() else "_" for c in raw)


def tma_probes() -> list[TmaProbe]:
    """Every TMA / bulk-copy probe (12 tensor-map boxes plans, 2 bulk copies).

    >>> [p.kind for p in tma_probes()].count("STORE"), len(tma_probes())
    (4, 14)
    """
    out = []
    for i, (kind, dtype, sw, box, dims, strides, coords) in enumerate(PLAN):
        eb = TMA_DTYPES[dtype][2]
        nbytes = int(np.prod(box)) * eb
        atom = make_copy_atom(f"SM90_TMA_{kind}<{nbytes * 8}>", "uint8_t")
        cluster = 2 if kind == "LOAD_MULTICAST" else 1
        kname = _kname(kind, i, sw, dtype)
        src = _tensor_source(kind, kname, len(box), nbytes, coords, cluster)
        name = f"{atom.name} {sw} {dtype} box {box}"
        out.append(TmaProbe(name, kind, src, kname, dtype, box, sw, dims, strides, coords, cluster))
    for kind, nbytes, offsets in BULK_PLAN:
        atom = make_copy_atom(f"SM90_{kind}<{nbytes * 8}>", "uint8_t")
        kname = _kname(kind, nbytes)
        src = _bulk_source(kind, kname, nbytes, offsets)
        out.append(
            TmaProbe(atom.name, kind, src, kname, "u8", (nbytes,), "INTER", (4096,), (), offsets)
        )
    return out


def expected(p: TmaProbe, x: np.ndarray, out0: np.ndarray) -> np.ndarray:
    """The output buffer (bytes) the probe must leave, from the CPU emulation.

    ``x`` is the input buffer, ``out0`` the output buffer before the launch (both uint8).

    >>> p = tma_probes()[-2]                                   # bulk G2S
    >>> x = np.arange(4096, dtype=np.uint32).astype(np.uint8)
    >>> expected(p, x, np.zeros(4096, np.uint8))[1024:1027].tolist()
    [48, 49, 50]
    """
    from cutemma.emulate.tma import bulk_copy, tma_load, tma_reduce_add, tma_store

    if p.kind.startswith("BULK"):
        out = out0.copy()
        for s, d in p.coords:
            bulk_copy(x, out, s, d, p.box[0])
        return out
    npt = _numpy_type(p.dtype)
    args = p.map_args(0)
    if p.kind in ("LOAD", "LOAD_MULTICAST"):
        g = x[: p.global_bytes].view(npt)
        boxes = [tma_load(args, g, c) for c in p.coords for _ in range(p.cluster)]
        return np.concatenate([b.view(np.uint8) for b in boxes])
    g = out0.copy()
    gv = g[: p.global_bytes].view(npt)
    for i, c in enumerate(p.coords):
        smem = x[i * p.box_bytes : (i + 1) * p.box_bytes].view(npt)
        (tma_reduce_add if p.kind == "REDUCE_ADD" else tma_store)(args, smem, gv, c)
    return g


def _numpy_type(dtype: str):
    return {1: np.uint8, 2: np.uint16, 4: np.float32}[TMA_DTYPES[dtype][2]]


def probe_buffers(p: TmaProbe, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(input bytes, output bytes before the launch) of a probe: distinct nonzero values;
    f32 tensors hold small integers so that a reduction is exact in any order.

    >>> x, o = probe_buffers(tma_probes()[0])
    >>> x.size >= tma_probes()[0].global_bytes, o.size
    (True, 3072)
    """
    rng = np.random.default_rng(seed)
    eb = p.elem_bytes
    if p.kind in ("LOAD", "LOAD_MULTICAST"):
        n_in, n_out = p.global_bytes, p.grid * p.box_bytes
    elif p.kind.startswith("BULK"):
        n_in = n_out = 4096
    else:
        n_in, n_out = len(p.coords) * p.box_bytes, p.global_bytes
    n_in, n_out = -(-n_in // 16) * 16, -(-n_out // 16) * 16

    def values(nbytes: int, lo: int) -> np.ndarray:
        if eb == 4:
            return rng.integers(lo, lo + 1000, nbytes // 4).astype(np.float32).view(np.uint8)
        if eb == 2:
            return rng.integers(lo, 60000, nbytes // 2).astype(np.uint16).view(np.uint8)
        return rng.integers(1, 255, nbytes).astype(np.uint8)

    return values(n_in, 1), values(n_out, 2000)
