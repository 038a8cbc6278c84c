"""GemmConfig and GemmPlan: every number a generated sm80 GEMM kernel uses, from layouts.

A :class:`GemmPlan` holds the TiledMMA, the swizzled shared-memory layouts, the
cp.async copy partition, the ldmatrix plans and the epilogue partition, each
evaluated here into per-thread tables and per-value constants. The source
generator (:mod:`cutemma.kernels.sm80.source`) only writes these numbers down.

Offsets split into a thread part (a function of ``threadIdx.x``, written as the
expression of a Layout inferred from its table, see :class:`ThreadValue`) and a
constant part per unrolled value; the split is checked here for every thread
and value, combining by ``+`` or, where a swizzle makes the bits overlap, ``^``.

>>> p = GemmPlan(GemmConfig(), "bf16", "K", "K")
>>> p.threads, p.mma_m, p.mma_n, str(p.smem_A)
(128, 4, 8, 'Sw<2,3,3> o 0 o ((8,16),(32,1)):((32,256),(1,0))')
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from cutemma.copy import make_copy_atom
from cutemma.errors import TiledMmaError
from cutemma.kernels.common.partition import (  # noqa: F401 - re-exported for the plan's users
    Split,
    ThreadValue,
    c_partition,
    layout_terms,
    split_offsets,
)
from cutemma.kernels.sm80.config import (  # noqa: F401 - the config's names, re-exported
    ATOMS,
    ELEM_BYTES,
    VEC,
    GemmConfig,
    _check_config_ints,
)
from cutemma.kernels.sm80.ldmatrix import ATOM_MATRICES, LdMatrix, LdmatrixPlan, bank_phases
from cutemma.layout import ComposedLayout, Layout, Swizzle, size, tile_to_shape
from cutemma.mma.traits import mode_table, tv_table
from cutemma.tiled import (
    TiledCopy,
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_mma,
)


def smem_layout(
    extent: int, block_k: int, major: str, width_bytes: int = 128, elem_bytes: int = 2
) -> ComposedLayout:
    """Swizzled (extent, block_k) shared-memory tile, ``major`` contiguous.

    The atom is 8 rows of ``w`` contiguous elements (``w * elem_bytes`` <= ``width_bytes``)
    under ``Sw<log2(row bytes / 16), log2(16 / elem_bytes), 3>``: the 16-byte chunk index of a row is XORed with the
    row index, so the 8 rows one ldmatrix phase reads fall in 8 different
    16-byte bank groups (32 banks x 4 bytes; CuTe's Swizzle<B,M,S>, see
    https://vjkrish.com/2026/02/22/Swizzling.html). ``major`` 'K': k contiguous;
    'MN': m (or n) contiguous. A row of one 16-byte chunk needs no swizzle (``Sw<0,..>``):
    8 such rows already span the 128 bytes of the 32 banks.

    >>> str(smem_layout(128, 32, "MN"))
    'Sw<3,3,3> o 0 o ((64,2),(8,4)):((1,512),(64,1024))'
    >>> str(smem_layout(128, 32, "K", elem_bytes=4))
    'Sw<3,2,3> o 0 o ((8,16),(32,1)):((32,256),(1,0))'
    >>> str(smem_layout(64, 8, "K"))
    'Sw<0,3,3> o 0 o ((8,8),(8,1)):((8,64),(1,0))'
    >>> str(smem_layout(8, 4, "K"))  # 8-byte rows: SM70's k4 tile, moved in 8-byte chunks
    'Sw<0,3,3> o 0 o ((8,1),(4,1)):((4,0),(1,0))'
    """
    vec = 16 // elem_bytes
    contiguous = block_k if major == "K" else extent
    w = min(width_bytes // elem_bytes, contiguous)
    # a row narrower than 16 bytes is the whole contiguous extent, unswizzled (the copy
    # moves it in 8- or 4-byte cp.async chunks)
    if (w < vec and w != contiguous) or contiguous % w or (w * elem_bytes) % 4:
        raise TiledMmaError(
            f"shared tile ({extent}, {block_k}) {major}-major: its contiguous extent "
            f"{contiguous} must be a multiple of the swizzle width {w} elements, of one "
            f"16-byte cp.async chunk ({vec} elements) or, narrower, one row of whole "
            "4-byte chunks"
        )
    # a swizzle permutes whole 16-byte chunks: a row that is not whole chunks takes none
    bits = max(0, (w * elem_bytes // 16).bit_length() - 1) if w * elem_bytes % 16 == 0 else 0
    # a swizzle permutes the chunks of 8 rows; unswizzled, an atom of fewer rows tiles a
    # stage whose other extent is no multiple of 8 (an MN-major k4 tile of 12 rows)
    other = extent if major == "K" else block_k
    rows = 8 if bits or other % 8 == 0 else math.gcd(other, 8)
    if other % rows:
        raise TiledMmaError(
            f"shared tile ({extent}, {block_k}) {major}-major: a {w * elem_bytes}-byte swizzle "
            f"row permutes 8 rows, and {other} rows are not whole 8s; a 16-byte row is unswizzled"
        )
    atom = Layout((rows, w), (w, 1)) if major == "K" else Layout((w, rows), (1, w))
    base = vec.bit_length() - 1
    return ComposedLayout(Swizzle(bits, base, 3), 0, tile_to_shape(atom, (extent, block_k)))


# shared addresses (a register each) a register read may keep where its offsets have no one
# thread part (Split op 'k+'): beyond this many the mainloop's registers would spill
MAX_KEYS = 16
SWIZZLE_WIDTHS = (128, 64, 32, 16)  # bytes of a swizzle atom's row; 16: one chunk, none


def widest_smem_layout(
    extent: int, block_k: int, major: str, widest: int = 128, elem_bytes: int = 2
) -> ComposedLayout:
    """The :func:`smem_layout` of the widest swizzle row, at most ``widest`` bytes, that the
    (extent, block_k) stage takes: its contiguous extent must hold whole rows of the swizzle
    atom, so a 96-element 16-bit row takes 64-byte atoms (32 elements), not 128-byte ones.
    An atom row is a power of two of 16-byte chunks, the bits the swizzle permutes (a row
    of 5 chunks under ``Sw<2,..>`` mixes carries of the row index into the chunk bits, and
    no thread part + constant reproduces its offsets). What a design or config leaves to
    the kernel; a stage whose contiguous extent is not whole 16-byte chunks takes none (the
    error of the narrowest).

    >>> str(widest_smem_layout(40, 96, "K"))
    'Sw<2,3,3> o 0 o ((8,5),(32,3)):((32,256),(1,1280))'
    >>> str(widest_smem_layout(40, 16, "MN"))  # 5 chunks a row: 16-byte atoms, unswizzled
    'Sw<0,3,3> o 0 o ((8,5),(8,2)):((1,64),(8,320))'
    >>> widest_smem_layout(128, 32, "MN") == smem_layout(128, 32, "MN")
    True
    >>> str(widest_smem_layout(16, 28, "K"))  # 56-byte rows: one unswizzled row of 28
    'Sw<0,3,3> o 0 o ((8,2),(28,1)):((28,224),(1,0))'
    """
    contiguous = block_k if major == "K" else extent
    err = None
    for width in SWIZZLE_WIDTHS:
        chunks = min(width, contiguous * elem_bytes) // 16
        if width > widest or chunks & (chunks - 1):
            continue
        try:
            return smem_layout(extent, block_k, major, width, elem_bytes)
        except TiledMmaError as exc:
            err = exc
    if contiguous * elem_bytes % 16:  # not whole chunks: one unswizzled row (8- or 4-byte copies)
        return smem_layout(extent, block_k, major, contiguous * elem_bytes, elem_bytes)
    raise err or TiledMmaError(f"swizzle width {widest} bytes: one of {SWIZZLE_WIDTHS} or wider")


def ldmatrix_num(name: str) -> int:
    """8x8 matrices one ldmatrix copy atom loads (a register each per lane).

    >>> ldmatrix_num("SM75_U32x2_LDSM_N"), ldmatrix_num("SM75_U16x8_LDSM_T")
    (2, 4)
    """
    num = ATOM_MATRICES.get(name) if isinstance(name, str) else None
    if num is None:
        raise TiledMmaError(
            f"ldmatrix copy atom {name!r}: not an ldmatrix name; give one of "
            f"{', '.join(ATOM_MATRICES)}"
        )
    return num


def b_ldmatrix_num(mma_n: int, regs_b: int, asked: str | None = None) -> int:
    """Matrices each ldmatrix of B loads. Left to the kernel (``asked`` None): whole atoms'
    registers (a multiple of ``regs_b``) that split the ``mma_n * regs_b`` registers of a
    thread's row of atoms into whole instructions, the widest of 4, 2, 1 that does. An
    ``asked`` copy atom's count is taken where it splits one atom's registers (CuTe's
    ``make_tiled_copy_B``: more instructions of fewer matrices) or, wider, whole atoms of
    the row (the kernel pairs adjacent N atoms); else a TiledMmaError.

    >>> b_ldmatrix_num(4, 2), b_ldmatrix_num(3, 2), b_ldmatrix_num(5, 1), b_ldmatrix_num(6, 1)
    (4, 2, 1, 2)
    >>> b_ldmatrix_num(5, 2, "SM75_U32x1_LDSM_N")
    1
    >>> b_ldmatrix_num(3, 2, "SM75_U32x4_LDSM_N")
    Traceback (most recent call last):
    ...
    cutemma.errors.TiledMmaError: copy_b SM75_U32x4_LDSM_N: 4 matrices per ldmatrix do not split B's 6 registers of 3 atoms (2 each) into whole atoms; give an ldmatrix of 2 or 1 matrices, or None
    """
    total = mma_n * regs_b
    fits = [n for n in (4, 2, 1) if n % regs_b == 0 and total % n == 0]
    if asked is None:
        return fits[0]
    fits += [n for n in (4, 2, 1) if regs_b % n == 0 and n not in fits]
    num = ldmatrix_num(asked)
    if num not in fits:
        raise TiledMmaError(
            f"copy_b {asked}: {num} matrices per ldmatrix do not split B's {total} registers "
            f"of {mma_n} atoms ({regs_b} each) into whole atoms; give an ldmatrix of "
            f"{' or '.join(map(str, fits))} matrices, or None"
        )
    return num


def a_ldmatrix_num(regs_a: int, asked: str | None = None) -> int:
    """Matrices each ldmatrix of A loads: one A atom's ``regs_a`` registers in one
    instruction, or the ``asked`` copy atom's count where it splits them (more instructions
    of fewer matrices, as CuTe's ``make_tiled_copy_A`` issues them). Wider than an atom is
    CuTe's own refusal: ``make_tiled_copy_A`` of an x4 atom over a 2-register A fragment
    fails its static assertion "TiledCopy uses too few vals for selected CopyAtom"
    (tests/cute_cpp/test_ldmatrix_vals.py compiles both).

    >>> a_ldmatrix_num(4), a_ldmatrix_num(4, "SM75_U32x2_LDSM_N"), a_ldmatrix_num(2, "SM75_U16x2_LDSM_T")
    (4, 2, 1)
    >>> a_ldmatrix_num(2, "SM75_U32x4_LDSM_N")
    Traceback (most recent call last):
    ...
    cutemma.errors.TiledMmaError: copy_a SM75_U32x4_LDSM_N: 4 matrices per ldmatrix do not split A's 2 registers of one atom (CuTe: TiledCopy uses too few vals for selected CopyAtom); give an ldmatrix of 2 or 1 matrices, or None
    """
    if asked is None:
        return regs_a
    num = ldmatrix_num(asked)
    fits = [n for n in (4, 2, 1) if regs_a % n == 0]
    if num not in fits:
        raise TiledMmaError(
            f"copy_a {asked}: {num} matrices per ldmatrix do not split A's {regs_a} registers "
            "of one atom (CuTe: TiledCopy uses too few vals for selected CopyAtom); give an "
            f"ldmatrix of {' or '.join(map(str, fits))} matrices, or None"
        )
    return num


class GemmPlan:
    """The layouts and tables of one sm80 GEMM kernel: dtype, A/B majors and a GemmConfig.

    ``a_major`` is 'K' (A row-major, k contiguous) or 'M'; ``b_major`` 'K' (B
    column-major, k contiguous) or 'N'. Coordinates: A tile (m, k), B tile (n, k),
    C tile (m, n), as CuTe's MMA layouts read them.
    """

    @staticmethod
    def check_names(config: object, dtype: object, a_major: object, b_major: object) -> None:
        """A TiledMmaError unless these are a GemmConfig, an sm80 dtype and A/B majors.

        >>> GemmPlan.check_names(GemmConfig(), "bf16", "K", "Q")
        Traceback (most recent call last):
        ...
        cutemma.errors.TiledMmaError: majors A='K' B='Q': A is 'K' or 'M', B 'K' or 'N'
        """
        if not isinstance(config, GemmConfig):
            raise TiledMmaError(f"GemmPlan: expected a GemmConfig first, got {config!r}")
        if not isinstance(dtype, str) or dtype not in ATOMS:
            raise TiledMmaError(f"dtype {dtype!r}: the sm80 GEMM takes {', '.join(ATOMS)}")
        if a_major not in ("K", "M") or b_major not in ("K", "N"):
            raise TiledMmaError(
                f"majors A={a_major!r} B={b_major!r}: A is 'K' or 'M', B 'K' or 'N'"
            )

    def __init__(
        self, config: GemmConfig, dtype: str, a_major: str, b_major: str, design: object = None
    ):
        """``design``: a :class:`cutemma.kernels.design.GemmDesign` whose TiledMMA, smem
        layouts and copy atoms replace those the config implies (None: the config's)."""
        self.check_names(config, dtype, a_major, b_major)
        self.config, self.dtype, self.a_major, self.b_major = config, dtype, a_major, b_major
        self.elem_bytes = ELEM_BYTES[dtype]
        self.vec = 16 // self.elem_bytes
        if self.elem_bytes != 2 and (a_major, b_major) != ("K", "K"):
            raise TiledMmaError(
                f"{dtype}: ldmatrix reads {8 * self.elem_bytes}-bit elements only K-major (A row-"
                f"major, B column-major); got A {a_major}-major, B {b_major}-major — copy the "
                "operand to K-major first (cutemma.gemm does)"
            )
        self.design = design
        if design is None:
            self.tiled = make_tiled_mma(ATOMS[dtype], (*config.warps, 1))
        else:
            self.tiled = design.tiled_mma
        self.tm, self.tn, self.tk = self.tiled.tile_size_mnk
        if config.block_k % self.tk:
            raise TiledMmaError(
                f"{config.name}: block_k {config.block_k} must be a multiple of the {dtype} "
                f"atom's K = {self.tk}"
            )
        if config.block_m % self.tm or config.block_n % self.tn:
            raise TiledMmaError(
                f"{config.name}: block_m {config.block_m} and block_n {config.block_n} must be "
                f"multiples of the TiledMMA's M = {self.tm} and N = {self.tn}"
            )
        # the lanes the TV layouts span: a quadpair atom alone (8 threads) still runs as a
        # warp (mma.sync is warp-wide; the other quadpairs repeat its work, see regload)
        self.threads = tv_table(self.tiled.tv_layout_C_tiled).shape[0]
        self.mma_m = config.block_m // self.tm
        self.mma_n = config.block_n // self.tn
        self.k_blocks = config.block_k // self.tk
        op = self.tiled.atom.op
        # 32-bit registers of one atom's A and B fragments (4 and 2 for the k16 16-bit,
        # k8 tf32 and k32 8-bit atoms; 2 and 1 for the k8, k4 and k16 ones)
        self.regs_a, self.regs_b = op.a.count, op.b.count
        # accumulator registers of one atom: 4 f32/s32 values, or (F16-accumulating atoms)
        # the same 4 values packed in 2 f16x2 registers, value v in the low half of
        # register v // 2 when v is even (PTX ISA, mma.m16n8k8/k16 "fragments of C and D":
        # c0, c1 in the first .f16x2 register, lower half first)
        self.regs_c = op.c.count
        self.acc_values = tv_table(self.tiled.atom.tv_layout_C).shape[1]
        self.acc_packed = self.regs_c != self.acc_values
        if self.acc_packed and self.acc_values != 2 * self.regs_c:
            raise TiledMmaError(
                f"{self.tiled.atom.name}: {self.acc_values} accumulator values in "
                f"{self.regs_c} registers; the kernel packs two 16-bit values per register"
            )
        # the TiledMMA's tile may repeat the atom layout within a thread (a permutation
        # larger than the atoms cover): rep_m x rep_n atoms per thread per TiledMMA tile
        am, an, ak = self.tiled.atom.shape_mnk
        lay = self.tiled.atom_layout_mnk
        wm, wn = (size(lay[i]) if i < len(lay.shape) else 1 for i in range(2))
        self.rep_m, self.rep_n = self.tm // (am * wm), self.tn // (an * wn)
        if self.tk != ak or self.rep_m * am * wm != self.tm or self.rep_n * an * wn != self.tn:
            raise TiledMmaError(
                f"{self.tiled.atom.name}: TiledMMA tile {self.tiled.tile_size_mnk} is not whole "
                f"repeats of {wm}x{wn} atoms of {(am, an, ak)} along M and N (and one along K)"
            )
        # registers are read with ldmatrix where the fragments are ldmatrix-shaped (16-row
        # mma.sync atoms, one atom per thread and tile, no UniversalCopy asked), else with
        # plain shared loads at the offsets the TiledMMA's TV layouts give (regload)
        ldsm_shaped = am == 16 and self.rep_m == self.rep_n == 1
        self.universal = {
            w: not ldsm_shaped
            or str(getattr(design, f"copy_{w.lower()}", None) or "").startswith("UniversalCopy")
            for w in "AB"
        }
        self.frag_regs = {"A": self.rep_m * self.regs_a, "B": self.rep_n * self.regs_b}
        # B's ldmatrix moves up to 4 registers: 4 // regs_b atoms at once, fewer (x2, x1)
        # where a row of atoms is not whole x4s
        asked = {w: str(getattr(design, f"copy_{w.lower()}", None) or "") for w in "AB"}
        asked = {w: a if a.startswith("SM75_") and not self.universal[w] else None
                 for w, a in asked.items()}  # fmt: skip
        self.ldsm_b = b_ldmatrix_num(self.mma_n, self.regs_b, asked["B"])
        # A's: one atom's registers per ldmatrix, or the asked atom's fewer matrices
        self.ldsm_a = a_ldmatrix_num(self.regs_a, asked["A"])

    # -------------------------------------------------------------- smem
    @cached_property
    def smem_A(self) -> ComposedLayout:
        """(m, k) -> element of one stage of A."""
        if self.design is not None and self.design.smem_a is not None:
            return self.design.smem_a
        major = "K" if self.a_major == "K" else "MN"
        cfg = self.config
        return widest_smem_layout(
            cfg.block_m, cfg.block_k, major, cfg.swizzle_bytes, self.elem_bytes
        )

    @cached_property
    def smem_B(self) -> ComposedLayout:
        """(n, k) -> element of one stage of B."""
        if self.design is not None and self.design.smem_b is not None:
            return self.design.smem_b
        major = "K" if self.b_major == "K" else "MN"
        cfg = self.config
        return widest_smem_layout(
            cfg.block_n, cfg.block_k, major, cfg.swizzle_bytes, self.elem_bytes
        )

    @cached_property
    def smem_tables(self) -> dict[str, np.ndarray]:
        """[mn, k] -> swizzled element offset of each operand's stage (the layouts, evaluated)."""
        out = {}
        for which, lay, ext in (
            ("A", self.smem_A, self.config.block_m),
            ("B", self.smem_B, self.config.block_n),
        ):
            inner = mode_table(lay.inner.shape, lay.inner.stride)
            out[which] = lay.outer(inner).reshape(self.config.block_k, ext).T
        return out

    @property
    def stage_elems_A(self) -> int:
        return self.config.block_m * self.config.block_k

    @property
    def stage_elems_B(self) -> int:
        return self.config.block_n * self.config.block_k

    @property
    def shared_bytes(self) -> int:
        return self.elem_bytes * self.config.stages * (self.stage_elems_A + self.stage_elems_B)

    # -------------------------------------------------------------- cp.async
    def copy(self, which: str) -> CopyPlan:
        """The cp.async partition of operand ``which`` ('A' or 'B')."""
        major = self.a_major if which == "A" else self.b_major
        extent = self.config.block_m if which == "A" else self.config.block_n
        smem = self.smem_A if which == "A" else self.smem_B
        tab = self.smem_tables[which]
        return CopyPlan.make(
            which,
            extent,
            self.config.block_k,
            major == "K",
            smem.outer,
            tab,
            self.threads,
            self.vec,
        )

    # -------------------------------------------------------------- ldmatrix
    @cached_property
    def tv_tables(self) -> dict[str, np.ndarray]:
        """(thread, value) -> tile offset of tv_layout_A/B/C_tiled, as numpy tables."""
        t = self.tiled
        return {
            "A": tv_table(t.tv_layout_A_tiled),
            "B": tv_table(t.tv_layout_B_tiled),
            "C": tv_table(t.tv_layout_C_tiled),
        }

    def ldmatrix_groups(self, which: str) -> int:
        """ldmatrix instructions per k block: regs_a / ldsm_a per A atom row (1 but for a
        narrower asked atom), and the B row's registers over ldsm_b (a pair of atoms, one,
        or part of one)."""
        if which == "A":
            return self.mma_m * self.regs_a // self.ldsm_a
        return self.mma_n * self.regs_b // self.ldsm_b

    def ldmatrix(self, which: str) -> tuple[LdmatrixPlan, Split]:
        return self._ldmatrix[which]

    @cached_property
    def _ldmatrix(self) -> dict:
        return {w: self._plan_ldmatrix(w) for w in ("A", "B") if not self.universal[w]}

    def ldmatrix_copy(self, which: str) -> TiledCopy:
        """The TiledCopy (cutemma.tiled) whose ``partition_S`` is ``which``'s ldmatrix rows.

        The atom is ``ldmatrix`` of the operand's major (K: plain, MN: ``.trans``), x4, or x2
        for a B of one N atom; A's copy is ``make_tiled_copy_A`` of the TiledMMA; B's x4 serves
        two N atoms, so it is ``make_tiled_copy_B`` of the TiledMMA with its N tile doubled.

        >>> p = GemmPlan(GemmConfig(), "f16", "K", "N")
        >>> p.ldmatrix_copy("A").atom.name, p.ldmatrix_copy("B").atom.name
        ('SM75_U32x4_LDSM_N', 'SM75_U16x8_LDSM_T')
        """
        major = self.a_major if which == "A" else self.b_major
        num = self.ldsm_a if which == "A" else self.ldsm_b
        name = f"SM75_U32x{num}_LDSM_N" if major == "K" else f"SM75_U16x{2 * num}_LDSM_T"
        asked = None if self.design is None else getattr(self.design, f"copy_{which.lower()}")
        if asked is not None and asked != name:
            raise TiledMmaError(
                f"copy_{which.lower()} {asked}: {which} is {major}-major here and the mainloop "
                f"reads it with {name}; give that atom (or None)"
            )
        atom = make_copy_atom(name, 8 * self.elem_bytes)
        if which == "A":
            return make_tiled_copy_A(atom, self.tiled)
        tiled, atoms = self.tiled, num // self.regs_b  # N atoms one ldmatrix serves
        if atoms > 1 and self.design is None:
            warps = (*self.config.warps, 1)
            tiled = make_tiled_mma(self.tiled.atom, warps, (None, atoms * self.tn, None))
        elif atoms > 1:  # the design's atom layout and M permutation, N widened
            perm_m = self.tiled.permutation_mnk[0]
            tiled = make_tiled_mma(
                self.tiled.atom, self.tiled.atom_layout_mnk, (perm_m, atoms * self.tn, None)
            )
        return make_tiled_copy_B(atom, tiled)

    def _plan_ldmatrix(self, which: str) -> tuple[LdmatrixPlan, Split]:
        """The ldmatrix atom of ``which`` and its lane row offsets (element offset in one stage).

        Entry ``i * k_blocks + ik`` of the split's constants is the ldmatrix of
        group ``i`` in k block ``ik``: the first value of instruction ``(i, ik)`` of the
        TiledCopy's ``partition_S`` over the tile (rest modes (groups, k blocks)).
        """
        tc = self.ldmatrix_copy(which)
        tab = self.smem_tables[which]
        extent = self.config.block_m if which == "A" else self.config.block_n
        nv, groups = tc.atom.num_val_src, self.ldmatrix_groups(which)
        table, rows = [], []
        coords = _partition_coords(tc, extent, self.config.block_k)
        for t in range(self.threads):
            crd = coords[t]
            offs_all = tab[crd[:, 0], crd[:, 1]]
            if t < 32:
                rows.append(tuple(int(x) for x in crd[0]))
            row = []
            for i in range(groups):
                for ik in range(self.k_blocks):
                    j = (i + ik * groups) * nv
                    offs = [int(x) for x in offs_all[j : j + nv]]
                    if (offs[0] * self.elem_bytes) % 16 or offs != list(
                        range(offs[0], offs[0] + nv)
                    ):
                        raise TiledMmaError(
                            f"{which} {self.config.name}: {tc.atom.name} reads 16-byte rows but "
                            f"thread {t}'s row {tuple(int(x) for x in crd[j])} is not 16 contiguous aligned bytes in the "
                            "smem layout; make its contiguous mode the fragment's K (plain) or "
                            "M/N (.trans) mode"
                        )
                    row.append(offs[0])
            table.append(row)
        op = tc.atom.op
        atom = LdMatrix(op.param("num"), "trans" in op.modifiers)
        smem_outer = (self.smem_A if which == "A" else self.smem_B).outer
        return LdmatrixPlan(atom, tuple(rows)), split_offsets(
            table, smem_outer, f"ldmatrix {which}", before_swizzle=True, max_keys=MAX_KEYS
        )

    def smem_read(self, which: str) -> Split:
        """The shared offsets ``which``'s registers are read from (ldmatrix rows or regload
        values), split into thread part and constants."""
        return self.regload(which) if self.universal[which] else self.ldmatrix(which)[1]

    def regload(self, which: str) -> Split:
        """The universal register load of ``which``: value ``j`` of the TiledMMA's TV layout
        (``tv_layout_A/B_tiled``) of thread ``t`` in group ``i`` (atom row / column of the
        block) and k block ``ik`` is read from the stage offset the smem layout gives its
        tile coordinate; constant ``(i * k_blocks + ik) * values + j``. Register ``r`` of the
        fragment packs values ``r * vpr ..`` (vpr = 4 // elem_bytes), low bytes first.

        >>> from cutemma.kernels.design import GemmDesign
        >>> d = GemmDesign("SM70_8x8x4_F32F16F16F32_NT", (16, 16, 32))
        >>> p = GemmPlan(d.config, "f16", "M", "N", d)
        >>> p.threads, p.universal, len(p.regload("A").consts)
        (32, {'A': True, 'B': True}, 64)
        """
        return self._regload[which]

    @cached_property
    def _regload(self) -> dict:
        out = {}
        for which in "AB":
            if not self.universal[which]:
                continue
            tv = self.tv_tables[which]
            tab = self.smem_tables[which]
            tmn = self.tm if which == "A" else self.tn
            groups = self.mma_m if which == "A" else self.mma_n
            mn = tv % tmn  # (threads, values): the value's row (column) in the TiledMMA tile
            k = tv // tmn
            cols = [
                tab[mn + i * tmn, k + ik * self.tk]
                for i in range(groups)
                for ik in range(self.k_blocks)
            ]
            table = np.concatenate(cols, axis=1).tolist()
            smem = self.smem_A if which == "A" else self.smem_B
            out[which] = split_offsets(
                table, smem.outer, f"regload {which}", before_swizzle=True, max_keys=MAX_KEYS
            )
        return out

    def regload_wide(self, which: str) -> tuple[bool, ...]:
        """Per fragment register (in constant order / vpr): True when its values are
        consecutive and 4-byte aligned in the stage for every thread (one 32-bit load)."""
        split, vpr = self.regload(which), 4 // self.elem_bytes
        full = [
            [_combine(split, t, i) for i in range(len(split.consts))] for t in range(self.threads)
        ]
        out = []
        for r in range(len(split.consts) // vpr):
            ok = all(
                row[r * vpr] % vpr == 0
                and row[r * vpr : r * vpr + vpr] == list(range(row[r * vpr], row[r * vpr] + vpr))
                for row in full
            )
            out.append(ok)
        return tuple(out)

    def bank_conflicts(self, which: str) -> int:
        """Worst rows per 16-byte bank group over every ldmatrix phase of ``which`` (1 = none)."""
        plan, split = self.ldmatrix(which)
        worst = 1
        for w in range(self.threads // 32):
            for j in range(len(split.consts)):
                addrs = [_combine(split, 32 * w + lane, j) for lane in range(32)]
                worst = max(worst, bank_phases(addrs, plan.atom.num, self.elem_bytes))
        return worst

    # -------------------------------------------------------------- epilogue
    @cached_property
    def epilogue(self) -> tuple[ThreadValue, ThreadValue, tuple[tuple[int, int, int], ...]]:
        """(m of thread, n of thread, [(acc index, dm, dn)]) from partition_C's TV layout.

        Accumulator ``acc[(im * mma_n + in) * 4 + v]`` holds C(m_t + dm, n_t + dn).
        """
        return c_partition(self.tv_tables["C"], self.tm, self.tn, self.mma_m, self.mma_n)


def _combine(split: Split, t: int, i: int) -> int:
    return split.at(t, i)


@dataclass(frozen=True)
class CopyPlan:
    """cp.async of one operand tile: 16-byte chunks along the contiguous mode.

    Thread t < ``threads`` copies chunks ``(c_t, o_t + i * rows_per_pass)`` for i < iters,
    ``(c, o) = idx2crd(t, (chunks_per_row, rows_per_pass))``: c counts 16-byte
    chunks of the contiguous mode, o the other mode. ``smem`` splits the shared
    offset of each chunk into thread part and constant per i. ``threads`` may be fewer
    than the block's (a small tile under many warps, as CuTe's TiledCopy over fewer
    threads): the others skip the copy but still commit, wait and reach the barriers.

    >>> cp = CopyPlan.make("B", 32, 16, True, None, np.arange(512).reshape(32, 16), 256, 8)
    >>> cp.threads, cp.thr_layout.shape, cp.iters
    (64, (2, 32), 1)
    """

    which: str
    k_contiguous: bool
    thr_layout: Layout  # tid -> (c, o) coordinate order, (chunks_per_row, rows_per_pass)
    iters: int
    rows_per_pass: int
    smem: Split
    threads: int  # the first `threads` threads of the block copy; the rest skip the copy
    vec: int  # elements per chunk
    chunk_bytes: int  # 16, or 8 or 4 where the row is not whole 16-byte chunks

    @staticmethod
    def make(which, extent, block_k, k_contiguous, swizzle, smem_tab, threads, vec) -> CopyPlan:
        """The copy of ``vec``-element (16-byte) chunks, else of the narrower ones cp.async
        moves (8 and 4 bytes: ``cp.async.ca``) where a row is not whole 16-byte chunks or
        the smem layout keeps fewer elements contiguous, as CuTe takes a narrower cp.async
        atom for such a tile."""
        contiguous, other = (block_k, extent) if k_contiguous else (extent, block_k)
        widths = [v for v in (vec, vec // 2, vec // 4) if contiguous % v == 0]
        widths = [v for v in widths if contiguous // v <= threads]
        if not widths:
            raise TiledMmaError(
                f"cp.async of {which} ({extent}x{block_k}): rows of {contiguous} contiguous "
                f"elements in 16-, 8- or 4-byte chunks of {vec}, {vec // 2} or {vec // 4}, at "
                f"most one chunk per thread of the {threads} per row; need a contiguous extent "
                f"that is a multiple of {max(1, vec // 4)} and at most {threads * vec}"
            )
        last = None
        # the widest chunk first; offsets that split after the swizzle first (shorter passes
        # if need be), then before it (the swizzle applied to each chunk's sum: a few more
        # instructions)
        for v in widths:
            for before in (False, True):
                for rpp in copy_rows_per_pass(contiguous // v, other, threads):
                    try:
                        return CopyPlan._make(
                            which, extent, block_k, k_contiguous, swizzle, smem_tab, threads, v,
                            rpp, before, 16 * v // vec,
                        )  # fmt: skip
                    except TiledMmaError as exc:  # offsets that do not split: try shorter passes
                        last = exc
        raise last

    @staticmethod
    def _make(
        which, extent, block_k, k_contiguous, swizzle, smem_tab, threads, vec, rpp, before, nbytes
    ):
        contiguous, other = (block_k, extent) if k_contiguous else (extent, block_k)
        cpr = contiguous // vec
        copiers = cpr * rpp
        thr = Layout((cpr, rpp))
        tc = cp_async_copy(k_contiguous, cpr, rpp, vec, nbytes)
        table = []
        coords = _partition_coords(tc, extent, block_k)
        for t in range(copiers):
            crd = coords[t]
            offs_all = smem_tab[crd[:, 0], crd[:, 1]]
            row = []
            for i in range(other // rpp):
                offs = [int(x) for x in offs_all[i * vec : (i + 1) * vec]]
                if offs != list(range(offs[0], offs[0] + vec)):
                    raise TiledMmaError(
                        f"cp.async {which}: thread {t}'s chunk at {tuple(crd[i * vec].tolist())} "
                        "is not contiguous in smem"
                    )
                row.append(offs[0])
            table.append(row)
        split = split_offsets(table, swizzle, f"cp.async {which}", before_swizzle=before)
        if split.thread.layout is None and copiers < threads:
            # a __constant__ table is read at [tid] by every thread: the idle ones read 0s
            pad = split.thread.table + (0,) * (threads - copiers)
            split = replace(split, thread=ThreadValue(pad, None, split.thread.swizzle))
        return CopyPlan(which, k_contiguous, thr, other // rpp, rpp, split, copiers, vec, nbytes)


def copy_rows_per_pass(chunks_per_row: int, rows: int, threads: int) -> list[int]:
    """Rows one pass of the copy may cover, most first: those that divide ``rows`` and fit,
    with ``chunks_per_row`` threads each, in ``threads`` (every pass whole, so no chunk needs
    a predicate of its own; threads past ``chunks_per_row * rows_per_pass`` idle). The plan
    takes the first whose offsets split into thread part and constants.

    >>> copy_rows_per_pass(4, 128, 128)[0], copy_rows_per_pass(2, 32, 256), copy_rows_per_pass(4, 48, 128)[:2]
    (32, [32, 16, 8, 4, 2, 1], [24, 16])
    """
    fit = max(1, threads // chunks_per_row)
    return [r for r in range(min(fit, rows), 0, -1) if rows % r == 0]


def cp_async_copy(
    k_contiguous: bool, cpr: int, rpp: int, vec: int, chunk_bytes: int = 16
) -> TiledCopy:
    """The TiledCopy of the kernel's cp.async: thread t at chunk t % cpr of row t // cpr
    (``cpr`` chunks of ``chunk_bytes`` per row, ``rpp`` rows per pass), each moving ``vec``
    contiguous elements; its instructions in partition order. 8- and 4-byte chunks are
    CuTe's ``SM80_CP_ASYNC_CACHEALWAYS`` (``cp.async.ca``; ``.cg`` moves 16 bytes only).

    >>> cp_async_copy(True, 4, 32, 8).size, cp_async_copy(True, 2, 8, 2, 4).atom.name
    (128, 'SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint32_t>')
    """
    if chunk_bytes == 16:
        atom = make_copy_atom("SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>", 128 // vec)
    else:
        unit = {8: "uint64_t", 4: "uint32_t"}[chunk_bytes]
        atom = make_copy_atom(f"SM80_CP_ASYNC_CACHEALWAYS_ZFILL<{unit}>", 8 * chunk_bytes // vec)
    if k_contiguous:
        return make_tiled_copy(atom, Layout((rpp, cpr), (cpr, 1)), Layout((1, vec)))
    return make_tiled_copy(atom, Layout((cpr, rpp), (1, cpr)), Layout((vec, 1)))


def _partition_coords(tc: TiledCopy, extent: int, block_k: int) -> np.ndarray:
    """(threads, values, 2): the (mn, k) tile coordinate of every value of each thread's
    ``partition_S`` of an (extent, block_k) tile, in partition order. The TiledCopy's
    (thread, value, rest) view of the tile (``tidfrg_S``, what ``partition_S`` slices) is
    evaluated once with numpy.

    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.tiled import make_tiled_copy
    >>> tc = make_tiled_copy(make_copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", 16),
    ...                      Layout((32, 4), (4, 1)), Layout((1, 8)))
    >>> _partition_coords(tc, 32, 32)[5, :2].tolist()
    [[1, 8], [1, 9]]
    """
    frg = tc.tidfrg_S(Layout((extent, block_k)))
    shape, stride = frg.shape, frg.stride
    thr = mode_table(shape[0], stride[0])
    rest = mode_table(tuple(shape[1:]), tuple(stride[1:]))
    idx = thr[:, None] + rest[None, :]
    return np.stack([idx % extent, idx // extent], axis=2)


def _tile_coord(k_contiguous: bool) -> Callable[[int, int], tuple[int, int]]:
    """(contiguous, other) -> (mn, k) tile coordinate."""
    return (lambda c, o: (o, c)) if k_contiguous else (lambda c, o: (c, o))
