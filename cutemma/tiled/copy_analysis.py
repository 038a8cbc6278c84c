"""Bank conflicts, coalescing and vector width of a TiledCopy, before any GPU run.

Every thread's partition of the shared (or global) tile says which bytes each lane touches
in each instruction; :mod:`cutemma.copy.banks` says how a warp's instruction is split into
phases and how many wavefronts (or 32-byte sectors) each phase costs. ``bank_conflicts``
counts wavefronts against the ideal one per phase (Nsight Compute's shared-memory
``bank_conflicts`` counter is the difference), ``coalescing`` counts sectors against the
bytes moved, ``vector_bits`` finds the widest aligned vector every thread could use, and
``explain`` says it in words.

>>> from cutemma.copy import make_copy_atom
>>> from cutemma.layout import Layout, Swizzle
>>> from cutemma.layout.swizzle import make_swizzled
>>> from cutemma.tiled import make_tiled_copy_A, make_tiled_mma
>>> tc = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"),
...                        make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", (2, 2)))
>>> bank_conflicts(tc, Layout((32, 64), (64, 1))).worst            # 128-byte rows: 8-way
8
>>> bank_conflicts(tc, make_swizzled(Swizzle(3, 3, 3), Layout((32, 64), (64, 1)))).worst
1
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cutemma.copy.banks import (
    MATRIX_ROW_BYTES,
    MATRIX_ROWS,
    SECTOR_BYTES,
    WARP,
    lanes_per_phase,
    sectors,
    wavefronts,
)
from cutemma.errors import CopyError, LayoutError
from cutemma.tensor import Tensor

# families whose shared-memory side is 16-byte matrix rows, one phase per 8 rows
# elements the per-thread walk of bank_conflicts/coalescing covers (227 KiB of shared
# memory hold at most 232448 one-byte elements)
MAX_ANALYSED = 1 << 18
# the analyses slice the copy once per thread (about 0.3 ms each): past this many threads a
# TiledCopy (which may have any number, as in CuTe) is refused by name, not walked for minutes
MAX_ANALYSED_THREADS = 1 << 12
# families whose operands may live in any memory (side= says which is shared or global);
# every other operand's space is fixed by its instruction
_ANY_SPACE_FAMILIES = ("universal",)
_MATRIX_FAMILIES = ("sm75.ldsm", "sm90.stsm", "sm100.ldsm8", "sm100.stsm8")


@dataclass(frozen=True)
class InstructionCost:
    """One warp instruction's shared-memory cost: phases (ideal wavefronts) and wavefronts."""

    warp: int
    instr: int
    phases: int
    wavefronts: int

    @property
    def degree(self) -> int:
        """How many times slower than conflict-free (1 = conflict-free), worst phase."""
        return -(-self.wavefronts // self.phases) if self.phases else 1


@dataclass(frozen=True)
class BankReport:
    """Shared-memory cost of a TiledCopy over one tile.

    ``wavefronts`` and ``ideal`` are summed over every warp and instruction;
    ``bank_conflicts`` = wavefronts - ideal, what Nsight Compute's
    ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_*`` counters report.
    """

    side: str
    instructions: tuple[InstructionCost, ...]
    worst: int

    @property
    def wavefronts(self) -> int:
        return sum(c.wavefronts for c in self.instructions)

    @property
    def ideal(self) -> int:
        return sum(c.phases for c in self.instructions)

    @property
    def bank_conflicts(self) -> int:
        return self.wavefronts - self.ideal

    @property
    def conflict_free(self) -> bool:
        return self.bank_conflicts == 0


@dataclass(frozen=True)
class CoalescingReport:
    """Global-memory cost: 32-byte sectors touched over all warp requests, and the ideal."""

    sectors: int
    ideal: int
    requests: int

    @property
    def efficiency(self) -> float:
        return self.ideal / self.sectors if self.sectors else 1.0


def _checked(tiled_copy, what: str):
    """``tiled_copy`` if it is a TiledCopy, else a CopyError naming ``what`` needs one."""
    from cutemma.tiled.tiled_copy import TiledCopy

    if not isinstance(tiled_copy, TiledCopy):
        raise CopyError(
            f"{what} analyses a TiledCopy (make_tiled_copy(...)), got {type(tiled_copy).__name__}"
        )
    return tiled_copy


def _checked_side(side: str) -> str:
    if side not in ("S", "D"):
        raise CopyError(f"side={side!r}: 'S' (the source partition) or 'D' (destination)")
    return side


def _side(tiled_copy, side: str | None, space: str) -> str:
    op = tiled_copy.atom.op
    if side is not None:
        _checked_side(side)
        there = (op.src if side == "S" else op.dst).space
        if op.family not in _ANY_SPACE_FAMILIES and there != space:
            raise CopyError(
                f"side={side!r} of {op.name} ({op.kind}) is in {there}, not {space}: "
                f"ask about its {space} side"
                + (f", side={'S' if side == 'D' else 'D'!r}" if space in op.kind else "")
            )
        return side
    if op.src.space == space:
        return "S"
    if op.dst.space == space:
        return "D"
    raise CopyError(
        f"{op.name} moves {op.kind}: it has no {space} side of its own; say which side of the "
        f"copy is in {space} with side='S' or side='D'"
    )


def _checked_layout(layout) -> None:
    """A LayoutError unless ``layout`` is a Layout or ComposedLayout; a CopyError past
    MAX_ANALYSED elements (the analyses walk every element of every thread's partition)."""
    from cutemma.layout import ComposedLayout, Layout, size

    if not isinstance(layout, Layout | ComposedLayout):
        raise LayoutError(
            f"expected a Layout (or a swizzled ComposedLayout) of the tile, got {layout!r}"
        )
    if size(layout) > MAX_ANALYSED:
        raise CopyError(
            f"a tile of {size(layout)} elements; the analysis walks every element (at most "
            f"{MAX_ANALYSED}, more than any shared memory holds): analyse one tile of the copy"
        )


def _lane_offsets(tiled_copy, layout, side: str) -> tuple[np.ndarray, int]:
    """offsets[thread, instr, value] (element units) of every thread's partition, and nv."""
    _checked_layout(layout)
    if tiled_copy.size > MAX_ANALYSED_THREADS:
        raise CopyError(
            f"a TiledCopy of {tiled_copy.size} threads; the analysis slices every thread (at "
            f"most {MAX_ANALYSED_THREADS}): analyse a TiledCopy of one block's threads"
        )
    t = Tensor(np.zeros(1), layout)  # data unused: only the offsets are read
    atom = tiled_copy.atom
    nv = atom.num_val_src if side == "S" else atom.num_val_dst
    rows = []
    for thr in range(tiled_copy.size):
        s = tiled_copy.get_slice(thr)
        part = s.partition_S(t) if side == "S" else s.partition_D(t)
        offs = np.array([part.offset + part.layout(i) for i in range(part.size())])
        rows.append(offs.reshape(-1, nv))
    return np.stack(rows), nv


def _phases(tiled_copy, offs: np.ndarray, nv: int, warp: int, instr: int, eb: int) -> list:
    """The phases of one warp instruction: per phase, per lane, its (byte address, bytes)."""
    lanes = offs[warp * WARP : (warp + 1) * WARP, instr]
    op = tiled_copy.atom.op
    if op.family in _MATRIX_FAMILIES:
        rows = [(int(lane[0]) * eb, MATRIX_ROW_BYTES) for lane in lanes]
        n_rows = _addressing_lanes(tiled_copy)
        return [
            [[rows[j * MATRIX_ROWS + r]] for r in range(MATRIX_ROWS)]
            for j in range(n_rows // MATRIX_ROWS)
        ]
    nbytes = nv * eb
    _check_vectors(op, lanes, warp, instr, nbytes)
    accesses = [[(int(lane[0]) * eb, nbytes)] for lane in lanes]
    per = lanes_per_phase(nbytes)
    return [accesses[p : p + per] for p in range(0, len(accesses), per)]


def _check_vectors(op, lanes: np.ndarray, warp: int, instr: int, nbytes: int) -> None:
    """Each lane's values of one instruction must be one contiguous vector."""
    nv = lanes.shape[1]
    for i, lane in enumerate(lanes):
        if list(lane) != list(range(int(lane[0]), int(lane[0]) + nv)):
            raise CopyError(
                f"{op.name}: thread {warp * WARP + i} instruction {instr} touches elements "
                f"{lane.tolist()}, not {nv} contiguous ones: this layout does not vectorize "
                f"into {nbytes}-byte accesses (CuTe would refuse it at compile time)"
            )


def _addressing_lanes(tiled_copy) -> int:
    """Lanes that give a row address: the distinct 128-bit rows of the memory side."""
    t = tiled_copy.atom.traits
    mem = t.src_layout if tiled_copy.atom.op.src.space == "smem" else t.dst_layout
    from cutemma.mma.traits import tv_table

    return len({int(x) // 128 for x in tv_table(mem).ravel()})


def bank_conflicts(tiled_copy, smem, side: str | None = None) -> BankReport:
    """Wavefronts per warp instruction of ``tiled_copy`` over the shared tile ``smem``.

    ``smem`` is the tile's layout in elements (a Layout or a swizzled ComposedLayout), its
    shape a multiple of the TiledCopy's tile; ``side`` defaults to the atom's shared side.
    16-byte cp.async stores go 8 lanes per phase: 8 threads filling one 128-byte row cost one
    wavefront, 8 threads starting 8 different 128-byte rows hit the same 4 banks 8 times.

    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.layout import Layout
    >>> from cutemma.tiled import make_tiled_copy
    >>> atom = make_copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "f16")
    >>> smem = Layout((16, 64), (64, 1))  # 128-byte rows
    >>> along_rows = make_tiled_copy(atom, Layout((16, 8), (8, 1)), Layout((1, 8)))
    >>> down_columns = make_tiled_copy(atom, Layout((16, 8), (1, 16)), Layout((1, 8)))
    >>> bank_conflicts(along_rows, smem).worst, bank_conflicts(down_columns, smem).worst
    (1, 8)
    """
    tiled_copy = _checked(tiled_copy, "bank_conflicts")
    if tiled_copy.size % WARP:
        raise CopyError(f"bank analysis needs whole warps; this TiledCopy has {tiled_copy.size}")
    side = _side(tiled_copy, side, "smem")
    eb = tiled_copy.atom.val_type.bits // 8
    if eb == 0:
        raise CopyError("bank analysis needs value types of at least 8 bits")
    offs, nv = _lane_offsets(tiled_copy, smem, side)
    costs = []
    for w in range(tiled_copy.size // WARP):
        for i in range(offs.shape[1]):
            phases = _phases(tiled_copy, offs, nv, w, i, eb)
            costs.append(InstructionCost(w, i, len(phases), sum(wavefronts(p) for p in phases)))
    worst = max((c.degree for c in costs), default=1)
    return BankReport(side, tuple(costs), worst)


def coalescing(tiled_copy, gmem, side: str | None = None) -> CoalescingReport:
    """32-byte sectors the warps' requests touch over the global tile ``gmem``, and the ideal.

    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.layout import Layout
    >>> from cutemma.tiled import make_tiled_copy
    >>> tc = make_tiled_copy(make_copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "f16"),
    ...                      Layout((16, 8), (8, 1)), Layout((1, 8)))
    >>> r = coalescing(tc, Layout((16, 64), (64, 1)))
    >>> r.sectors, r.ideal, r.efficiency
    (64, 64, 1.0)
    """
    tiled_copy = _checked(tiled_copy, "coalescing")
    side = _side(tiled_copy, side, "gmem")
    eb = tiled_copy.atom.val_type.bits // 8
    offs, nv = _lane_offsets(tiled_copy, gmem, side)
    total = ideal = requests = 0
    for w in range(-(-tiled_copy.size // WARP)):
        for i in range(offs.shape[1]):
            lanes = offs[w * WARP : (w + 1) * WARP, i]
            _check_vectors(tiled_copy.atom.op, lanes, w, i, nv * eb)
            acc = [(int(x) * eb, eb) for lane in lanes for x in lane]
            total += sectors(acc)
            ideal += -(-len({a for a, _ in acc}) * eb // SECTOR_BYTES)
            requests += 1
    return CoalescingReport(total, ideal, requests)


def vector_bits(tiled_copy, layout, side: str = "S") -> int:
    """The widest aligned vector (bits, at most 128) every thread can use on that side.

    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.layout import Layout
    >>> from cutemma.tiled import make_tiled_copy
    >>> tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint16_t>", "f16"),
    ...                      Layout((16, 8), (8, 1)), Layout((1, 8)))
    >>> vector_bits(tc, Layout((16, 64), (64, 1))), vector_bits(tc, Layout((16, 64), (1, 16)))
    (128, 16)
    """
    tiled_copy = _checked(tiled_copy, "vector_bits")
    side = _checked_side(side)
    _checked_layout(layout)
    eb = tiled_copy.atom.val_type.bits // 8
    t = Tensor(np.zeros(1), layout)
    best = 128 // 8 // max(eb, 1)
    for thr in range(tiled_copy.size):
        s = tiled_copy.get_slice(thr)
        part = s.partition_S(t) if side == "S" else s.partition_D(t)
        offs = [part.offset + part.layout(i) for i in range(part.size())]
        n = best
        while n > 1:
            groups = [offs[k : k + n] for k in range(0, len(offs), n)]
            if all(
                len(g) == n and g == list(range(g[0], g[0] + n)) and (g[0] * eb) % (n * eb) == 0
                for g in groups
            ):
                break
            n //= 2
        best = n
    return best * eb * 8


def explain(tiled_copy, smem=None, gmem=None) -> str:
    """A TiledCopy in words: who moves what, and what shared and global memory will cost.

    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.layout import Layout
    >>> from cutemma.tiled import make_tiled_copy_A, make_tiled_mma
    >>> tc = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"),
    ...                        make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", (2, 2)))
    >>> print(explain(tc, smem=Layout((32, 64), (64, 1))).splitlines()[-1])
    worst: warp 0 instruction 0 needs 32 wavefronts for 4 phases (8-way): swizzle the rows (e.g. Sw<3,3,3> for 128-byte rows of 16-bit values) so that each 8-row group spans all 32 banks
    """
    tiled_copy = _checked(tiled_copy, "explain")
    atom = tiled_copy.atom
    op = atom.op
    lines = [
        f"TiledCopy of {op.name} ({op.kind}) moving {atom.val_type.name}: {tiled_copy.size} "
        f"threads over a {' x '.join(str(getattr(t, 'shape', t)) for t in tiled_copy.tiler_mn)} "
        f"tile, {tiled_copy.num_values} values per thread; one instruction moves "
        f"{atom.num_val_src} values per thread{' (' + op.ptx + ')' if op.ptx else ''}."
    ]
    if smem is not None:
        r = bank_conflicts(tiled_copy, smem)
        how = (
            "one phase per 8x8 matrix (8 rows of 16 bytes)"
            if op.family in _MATRIX_FAMILIES
            else f"{lanes_per_phase(atom.num_val_src * atom.val_type.bits // 8)} threads per phase"
        )
        lines.append(
            f"shared memory ({'source' if r.side == 'S' else 'destination'} {smem}): "
            f"{len(r.instructions)} warp instructions, {how}: {r.wavefronts} wavefronts for "
            f"{r.ideal} phases, "
            + (
                "conflict-free."
                if r.conflict_free
                else f"{r.bank_conflicts} bank conflicts, worst {r.worst}-way."
            )
        )
        if not r.conflict_free:
            c = max(r.instructions, key=lambda c: c.degree)
            lines.append(
                f"worst: warp {c.warp} instruction {c.instr} needs {c.wavefronts} wavefronts for "
                f"{c.phases} phases ({c.degree}-way): swizzle the rows (e.g. Sw<3,3,3> for "
                "128-byte rows of 16-bit values) so that each 8-row group spans all 32 banks"
            )
    if gmem is not None:
        g = coalescing(tiled_copy, gmem)
        lines.append(
            f"global memory ({gmem}): {g.requests} warp requests touch {g.sectors} sectors of "
            f"32 bytes for {g.ideal} needed ({100 * g.efficiency:.0f}% efficient); widest "
            f"vector per thread {vector_bits(tiled_copy, gmem, _side(tiled_copy, None, 'gmem'))} bits."
        )
    return "\n".join(lines)
