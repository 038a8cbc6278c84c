"""GemmDesign: a GEMM kernel described by its parts (TiledMMA, tile, shared-memory layouts,
copies, stages, schedule, epilogue), checked against a table of rules before anything
compiles, and turned into the family's config and plan.

The family follows the TiledMMA's atom: ``mma.sync`` atoms (SM80 16x8x16 f16/bf16, 16x8x8
tf32, 16x8x32 int8, SM89 16x8x32 fp8, the F16-accumulating 16-bit ones, the SM70 8x8x4
quadpair) run the sm80 family, GMMA ``SS`` and ``RS`` atoms (``SM90_64xNxK_...``) the sm90
family. The sm80 mainloop reads registers with ldmatrix where the fragments are
ldmatrix-shaped, else (SM70, atoms repeated in a thread's tile, ``copy_a/copy_b =
"UniversalCopy<...>"``) with plain shared loads at the offsets the TiledMMA's TV layouts give. What a design leaves out is chosen as the built-in
configs choose it, where their choice fits, else from the rules: B's ldmatrix the widest
count (x4, x2, x1) that tiles a row of B atoms, each stage the widest swizzle its rows hold. ``GemmConfig`` and ``Sm90Config`` are shorthands: ``config.design(dtype)``
(or :meth:`GemmDesign.from_config`) gives the design whose kernel is the config's, byte for
byte.

>>> d = GemmDesign("SM80_16x8x16_F32BF16BF16F32_TN", tile=(64, 64, 32))
>>> d.family, d.dtype, d.config.name
('sm80', 'bf16', 'b64x64x32_w1x1_s4')
>>> failed_rules(GemmDesign("SM80_16x8x16_F32BF16BF16F32_TN", tile=(60, 64, 32)), "sm_90a")
['tile_multiple']

A family's config is plain data whose allowed combinations are the named rules of the
family's ``CONFIG_RULES``; the rule ``config`` builds it, and a design whose config breaks
one fails by that rule's name:

>>> failed_rules(GemmDesign("SM90_64x128x16_F32BF16BF16_SS", (64, 128, 64), schedule="alternate"))
['sm90_config.alternate_consumers']
"""

from __future__ import annotations

import hashlib
import itertools
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from cutemma.errors import ConfigRuleError, CutemmaError, DesignError, SoftwareAtomWarning
from cutemma.hardware import arch_number, limits, parse_arch
from cutemma.kernels.epilogue import design_check
from cutemma.kernels.sm80.ldmatrix import MATRICES, atom_name
from cutemma.kernels.sm80.plan import (
    ATOMS,
    ELEM_BYTES,
    GemmConfig,
    a_ldmatrix_num,
    b_ldmatrix_num,
    widest_smem_layout,
)
from cutemma.kernels.sm90.config import (
    ATOMS_SM90,
    NON_ACC_REGS,
    REGISTER_SPLIT,
    SCHEDULES,
    SWIZZLES,
    WARPGROUP,
    Sm90Config,
)
from cutemma.layout import ComposedLayout, Layout, size
from cutemma.layout.checks import as_int
from cutemma.tiled import make_tiled_mma

# atom name -> kernel dtype, per family (the families' own tables, inverted)
SM80_ATOMS = (
    {name: dtype for dtype, name in ATOMS.items()}
    | {
        # the half-K atoms: A in 2 registers, B in 1 (ldmatrix .x2 / .x1 per atom)
        "SM80_16x8x8_F32F16F16F32_TN": "f16",
        "SM80_16x8x8_F32BF16BF16F32_TN": "bf16",
        "SM80_16x8x4_F32TF32TF32F32_TN": "tf32",
        "SM80_16x8x16_S32S8S8S32_TN": "s8",
        # F16-accumulating atoms: C/D as 2 f16x2 registers per atom (the kernel packs them)
        "SM80_16x8x16_F16F16F16F16_TN": "f16",
        "SM80_16x8x8_F16F16F16F16_TN": "f16",
    }
    | {
        # the quadpair mma.m8n8k4: PTX ISA, mma "Target ISA Notes": .f16 m8n8k4 "requires
        # sm_70 or higher" and "is optimized for target architecture sm_70 and may have
        # substantially reduced performance on other target architectures" (on sm_90a ptxas
        # lowers it to a called routine: no HMMA in the SASS). Fragments not ldmatrix-shaped:
        # read by regload
        f"SM70_8x8x4_{acc}_{majors}": "f16"
        for acc in ("F32F16F16F32", "F16F16F16F16")
        for majors in ("TN", "NT", "NN", "TT")
    }
)
_GMMA = re.compile(r"^SM90_64x(\d+)x(\d+)_(\w+?)_SS(_TN)?$")
SM90_ATOMS = {
    pattern.replace("{n}", r"\d+"): dtype for dtype, (pattern, _, _) in ATOMS_SM90.items()
}
# GMMA RS (A from registers): 16-bit and tf32 (fp8's promoted loops keep A in smem)
SM90_RS_ATOMS = {
    pattern.replace("{n}", r"\d+").replace("_SS", "_RS"): dtype
    for dtype, (pattern, _, _) in ATOMS_SM90.items()
    if dtype in ("bf16", "f16", "tf32")
} | {
    # F16-accumulating GMMA (f16 inputs), SS or RS
    r"SM90_64x\d+x16_F16F16F16_SS": "f16",
    r"SM90_64x\d+x16_F16F16F16_RS": "f16",
}
# operand major -> the ldmatrix copy atoms the sm80 mainloop issues, the widest first
LDMATRIX = {
    major: tuple(atom_name(num, trans) for num in reversed(MATRICES))
    for major, trans in (("K", False), ("MN", True))
}
# (TiledMMA, smem layouts, copies, stages, schedule, epilogue) -> the default tile found
_DEFAULT_TILES: dict[tuple, tuple[int, int, int]] = {}
# atom-name prefix -> the compute capabilities whose tensor cores execute it; on every other
# one the compiler lowers the instruction to a called software routine. PTX ISA, mma "Target
# ISA Notes": "mma.sync.m8n8k4 is optimized for target architecture sm_70 and may have
# substantially reduced performance on other target architectures". NVRTC 13.0 (see
# tests/kernels/test_design_arch.py) gives the f16 m8n8k4 HMMA on sm_75 and one CALL, no
# HMMA, on sm_80, sm_86, sm_89, sm_90a, sm_100a and sm_120a.
NATIVE_ON = {"SM70_8x8x4_": frozenset({70, 72, 75})}
DEFAULT_TILE_ARCH = "sm_90a"  # a design left without a tile gets one that passes its rules here
MAX_WARPS_SM80 = 8  # 256 threads: the accumulators of a 128x256 tile at 2 regs per value
SM80_REG_OVERHEAD = 40  # addresses, loop state, the epilogue's indices (sass of the built-ins)

# config fields a design answers through its config (GemmDesign.__getattr__)
_CONFIG_FIELDS = frozenset(
    {"block_m", "block_n", "block_k", "warps", "swizzle_bytes", "group_m", "consumers"}
    | {"cluster", "promote", "multicast", "tile_warpgroups"}
)


def base_name(atom: Any) -> str:
    """'SM90_64x128x16_F32BF16BF16_SS' of an atom, a TiledMMA's atom or a name (no majors).

    >>> base_name("SM90_64x64x16_F32F16F16_SS<K,MN>")
    'SM90_64x64x16_F32F16F16_SS'
    """
    name = atom if isinstance(atom, str) else getattr(atom, "name", str(atom))
    return name.split("<")[0]


def atom_family(name: str) -> tuple[str | None, str | None]:
    """(family, kernel dtype) of an atom name, or (None, None) when no family renders it.

    >>> atom_family("SM89_16x8x32_F32E4M3E4M3F32_TN"), atom_family("SM90_64x96x16_F32BF16BF16_SS")
    (('sm80', 'e4m3'), ('sm90', 'bf16'))
    >>> atom_family("SM70_8x8x4_F32F16F16F32_NT"), atom_family("SM80_8x8x4_F64F64F64F64_TN")
    (('sm80', 'f16'), (None, None))
    """
    name = base_name(name)
    if name in SM80_ATOMS:
        return "sm80", SM80_ATOMS[name]
    for pattern, dtype in (SM90_ATOMS | SM90_RS_ATOMS).items():
        if re.fullmatch(pattern, name):
            return "sm90", dtype
    return None, None


def atom_arch(name: str) -> int:
    """The architecture an atom's instruction needs: 80 for SM80_..., 90 for SM90_...

    >>> atom_arch("SM89_16x8x32_F32E4M3E4M3F32_TN")
    89
    """
    m = re.match(r"SM(\d+)_", base_name(name))
    return int(m.group(1)) if m else 0


def _key(x: Any) -> Any:
    """A hashable, value-equal stand-in for a layout or TiledMMA field."""
    if x is None or isinstance(x, (int, str, tuple)):
        return x
    return (type(x).__name__, str(x))


@dataclass(frozen=True, eq=False)
class GemmDesign:
    """One GEMM kernel's parts. ``tiled_mma`` is a TiledMMA (or an atom name: one atom);
    ``tile`` (bm, bn, bk) a multiple of its tile; ``smem_a``/``smem_b`` swizzled layouts of
    the (bm, bk) / (bn, bk) stage (their contiguous mode fixes the operand's major); ``copy_a``
    /``copy_b`` the copy atoms that read them into registers (sm80: ldmatrix); ``stages`` the
    ring depth; ``schedule`` (sm90: 'cooperative', 'pingpong', 'alternate'); ``epilogue`` a
    tuple of fused-epilogue op names (validated by the epilogue module's check).

    Frozen and hashable by value (it is part of ``cutemma.gemm``'s repeated-call key).

    >>> from cutemma.tiled import make_tiled_mma
    >>> t = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1))
    >>> GemmDesign(t, (128, 128, 32)) == GemmDesign(make_tiled_mma(t.atom, (2, 2, 1)), (128, 128, 32))
    True
    """

    tiled_mma: Any
    tile: tuple[int, int, int] | None = None
    smem_a: Any = None
    smem_b: Any = None
    copy_a: str | None = None
    copy_b: str | None = None
    stages: int | None = None
    schedule: str | None = None
    epilogue: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        tm = self.tiled_mma
        if isinstance(tm, str):
            family, _ = atom_family(tm)
            try:
                if family == "sm90":  # a warpgroup atom: its majors are the call's (K, K here)
                    name = tm if "<" in tm or tm.endswith("_TN") else tm + "<K,K>"
                    tm = make_tiled_mma(name)
                else:
                    tm = make_tiled_mma(tm)
            except CutemmaError as exc:
                raise DesignError(f"GemmDesign: tiled_mma {self.tiled_mma!r}: {exc}") from None
            object.__setattr__(self, "tiled_mma", tm)
        if not hasattr(tm, "tile_size_mnk"):
            raise DesignError(
                f"GemmDesign: tiled_mma must be a TiledMMA (cutemma.make_tiled_mma) or an atom "
                f"name, got {type(tm).__name__}"
            )
        for f in ("smem_a", "smem_b"):
            v = getattr(self, f)
            if v is not None and not isinstance(v, (Layout, ComposedLayout)):
                raise DesignError(
                    f"GemmDesign: {f} is a {type(v).__name__}, not a layout; give a (swizzled) "
                    "Layout of the stage, e.g. cutemma.kernels.sm80.plan.smem_layout(...)"
                )
        try:  # the rule stages names a wrong value; one that cannot be keyed fails here
            hash(self.stages)
        except TypeError:
            raise DesignError(
                f"GemmDesign: stages {self.stages!r}; give a whole number >= 2, or None for "
                "as many as fit"
            ) from None
        for f in ("copy_a", "copy_b", "schedule"):
            v = getattr(self, f)
            if v is not None and not isinstance(v, str):
                raise DesignError(f"GemmDesign: {f} {v!r} is not a name; give a string or None")
        ep = self.epilogue
        if ep is not None:
            ops = (ep,) if isinstance(ep, str) else ep
            if not isinstance(ops, (tuple, list)) or not all(isinstance(o, str) for o in ops):
                raise DesignError(
                    f"GemmDesign: epilogue {ep!r}; give an op name or a tuple of op names, "
                    "e.g. ('bias', 'relu'), or None"
                )
            object.__setattr__(self, "epilogue", tuple(ops))
        t = self.tile
        if t is not None:
            if not isinstance(t, (tuple, list)) or not all(
                isinstance(x, int | float) or as_int(x) is not None for x in t
            ):  # the rule tile_ints names a wrong count or a float; these cannot even be keyed
                raise DesignError(
                    f"GemmDesign: tile {t!r}; give (bm, bn, bk), three whole numbers, or None "
                    "for the largest multiple of the TiledMMA's tile that passes the rules"
                )
            # (numpy's integers are whole numbers: kept as ints, as the rules and keys read them)
            t = tuple(x if (i := as_int(x)) is None else i for x in t)
            object.__setattr__(self, "tile", t)
        else:
            # the search builds designs: once per TiledMMA and fields, not once per gemm call
            fields = (self.smem_a, self.smem_b, self.copy_a, self.copy_b)
            rest = (self.stages, self.schedule, self.epilogue)
            k = (self.tiled_mma_key, *map(_key, fields), *rest)
            if k not in _DEFAULT_TILES:
                if len(_DEFAULT_TILES) >= 512:
                    _DEFAULT_TILES.clear()
                _DEFAULT_TILES[k] = self._default_tile()
            object.__setattr__(self, "tile", _DEFAULT_TILES[k])
        object.__setattr__(self, "_hash", hash(self.key))

    # ------------------------------------------------------------------ identity
    @property
    def key(self) -> tuple:
        tiled = self.tiled_mma_key
        fields = (self.smem_a, self.smem_b, self.copy_a, self.copy_b)
        cfg = getattr(self, "_config", None)  # a config's own choices (cluster, epilogue, ...)
        # (the stages' type too: 3.0 == 3, but only the int is a ring depth; the cached
        # check of one must not answer for the other)
        rest = ((type(self.stages).__name__, self.stages), self.schedule, self.epilogue, cfg)
        # 64.0 == 64 in Python: the types keep a float tile apart from the int one
        tile = (
            tuple((type(x).__name__, x) for x in self.tile)
            if isinstance(self.tile, tuple)
            else self.tile
        )
        return (tiled, tile, *map(_key, fields), *rest)

    def __hash__(self) -> int:
        return self._hash

    def __getattr__(self, name: str) -> Any:
        """A config field (block_m, warps, cluster, ...) read through the design's config, so
        a design stands where its shorthand did."""
        if name.startswith("_") or name not in _CONFIG_FIELDS:
            raise AttributeError(name)
        return getattr(self.config, name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GemmDesign) and self.key == other.key

    # ------------------------------------------------------------------ what it is
    @property
    def atom_name(self) -> str:
        return base_name(self.tiled_mma.atom)

    @property
    def family(self) -> str | None:
        return atom_family(self.atom_name)[0]

    @property
    def dtype(self) -> str | None:
        return atom_family(self.atom_name)[1]

    @property
    def atom_counts(self) -> tuple[int, int, int]:
        """Atoms of the atom layout along M, N, K."""
        lay = self.tiled_mma.atom_layout_mnk
        return tuple(size(lay[i]) if i < len(lay.shape) else 1 for i in range(3))

    @property
    def threads(self) -> int:
        """Threads of the kernel's block: the TiledMMA's, at least a warp (a quadpair atom
        alone runs as a warp)."""
        return max(self.tiled_mma.size, 32)

    def major(self, which: str) -> str | None:
        """The major the design fixes for operand ``which`` ('A' or 'B'): 'K', or 'M' (A) /
        'N' (B); None when the call's operand decides. The call path reads (or copies) the
        operand in this major, since the kernel's layouts are built for it.

        - sm90 family: the GMMA atom's majors (``<MN,K>``, ``a_major=``). An atom with an MN
          major fixes both operands; a K,K atom fixes K where its type has no transpose
          (tf32, fp8: 'K') and leaves 16-bit operands to the call (None), as the built-in
          configs do.
        - sm80 family: the smem layout's contiguous mode, else the copy atom (ldmatrix .trans
          reads the M/N-contiguous major, the plain one K), else None. mma.sync atoms read
          registers, so their own TN/NT letters fix no memory major.

        >>> GemmDesign("SM80_16x8x16_F32F16F16F32_TN", copy_b="SM75_U16x8_LDSM_T").major("B")
        'N'
        >>> d = GemmDesign("SM90_64x64x16_F32F16F16_SS<MN,K>")
        >>> d.major("A"), d.major("B"), GemmDesign("SM90_64x64x16_F32F16F16_SS").major("A")
        ('M', 'K', None)
        """
        if which not in ("A", "B"):
            raise DesignError(f"major: operand {which!r}; give 'A' or 'B'")
        smem = self.smem_a if which == "A" else self.smem_b
        copy = self.copy_a if which == "A" else self.copy_b
        other = "M" if which == "A" else "N"
        if self.family == "sm90":
            params = dict(self.tiled_mma.atom.op.params)
            majors = (params.get("a_major", "K"), params.get("b_major", "K"))
            transposable = ATOMS_SM90.get(self.dtype, (None, 0, True))[2]
            if which == "A" and self.config.a_regs:  # RS: A's registers load K-major rows
                return "K"  # (CuTe's RS atoms take a K-major A only)
            if majors == ("K", "K") and transposable:
                return None if smem is None else _smem_major(smem, other)
            return other if majors["AB".index(which)] == "MN" else "K"
        if smem is not None:
            return _smem_major(smem, other)
        if copy is not None and copy.startswith("SM75_"):
            return other if copy.endswith("_T") else "K"
        return None

    @property
    def name(self) -> str:
        """A short, unique spelling (the generated kernel's name takes it).

        >>> GemmDesign("SM80_16x8x16_F32BF16BF16F32_TN", tile=(64, 64, 32)).name[:23]
        'd_SM80_16x8x16_b64x64x3'
        """
        cfg = getattr(self, "_config", None)
        if cfg is not None:
            return cfg.name  # a built-in config's design is named as the config
        short = "_".join(self.atom_name.split("_")[:2])
        tile = "x".join(map(str, self.tile)) if isinstance(self.tile, tuple) else str(self.tile)
        h = hashlib.sha256(repr(self.key).encode()).hexdigest()[:8]  # stable across processes
        return f"d_{short}_b{tile}_{h}"

    def _default_tile(self) -> tuple[int, int, int]:
        """The largest tile, up to what the built-in configs use (128x128x32 sm80; 128 x atom
        N x one 128-byte row sm90, rounded up to a multiple of the TiledMMA's tile), that is a
        multiple of the TiledMMA's tile and passes the design's rules on DEFAULT_TILE_ARCH:
        the largest M x N first, then the deepest K, then the squarest. A design broken
        whatever its tile keeps the built-ins' size, so that check names what is wrong."""
        tmnk = self.tiled_mma.tile_size_mnk
        tm, tn, tk = tmnk
        if self.family == "sm90":
            eb = ATOMS_SM90[self.dtype][1] if self.dtype in ATOMS_SM90 else 2
            want = (max(128, tm), tn, max(tk, 128 // eb))
        else:
            want = (128, 128, 32)
        cap = tuple(-(-w // t) * t for w, t in zip(want, tmnk))
        if self.family is None:
            return cap
        first = replace(self, tile=cap)
        bad = {name for name, _ in _failures_cached(first, DEFAULT_TILE_ARCH)}
        if not bad or not bad <= _TILE_RULES:
            return cap
        sizes = [range(t, c + 1, t) for t, c in zip(tmnk, cap)]
        for tile in sorted(itertools.product(*sizes), key=_tile_preference):
            d = replace(self, tile=tile)
            if _registers(d, DEFAULT_TILE_ARCH) or _smem_limit(d, DEFAULT_TILE_ARCH):
                continue  # the cheap budgets first: the plan rule builds tables
            if not _failures_cached(d, DEFAULT_TILE_ARCH):
                return tile
        return cap

    # ------------------------------------------------------------------ shorthands
    @staticmethod
    def from_config(config: GemmConfig | Sm90Config, dtype: str = "bf16") -> GemmDesign:
        """The design of a built-in config for ``dtype`` (its kernel is the config's).

        >>> GemmDesign.from_config(GemmConfig(64, 64, 32), "f16").config == GemmConfig(64, 64, 32)
        True
        >>> GemmDesign.from_config(Sm90Config(128, 256), "bf16").config.name
        'b128x256_c2_sauto'
        """
        if isinstance(config, GemmConfig):
            if dtype not in ATOMS:
                raise DesignError(f"from_config: dtype {dtype!r}; one of {', '.join(ATOMS)}")
            tiled = make_tiled_mma(ATOMS[dtype], (*config.warps, 1))
            tile = (config.block_m, config.block_n, config.block_k)
            return _with_config(GemmDesign(tiled, tile, stages=config.stages), config)
        if isinstance(config, Sm90Config):
            if dtype not in ATOMS_SM90:
                raise DesignError(f"from_config: dtype {dtype!r}; one of {', '.join(ATOMS_SM90)}")
            pattern, eb, any_major = ATOMS_SM90[dtype]
            name = pattern.format(n=config.atom_n) + ("<K,K>" if any_major else "")
            tiled = make_tiled_mma(name, (config.consumers_m, config.consumers_n, 1))
            tile = (config.block_m, config.block_n, config.k_tiles[eb])
            d = GemmDesign(tiled, tile, stages=config.stages, schedule=config.schedule)
            return _with_config(d, config)
        raise DesignError(f"from_config: a GemmConfig or Sm90Config, got {type(config).__name__}")

    @property
    def config(self) -> GemmConfig | Sm90Config:
        """The family's config of this design (the numbers its plan reads); the TiledMMA,
        smem layouts and copies beyond the config's own are :attr:`custom`."""
        try:
            return self._family_config()
        except ConfigRuleError as exc:  # it names its rules
            raise DesignError(f"design {self.name}: {exc}") from None
        except CutemmaError as exc:
            raise DesignError(f"design {self.name}: rule config: {exc}") from None

    def _family_config(self) -> GemmConfig | Sm90Config:
        """:attr:`config`, raising the family config's own error (the rule ``config`` reads
        the names of the config rules it breaks)."""
        cfg = getattr(self, "_config", None)
        if cfg is not None:
            return cfg
        bm, bn, bk = self.tile
        wm, wn, _ = self.atom_counts
        if self.family == "sm90":
            # the TiledMMA's warpgroups: wm along M by wn along N (consumers_n), or pingpong's
            # two warpgroups each with a tile of its own
            pingpong = self.schedule == "pingpong"
            return Sm90Config(
                bm, bn, bk, consumers=2 if pingpong else wm * wn, stages=self.stages,
                schedule=self.schedule or "cooperative", a_regs="_RS" in self.atom_name,
                acc_f16="F16F16F16_" in self.atom_name,
                wgmma_n=self.tiled_mma.atom.shape_mnk[1], consumers_n=1 if pingpong else wn,
                swizzle=(self._gmma_swizzle("A"), self._gmma_swizzle("B")),
            )  # fmt: skip
        swz = _swizzle_bytes(self.smem_a, self.smem_b)
        return GemmConfig(bm, bn, bk, (wm, wn), self.stages or 4, swz)

    def _gmma_swizzle(self, which: str) -> str | None:
        """The GMMA swizzle mode of the sm90 stage layout given for operand ``which`` (None:
        none given, the plan takes the widest): the mode whose canonical stage equals it
        (:func:`gmma_stage_swizzle`), else a DesignError naming what would be taken."""
        smem = self.smem_a if which == "A" else self.smem_b
        if smem is None:
            return None
        ext, bk, dtype = self.tile[0] if which == "A" else self.tile[1], self.tile[2], self.dtype
        found = gmma_stage_swizzle(smem, ext, bk, dtype or "bf16")
        if found not in SWIZZLES:
            raise DesignError(f"design {self.name}: smem_{which.lower()}: {found}")
        # the mode the plan takes anyway is no choice: the built-in kernel, its name
        from cutemma.kernels.sm90.plan import stage_layout

        major = "K" if _smem_major(smem, "MN") == "K" else "MN"
        default = stage_layout(ext, bk, major, dtype or "bf16")  # (the widest that tiles it)
        return None if found == gmma_stage_swizzle(default, ext, bk, dtype or "bf16") else found

    @property
    def custom(self) -> bool:
        """True when the kernel differs from its config's (another TiledMMA, layouts, copies):
        the family's plan then reads the design itself.

        >>> GemmDesign.from_config(GemmConfig(), "bf16").custom
        False
        """
        if getattr(self, "_config", None) is not None:
            return False
        if self.family != "sm80":
            return False  # the sm90 plan is a function of its config (see the rules)
        plain = GemmDesign.from_config(self.config, self.dtype)
        return self.tiled_mma_key != plain.tiled_mma_key or any(
            x is not None for x in (self.smem_a, self.smem_b, self.copy_a, self.copy_b)
        )

    @property
    def tiled_mma_key(self) -> tuple:
        t = self.tiled_mma
        return (t.atom.name, str(t.atom_layout_mnk), tuple(_key(p) for p in t.permutation_mnk))

    def smem_bytes(self) -> int:
        """Shared memory of the stage ring (sm90: what its plan reserves, staging tile and
        barriers included)."""
        if self.family == "sm90":
            from cutemma.kernels.sm90.plan import Sm90Plan

            return Sm90Plan(self.config, self.dtype, "K", "K", "bf16").shared_bytes
        bm, bn, bk = self.tile
        return ELEM_BYTES[self.dtype] * (self.stages or 4) * (bm + bn) * bk

    def registers_estimate(self) -> int:
        """Registers per thread, estimated: accumulators + double-buffered fragments +
        addressing (sm80); the setmaxnreg budget's accumulators + NON_ACC_REGS (sm90)."""
        bm, bn, _ = self.tile
        if self.family == "sm90":
            cfg = self.config
            acc = bm * bn // (WARPGROUP * cfg.tile_warpgroups)
            sets = 2 if self.dtype in ("e4m3", "e5m2") else 1
            return sets * acc + NON_ACC_REGS
        atom = self.tiled_mma.atom
        tm, tn, _ = self.tiled_mma.tile_size_mnk
        am, an, _ = atom.shape_mnk
        wm, wn, _ = self.atom_counts
        rep_m, rep_n = max(1, tm // (am * wm)), max(1, tn // (an * wn))  # atoms per thread
        mma_m, mma_n = bm // tm * rep_m, bn // tn * rep_n
        regs_a, regs_b = atom.op.a.count, atom.op.b.count
        acc = mma_m * mma_n * atom.op.c.count
        frags = 2 * (mma_m * regs_a + mma_n * regs_b)
        return acc + frags + SM80_REG_OVERHEAD


def _with_config(design: GemmDesign, config: Any) -> GemmDesign:
    """``design`` holding the config it was made from (its key and hash then include it)."""
    object.__setattr__(design, "_config", config)
    object.__setattr__(design, "_hash", hash(design.key))
    return design


def _swizzle_bytes(smem_a: Any, smem_b: Any) -> int:
    """The swizzle row width of given smem layouts (128 when none is given)."""
    for s in (smem_a, smem_b):
        sw = getattr(s, "outer", None)
        if sw is not None and hasattr(sw, "bits"):
            return 16 << sw.bits
    return 128


# ---------------------------------------------------------------------------- the rules
@dataclass(frozen=True)
class Rule:
    """One design rule: ``check(design, arch)`` returns None when it holds, else what is
    wrong; ``fix`` says what would satisfy it."""

    name: str
    check: Callable[[GemmDesign, str], str | None]
    fix: str


def _family(d: GemmDesign, arch: str) -> str | None:
    if d.family is None:
        return f"no kernel family renders the atom {d.atom_name}"
    return None


def _arch(d: GemmDesign, arch: str) -> str | None:
    need, have = atom_arch(d.atom_name), arch_number(arch)
    if d.family == "sm90" and arch != "sm_90a":
        return f"{d.atom_name} (wgmma) runs on sm_90a only; the device is {arch}"
    if have < need:
        return f"{d.atom_name} needs sm_{need} or newer; the device is {arch}"
    if d.family == "sm80" and have < 80:
        return f"the sm80 family's cp.async and ldmatrix need sm_80 or newer; the device is {arch}"
    return None


def software_routine(atom_name: str, arch: str) -> str | None:
    """Why ``arch`` runs the atom as a called software routine (NATIVE_ON), or None when its
    tensor cores execute it.

    >>> software_routine("SM70_8x8x4_F32F16F16F32_NT", "sm_70") is None
    True
    >>> software_routine("SM70_8x8x4_F32F16F16F32_NT", "sm_90a")[:40]
    'SM70_8x8x4_F32F16F16F32_NT (mma.m8n8k4) '
    """
    arch = parse_arch(arch)
    name = base_name(atom_name)
    for prefix, native in NATIVE_ON.items():
        if name.startswith(prefix) and arch_number(arch) not in native:
            caps = ", ".join(f"sm_{c}" for c in sorted(native))
            return (
                f"{name} (mma.m8n8k4) compiles on {arch} to a called software routine, no "
                f"tensor-core instruction: correct but slow; its tensor cores are on {caps}"
            )
    return None


def _tile_ints(d: GemmDesign, arch: str) -> str | None:
    t = d.tile
    ok = isinstance(t, tuple) and len(t) == 3
    if not ok or any(not isinstance(x, int) or isinstance(x, bool) or x < 1 for x in t):
        return f"tile {t!r} is not three whole numbers >= 1"
    return None


def _tile_multiple(d: GemmDesign, arch: str) -> str | None:
    tmnk = d.tiled_mma.tile_size_mnk
    cfg = getattr(d, "_config", None)  # an Sm90Config of mixed wgmma widths spans its N
    if isinstance(getattr(cfg, "wgmma_n", None), tuple):
        tmnk = (tmnk[0], d.tile[1], tmnk[2])
    if any(x % t for x, t in zip(d.tile, tmnk)):
        return f"tile {d.tile} is not a multiple of the TiledMMA's tile {tmnk}"
    return None


def _k_layout(d: GemmDesign, arch: str) -> str | None:
    if d.atom_counts[2] != 1:
        return f"atom layout {d.tiled_mma.atom_layout_mnk} has {d.atom_counts[2]} atoms along K"
    return None


def _permutations(d: GemmDesign, arch: str) -> str | None:
    pm, pn, pk = d.tiled_mma.permutation_mnk
    if d.family == "sm90" and any(p is not None for p in (pm, pn, pk)):
        return "a permutation on a GMMA TiledMMA (the warpgroups' rows are the descriptors')"
    if _regload_only(d):  # plain loads follow any TV layout: the plan checks the tile
        return None
    if pn is not None or pk is not None:
        return (
            "an N or K permutation (the B ldmatrix.x4 pairs adjacent N atoms; K is the mainloop's)"
            " — or copy_a/copy_b 'UniversalCopy' (register loads from the TV layouts)"
        )
    if pm is not None:
        atom_m = d.tiled_mma.atom.shape_mnk[0]
        if size(pm) != atom_m * d.atom_counts[0]:
            return (
                f"an M permutation of size {size(pm)} (it must scatter the {atom_m} x "
                f"{d.atom_counts[0]} rows the atoms cover, not replicate them)"
            )
    return None


def _regload_only(d: GemmDesign) -> bool:
    """True when the sm80 kernel reads both operands with plain shared loads (regload):
    a quadpair atom, or UniversalCopy asked for both."""
    if d.family != "sm80":
        return False
    return d.atom_name.startswith("SM70_") or all(
        (c or "").startswith("UniversalCopy") for c in (d.copy_a, d.copy_b)
    )


def _warps(d: GemmDesign, arch: str) -> str | None:
    # the block limit is the hardware's (one table, cutemma.hardware); a TiledMMA itself may
    # have any number of threads, as in CuTe: only a kernel is held to a block's
    lim = limits(arch).threads_per_block
    if d.threads > lim:
        return f"{d.threads} threads per block (the {arch} limit is {lim})"
    if d.family == "sm80" and d.threads > 32 * MAX_WARPS_SM80:
        return f"{d.threads // 32} warps (the sm80 family takes up to {MAX_WARPS_SM80})"
    return None


def _sm80_atom_pairs(d: GemmDesign, arch: str) -> str | None:
    """An ldmatrix copy_a must split one A atom's registers into whole instructions, a
    copy_b split one B atom's or load whole atoms of a thread's row of them; left None, the
    plan takes the widest ldmatrix that does."""
    if d.family != "sm80" or _regload_only(d):
        return None
    op = d.tiled_mma.atom.op
    mma_n = d.tile[1] // d.tiled_mma.tile_size_mnk[1]
    try:
        if (d.copy_a or "").startswith("SM75_"):
            a_ldmatrix_num(op.a.count, d.copy_a)
        if (d.copy_b or "").startswith("SM75_"):
            b_ldmatrix_num(mma_n, op.b.count, d.copy_b)
    except CutemmaError as exc:
        return str(exc)
    return None


def _sm90_shape(d: GemmDesign, arch: str) -> str | None:
    if d.family != "sm90":
        return None
    wm, wn, _ = d.atom_counts  # tile N: whole wgmmas side by side (rule tile_multiple)
    if wn != 1 and (wn, wm) != (2, 1):
        return (
            f"{wm} x {wn} warpgroups (the sm90 family takes 1, 2 or 3 along M, or 2 side by "
            "side along N)"
        )
    if wm not in (1, 2, 3):
        return f"{wm} consumer warpgroups (1, 2 or 3)"
    return None


def _stages(d: GemmDesign, arch: str) -> str | None:
    s = d.stages
    if s is not None and (not isinstance(s, int) or isinstance(s, bool)):
        return f"stages {s!r} ({type(s).__name__}): a ring depth is a whole number (int)"
    if s is not None and s < 2:
        return f"stages {s!r} (a ring needs at least 2)"
    return None


def _schedule(d: GemmDesign, arch: str) -> str | None:
    if d.schedule is None:
        return None
    if d.family == "sm80":
        return f"schedule {d.schedule!r} on the sm80 family (it has one: a cp.async ring)"
    if d.schedule not in SCHEDULES:
        return f"schedule {d.schedule!r} is not one of {SCHEDULES}"
    if d.schedule == "pingpong" and d.atom_counts[0] != 1:
        return "pingpong with more than one warpgroup per tile (each warpgroup owns a tile)"
    return None


# the copy atoms the sm90 family runs (CuTe's names): TMA loads of a CTA's whole stage
SM90_COPIES = ("SM90_TMA_LOAD",)


def _smem_major(smem: Any, other: str) -> str | None:
    """'K' where a stage layout's K mode is contiguous, else ``other`` ('M' or 'N')."""
    try:
        return "K" if smem(0, 1) == smem(0, 0) + 1 else other
    except CutemmaError:
        return None


def gmma_stage_swizzle(smem: Any, extent: int, block_k: int, dtype: str) -> str:
    """The GMMA swizzle mode ('SW128', 'SW64' or 'SW32') whose canonical sm90 stage of
    ``extent`` x ``block_k`` ``dtype`` equals ``smem`` at every (row, k), in the major its
    contiguous mode names; else a sentence saying which layouts the sm90 kernel takes. The
    canonical stage: ``tile_to_shape(gmma_layout_atom(major, mode, dtype), (extent,
    block_k))``, MN-major atoms tiled K first (``order=(1, 0)``), as TMA fills it.

    >>> from cutemma.layout import tile_to_shape
    >>> from cutemma.smem import gmma_layout_atom
    >>> gmma_stage_swizzle(tile_to_shape(gmma_layout_atom("K", "SW64", "bf16"), (128, 64)), 128, 64, "bf16")
    'SW64'
    """
    key = (str(smem), extent, block_k, dtype)  # (a layout's spelling is its function)
    if key not in _STAGE_SWIZZLES:
        _STAGE_SWIZZLES[key] = _stage_swizzle(smem, extent, block_k, dtype)
    return _STAGE_SWIZZLES[key]


_STAGE_SWIZZLES: dict[tuple, str] = {}


def _stage_swizzle(smem: Any, extent: int, block_k: int, dtype: str) -> str:
    from cutemma.kernels.sm90.plan import stage_layout

    major = _smem_major(smem, "MN")
    canonical = ("MN", "K") if major is None else (major,)
    for mj in canonical:
        for sw in SWIZZLES:
            try:
                want = stage_layout(extent, block_k, mj, dtype, sw)
            except CutemmaError:
                continue
            try:
                same = all(smem(i, j) == want(i, j) for j in range(block_k) for i in range(extent))
            except CutemmaError:
                same = False
            if same:
                return sw
    return (
        f"not a canonical GMMA stage of {extent} x {block_k} {dtype}: give "
        f"tile_to_shape(gmma_layout_atom(major, mode, {dtype!r}), ({extent}, {block_k})) with "
        f"a mode of {SWIZZLES} that tiles it (MN-major: order=(1, 0), K first, as TMA fills "
        "the stage)"
    )


def _smem_layouts(d: GemmDesign, arch: str) -> str | None:
    bm, bn, bk = d.tile
    for which, s, ext in (("A", d.smem_a, bm), ("B", d.smem_b, bn)):
        if s is None:
            continue
        if d.family == "sm90":
            if tuple(_flat_extents(s)) != (ext, bk):
                return (
                    f"smem_{which.lower()} covers {_flat_extents(s)}, not the ({ext}, {bk}) stage"
                )
            found = gmma_stage_swizzle(s, ext, bk, d.dtype or "bf16")
            if found not in SWIZZLES:
                return f"smem_{which.lower()}: {found}"
            if which == "A" and "_RS" in d.atom_name and d._gmma_swizzle("A") is not None:
                # (RS kernels load A's registers from the stage: run on its default mode only)
                return (
                    f"smem_a in {found}: an RS atom's A is loaded into registers from the "
                    "widest stage the plan picks (none given, or that one); give an SS atom to "
                    "choose A's swizzle"
                )
            continue
        if not isinstance(s, ComposedLayout):
            return (
                f"smem_{which.lower()} is a plain {type(s).__name__} (compose it with a Swizzle, "
                "e.g. cutemma.make_swizzled(Swizzle(0, 4, 3), layout) for none)"
            )
        if tuple(_flat_extents(s)) != (ext, bk):
            return f"smem_{which.lower()} covers {_flat_extents(s)}, not the ({ext}, {bk}) stage"
    return None


def _smem_vectors(d: GemmDesign, arch: str) -> str | None:
    """cp.async moves 16, 8 or 4 bytes: a chunk of the contiguous mode must land contiguous
    in the layout, at least 4 bytes of it (the narrowest cp.async; the plan takes the widest
    chunk the layout keeps whole)."""
    if d.family != "sm80" or d.dtype is None:
        return None
    eb = ELEM_BYTES[d.dtype]
    bm, bn, bk = d.tile
    for which, s, ext in (("A", d.smem_a, bm), ("B", d.smem_b, bn)):
        if s is None or _flat_extents(s) != (ext, bk):
            continue
        run = _contiguity(s, ext, bk)
        if run * eb < 4:
            return (
                f"smem_{which.lower()}: {run * eb} contiguous bytes along its contiguous mode, "
                "narrower than cp.async's narrowest chunk (4 bytes)"
            )
    return None


def _copies(d: GemmDesign, arch: str) -> str | None:
    for which, c in (("A", d.copy_a), ("B", d.copy_b)):
        if c is None:
            continue
        if d.family == "sm90":
            if c in SM90_COPIES:
                continue
            return (
                f"copy_{which.lower()} {c!r}: the sm90 family moves operands with "
                f"{' or '.join(SM90_COPIES)} (TMA, the whole stage a CTA loads) and reads "
                "shared memory with wgmma descriptors"
            )
        allowed = {n for names in LDMATRIX.values() for n in names}
        if c.startswith("UniversalCopy"):
            continue  # plain shared loads at the TV layouts' offsets (regload)
        if d.atom_name.startswith("SM70_"):
            return (
                f"copy_{which.lower()} {c!r}: the quadpair atom's fragments are not "
                "ldmatrix-shaped; give 'UniversalCopy' or None"
            )
        if c not in allowed:
            return (
                f"copy_{which.lower()} {c!r}: the sm80 mainloop reads registers with ldmatrix "
                f"({', '.join(sorted(allowed))}) or UniversalCopy"
            )
        eb = ELEM_BYTES.get(d.dtype, 2)
        if c.endswith("_T") and eb != 2:
            return f"copy_{which.lower()} {c}: ldmatrix .trans moves 16-bit elements, not {d.dtype}"
    return None


def _config(d: GemmDesign, arch: str) -> str | None:
    """The family's config of the design can be made: a broken config rule raises, and
    :func:`_failures` reports it by the config rule's own name (sm90_config.<rule>)."""
    d._family_config()
    return None


def _smem_limit(d: GemmDesign, arch: str) -> str | None:
    lim = limits(arch).smem_per_block
    try:
        need = d.smem_bytes()
    except CutemmaError as exc:
        return f"its shared memory cannot be sized ({exc})"
    if need > lim:
        return f"{need} bytes of shared memory per block (the {arch} limit is {lim})"
    return None


def _registers(d: GemmDesign, arch: str) -> str | None:
    est, lim = d.registers_estimate(), limits(arch).regs_per_thread
    if d.family == "sm90":
        lim = REGISTER_SPLIT[d.config.consumers][1]
    if est > lim:
        return f"about {est} registers per thread (the limit is {lim})"
    return None


def _epilogue(d: GemmDesign, arch: str) -> str | None:
    return design_check(d.epilogue, d.family or "") if d.epilogue else None


def _plan_builds(d: GemmDesign, arch: str) -> str | None:
    """The family's plan, its lazy tables included (copies, ldmatrix, the C partition; TMA
    boxes and descriptors), for every major a call may bring: the ones the design fixes,
    else both for 16-bit types (8- and 32-bit ones are read K-major)."""
    for a_major, b_major in _call_majors(d):
        try:
            plan = family_plan(d, a_major, b_major)
            if d.family == "sm80":
                for which in "AB":
                    plan.copy(which)
                    plan.smem_read(which)
                plan.epilogue  # noqa: B018 - evaluated for its checks
            else:
                plan.tma, plan.descriptors  # noqa: B018
                if d.config.a_regs:  # the RS A registers' table: what the source reads
                    plan.a_regload  # noqa: B018
        except CutemmaError as exc:
            return f"with A {a_major}-major, B {b_major}-major: {exc}"
    return None


def _call_majors(d: GemmDesign) -> list[tuple[str, str]]:
    """The (A, B) majors the design's kernel may be built for."""
    if d.family == "sm80":
        free = ELEM_BYTES.get(d.dtype, 2) == 2
    else:
        free = ATOMS_SM90.get(d.dtype, (None, 0, False))[2]
    a = [d.major("A")] if d.major("A") else (["K", "M"] if free else ["K"])
    b = [d.major("B")] if d.major("B") else (["K", "N"] if free else ["K"])
    return [(x, y) for x in a for y in b]


# the rules a smaller multiple of the TiledMMA's tile can satisfy (GemmDesign._default_tile);
# "config" unnamed: the sm90 config's ranges, of which a design's tile can break only the
# shared memory's
_TILE_RULES = frozenset(
    {"atom_pairs", "smem_limit", "registers", "plan", "config", "sm80_config.smem"}
)
# the rules that read the family's config, by family: once the config is broken, its own
# rules say why, and these would only repeat it
_READ_CONFIG = {"sm80": frozenset({"plan"}), "sm90": frozenset({"smem_limit", "registers", "plan"})}


def _tile_preference(tile: tuple[int, int, int]) -> tuple[int, int, int]:
    bm, bn, bk = tile
    return (-bm * bn, -bk, abs(bm - bn))


# rules whose failure makes the later ones meaningless (they read the tile, the family, ...)
_STOP = frozenset(
    {"atom_family", "atom_arch", "tile_ints", "tile_multiple", "permutation", "sm90_shape"}
    | {"atom_layout_k", "stages", "schedule", "smem_layout", "smem_vector", "copy_atom"}
)

RULES: tuple[Rule, ...] = (
    Rule(
        "atom_family",
        _family,
        "an SM80/SM89 16x8 mma.sync atom (f32, s32 or f16 accumulators), an SM70 8x8x4 "
        "quadpair atom, or an SM90 64xNxK SS or RS (16-bit, tf32) atom with f32 (or, f16 "
        "inputs, f16) accumulators",
    ),
    Rule(
        "atom_arch", _arch, "an atom the device executes (sm_80+ mma.sync, sm_89+ fp8, sm_90a GMMA)"
    ),
    Rule("tile_ints", _tile_ints, "tile=(bm, bn, bk) of whole numbers"),
    Rule("tile_multiple", _tile_multiple, "each of bm, bn, bk a multiple of the TiledMMA's tile"),
    Rule("atom_layout_k", _k_layout, "one atom along K (atom_layout (m, n, 1))"),
    Rule("permutation", _permutations, "no N/K permutation; an M permutation of the atoms' rows"),
    Rule("threads", _warps, f"at most {MAX_WARPS_SM80} warps (sm80) or 3 consumer warpgroups"),
    Rule(
        "atom_pairs",
        _sm80_atom_pairs,
        "copy_b an ldmatrix whose matrices are whole B atoms and tile a row of them (or None: "
        "the widest that does)",
    ),
    Rule("sm90_shape", _sm90_shape, "1, 2 or 3 warpgroups along M, or 2 side by side along N"),
    Rule("stages", _stages, "stages >= 2 (or None: as many as fit)"),
    Rule("schedule", _schedule, "schedule None (sm80) or one of the sm90 schedules"),
    Rule(
        "smem_layout",
        _smem_layouts,
        "a (bm, bk) / (bn, bk) swizzled layout (sm80), a canonical GMMA stage (sm90)",
    ),
    Rule("smem_vector", _smem_vectors, "4, 8 or 16 contiguous bytes per cp.async chunk in smem"),
    Rule(
        "copy_atom",
        _copies,
        "an ldmatrix atom of the operand's major or UniversalCopy (sm80); SM90_TMA_LOAD (sm90)",
    ),
    Rule(
        "config",
        _config,
        "a tile, stages and schedule the family's config takes (its rules, CONFIG_RULES of "
        "sm80/config.py and sm90/config.py, are reported by name: sm90_config.<rule>)",
    ),
    Rule("smem_limit", _smem_limit, "fewer stages or a smaller tile"),
    Rule("registers", _registers, "a smaller tile or more warps"),
    Rule("epilogue", _epilogue, "epilogue ops the fused-epilogue table knows"),
    Rule("plan", _plan_builds, "a design whose plan tables split (see the message)"),
)


def failed_rules(design: GemmDesign, arch: str = "sm_90a") -> list[str]:
    """The names of the rules ``design`` breaks on ``arch`` (empty: it can run). Rules run in
    order and stop at the first broken one whose failure makes the later ones meaningless
    (family, arch, tile)."""
    if not isinstance(design, GemmDesign):
        raise DesignError(f"failed_rules: a GemmDesign, got {type(design).__name__}")
    return [name for name, _ in _failures(design, parse_arch(arch))]


@lru_cache(maxsize=512)
def _failures_cached(design: GemmDesign, arch: str) -> tuple[tuple[str, str], ...]:
    """:func:`_failures`, once per (design, arch): cutemma.gemm checks a design per call."""
    return tuple(_failures(design, arch))


def _failures(design: GemmDesign, arch: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    skip: frozenset[str] = frozenset()
    for rule in RULES:
        if rule.name in skip:
            continue
        try:
            why = rule.check(design, arch)
        except ConfigRuleError as exc:  # the config's own named rules, each with its fix
            out += [(n, f"rule {n}: {exc.subject} breaks it; need {fix}") for n, fix in exc.broken]
            why = ""
        except CutemmaError as exc:  # e.g. the family's config refuses a field
            why = str(exc)
        if why is None:
            continue
        if why:
            out.append((rule.name, f"rule {rule.name}: {why}; need {rule.fix}"))
        if rule.name == "config" or not why:  # the config is broken: its rules said why
            skip = _READ_CONFIG.get(design.family, frozenset())
        if rule.name in _STOP:
            break  # what follows reads what this rule found wrong
    return [(n, w) for n, w in out if n != "plan" or len(out) == 1]


def check(design: GemmDesign, arch: str = "sm_90a") -> GemmDesign:
    """``design`` when every rule holds on ``arch`` (any spelling
    :func:`cutemma.hardware.parse_arch` reads); else a DesignError naming each broken rule and
    what would satisfy it. A design whose atom ``arch`` runs as a called software routine
    passes with a :class:`~cutemma.errors.SoftwareAtomWarning`.

    >>> check(GemmDesign("SM80_16x8x16_F32F16F16F32_TN", (64, 64, 32), stages=1))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    cutemma.errors.DesignError: design d_SM80_16x8x16_b64x64x32_...: rule stages: stages 1 (a ring needs at least 2); need stages >= 2 (or None: as many as fit)
    """
    note = checked(design, arch, "check")
    if note:
        warnings.warn(note, SoftwareAtomWarning, stacklevel=2)
    return design


def checked(design: GemmDesign, arch: str, caller: str = "check") -> str | None:
    """:func:`check` without the warning: a DesignError naming each broken rule, else the
    note of a software-routine atom (None when the tensor cores run it)."""
    if not isinstance(design, GemmDesign):
        raise DesignError(f"{caller}: a GemmDesign, got {type(design).__name__}")
    arch = parse_arch(arch)
    bad = _failures_cached(design, arch)
    if bad:
        raise DesignError(f"design {design.name}: " + "; ".join(w for _, w in bad))
    why = software_routine(design.atom_name, arch)
    return f"design {design.name}: {why}" if why else None


def family_plan(design: GemmDesign, a_major: str, b_major: str, out: str = "bf16") -> Any:
    """The family's plan of ``design`` for these majors (sm80 GemmPlan or sm90 Sm90Plan)."""
    if design.family == "sm90":
        from cutemma.kernels.sm90.plan import Sm90Plan

        return Sm90Plan(design.config, design.dtype, a_major, b_major, out)
    from cutemma.kernels.sm80.plan import GemmPlan

    return GemmPlan(
        design.config, design.dtype, a_major, b_major, design if design.custom else None
    )


def _flat_extents(layout: Any) -> tuple[int, ...]:
    """(rows, cols) a 2-mode layout (or a swizzled one) covers."""
    inner = getattr(layout, "inner", layout)
    shape = inner.shape
    if not isinstance(shape, tuple) or len(shape) != 2:
        return (size(inner),)
    return (size(shape[0]), size(shape[1]))


def _contiguity(layout: Any, ext: int, bk: int) -> int:
    """Elements that stay consecutive from offset 0 along the first contiguous mode of a
    (ext, bk) layout, after its swizzle (the first 16-byte chunk of the stage)."""
    f = layout
    for step in ((1, 0), (0, 1)):
        run = 1
        while True:
            c = (run * step[0], run * step[1])
            if c[0] >= ext or c[1] >= bk or f(*c) != f(0, 0) + run:
                break
            run += 1
        if run > 1:
            return run
    return 1


def sm80_smem(design: GemmDesign, which: str, major: str) -> ComposedLayout:
    """The stage layout of ``which`` in an sm80 design: the design's own, or the widest
    swizzle (up to the config's width) the stage takes in the operand's major."""
    given = design.smem_a if which == "A" else design.smem_b
    if given is not None:
        return given
    bm, bn, bk = design.tile
    ext = bm if which == "A" else bn
    cfg = design.config
    return widest_smem_layout(
        ext, bk, "K" if major == "K" else "MN", cfg.swizzle_bytes, ELEM_BYTES[design.dtype]
    )
