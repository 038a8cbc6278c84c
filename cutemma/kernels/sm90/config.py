"""Sm90Config: the choices of one sm90 GEMM kernel (tile, consumer warpgroups, ring depth,
raster, cluster, epilogue, fp8 promotion, schedule) as plain data, its allowed combinations
the named rules of :data:`CONFIG_RULES` (checked when a config is made), and the hardware
numbers they are checked against (GMMA atoms per dtype, shared memory and register
budgets). :class:`cutemma.kernels.sm90.plan.Sm90Plan` derives the kernel's numbers from a
config.

>>> Sm90Config(128, 192, promote="split").name
'b128x192_c2_sauto_spl'
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

from cutemma.copy.tma_map import SWIZZLE_MODES
from cutemma.errors import TiledMmaError
from cutemma.hardware import LIMITS, PORTABLE_CLUSTER, WGMMA_N_MAX, WGMMA_N_STEP
from cutemma.kernels.common.config_rules import ConfigRule, apply_rules, broken_rules
from cutemma.kernels.common.scheduler import GROUP_M_MAX
from cutemma.kernels.sm90.kcluster import KCLUSTERS

# kernel dtype -> (GMMA SS atom name with N and K left open, element bytes, A/B majors free?)
ATOMS_SM90 = {
    "bf16": ("SM90_64x{n}x16_F32BF16BF16_SS", 2, True),
    "f16": ("SM90_64x{n}x16_F32F16F16_SS", 2, True),
    "tf32": ("SM90_64x{n}x8_F32TF32TF32_SS_TN", 4, False),
    "e4m3": ("SM90_64x{n}x32_F32E4M3E4M3_SS_TN", 1, False),
    "e5m2": ("SM90_64x{n}x32_F32E5M2E5M2_SS_TN", 1, False),
}
ELEM_SIZES_SM90 = tuple(sorted({eb for _, eb, _ in ATOMS_SM90.values()}))  # 1, 2, 4 bytes
WARPGROUP = 128
SMEM_LIMIT = LIMITS["sm_90a"].smem_per_block  # opt-in dynamic shared memory per block
ALIGN_SLACK = 1024  # the kernel rounds its shared base up to the 1024-byte SW128 pattern
BARRIER_BYTES = 8  # one mbarrier object (PTX ISA: .b64)
MAX_STAGES = 8  # the deepest ring a config without ``stages`` gets (as many as fit, up to it)
SWIZZLES = ("SW128", "SW64", "SW32")  # widest first
# bytes of one swizzle row of each mode: the TMA swizzle table's span (cutemma.copy.tma_map)
SWIZZLE_SPANS = {sw: SWIZZLE_MODES[sw][2] for sw in SWIZZLES}
# setmaxnreg (PTX ISA 9.7.19.x): the producer gives registers back, consumers take them;
# 40 + 2 x 232 per thread-of-warpgroup x 128 = 64512 <= 65536 registers per SM.
PRODUCER_REGS = 40
CONSUMER_REGS = 232
# 3 consumer warpgroups (512 threads): 24 + 3 x 160 per thread-of-warpgroup x 128 = 64512
REGS_3_CONSUMERS = (24, 160)


# (producer, consumer) registers per thread after setmaxnreg, by consumer warpgroups: the
# warpgroups' total stays within the SM's 65536 (multiples of 8, PTX ISA setmaxnreg)
REGISTER_SPLIT = {1: (PRODUCER_REGS, CONSUMER_REGS), 2: (PRODUCER_REGS, CONSUMER_REGS),
                  3: REGS_3_CONSUMERS}  # fmt: skip


# "tma": 16-bit outputs go registers -> a swizzled smem tile -> TMA store (asynchronous: the
# consumers start the next tile's mainloop while it drains); f32 outputs and beta != 0 keep
# "regs": alpha * acc + beta * C stored from registers; "tma2": as "tma" through a staging
# tile of half the columns, stored in two passes (a ring stage more in the shared memory);
# "tmat": as "tma" for a column-major D (m contiguous: a swapped kernel's D^T), its staging
# tile MN-major; a row-major D is then stored from registers (and "tma"'s a column-major one);
# "tmab" / "tmatb": as "tma" / "tmat" in passes of block_n / P columns through two staging
# buffers in turn (:func:`store_passes`), a pass's writes running while the TMA engine reads
# the pass before, so that the ring gets the shared memory the whole staging tile took (what
# cuBLAS's kernels do: 4 stages of its 128x256 tile, where a whole staging tile leaves 3). It
# pays where a tile starves (256x128, swapped 256-row tiles) and costs on short K, where the
# epilogue is a large share (bench/results/raw/buffered-store*-h200.json): the space keeps "tma"
EPILOGUES = ("tma", "regs", "tma2", "tmat", "tmab", "tmatb")
# -> the staging tile's contiguous mode
TMA_EPILOGUES = {"tma": "K", "tma2": "K", "tmat": "MN", "tmab": "K", "tmatb": "MN"}
# a buffered pass's columns, a multiple of: 32 for a row-major D (64 bytes of 16-bit values:
# SW64 atoms or wider), 8 for a column-major one (an MN-major atom's 8 columns)
STORE_PASS_COLUMNS = {"tmab": 32, "tmatb": 8}
BUFFERED_EPILOGUES = tuple(STORE_PASS_COLUMNS)
TMA_STORE_OUTS = ("bf16", "f16")
STAGING_ELEM_BYTES = 2  # a staging tile's value: every TMA-store output is 16-bit
OUTS_SM90 = ("f32", "bf16", "f16")  # what the sm90 epilogue writes (registers or TMA)
FP8 = ("e4m3", "e5m2")
# registers a consumer thread keeps beside its accumulators (addresses, loop state, the
# epilogue's indices): promoted fp8 keeps 2 sets (the wgmma target, the f32 sum), so a set
# holds at most (consumer registers - this) / 2 accumulators: 100 at 232, 64 at 160
NON_ACC_REGS = 32
# "cooperative": the consumer warpgroups share each tile (64-row slices of it); "pingpong":
# each warpgroup owns whole tiles (the CTA's tiles alternate between the two) and their
# mainloops take turns (an order barrier), so one's epilogue runs under the other's wgmma
# "alternate": cooperative tiles, but the consumer warpgroups take turns issuing each k
# tile's wgmma batch (round robin through named barriers), so the batches queue one after
# another on the tensor cores instead of interleaving: each warpgroup's batch retires
# early and its promotion (fp8) runs under the next warpgroup's batch
SCHEDULES = ("cooperative", "pingpong", "alternate")
# Sm90Config.promote: True (each k tile's batch retired with wait_group 0, then added into
# f32), False (fast accumulation), "overlap": two wgmma sets take turns by k tile, one
# batch stays in flight while the retired set is added (3 sets of registers); "split": the
# tile's N halves are issued as two half-width batches per k tile, so one half's batch
# runs while the other half's retired sums are added (2 sets, as True)
PROMOTES = (True, False, "overlap", "split")
# promote="split" issues a tile's columns as two batches of whole wgmma widths
SPLIT_MIN_N = 2 * WGMMA_N_STEP


def split_widths(block_n: int) -> tuple[int, int]:
    """``promote="split"``'s two batches, in columns: the first half rounded up to whole
    wgmma widths (:data:`~cutemma.hardware.WGMMA_N_STEP`), then the rest (equal where ``block_n`` is a
    multiple of 16).

    >>> split_widths(192), split_widths(200)
    ((96, 96), (104, 96))
    """
    if type(block_n) is not int or block_n < SPLIT_MIN_N or block_n % WGMMA_N_STEP:
        raise TiledMmaError(
            f"split_widths: block_n={block_n!r}; promote='split' splits a multiple of "
            f"{WGMMA_N_STEP} columns, at least {SPLIT_MIN_N} (two wgmma widths)"
        )
    lo = -(-block_n // SPLIT_MIN_N) * WGMMA_N_STEP
    return lo, block_n - lo


# every wgmma K (8 for tf32, 16 for 16-bit, 32 for 8-bit types) is a multiple of this
WGMMA_K_UNIT = 8
SWIZZLE_ROW_BYTES = 128  # block_k None: one 128-byte swizzle row of K per stage


def _as_tuple(v: int | tuple[int, ...]) -> tuple[int, ...]:
    return v if isinstance(v, tuple) else (v,)


def _plain_widths(v: Any) -> Any:
    """``wgmma_n`` as stored: numpy integers as ints, a sequence as a tuple, and a tuple of
    one width repeated as that width (one config, one name)."""
    if isinstance(v, list | tuple):
        v = tuple(int(w) if isinstance(w, numbers.Integral) and not isinstance(w, bool) else w
                  for w in v)  # fmt: skip
        if v and len(set(v)) == 1 and isinstance(v[0], int):
            return v[0]
    elif isinstance(v, numbers.Integral) and not isinstance(v, bool | int):
        return int(v)
    return v


def _already_plain(cfg: Sm90Config) -> bool:
    """Whether every field already has its plain type, so that :func:`_plain_types` would
    store and refuse nothing: the space builds configs of plain ints and strs, and a new
    shape's pick may build a few (checked by type alone, without the ABC checks)."""
    d = cfg.__dict__
    return (
        all(type(d[f]) is int for f in _INTS)
        and all(d[f] is None or type(d[f]) is int for f in (*_OPTIONAL_INTS, "wgmma_n"))
        and all(type(d[f]) is str for f in _STRS)
        and type(d["promote"]) in (bool, str)
        and type(d["swizzle"]) is tuple
        and _swizzle_pair(d["swizzle"])
    )


_INTS = ("block_m", "block_n", "consumers", "group_m", "cluster", "kcluster", "consumers_n")
_OPTIONAL_INTS = ("block_k", "stages")
_STRS = ("epilogue", "multicast", "schedule", "evict_first")


def _swizzle_pair(sw: tuple) -> bool:
    """Whether a tuple is (A's, B's) swizzle modes, each None or one of :data:`SWIZZLES`."""
    return len(sw) == 2 and all(x is None or x in SWIZZLES for x in sw)


def _plain_types(cfg: Sm90Config) -> None:
    """Numpy integers stored as ints; any field of the wrong type refused by name (the
    ranges and rules compare and divide these values)."""
    if _already_plain(cfg):
        return
    ints = _INTS
    for f in (*ints, *_OPTIONAL_INTS):  # numpy integers are integers (stored plain)
        v = getattr(cfg, f)
        if isinstance(v, numbers.Integral) and not isinstance(v, bool | int):
            object.__setattr__(cfg, f, int(v))
    object.__setattr__(cfg, "wgmma_n", _plain_widths(cfg.wgmma_n))
    bad_type = [
        f"{f} an int (got {getattr(cfg, f)!r})"
        for f in ints
        if not isinstance(getattr(cfg, f), int) or isinstance(getattr(cfg, f), bool)
    ]
    bad_type += [
        f"{f} None or an int (got {getattr(cfg, f)!r})"
        for f in _OPTIONAL_INTS
        if getattr(cfg, f) is not None
        and (not isinstance(getattr(cfg, f), int) or isinstance(getattr(cfg, f), bool))
    ]
    w = cfg.wgmma_n
    if (
        w is not None
        and not all(isinstance(x, int) and not isinstance(x, bool) for x in _as_tuple(w))
        or w == ()
    ):
        bad_type.append(f"wgmma_n None, an int or a tuple of ints (got {w!r})")
    bad_type += [
        f"{f} a str (got {getattr(cfg, f)!r})"
        for f in _STRS
        if not isinstance(getattr(cfg, f), str)
    ]
    if not isinstance(cfg.promote, bool | str):
        bad_type.append(f"promote one of {PROMOTES} (got {cfg.promote!r})")
    sw = cfg.swizzle
    if isinstance(sw, list):
        object.__setattr__(cfg, "swizzle", sw := tuple(sw))
    if not (isinstance(sw, tuple) and _swizzle_pair(sw)):
        bad_type.append(f"swizzle (A's, B's), each None or one of {SWIZZLES} (got {sw!r})")
    if bad_type:
        raise TiledMmaError("Sm90Config: need " + "; ".join(bad_type))


def _check_ranges(cfg: Sm90Config) -> None:
    """Every int field >= 1 and the tile small enough for shared memory at 1 byte an element.

    >>> Sm90Config(block_m=0)
    Traceback (most recent call last):
    ...
    cutemma.errors.TiledMmaError: Sm90Config: need block_m=0 >= 1
    """
    ints = (
        "block_m",
        "block_n",
        "block_k",
        "consumers",
        "stages",
        "group_m",
        "cluster",
        "kcluster",
        "consumers_n",
    )
    bad = [
        f"{f}={getattr(cfg, f)} >= 1"
        for f in ints
        if getattr(cfg, f) is not None and getattr(cfg, f) < 1
    ]
    if cfg.wgmma_n is not None and min(_as_tuple(cfg.wgmma_n)) < 1:
        bad.append(f"wgmma_n={cfg.wgmma_n} >= 1")
    if cfg.group_m > GROUP_M_MAX:
        bad.append(f"group_m={cfg.group_m} <= {GROUP_M_MAX} (the raster's 32-bit tile index)")
    if cfg.block_k is not None and cfg.block_k % WGMMA_K_UNIT:
        bad.append(
            f"block_k={cfg.block_k} a multiple of the wgmma K (8 for tf32, 16 for 16-bit, "
            "32 for 8-bit types), or None for one 128-byte row"
        )
    if not bad:
        k_bytes = cfg.block_k if cfg.block_k is not None else SWIZZLE_ROW_BYTES  # >= 1 B each
        least = max(cfg.stages or 2, 2) * (cfg.block_m + cfg.block_n) * k_bytes
        if least > SMEM_LIMIT:
            k = cfg.block_k if cfg.block_k is not None else "128 bytes of"
            bad.append(
                f"a smaller tile or fewer stages: {max(cfg.stages or 2, 2)} stages of "
                f"({cfg.block_m} + {cfg.block_n}) rows x {k} K, {least} bytes even at 1 byte "
                f"an element, do not fit in {SMEM_LIMIT} bytes of shared memory"
            )
    if bad:
        raise TiledMmaError("Sm90Config: need " + "; ".join(bad))


@dataclass(frozen=True)
class Sm90Config:
    """Block tile, consumer warpgroups, ring depth and raster group of the sm90 GEMM.

    ``promote`` (fp8 only): add each k tile's wgmma sums into f32 registers (a second
    accumulator set, so at most 100 accumulators per thread at 2 consumers, e.g. 128x192
    cooperative, 64 at 3); False keeps wgmma's reduced-precision fp8 accumulation over
    all of K (like ``use_fast_accum``). ``"overlap"``: promoted, but two wgmma sets take
    turns by k tile so one batch stays in flight while the retired one is added (3 sets:
    128x128 at 2 consumers; cooperative only). ``"split"``: promoted, each k tile issued as
    two half-width batches (the tile's N halves), so one half's batch runs while the other
    half's sums are added (2 sets, as True; cooperative, clusters of 1; fp8's default
    128x192, run 22: +4-6% over True). ``schedule`` "pingpong": 2 consumer warpgroups,
    each computing a whole block_m x block_n tile (every other tile of the CTA), their
    mainloops ordered so one issues wgmma while the other runs its epilogue. "alternate":
    cooperative tiles, the warpgroups issuing their k-tile batches in turn (fp8 promotion
    of one warpgroup under another's batch).
    ``block_k`` None: one 128-byte swizzle row of K (64 for 16-bit types). ``stages``
    None: as many as fit in shared memory (at most 8). ``cluster`` 2: CTA pairs
    (``__cluster_dims__(2,1,1)``) share one operand tile: each loads half and multicasts it;
    ``multicast`` 'B' (pairs along M share B) or 'A' (pairs along N share A).
    ``epilogue`` "tma" (16-bit D through a swizzled staging tile and TMA stores), "tma2"
    (the same through a staging tile of half the columns, in two passes: the freed shared
    memory holds one more ring stage), "tmat" (as "tma" for a column-major D: a swapped
    kernel's D^T), "tmab" / "tmatb" (as "tma" / "tmat" in passes through two staging
    buffers taken in turn: :func:`store_passes`), "regs" (stores from registers). ``stream_k``
    (cooperative, clusters of 1, 2-D calls): the CTAs share the k iterations of the tiles a
    last partial wave would leave to few SMs, a tile cut between CTAs summed by its first
    CTA in a fixed order (:mod:`cutemma.kernels.sm90.streamk`). ``swap_ab`` (2-D calls, no
    fused epilogue): the call runs as D^T = B^T A^T through transposed views, this config
    being the kernel's for the swapped problem (:func:`cutemma.kernels.space.swapped_kernel`).
    ``evict_first`` 'A' or 'B' (clusters of 1): that operand's TMA loads carry an L2
    evict-first cache policy, for an operand read once (a decode call's weights): its lines
    are the first L2 gives up, so lines that earlier kernels left dirty in L2 are not
    written back to DRAM while the weights stream in (space.EVICT_FIRST_MAX_BYTES).
    ``pdl`` (clusters of 1, 2-D calls): programmatic dependent launch. The kernel is
    launched to overlap the end of the kernel before it in the stream. It warms L2 with its
    first k tiles, then waits (``griddepcontrol.wait``) for that grid to finish before it
    reads or writes any operand. It also lets the next such kernel start early.
    ``wgmma_n``: several wgmmas side by side along N per 64-row slice, for tiles wider than
    one wgmma's 256 columns: an int (equal widths dividing block_n) or the widths from
    column 0 on (e.g. ``(256, 64)`` for 320; each starts at a multiple of its own N).
    ``consumers_n`` 2: the two consumer warpgroups side by side along N (TiledMMA atom
    layout (1, 2, 1)), each computing every row of the tile (block_m / 64 wgmmas) by half
    its columns, e.g. ``Sm90Config(192, 192, consumers_n=2)``: 144 accumulators a thread.
    ``split`` (with ``stream_k``): at most that many CTAs share each shared tile, their
    shares aligned to tiles (:func:`cutemma.kernels.sm90.streamk.sk_split`); the host's
    alone: the kernel is the same. ``swizzle``: (A's, B's) GMMA swizzle mode of the stage
    layouts, each one of :data:`SWIZZLES` or None (the widest that tiles the stage), the
    mode a design's own shared-memory layout names (:class:`~cutemma.kernels.design.GemmDesign`).

    >>> Sm90Config(128, 256).name, Sm90Config(128, 256, swizzle=("SW64", None)).name
    ('b128x256_c2_sauto', 'b128x256_c2_sauto_swa64')
    """

    block_m: int = 128
    block_n: int = 128
    block_k: int | None = None
    consumers: int = 2
    stages: int | None = None
    group_m: int = 8
    cluster: int = 1
    epilogue: str = "tma"
    promote: bool | str = True
    multicast: str = "B"
    schedule: str = "cooperative"
    # GMMA RS: the consumers load A from the stage into the wgmma A registers (the RS
    # atom's A TV layout) instead of handing wgmma an A descriptor
    a_regs: bool = False
    # F16-accumulating GMMA (f16 inputs): D as f16x2 registers, unpacked to f32 after the
    # tile's mainloop (the epilogues read f32)
    acc_f16: bool = False
    # stream-K (cutemma.kernels.sm90.streamk): the CTAs share the k iterations of the tiles
    # a last partial wave would leave to few SMs, with a deterministic fix-up
    stream_k: bool = False
    # swap-AB (cutemma.kernels.space.swapped_kernel): the call runs as D^T = B^T A^T, this config's
    # kernel on the swapped problem (B's N as its M, the tokens as its N)
    swap_ab: bool = False
    # L2 evict-first (PTX ISA createpolicy): operand "A" or "B" streamed once, its TMA loads
    # hinted so its lines leave L2 first ("" none)
    evict_first: str = ""
    # programmatic dependent launch (PTX ISA griddepcontrol): launched with the driver's
    # programmatic stream serialization, the kernel prefetches its first k tiles into L2
    # while the previous grid ends, then waits for it before touching global memory
    pdl: bool = False
    # the wgmma's N (None: block_n, one wgmma spans the tile's columns): block_n / wgmma_n
    # wgmma per 64-row slice and k block, side by side along N, so a tile may be wider
    # than one wgmma (256 columns), e.g. 128x320 as 5 x m64n64 per warpgroup; or the
    # widths from column 0 on, e.g. (256, 64): m64n256 then m64n64
    wgmma_n: int | tuple[int, ...] | None = None
    # stream-K's split (host side only: the kernel takes the sharing CTA count as a
    # parameter): at most this many CTAs share each shared tile, CTA shares aligned to tiles
    # (None: as many as the grid holds; streamk.sk_split)
    split: int | None = None
    # the stage layouts' swizzle modes, (A's, B's): None, the widest that tiles the stage
    swizzle: tuple = (None, None)
    # split-K in a cluster (cutemma.kernels.sm90.kcluster): this many CTAs, one cluster,
    # share each tile's k tiles and add their sums through distributed shared memory
    kcluster: int = 1
    # consumer warpgroups side by side along N (the TiledMMA's atom layout is
    # (tile warpgroups / this, this, 1)): 2 gives each of two warpgroups every row of the
    # tile by half its columns, so a 192-row tile is three m64 wgmmas per warpgroup
    # (what cuBLAS runs at 192x144..192x192: bench/results/raw/peer-kernels-h200.json)
    consumers_n: int = 1

    def __hash__(self) -> int:
        # configs key every cache of the pick (a few dozen lookups per new shape): hashed once
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash(tuple(getattr(self, f) for f in self.__dataclass_fields__))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict:  # a pickle carries no hash: str hashes vary by process
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def __post_init__(self) -> None:
        _plain_types(self)
        _check_ranges(self)  # positive and small enough first: the rules below divide by them
        if self.wgmma_n == self.block_n // self.consumers_n:  # one config, one name
            object.__setattr__(self, "wgmma_n", None)
        if broken_rules(self, CONFIG_RULES):  # (the name, for the message, only then)
            apply_rules(self, CONFIG_RULES, RULE_SCOPE, f"Sm90Config {self.name}")
        # K elements per stage by element bytes: data the cost model and the plan read
        k_tiles = {eb: self.block_k or SWIZZLE_ROW_BYTES // eb for eb in ELEM_SIZES_SM90}
        object.__setattr__(self, "k_tiles", k_tiles)

    @property
    def cluster_mn(self) -> tuple[int, int]:
        """The cluster's CTAs along (M, N) (:data:`MULTICASTS`): A is shared by the CTAs
        along N, B by those along M.

        >>> [Sm90Config(cluster=c, multicast=m).cluster_mn for c, m in ((1, "B"), (2, "A"), (4, "AB"))]
        [(1, 1), (1, 2), (2, 2)]
        """
        return MULTICASTS.get((self.multicast, self.cluster), (1, 1))

    @property
    def name(self) -> str:
        k = "" if self.block_k is None else f"x{self.block_k}"
        s = "auto" if self.stages is None else str(self.stages)
        g = "" if self.group_m == 8 else f"_g{self.group_m}"
        x = (
            ""
            if self.cluster == 1
            else f"_x{self.cluster}"
            + MULTICAST_TAGS.get(self.multicast, str(self.multicast).lower())
        )
        e = "" if self.epilogue == "tma" else f"_e{self.epilogue}"
        p = {True: "", False: "_fastacc", "overlap": "_ovl", "split": "_spl"}.get(self.promote, "")
        pp = {"cooperative": "", "pingpong": "_pp", "alternate": "_alt"}.get(self.schedule, "")
        rs = ("_rs" if self.a_regs else "") + ("_h16" if self.acc_f16 else "")
        rs += f"_ef{self.evict_first.lower()}" if self.evict_first in ("A", "B") else ""
        rs += "_sk" if self.stream_k is True else ""
        rs += f"{self.split}" if self.split is not None and self.stream_k is True else ""
        rs += "_swap" if self.swap_ab is True else ""
        rs += "_pdl" if self.pdl is True else ""
        rs += f"_kc{self.kcluster}" if self.kcluster != 1 else ""
        rs += f"_wn{self.consumers_n}" if self.consumers_n != 1 else ""
        widths = "_".join(map(str, _as_tuple(self.wgmma_n or ())))  # a C symbol
        rs += f"_n{widths}" if self.wgmma_n not in (None, self.block_n) else ""
        for which, sw in zip("ab", self.swizzle):
            rs += f"_sw{which}{sw[2:]}" if sw is not None else ""
        return f"b{self.block_m}x{self.block_n}{k}_c{self.consumers}_s{s}{g}{x}{e}{p}{pp}{rs}"

    @property
    def atom_n(self) -> int:
        """The N of each wgmma (of the first, for mixed widths): ``wgmma_n``, or the tile's
        (its share of a warpgroup, with ``consumers_n`` warpgroups along N).

        >>> Sm90Config(128, 320, wgmma_n=64).atom_n, Sm90Config(128, 320, wgmma_n=64).name
        (64, 'b128x320_c2_sauto_n64')
        >>> Sm90Config(192, 192, consumers_n=2).atom_n
        96
        """
        return (
            self.block_n // self.consumers_n if self.wgmma_n is None else _as_tuple(self.wgmma_n)[0]
        )

    @property
    def wgmma_columns(self) -> tuple[tuple[int, int], ...]:
        """(first column, N) of each TiledMMA along the tile's N (its N: ``consumers_n``
        wgmmas side by side, one per warpgroup along N).

        >>> Sm90Config(128, 320, wgmma_n=(256, 64)).wgmma_columns
        ((0, 256), (256, 64))
        >>> Sm90Config(192, 192, consumers_n=2).wgmma_columns
        ((0, 192),)
        """
        if isinstance(self.wgmma_n, tuple):
            widths = self.wgmma_n
        else:
            span = self.atom_n * self.consumers_n
            widths = (span,) * max(1, self.block_n // span)
        starts = [sum(widths[:i]) for i in range(len(widths))]
        return tuple(zip(starts, widths))

    @property
    def consumers_m(self) -> int:
        """Warpgroups of one tile along M (each owns block_m / this rows).

        >>> Sm90Config(128, 128).consumers_m, Sm90Config(192, 192, consumers_n=2).consumers_m
        (2, 1)
        """
        return max(1, self.tile_warpgroups // self.consumers_n)  # (>= 1: rules divide by it)

    def k_tile(self, elem_bytes: int) -> int:
        """Elements of K per stage for ``elem_bytes``-byte elements: ``block_k``, else one
        :data:`SWIZZLE_ROW_BYTES` swizzle row (``k_tiles``, by element bytes, holds them).

        >>> Sm90Config().k_tile(2), Sm90Config(block_k=256).k_tile(1), Sm90Config().k_tiles[4]
        (64, 256, 32)
        """
        if elem_bytes not in self.k_tiles:
            raise TiledMmaError(
                f"Sm90Config.k_tile: {elem_bytes!r}-byte elements; the sm90 kernel's are "
                f"{sorted(self.k_tiles)} bytes"
            )
        return self.k_tiles[elem_bytes]

    @property
    def store_buffers(self) -> int:
        """Staging buffers the TMA-store passes take in turn: 2 with "tmab" / "tmatb", else 1.

        >>> Sm90Config(256, 128, epilogue="tmab").store_buffers, Sm90Config().store_buffers
        (2, 1)
        """
        return 2 if self.epilogue in BUFFERED_EPILOGUES else 1

    @property
    def threads(self) -> int:
        return WARPGROUP * (1 + self.consumers)

    @property
    def tile_warpgroups(self) -> int:
        """Consumer warpgroups computing one tile: all of them (cooperative) or 1 (pingpong).

        >>> Sm90Config(128, 128).tile_warpgroups, Sm90Config(64, 128, schedule="pingpong").tile_warpgroups
        (2, 1)
        """
        return 1 if self.schedule == "pingpong" else self.consumers


def staging_bytes(config: Sm90Config, width: int) -> int:
    """Shared bytes of the TMA store's staging: block_m x ``width`` 16-bit values a buffer,
    :attr:`Sm90Config.store_buffers` of them for each warpgroup that runs its own epilogue
    (pingpong: 2 tiles' worth).

    >>> staging_bytes(Sm90Config(128, 256), 256), staging_bytes(Sm90Config(128, 256, epilogue="tmab"), 64)
    (65536, 32768)
    """
    tiles = config.consumers // config.tile_warpgroups
    return config.block_m * width * STAGING_ELEM_BYTES * config.store_buffers * tiles


def store_passes(config: Sm90Config, stage_bytes: int, free_bytes: int) -> int:
    """TMA-store passes per tile: 2 with "tma2"; with two buffers ("tmab", "tmatb") the
    fewest passes (block_n / P columns each, a multiple of :data:`STORE_PASS_COLUMNS`) that
    leave the ring of ``stage_bytes`` stages as deep, within ``free_bytes`` (the shared
    memory the ring and staging share), as the narrowest passes would; else 1.
    (:data:`STORE_PASS_COLUMNS` each: the config rule ``buffered_store`` ensures two fit.)

    >>> store_passes(Sm90Config(256, 128, epilogue="tmab"), 49152 + 16, 231416)
    4
    >>> store_passes(Sm90Config(128, 256, epilogue="tmab"), 49152 + 16, 231416)
    4
    """
    if config.epilogue not in BUFFERED_EPILOGUES:
        return 2 if config.epilogue == "tma2" else 1
    bn, step = config.block_n, STORE_PASS_COLUMNS[config.epilogue]
    counts = [p for p in range(2, bn // step + 1) if bn % p == 0 and (bn // p) % step == 0]

    def depth(p: int) -> int:
        return min(MAX_STAGES, (free_bytes - staging_bytes(config, bn // p)) // stage_bytes)

    deepest = depth(counts[-1])
    return next(p for p in counts if depth(p) == deepest)


def split_swizzles(config: Sm90Config, extent: int, contiguous: bool, eb: int) -> tuple[str, ...]:
    """The swizzle modes a shared tile of ``extent`` N (B's stage: its rows; the staging
    tile: its columns) may take, widest first: every mode, but with warpgroups side by side
    along N (``consumers_n``) only those whose atom starts at each warpgroup's first column,
    so that its slice (B) or its values' offsets (D) are whole atoms. An atom spans
    ``SWIZZLE_SPANS / eb`` elements of its contiguous mode and 8 rows of the other.

    >>> split_swizzles(Sm90Config(192, 192, consumers_n=2), 192, True, 2)
    ('SW64', 'SW32')
    >>> split_swizzles(Sm90Config(192, 192, consumers_n=2), 192, False, 2)
    ('SW128', 'SW64', 'SW32')
    """
    if config.consumers_n == 1:
        return SWIZZLES
    share = extent // config.consumers_n
    return tuple(s for s in SWIZZLES if share % (SWIZZLE_SPANS[s] // eb if contiguous else 8) == 0)


def _widths_cover(c: Sm90Config) -> bool:
    if isinstance(c.wgmma_n, tuple):
        return sum(c.wgmma_n) == c.block_n
    return c.block_n % c.atom_n == 0


def _widths_cover_need(c: Sm90Config) -> str:
    if isinstance(c.wgmma_n, tuple):
        return f"wgmma_n {c.wgmma_n} adding up to block_n {c.block_n}"
    return f"block_n {c.block_n} a multiple of wgmma_n {c.wgmma_n}"


# a cluster's CTAs along (M, N) by (multicast, cluster): pairs along M share B, pairs along N
# share A, a 2 x 2 cluster shares both (each CTA loads half of each operand tile); rank
# r sits at M position r % cm, N position r // cm (the kernel text reads any powers of 2:
# 2 x 4 clusters of 128x128 and 128x192 fp8 tiles ran 0.91 of the pick on e4m3 calls whose
# rows sit half a sector apart and 0.82 on aligned ones, bench/results/raw/quad-ab-octo*)
MULTICASTS = {("B", 2): (2, 1), ("A", 2): (1, 2), ("AB", 4): (2, 2)}
CLUSTER_SIZES = (1, 2, 4)
MULTICAST_TAGS = {"B": "", "A": "a", "AB": "ab"}  # in the config's name: _x2, _x2a, _x4ab
RULE_SCOPE = "sm90_config"  # a broken rule's qualified name: sm90_config.<name>
# The combinations of fields an Sm90Config may take, checked in order when one is made, after
# the fields' types and ranges (_check_ranges: every int positive, so the rules may divide)
CONFIG_RULES: tuple[ConfigRule, ...] = (
    ConfigRule(
        "epilogue",
        lambda c: c.epilogue in EPILOGUES,
        lambda c: f"epilogue {c.epilogue!r} in {EPILOGUES}",
    ),
    ConfigRule(
        "cluster",
        lambda c: c.cluster in CLUSTER_SIZES,
        lambda c: f"cluster {c.cluster} is one of {CLUSTER_SIZES} CTAs",
    ),
    ConfigRule(
        "multicast",
        lambda c: (
            c.cluster not in CLUSTER_SIZES
            or (c.multicast, c.cluster) in MULTICASTS
            or (c.multicast, c.cluster) == ("B", 1)
        ),
        lambda c: (
            f"multicast {c.multicast!r} with cluster {c.cluster}: 'B' or 'A' with "
            "cluster=2 (pairs along M or N), 'AB' with cluster=4 (2 x 2)"
        ),
    ),
    ConfigRule(
        "consumers",
        lambda c: c.consumers in (1, 2, 3),
        lambda c: f"consumers {c.consumers} is 1, 2 or 3 warpgroups",
    ),
    ConfigRule(
        "a_regs_bool",
        lambda c: isinstance(c.a_regs, bool),
        lambda c: f"a_regs {c.a_regs!r} True or False (GMMA RS)",
    ),
    ConfigRule(
        "acc_f16_bool",
        lambda c: isinstance(c.acc_f16, bool),
        lambda c: f"acc_f16 {c.acc_f16!r} True or False (F16-accumulating GMMA)",
    ),
    ConfigRule(
        "schedule",
        lambda c: c.schedule in SCHEDULES,
        lambda c: f"schedule {c.schedule!r} in {SCHEDULES}",
    ),
    ConfigRule(
        "stream_k_bool",
        lambda c: isinstance(c.stream_k, bool),
        lambda c: f"stream_k {c.stream_k!r} True or False",
    ),
    ConfigRule(
        "swap_ab_bool",
        lambda c: isinstance(c.swap_ab, bool),
        lambda c: f"swap_ab {c.swap_ab!r} True or False",
    ),
    ConfigRule(
        "split",
        lambda c: c.split is None or (type(c.split) is int and c.split >= 2 and c.stream_k is True),
        lambda c: (
            f"split {c.split!r}: None, or an int >= 2 (CTAs per shared tile) with stream_k=True"
        ),
    ),
    ConfigRule(
        "evict_first",
        lambda c: c.evict_first in ("", "A", "B"),
        lambda c: f"evict_first {c.evict_first!r}: 'A' or 'B' (the streamed operand) or ''",
    ),
    ConfigRule(
        "pdl_bool", lambda c: isinstance(c.pdl, bool), lambda c: f"pdl {c.pdl!r} True or False"
    ),
    ConfigRule(
        "pdl_cluster", lambda c: c.pdl is not True or c.cluster == 1, lambda c: "pdl with cluster=1"
    ),
    ConfigRule(
        "evict_first_cluster",
        lambda c: not c.evict_first or c.cluster == 1,
        lambda c: "evict_first with cluster=1 (a cluster multicasts its loads)",
    ),
    ConfigRule(
        "stream_k_shape",
        lambda c: not c.stream_k or (c.schedule, c.cluster) == ("cooperative", 1),
        lambda c: (
            "stream_k with schedule='cooperative' and cluster=1 (the consumers share "
            "each piece of a tile; one CTA's share of the k iterations)"
        ),
    ),
    ConfigRule(
        "kcluster",
        lambda c: c.kcluster in KCLUSTERS,
        lambda c: f"kcluster {c.kcluster} in {KCLUSTERS} (CTAs of a cluster sharing a tile)",
    ),
    ConfigRule(
        "kcluster_shape",
        lambda c: (
            c.kcluster == 1
            or (
                (c.schedule, c.stream_k, c.pdl, c.acc_f16) == ("cooperative", False, False, False)
                and (c.cluster == 1 or (c.cluster == 2 and c.multicast in ("A", "B")))
                and c.cluster * c.kcluster <= PORTABLE_CLUSTER
            )
        ),
        lambda c: (
            f"kcluster {c.kcluster} with schedule='cooperative', cluster 1 (or a pair that "
            f"multicasts A or B, cluster x kcluster at most {PORTABLE_CLUSTER}: the portable "
            "cluster size), and no stream_k, pdl or acc_f16 (the cluster's CTAs share each "
            "tile's k tiles; one tile per cluster, or per pair, its sums added through shared "
            "memory)"
        ),
    ),
    ConfigRule(
        "promote",
        lambda c: isinstance(c.promote, bool) or c.promote in ("overlap", "split"),
        lambda c: f"promote {c.promote!r} in {PROMOTES}",
    ),
    ConfigRule(
        "promote_cooperative",
        lambda c: c.promote not in ("overlap", "split") or c.schedule == "cooperative",
        lambda c: (
            f"promote={c.promote!r} with schedule='cooperative' (its wgmma sets are the "
            "tile's; pingpong/alternate already hand the tensor cores over)"
        ),
    ),
    ConfigRule(
        "split_columns",
        lambda c: c.promote != "split" or (c.block_n >= SPLIT_MIN_N and c.cluster == 1),
        lambda c: (
            f"promote='split' with block_n {c.block_n} >= {SPLIT_MIN_N} (two parts of a "
            f"multiple of {WGMMA_N_STEP} columns each: split_widths) and cluster {c.cluster} = "
            "1 (in clusters ptxas spills "
            "its registers, and it was not faster: notes/kernels-journal.md run 22)"
        ),
    ),
    ConfigRule(
        "split_rows",
        lambda c: c.promote != "split" or c.block_m == 64 * c.tile_warpgroups,
        lambda c: (
            f"promote='split' with block_m {c.block_m} = 64 x {c.tile_warpgroups} "
            "warpgroups (one 64-row slice per warpgroup)"
        ),
    ),
    ConfigRule(
        "pingpong_shape",
        lambda c: c.schedule != "pingpong" or (c.consumers, c.cluster) == (2, 1),
        lambda c: "pingpong with consumers=2 and cluster=1 (two warpgroups take turns)",
    ),
    ConfigRule(
        "alternate_consumers",
        lambda c: c.schedule != "alternate" or c.consumers >= 2,
        lambda c: "alternate with 2 or 3 consumer warpgroups (they take turns)",
    ),
    ConfigRule(
        "consumers_n",
        lambda c: (
            c.consumers_n == 1
            or (
                c.consumers_n == 2
                and (c.consumers, c.schedule, c.wgmma_n, c.a_regs, c.cluster, c.kcluster)
                == (2, "cooperative", None, False, 1, 1)
                and c.promote != "split"
                and c.epilogue != "tma2"
                and c.block_n % 16 == 0
            )
        ),
        lambda c: (
            f"consumers_n {c.consumers_n}: 1, or 2 with consumers=2, cluster=1, kcluster=1 "
            "(not yet run on the GPU), schedule='cooperative', no wgmma_n, a_regs, "
            "promote='split' or epilogue='tma2', and block_n a multiple of 16 (two warpgroups "
            "side by side along N, each one wgmma of block_n / 2 columns)"
        ),
    ),
    ConfigRule(
        "block_m_slices",
        lambda c: c.block_m % (64 * c.consumers_m) == 0,
        lambda c: f"block_m {c.block_m} a multiple of 64 x {c.consumers_m} warpgroups along M",
    ),
    ConfigRule(
        "wgmma_n_range",
        lambda c: all(
            w % WGMMA_N_STEP == 0 and WGMMA_N_STEP <= w <= WGMMA_N_MAX
            for w in _as_tuple(c.wgmma_n or c.atom_n)
        ),
        lambda c: (
            f"each wgmma N of {c.wgmma_n or c.atom_n} in {WGMMA_N_STEP}..{WGMMA_N_MAX}, a "
            f"multiple of {WGMMA_N_STEP} (block_n > {WGMMA_N_MAX} takes wgmma_n: a divisor of "
            "it, or widths that add up to it)"
        ),
    ),
    ConfigRule("wgmma_n_cover", _widths_cover, _widths_cover_need),
    ConfigRule(
        "wgmma_n_aligned",
        # (one width repeated starts at its multiples: only a tuple of widths may not)
        lambda c: (
            not isinstance(c.wgmma_n, tuple)
            and c.atom_n * c.consumers_n > 0
            or all(n0 % w == 0 for n0, w in c.wgmma_columns)
        ),
        lambda c: (
            f"each wgmma of {c.wgmma_n} starting at a multiple of its N (widest first, "
            "e.g. (256, 64)): its B is a whole block of the stage"
        ),
    ),
    ConfigRule(
        "split_one_wgmma",
        lambda c: c.promote != "split" or c.atom_n == c.block_n,
        lambda c: "promote='split' with one wgmma across the tile (wgmma_n None): it halves it",
    ),
    ConfigRule(
        "stages", lambda c: c.stages is None or c.stages >= 2, lambda c: f"stages {c.stages} >= 2"
    ),
    ConfigRule(
        "tmat_cooperative",
        lambda c: c.epilogue not in ("tmat", "tmatb") or c.schedule == "cooperative",
        lambda c: (
            f"epilogue {c.epilogue!r} with schedule 'cooperative' (what the GPU has run it on: "
            f"tests/kernels/gpu_sm90_sanitize.py swap, swap pairs, swap quads); got "
            f"schedule {c.schedule!r}: use epilogue 'tma' or 'regs' there"
        ),
    ),
    ConfigRule(
        "tma2_columns",
        lambda c: c.epilogue != "tma2" or c.block_n % 16 == 0,
        lambda c: (
            f"epilogue 'tma2' with block_n {c.block_n} a multiple of 16 (two passes of "
            "a multiple of 8 columns)"
        ),
    ),
    ConfigRule(
        "buffered_store",
        lambda c: (
            c.epilogue not in BUFFERED_EPILOGUES
            or (
                c.block_n % STORE_PASS_COLUMNS[c.epilogue] == 0
                and c.block_n >= 2 * STORE_PASS_COLUMNS[c.epilogue]
                and (c.schedule, c.consumers_n, c.stream_k) == ("cooperative", 1, False)
            )
        ),
        lambda c: (
            f"epilogue {c.epilogue!r} with block_n {c.block_n} a multiple of "
            f"{STORE_PASS_COLUMNS.get(c.epilogue)} and at least "
            f"{2 * STORE_PASS_COLUMNS.get(c.epilogue, 0)} (two passes or more), schedule "
            "'cooperative', consumers_n 1 and no "
            "stream-K (its fix-up reads the whole staging tile): use 'tma' or 'tmat' there"
        ),
    ),
    ConfigRule(
        "three_consumers_width",
        lambda c: c.consumers < 3 or c.block_n <= 128,
        lambda c: (
            f"block_n {c.block_n} <= 128 with 3 consumers (512 threads enter with 128 "
            "registers each; ptxas needs more for a 64x256 wgmma)"
        ),
    ),
)


# bits of the batched kernel's `bat` argument: which operand has a rank-3 (batched) map;
# a shared (broadcast) operand keeps its rank-2 map and gets no batch coordinate
BAT_A, BAT_B = 1, 2


def kernel_name_sm90(
    config: Sm90Config,
    dtype: str,
    a_major: str,
    b_major: str,
    out: str,
    c_type: str,
    batched: bool = False,
    epilogue: Any = None,
) -> str:
    """The kernel's symbol: every choice that changes the source is in it (a fused
    epilogue's ops and tensor types last: its ``suffix``).

    >>> kernel_name_sm90(Sm90Config(), "bf16", "K", "N", "bf16", "bf16")
    'cutemma_gemm_sm90_bf16_KN_b128x128_c2_sauto_obf16_cbf16'
    >>> kernel_name_sm90(Sm90Config(), "bf16", "K", "N", "bf16", "bf16", batched=True)[-8:]
    '_batched'
    """
    name = f"cutemma_gemm_sm90_{dtype}_{a_major}{b_major}_{config.name}_o{out}_c{c_type}"
    return name + ("_batched" if batched else "") + (epilogue.suffix if epilogue else "")
