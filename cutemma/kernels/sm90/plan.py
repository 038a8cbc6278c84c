"""Sm90Plan: every number the Hopper (wgmma + TMA) GEMM kernel uses, from layouts (its
config, :class:`Sm90Config`, is in :mod:`cutemma.kernels.sm90.config`, re-exported here).

The kernel is warp-specialised: warpgroup 0 produces (one thread issues the TMA loads of
each k tile into a ring of shared-memory stages), warpgroups 1..C consume (each runs
``wgmma`` on its rows of the block tile). The plan holds:

- the TiledMMA: a GMMA SS atom ``SM90_64xNxK_F32..._SS`` from the catalog, N = block_n
  (or the config's ``wgmma_n``, block_n / N of them side by side), repeated over the
  consumer warpgroups along M;
- the stage layouts of A and B: ``tile_to_shape(gmma_layout_atom(major, swizzle, dtype),
  (extent, block_k))`` (MN-major tiles along K first, so one TMA box fills 64 MN rows);
- every wgmma descriptor, from ``make_gmma_desc`` on the (64, K-atom) slice each
  warpgroup reads in each k block: the bits the descriptors share, and the byte offset
  of each slice in the stage (what the kernel adds to the stage address);
- the TMA boxes that fill each stage (:func:`cutemma.copy.tma.tma_box` of the same
  layouts), and the partition of the accumulators (``partition_C``) for the epilogue.

>>> p = Sm90Plan(Sm90Config(), "bf16", "K", "K")
>>> p.atom_name, p.consumer_threads
('SM90_64x128x16_F32BF16BF16_SS', 256)
>>> p.smem_A(1, 0), p.smem_A(8, 0), p.smem_A(0, 8)  # 128-byte rows, 16-byte chunks swizzled
(72, 512, 8)
>>> p.desc_offsets("A")[1], p.desc_offsets("B")
((8192, 8224, 8256, 8288), (0, 32, 64, 96))
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from cutemma.copy.tma import TmaBox, tma_box
from cutemma.errors import LayoutError, TiledMmaError
from cutemma.hardware import WGMMA_N_STEP
from cutemma.kernels.common.partition import Split, ThreadValue, c_partition, split_offsets
from cutemma.kernels.sm90.config import (  # noqa: F401 - the config's names, re-exported
    ALIGN_SLACK,
    ATOMS_SM90,
    BARRIER_BYTES,
    CONSUMER_REGS,
    EPILOGUES,
    FP8,
    MAX_STAGES,
    NON_ACC_REGS,
    OUTS_SM90,
    PRODUCER_REGS,
    PROMOTES,
    REGISTER_SPLIT,
    REGS_3_CONSUMERS,
    SCHEDULES,
    SMEM_LIMIT,
    STAGING_ELEM_BYTES,
    SWIZZLES,
    TMA_EPILOGUES,
    TMA_STORE_OUTS,
    WARPGROUP,
    Sm90Config,
    split_swizzles,
    split_widths,
    staging_bytes,
    store_passes,
)
from cutemma.kernels.sm90.kcluster import reduce_bytes
from cutemma.layout import ComposedLayout, slice_and_offset, tile_to_shape, zipped_divide
from cutemma.mma.operation import Operation
from cutemma.mma.traits import mode_table, tv_table
from cutemma.smem import GMMA_DESC_FIELDS, gmma_layout_atom, make_gmma_desc
from cutemma.tiled import make_tiled_mma


def stage_layout(
    extent: int,
    block_k: int,
    major: str,
    dtype: str,
    swizzle: str | None = None,
    allowed: tuple[str, ...] = SWIZZLES,
) -> ComposedLayout:
    """One stage of an operand: (extent, block_k), the widest GMMA swizzle atom of
    ``allowed`` that tiles it (``swizzle``: that mode's atom, or an error naming it).

    K-major atoms are one swizzle row of K; MN-major atoms one row of MN by 8 K, tiled along
    K first (order (1, 0)) so that the 64 (128-byte) MN rows of a TMA box are one block.

    >>> lay = stage_layout(128, 64, "MN", "bf16")
    >>> lay(64, 0), lay(0, 8), lay(1, 1)  # 64-row blocks 8 KiB apart; K rows of 128 bytes
    (4096, 512, 73)
    """
    for sw in allowed if swizzle is None else (swizzle,):
        atom = gmma_layout_atom(major, sw, dtype)
        r, c = atom.shape
        if extent % r == 0 and block_k % c == 0:
            order = (1, 0) if major == "MN" else None
            return tile_to_shape(atom, (extent, block_k), order)
    mode = "swizzled GMMA" if swizzle is None else f"{swizzle} GMMA"
    raise TiledMmaError(f"no {mode} atom tiles a {extent} x {block_k} {major}-major {dtype} stage")


def _field_mask(name: str) -> int:
    """The bits of a GMMA descriptor field (:data:`~cutemma.smem.GMMA_DESC_FIELDS`)."""
    return next(f for f in GMMA_DESC_FIELDS if f.name == name).mask


class Sm90Plan:
    """The layouts, descriptors, TMA boxes and partitions of one sm90 GEMM kernel.

    ``a_major`` 'K' (A row-major) or 'M'; ``b_major`` 'K' (B column-major) or 'N'.
    ``out`` (the output dtype, when known) decides whether the TMA-store epilogue's
    staging tile (``smem_D``) takes shared memory.
    """

    def __init__(
        self, config: Sm90Config, dtype: str, a_major: str, b_major: str, out: str | None = None
    ):
        if not isinstance(config, Sm90Config):
            raise TiledMmaError(f"Sm90Plan: expected an Sm90Config first, got {config!r}")
        if not isinstance(dtype, str) or dtype not in ATOMS_SM90:
            raise TiledMmaError(f"dtype {dtype!r}: the sm90 GEMM takes {', '.join(ATOMS_SM90)}")
        if out is not None and out not in OUTS_SM90:
            raise TiledMmaError(f"out {out!r}: the sm90 GEMM writes {', '.join(OUTS_SM90)}")
        if a_major not in ("K", "M") or b_major not in ("K", "N"):
            raise TiledMmaError(f"majors A={a_major!r} B={b_major!r}: A 'K' or 'M', B 'K' or 'N'")
        pattern, self.elem_bytes, any_major = ATOMS_SM90[dtype]
        if not any_major and (a_major, b_major) != ("K", "K"):
            raise TiledMmaError(
                f"{dtype} GMMA reads A and B K-major only (no imm-trans); got A {a_major}-major, "
                f"B {b_major}-major: copy the operand to K-major first"
            )
        self.config, self.dtype, self.a_major, self.b_major = config, dtype, a_major, b_major
        self.out = out
        self.tma_store = config.epilogue in TMA_EPILOGUES and out in TMA_STORE_OUTS
        # the staging tile's (and D's) contiguous mode: 'K' (n: D row-major) or 'MN' (m)
        self.d_major = TMA_EPILOGUES.get(config.epilogue, "K")
        self.promote = bool(config.promote) and dtype in FP8
        # promoted with one batch in flight: two wgmma sets alternate by k tile (+ the f32 set)
        self.overlap = self.promote and config.promote == "overlap"
        # promoted by N halves: two half-width batches per k tile, one in flight while the
        # other's sums are added
        self.split_n = self.promote and config.promote == "split"
        self.mn_major = {"A": "K" if a_major == "K" else "MN", "B": "K" if b_major == "K" else "MN"}
        name = pattern.format(n=config.atom_n)
        self.acc_f16 = bool(config.acc_f16)
        if self.acc_f16:
            if dtype != "f16":
                raise TiledMmaError(
                    f"{config.name}: F16 accumulators take f16 inputs (wgmma .f16.f16.f16), "
                    f"not {dtype}"
                )
            name = name.replace("F32F16F16", "F16F16F16")
        self.a_regs = bool(config.a_regs)
        if self.a_regs:  # the RS atom: A from registers (K-major in the instruction's view)
            if self.promote:
                raise TiledMmaError(
                    f"{config.name} {dtype}: A from registers (RS) runs the plain k-tile loop; "
                    "give promote=False for fp8"
                )
            name = name.replace("_SS", "_RS")
        if any_major:
            a = "K" if self.a_regs else self.mn_major["A"]
            name += f"<{a},{self.mn_major['B']}>"
        self.tile_wgs = config.tile_warpgroups
        # the warpgroups along M and N (consumers_n: side by side along N, each every row)
        self.wg_layout = (config.consumers_m, config.consumers_n, 1)
        self.tiled = make_tiled_mma(name, self.wg_layout)
        self.atom_name = self.tiled.atom.name
        self.tm, self.tn, self.tk = self.tiled.tile_size_mnk
        self.block_k = config.k_tiles[self.elem_bytes]
        if self.block_k % self.tk:
            raise TiledMmaError(f"block_k {self.block_k}: a multiple of the atom's K {self.tk}")
        self.mma_m = config.block_m // self.tm

        # wgmmas side by side along N (Sm90Config.wgmma_n): (first column, TiledMMA) each;
        # another width's atom is this one's name with its N (SM90_64x{N}x{K}_...)
        def tiled_of(w: int):
            wider = name.replace(f"_64x{self.tn}x", f"_64x{w}x", 1)
            return self.tiled if w == self.tn else make_tiled_mma(wider, self.wg_layout)

        self.columns = tuple((n0, tiled_of(w)) for n0, w in config.wgmma_columns)
        self.mma_n = len(self.columns)
        self.k_blocks = self.block_k // self.tk
        # the threads of one tile's TiledMMA (the consumers that share a tile and its barriers)
        self.consumer_threads = WARPGROUP * self.tile_wgs
        if self.tiled.size != self.consumer_threads:  # pragma: no cover - GMMA is a warpgroup
            raise TiledMmaError(f"TiledMMA of {self.tiled.size} threads")
        regs = REGISTER_SPLIT[config.consumers][1]
        sets = 3 if self.overlap else 2 if self.promote else 1
        if sets * self.acc_per_thread > regs - NON_ACC_REGS:
            what = (
                f"promoted fp8 accumulation keeps {sets} sets"
                if self.promote
                else "a tile needs 1 set"
            )
            raise TiledMmaError(
                f"{config.name} {dtype}: {what} of {self.acc_per_thread} accumulators per "
                f"thread; at most {(regs - NON_ACC_REGS) // sets} fit beside {NON_ACC_REGS} "
                f"others in {regs} registers: use a smaller tile"
                + (" or promote=False" if self.promote else "")
            )
        self.stages  # noqa: B018 - checks the ring fits in shared memory now
        if config.kcluster > 1:
            self._check_kcluster_room()
        if self.mma_n > 1 or config.consumers_n > 1:
            self._check_b_slices()
        if self.tma_store and config.consumers_n > 1:
            self.smem_D  # noqa: B018 - each warpgroup's columns start a staging-tile atom

    def _check_kcluster_room(self) -> None:
        """A ``kcluster`` fix-up adds the sums in the ring's stages: they must hold them."""
        need = reduce_bytes(self.acc_per_thread, self.consumer_threads)
        if need > self.stages * self.stage_bytes:
            raise TiledMmaError(
                f"{self.config.name} {self.dtype}: kcluster adds the tile's {need} bytes of f32 "
                f"sums in the ring's {self.stages} stages of {self.stage_bytes} bytes; give more "
                "stages (or stages=None) or a smaller tile"
            )

    def _check_b_slices(self) -> None:
        """Each wgmma's B (``tn`` rows of the stage) must be whole swizzle atoms of it."""
        try:
            self.descriptors  # noqa: B018
        except LayoutError:
            raise TiledMmaError(
                f"{self.config.name} {self.dtype}: a wgmma of {self.config.atom_n} columns "
                f"(wgmma_n {self.config.wgmma_n}, {self.config.consumers_n} warpgroup(s) along "
                f"N) cuts the {self.mn_major['B']}-major B stage {self.smem_B.inner} inside a "
                "swizzle atom; "
                "take a multiple of the atom's N (64 16-bit elements for an MN-major B at "
                "128-byte swizzle), or a K-major B"
            ) from None

    # ------------------------------------------------------------------ smem
    @cached_property
    def smem_A(self) -> ComposedLayout:
        """(m, k) -> element of one stage of A."""
        return self.stage("A", self.config.block_m)

    @cached_property
    def smem_B(self) -> ComposedLayout:
        """(n, k) -> element of one stage of B."""
        return self.stage("B", self.config.block_n)

    def stage(self, which: str, extent: int) -> ComposedLayout:
        """Operand ``which``'s stage layout over ``extent`` rows (a cluster's share: fewer),
        in the config's swizzle mode for it, else the widest that tiles it."""
        sw = self.config.swizzle["AB".index(which)]
        major = self.mn_major[which]
        # warpgroups side by side along N read B from their first column on: an atom must
        # start there (an MN-major SW128 atom is 64 16-bit columns: 96 takes SW64)
        allowed = (
            split_swizzles(self.config, self.config.block_n, major == "MN", self.elem_bytes)
            if which == "B"
            else SWIZZLES
        )
        return stage_layout(extent, self.block_k, major, self.dtype, sw, allowed)

    @property
    def bytes_A(self) -> int:
        return self.config.block_m * self.block_k * self.elem_bytes

    @property
    def bytes_B(self) -> int:
        return self.config.block_n * self.block_k * self.elem_bytes

    @property
    def stage_bytes(self) -> int:
        return self.bytes_A + self.bytes_B

    @cached_property
    def stages(self) -> int:
        """The ring depth: the config's, or as many stages as fit (2..MAX_STAGES)."""
        free = SMEM_LIMIT - ALIGN_SLACK - self.bytes_D - self.sk_bar_bytes
        room = free // (self.stage_bytes + 2 * BARRIER_BYTES)
        s = self.config.stages or min(room, MAX_STAGES)
        if s < 2 or s > room:
            raise TiledMmaError(
                f"{self.config.name}: {s} stages of {self.stage_bytes} bytes do not fit in "
                f"{SMEM_LIMIT} bytes of shared memory (room for {room}); use a smaller tile"
            )
        return s

    @property
    def shared_bytes(self) -> int:
        """Dynamic shared memory: the stages, the full/empty barriers (and stream-K's), the
        staging tile, alignment slack."""
        ring = self.stages * (self.stage_bytes + 2 * BARRIER_BYTES)
        return ring + self.sk_bar_bytes + self.bytes_D + ALIGN_SLACK

    @property
    def sk_bar_bytes(self) -> int:
        """Stream-K with a staging tile: one mbarrier more (the fix-up copies peers' partial
        tiles into the staging tile, :func:`cutemma.kernels.sm90.streamk.fixup`)."""
        return BARRIER_BYTES if self.config.stream_k and self.tma_store else 0

    @property
    def sk_bar_offset(self) -> int:
        """That mbarrier's offset from the ring's barriers (after the full and empty ones)."""
        return 2 * BARRIER_BYTES * self.stages

    # ------------------------------------------------------------------ TMA-store epilogue
    @property
    def d_tiles(self) -> int:
        """Staging tiles: one per warpgroup that runs its own epilogue (pingpong: 2)."""
        return self.config.consumers // self.tile_wgs

    @property
    def bytes_D(self) -> int:
        """Shared bytes of the output staging tiles (0 without the TMA-store epilogue)."""
        return staging_bytes(self.config, self.d_width) if self.tma_store else 0

    @property
    def d_buffer_bytes(self) -> int:
        """Bytes of one staging buffer ("tmab" has two, taken by the passes in turn)."""
        return self.config.block_m * self.d_width * STAGING_ELEM_BYTES

    @cached_property
    def d_passes(self) -> int:
        """TMA-store passes per tile (:func:`~cutemma.kernels.sm90.config.store_passes`): the
        staging tile holds block_n / d_passes columns."""
        free = SMEM_LIMIT - ALIGN_SLACK - self.sk_bar_bytes
        return store_passes(self.config, self.stage_bytes + 2 * BARRIER_BYTES, free)

    @property
    def d_width(self) -> int:
        """Columns of the staging tile (the block's, or one pass's with "tma2" / "tmab")."""
        return self.config.block_n // self.d_passes

    @cached_property
    def smem_D(self) -> ComposedLayout:
        """(m, n) -> element of the output staging tile: n contiguous (D row-major), the
        widest GMMA K-major swizzle atom tiled over it, so TMA stores it box by box and the
        accumulator pairs a warp writes (8 rows x 4 threads) hit 32 different banks; with
        "tmat" (D column-major) m contiguous, the MN-major atom (a warp's 8 rows of 4
        columns: 4 swizzled 16-byte chunks, 16 banks, two threads to each 4-byte word)."""
        if not self.tma_store:
            raise TiledMmaError(f"{self.config.name}: no TMA-store epilogue for out={self.out}")
        bm, width, major = self.config.block_m, self.d_width, self.d_major
        # warpgroups side by side along N: each one's first column must start an atom, or
        # its values' offsets are not its thread's plus one constant each
        allowed = split_swizzles(self.config, width, major == "K", 2)
        if not allowed:
            raise TiledMmaError(
                f"{self.config.name}: no swizzled staging tile starts an atom at each "
                f"warpgroup's {width // self.config.consumers_n} columns; take a block_n "
                "whose half is a multiple of 16, or epilogue='regs'"
            )
        return stage_layout(bm, width, major, self.out, allowed=allowed)

    @cached_property
    def tma_D(self) -> TmaBox:
        """The TMA boxes that store the staging tile (global dims (N, M), n contiguous; with
        "tmat" (M, N), m contiguous)."""
        return tma_box(self.smem_D, self.out, self.d_major)

    @cached_property
    def epilogue_smem(self) -> tuple[ThreadValue, tuple[int, ...]]:
        """Where each accumulator lands in the staging tile, before the swizzle:
        (thread part, per-value constants), checked for every thread and value to add up
        to ``smem_D.inner(m, n)`` (so the kernel computes swizzle(thread + const)). With
        "tma2" a value of column n lands at column n - pass * d_width of its pass's tile
        (:attr:`epilogue_passes`)."""
        m_t, n_t, consts = self.epilogue
        inner, w = self.smem_D.inner, self.d_width
        thr = [int(inner(m, n)) for m, n in zip(m_t.table, n_t.table)]
        out = []
        for (_, dm, dn), h in zip(consts, self.epilogue_passes):
            c = int(inner(dm, dn - h * w))
            for t, (m, n) in enumerate(zip(m_t.table, n_t.table)):
                if not 0 <= n + dn - h * w < w or int(inner(m + dm, n + dn - h * w)) != thr[t] + c:
                    raise TiledMmaError(
                        f"staging tile offset of C({m}+{dm}, {n}+{dn}) is not thread + const"
                    )
            out.append(c)
        return ThreadValue.of(thr), tuple(out)

    @cached_property
    def epilogue_passes(self) -> tuple[int, ...]:
        """The TMA-store pass of each accumulator: its column's half with "tma2", else 0.

        >>> plan = Sm90Plan(Sm90Config(128, 192, epilogue="tma2"), "e4m3", "K", "K", "bf16")
        >>> plan.epilogue_passes[:2], plan.epilogue_passes[-2:], plan.bytes_D, plan.stages
        ((0, 0), (1, 1), 24576, 5)
        """
        return tuple(dn // self.d_width for _, _, dn in self.epilogue[2])

    # ------------------------------------------------------------------ RS: A registers
    @cached_property
    def a_regload(self) -> Split:
        """Where each consumer thread's wgmma A registers come from (RS): value ``j`` of
        ``tv_layout_A_tiled`` for row block ``im`` and k block ``kb`` is read at the stage
        offset ``smem_A`` gives its (m, k); constant ``(im * k_blocks + kb) * values + j``,
        split into thread part and constants (+ or ^, as the sm80 plan splits its reads).

        >>> p = Sm90Plan(Sm90Config(128, 64, consumers=1, a_regs=True), "f16", "K", "K", "f32")
        >>> p.atom_name, len(p.a_regload.consts), p.a_regload.op
        ('SM90_64x64x16_F32F16F16_RS', 64, '^')
        """
        tv = tv_table(self.tiled.tv_layout_A_tiled)
        mn, k = tv % self.tm, tv // self.tm
        lay = self.smem_A
        inner = mode_table(lay.inner.shape, lay.inner.stride)
        tab = lay.outer(inner).reshape(self.block_k, self.config.block_m).T
        cols = [
            tab[mn + im * self.tm, k + kb * self.tk]
            for im in range(self.mma_m)
            for kb in range(self.k_blocks)
        ]
        table = np.concatenate(cols, axis=1).tolist()
        return split_offsets(table, lay.outer, "RS A registers")

    # ------------------------------------------------------------------ descriptors
    def _rows_of(self, which: str) -> list[int]:
        """First row each consumer warpgroup reads of a ``tm``-row (A) or ``tn``-row (B)
        slice, from the TiledMMA: the smallest m (n) among warpgroup w's values of it (B
        differs by warpgroup only with warpgroups side by side along N)."""
        tiled_tv = self.tiled.tv_layout_A_tiled if which == "A" else self.tiled.tv_layout_B_tiled
        tv = tv_table(tiled_tv)
        extent = self.tm if which == "A" else self.tn
        count = 64 if which == "A" else self.tiled.atom.shape_mnk[1]
        out = []
        for w in range(self.tile_wgs):
            # SS: thread 0 of the warpgroup names its slice; RS: its threads share A's rows
            rs = which == "A" and self.a_regs
            rows = tv[w * WARPGROUP : (w + 1) * WARPGROUP] if rs else tv[w * WARPGROUP]
            ms = sorted({int(o) % extent for o in rows.ravel()})
            if ms != list(range(ms[0], ms[0] + count)):  # pragma: no cover - GMMA's slices
                raise TiledMmaError(
                    f"warpgroup {w} does not read {count} consecutive rows of {which}"
                )
            out.append(ms[0])
        return out

    def _slices(self, which: str):
        """(warpgroup, im or jn, kb) -> the (64 or wgmma N, K-atom) slice of a stage, with
        its offset (A: row block im of the warpgroup's; B: column block jn of the
        warpgroup's, the same for every warpgroup but side by side along N)."""
        lay = self.smem_A if which == "A" else self.smem_B
        rows = 64
        tiles = zipped_divide(lay.inner, (rows, self.tk))
        out = {}
        for w, r0 in enumerate(self._rows_of(which)):
            for im in range(self.mma_m if which == "A" else self.mma_n):
                if which == "B":  # column block im: its own width (config.wgmma_columns)
                    n0, tiled = self.columns[im]
                    rows = tiled.atom.shape_mnk[1]
                    tiles = zipped_divide(lay.inner, (rows, self.tk))
                for kb in range(self.k_blocks):
                    row = (im * self.tm + r0) // rows if which == "A" else (n0 + r0) // rows
                    sub, off = slice_and_offset(((None, None), (row, kb)), tiles)
                    out[w, im, kb] = ComposedLayout(lay.outer, lay.offset + off, sub)
        return out

    @cached_property
    def descriptors(self) -> dict[str, tuple[int, dict]]:
        """Per operand: (the bits every descriptor shares, {(w, im, kb): start byte offset});
        B's keys are (w, jn, kb), the same for every warpgroup w.

        Each slice's descriptor is ``make_gmma_desc`` of that slice at stage address 0;
        they must differ only in the start address, which the kernel sets to the stage's
        shared address plus the offset (the stage starts on the 1024-byte pattern).
        """
        return {which: self._descriptors(which)[:2] for which in ("A", "B")}

    def _descriptors(self, which: str) -> tuple[int, dict, dict[int, int]]:
        """(common bits, start offsets, {jn: bits} of B's N blocks whose bits differ):
        wgmmas of different N may not share them (a 64-column MN-major block is one
        swizzle atom wide, its descriptor's leading offset 0)."""
        major = self.mn_major[which]
        bits_of, offs = {}, {}
        for key, sub in self._slices(which).items():
            d = make_gmma_desc(sub, major, self.dtype, start_address=0)
            bits = d.raw & ~_field_mask("start_address")
            block = key[1] if which == "B" else 0
            if bits_of.setdefault(block, bits) != bits:  # pragma: no cover - one form
                raise TiledMmaError(f"{which}: descriptors differ beyond the start address")
            offs[key] = d.start_address << 4
        common = bits_of[0]
        return common, offs, {jn: b for jn, b in bits_of.items() if b != common}

    @cached_property
    def desc_b_bits(self) -> dict[int, int]:
        """B's descriptor bits of each N block whose bits are not ``DESC_B``'s (mixed widths).

        >>> Sm90Plan(Sm90Config(128, 320, wgmma_n=(256, 64)), "bf16", "K", "N").desc_b_bits
        {1: 4611686293305294848}
        """
        return self._descriptors("B")[2]

    @cached_property
    def split_halves(self) -> tuple[tuple[Operation, Operation], dict[tuple[int, int], int]]:
        """``promote="split"``: (the two parts' GMMA Operations, {(part, kb): B's start byte
        offset}), the parts :func:`~cutemma.kernels.sm90.config.split_widths` wide. A 64 x
        N_lo wgmma on B's rows [0, N_lo) and a 64 x N_hi one on [N_lo, N) write exactly the
        accumulators [0, N_lo / 2) and [N_lo / 2, N / 2) of the 64 x N one (PTX ISA wgmma D
        fragments: value i of a thread is column 8 (i / 4) + ..., and N_lo is a multiple of
        8), so the parts share ``accf`` and the epilogue.

        >>> plan = Sm90Plan(Sm90Config(128, 192, promote="split"), "e4m3", "K", "K")
        >>> plan.split_halves[1][1, 0]  # B row 96 of a 128-byte-row (SW128, K-major) stage
        12288
        >>> [op.c.count for op in Sm90Plan(Sm90Config(128, 200, promote="split"), "e4m3", "K", "K").split_halves[0]]
        [52, 48]
        """
        if not self.split_n:
            raise TiledMmaError(f"{self.config.name}: not promote='split'")
        pattern = ATOMS_SM90[self.dtype][0]
        widths = split_widths(self.config.block_n)
        ops = tuple(make_tiled_mma(pattern.format(n=w), (1, 1, 1)).atom.op for w in widths)
        lay = self.smem_B
        # each part's start from a slice of one wgmma N step (both start on a multiple of
        # it); such a slice is one row group, whose descriptor has no stride to compare
        step = WGMMA_N_STEP
        tiles = zipped_divide(lay.inner, (step, self.tk))
        common = self.descriptors["B"][0] & ~_field_mask("stride_byte_offset")
        offs = {}
        for h, row in enumerate((0, widths[0])):
            for kb in range(self.k_blocks):
                sub, off = slice_and_offset(((None, None), (row // step, kb)), tiles)
                d = make_gmma_desc(
                    ComposedLayout(lay.outer, lay.offset + off, sub),
                    self.mn_major["B"],
                    self.dtype,
                    start_address=0,
                )
                if d.raw & ~_field_mask("start_address") != common:  # pragma: no cover - one form
                    raise TiledMmaError("B halves: descriptors differ beyond the start address")
                offs[h, kb] = d.start_address << 4
        return ops, offs

    @cached_property
    def b_warpgroup_offsets(self) -> tuple[int, ...]:
        """Each consumer warpgroup's B slices past warpgroup 0's, in bytes: 0 but with
        warpgroups side by side along N (``consumers_n``), where warpgroup w reads the
        columns w N / 2 on, at one offset from warpgroup 0's in every N and k block.

        >>> Sm90Plan(Sm90Config(192, 192, consumers_n=2), "bf16", "K", "K").b_warpgroup_offsets
        (0, 12288)
        """
        _, offs = self.descriptors["B"]
        out = []
        for w in range(self.tile_wgs):
            deltas = {o - offs[0, jn, kb] for (v, jn, kb), o in offs.items() if v == w}
            if len(deltas) != 1:  # pragma: no cover - a slice of the same stage layout
                raise TiledMmaError(f"B's slices of warpgroup {w} move by {sorted(deltas)}")
            out.append(deltas.pop())
        return tuple(out)

    def desc_offsets(self, which: str) -> dict:
        """{warpgroup: (byte offset of k block 0, 1, ...)} (A; for im = 0), or B's tuple.

        >>> Sm90Plan(Sm90Config(), "bf16", "M", "N").desc_offsets("B")
        (0, 2048, 4096, 6144)
        """
        _, offs = self.descriptors[which]
        if which == "B":
            return tuple(offs[0, 0, kb] for kb in range(self.k_blocks))
        return {
            w: tuple(offs[w, 0, kb] for kb in range(self.k_blocks)) for w in range(self.tile_wgs)
        }

    # ------------------------------------------------------------------ TMA
    @cached_property
    def tma(self) -> dict[str, TmaBox]:
        """The TMA boxes of each operand (global-contiguous mode first): each fills one CTA's
        share of its stage (all of it, but for the operand a cluster multicasts)."""
        out = {}
        for which, lay, extent in (("A", self.smem_A, self.config.block_m),
                                   ("B", self.smem_B, self.config.block_n)):  # fmt: skip
            share = extent // self.split(which)
            if share != extent:
                lay = self.stage(which, share)
            out[which] = tma_box(lay, self.dtype, self.mn_major[which])
        return out

    def split(self, which: str) -> int:
        """Into how many shares the CTAs of a cluster split operand ``which`` (1: not shared).

        >>> Sm90Plan(Sm90Config(cluster=2, multicast="A"), "bf16", "K", "K").split("A")
        2
        """
        cm, cn = self.config.cluster_mn  # A is shared along N, B along M
        return cn if which == "A" else cm

    @property
    def b_share_shift(self) -> tuple[int, int, int]:
        return self.share_shift("B")

    def share_shift(self, which: str) -> tuple[int, int, int]:
        """(d_contig, d_other, d_elements): CTA rank r's copies of a multicast operand are
        rank 0's moved by r times this (rows extent / cluster further along M or N, in the
        stage layout too); (0, 0, 0) for an operand each CTA loads alone.

        Checked: the stage layout at row (r * share + x, k) is the share layout at (x, k)
        plus the shift, for every element.
        """
        cl = self.split(which)
        if cl == 1:
            return (0, 0, 0)
        full = self.smem_A if which == "A" else self.smem_B
        extent = self.config.block_m if which == "A" else self.config.block_n
        share = extent // cl
        cut = TiledMmaError(
            f"{self.config.name} {self.dtype}: a cluster of {cl} splits {which}'s {extent} "
            f"rows into shares of {share}, which do not repeat its {self.mn_major[which]}-major "
            f"stage {full.inner} (each CTA's share must be whole swizzle atoms at the same "
            f"place in them): take a tile whose {1 / cl:.0%} is a multiple of the atom, or "
            "cluster=1"
        )
        try:
            half = self.stage(which, share)
        except TiledMmaError:
            raise cut from None
        shift = int(full.inner(share, 0)) - int(half.inner(0, 0))
        for x in range(share):
            for k in range(self.block_k):
                for r in range(cl):
                    if full.inner(r * share + x, k) != half.inner(x, k) + r * shift:
                        raise cut
        if shift * self.elem_bytes % 1024:
            raise TiledMmaError(
                f"{which} share offset {shift} elements is off the 1024-byte pattern"
            )
        along_contig = self.mn_major[which] == "MN"
        return (share if along_contig else 0, 0 if along_contig else share, shift)

    def stage_copies(self, which: str) -> list[tuple[int, int, int, int | None]]:
        """Every TMA copy that lands in one stage: (d_contig, d_other, element offset, the
        CTA rank issuing it, None for the CTA's own operand)."""
        box = self.tma[which]
        if self.split(which) == 1:
            return [(dc, do, off, None) for dc, do, off in box.copies]
        sc, so, se = self.share_shift(which)
        return [
            (dc + r * sc, do + r * so, off + r * se, r)
            for r in range(self.split(which))
            for dc, do, off in box.copies
        ]

    # ------------------------------------------------------------------ epilogue
    @cached_property
    def epilogue(self) -> tuple[ThreadValue, ThreadValue, tuple[tuple[int, int, int], ...]]:
        """partition_C over the consumer threads: (m of thread, n of thread, [(acc, dm, dn)]);
        accumulator order: by 64-row block im, then by wgmma along N (each one's values in
        a run, at :meth:`acc_offset`), as the mainloop's wgmmas write them."""
        if self.mma_n == 1 or len({t.tile_size_mnk[1] for _, t in self.columns}) == 1:
            tv = tv_table(self.tiled.tv_layout_C_tiled)
            return c_partition(tv, self.tm, self.tn, self.mma_m, self.mma_n)
        parts = [
            c_partition(tv_table(t.tv_layout_C_tiled), self.tm, t.tile_size_mnk[1], self.mma_m, 1)
            for _, t in self.columns
        ]
        m_t, n_t, _ = parts[0]
        if any((p[0].table, p[1].table) != (m_t.table, n_t.table) for p in parts):
            raise TiledMmaError(
                "wgmmas of different N: their threads start at different C"
            )  # pragma: no cover - GMMA's D rows are N-independent
        consts = []
        for im in range(self.mma_m):
            for jn, (n0, _) in enumerate(self.columns):
                per = len(parts[jn][2]) // self.mma_m
                for _, dm, dn in parts[jn][2][im * per : (im + 1) * per]:
                    consts.append((len(consts), dm, dn + n0))
        return m_t, n_t, tuple(consts)

    def acc_offset(self, im: int, jn: int) -> int:
        """The first accumulator of the wgmma at 64-row block ``im``, N block ``jn``.

        >>> p = Sm90Plan(Sm90Config(128, 320, wgmma_n=(256, 64)), "bf16", "K", "N", "bf16")
        >>> p.acc_offset(0, 1), p.acc_per_thread
        (128, 160)
        """
        counts = [t.atom.op.c.count for _, t in self.columns]
        return im * sum(counts) + sum(counts[:jn])

    @property
    def acc_per_thread(self) -> int:
        return len(self.epilogue[2])
