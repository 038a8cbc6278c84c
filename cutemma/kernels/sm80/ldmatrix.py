"""The ``ldmatrix`` copy atom as layouts, and the per-lane row addresses it needs.

``ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16`` loads ``num`` 8x8
matrices of 16-bit elements: lane ``8*j + r`` gives the shared-memory address of
row ``r`` of matrix ``j`` (8 contiguous elements, 16 bytes), and each lane
receives, in register ``j``, the two elements of matrix ``j`` at row
``lane / 4``, columns ``2*(lane % 4) + {0, 1}``; with ``.trans`` the two
elements at rows ``2*(lane % 4) + {0, 1}``, column ``lane / 4`` (PTX ISA,
"Warp-level matrix load instruction: ldmatrix", fragment figures for m8n8 with
.b16; https://docs.rs/crate/ptx-90-parser/0.2.0/source/docs/instructions/ldmatrix.md).

Like an MMA atom, the copy atom is two thread-value layouts over one index
space, the ``64*num`` elements read as ``8*num`` rows of 8: ``src_tv``
(lane, element of its row) -> index, and ``dst_tv`` (lane, value) -> index,
value ``v`` living in register ``v // 2``, half ``v % 2``, the packing of
``mma.sync`` operand registers; both are the copy catalog's layouts of
``SM75_U32x<n>_LDSM_N`` / ``SM75_U16x<2n>_LDSM_T`` (:mod:`cutemma.copy`, equal to CuTe's
Copy_Traits). :func:`plan_ldmatrix` inverts ``dst_tv`` against
where an MMA fragment wants each value, and so finds which tile element each
lane's row starts at.

>>> str(LdMatrix(4).dst_tv), str(LdMatrix(4, trans=True).dst_tv)
('(32,(2,4)):(2,(1,64))', '((4,8),(1,2,4)):((16,1),(1,8,64))')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from cutemma.errors import TiledMmaError
from cutemma.layout import Layout
from cutemma.mma.traits import tv_table

Coord = tuple[int, int]
MATRICES = (1, 2, 4)  # 8x8 matrices one ldmatrix loads: .x1, .x2, .x4 (PTX ISA)


def atom_name(num: int, trans: bool) -> str:
    """The copy catalog's name of ``ldmatrix.x<num>[.trans]`` in 16-bit values: 32-bit
    registers untransposed, 16-bit elements transposed (CuTe's names).

    >>> atom_name(4, False), atom_name(4, True)
    ('SM75_U32x4_LDSM_N', 'SM75_U16x8_LDSM_T')
    """
    return f"SM75_U16x{2 * num}_LDSM_T" if trans else f"SM75_U32x{num}_LDSM_N"


# copy atom name -> the matrices it loads, every ldmatrix the catalog names
ATOM_MATRICES = {atom_name(n, t): n for t in (False, True) for n in MATRICES}


@dataclass(frozen=True)
class LdMatrix:
    """``ldmatrix.m8n8.x<num>[.trans].b16`` described by its source and destination layouts.

    >>> a = LdMatrix(2)
    >>> a.ptx, str(a.src_tv), a.values
    ('ldmatrix.sync.aligned.m8n8.x2.shared.b16', '((16,2),8):((8,0),1)', 4)
    """

    num: int
    trans: bool = False

    def __post_init__(self) -> None:
        if self.num not in MATRICES:
            raise TiledMmaError(f"ldmatrix loads 1, 2 or 4 matrices, not {self.num}")

    @property
    def copy_atom(self):
        """The copy catalog's atom of this instruction, in 16-bit values (cutemma.copy).

        >>> LdMatrix(4, trans=True).copy_atom.name
        'SM75_U16x8_LDSM_T'
        """
        from cutemma.copy import make_copy_atom

        return make_copy_atom(atom_name(self.num, self.trans), "f16")

    @property
    def ptx(self) -> str:
        return self.copy_atom.op.ptx

    @property
    def values(self) -> int:
        """16-bit values each lane receives (two per register)."""
        return 2 * self.num

    @property
    def src_tv(self) -> Layout:
        """(lane, element of its row) -> index: lane r < 8*num gives row r (the copy atom's)."""
        return self.copy_atom.layout_src_tv

    @property
    def dst_tv(self) -> Layout:
        """(lane, value) -> index, value v in register v // 2, half v % 2 (the copy atom's)."""
        return self.copy_atom.layout_dst_tv


@dataclass(frozen=True)
class LdmatrixPlan:
    """One ldmatrix for one warp: the atom and, per lane, the tile coordinate its row starts at.

    ``rows[lane]`` is where the row that lane addresses begins; lanes past
    ``8*num`` repeat the first rows (their addresses are read but unused).
    """

    atom: LdMatrix
    rows: tuple[Coord, ...]


@cache
def _dst_table(atom: LdMatrix) -> np.ndarray:
    return tv_table(atom.dst_tv)


def _block_coords(atom: LdMatrix, wanted: Sequence[Sequence[Coord]]) -> list[Coord]:
    """index of the atom's block -> tile coordinate, from dst_tv and where each value must go."""
    block: list[Coord | None] = [None] * (64 * atom.num)
    dst = _dst_table(atom)
    for lane in range(32):
        for v in range(atom.values):
            block[dst[lane, v]] = tuple(wanted[lane][v])
    if any(c is None for c in block):  # pragma: no cover - dst_tv is a bijection
        raise TiledMmaError(f"{atom.ptx}: destination layout does not cover its block")
    return block  # type: ignore[return-value]


def _rows_contiguous(block: list[Coord], smem: Callable[[Coord], int]) -> bool:
    """Every 8-element row of the block is 8 consecutive, 16-byte aligned smem elements."""
    for r in range(len(block) // 8):
        start = smem(block[8 * r])
        if start % 8 or any(smem(block[8 * r + j]) != start + j for j in range(8)):
            return False
    return True


def plan_ldmatrix(
    wanted: Sequence[Sequence[Coord]], smem: Callable[[Coord], int], what: str
) -> LdmatrixPlan:
    """The ldmatrix (plain or ``.trans``) that puts ``wanted[lane][v]`` in lane's value ``v``.

    ``wanted`` holds, for the 32 lanes of a warp, the tile coordinate each of
    its ``2*num`` values must hold (the MMA fragment, as the TiledMMA's layouts
    say); ``smem(coord)`` is the element offset of a coordinate in shared
    memory. Tries the plain and the transposing atom; raises TiledMmaError when
    neither reads 16-byte rows.

    >>> rows = [[(lane // 4 + 8 * (v // 2 % 2), 2 * (lane % 4) + v % 2 + 8 * (v // 4))
    ...          for v in range(8)] for lane in range(32)]
    >>> p = plan_ldmatrix(rows, lambda c: c[0] * 16 + c[1], "A")
    >>> p.atom.trans, p.rows[:3]
    (False, ((0, 0), (1, 0), (2, 0)))
    """
    num = len(wanted[0]) // 2
    for trans in (False, True):
        atom = LdMatrix(num, trans)
        block = _block_coords(atom, wanted)
        if _rows_contiguous(block, smem):
            rows = tuple(block[8 * (lane % (8 * num))] for lane in range(32))
            return LdmatrixPlan(atom, rows)
    raise TiledMmaError(
        f"{what}: no ldmatrix.x{num} (plain or .trans) reads this fragment from shared "
        "memory: its rows are not 8 contiguous 16-byte aligned elements in the smem layout; "
        "make the smem layout's contiguous mode the fragment's K (plain) or M/N (.trans) mode"
    )


def bank_phases(addresses: Sequence[int], num: int, elem_bytes: int = 2) -> int:
    """Worst number of distinct 16-byte bank groups hit twice within one matrix's 8 rows.

    ldmatrix serves each matrix's 8 row addresses (8 x 16 bytes = all 32 banks)
    in one phase when the rows fall in 8 different 16-byte bank groups; returns
    the largest number of rows sharing a group (1 = conflict-free).

    >>> bank_phases([r * 64 for r in range(8)], 1)   # rows 128 bytes apart: one bank group
    8
    >>> bank_phases([r * 8 for r in range(8)], 1)
    1
    """
    worst = 1
    for j in range(num):
        groups = [(a * elem_bytes // 16) % 8 for a in addresses[8 * j : 8 * j + 8]]
        worst = max(worst, max(groups.count(g) for g in set(groups)))
    return worst
