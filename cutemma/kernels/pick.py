"""The built-in configs and how ``cutemma.gemm`` picks one for a problem shape, per family:
:func:`pick_config` (sm80: whole waves of 128x128 tiles, else 64x64, else 32x32) and
:func:`pick_sm90_config` (sm90: the kernel of the space, :mod:`.space`, that the cost model,
:mod:`.cost`, prices fastest).

>>> builtin_config(8192, 8192, 8192).name, pick_sm90_config(8192, 8192, 8192).config.block_m
('b128x128x32_w2x2_s4', 128)
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from cutemma.errors import TiledMmaError
from cutemma.kernels.cost import (
    DEFAULT_KIND,
    _cheapest,
    _views,
    check_rows16,
    kcluster_best,
    predict_fused,
    price_table,
    quad_best,
    whole_number,
)
from cutemma.kernels.native_cheapest import _pack, _price
from cutemma.kernels.sm80.config import ELEM_BYTES, GemmConfig
from cutemma.kernels.sm90.config import ATOMS_SM90, Sm90Config
from cutemma.kernels.space import (
    SWAP_TOKENS,
    _kcluster_kernels,
    _quad_kernels,
    _swap_classes,
    _swaps_call,
    _token_quads,
    check_b_major,
    fused_kernels,
    fused_pingpong,
    kernel_reads,
    kernels_of,
    unswapped_groups,
)

if TYPE_CHECKING:  # designs load with the first pick_config: a call's host side needs none
    from cutemma.kernels.design import GemmDesign

BUILTIN_CONFIGS = {
    "large": GemmConfig(128, 128, 32, (2, 2), 4),
    "wide": GemmConfig(128, 256, 32, (2, 4), 3),
    "small": GemmConfig(64, 64, 32, (2, 2), 4),
    "skinny": GemmConfig(32, 32, 64, (2, 2), 4),
}


# fp8 on sm_90a: ptxas turns each m16n8k32 fp8 mma.sync into F2FP conversions + two HMMA
# + FADDs, whose temporaries make the 4-warp 128x128 tile spill; 8 warps halve the
# accumulators per thread and spill nothing (SASS checked in tests/kernels).
FP8_LARGE = GemmConfig(128, 128, 32, (4, 2), 4)


def builtin_config(m: int, n: int, k: int, batch: int = 1, dtype: str = "bf16") -> GemmConfig:
    """The built-in config for a problem shape: smaller tiles when big ones leave SMs idle.

    ``batch`` problems of (m, n, k) fill the SMs together; ``dtype`` is the kernel's
    element type ('bf16', 'e4m3', ...: fp8 takes an 8-warp large tile).

    >>> builtin_config(1024, 1024, 64).name, pick_config(8192, 8192, 8192).name
    ('b64x64x32_w2x2_s4', 'b128x128x32_w2x2_s4')
    >>> builtin_config(16, 4096, 4096).name, pick_config(1024, 1024, 64, batch=8).name
    ('b32x32x64_w2x2_s4', 'b128x128x32_w2x2_s4')
    >>> builtin_config(8192, 8192, 8192, dtype="e4m3").name
    'b128x128x32_w4x2_s4'
    """
    from cutemma.layout.checks import as_int

    for what, v in (("m", m), ("n", n), ("k", k), ("batch", batch)):
        if as_int(v) is None or as_int(v) < 1:
            raise TiledMmaError(f"pick_config: {what}={v!r} must be a whole number >= 1")
    if not isinstance(dtype, str) or dtype not in ELEM_BYTES:
        raise TiledMmaError(f"pick_config: dtype {dtype!r}; choose one of {', '.join(ELEM_BYTES)}")
    return _sm80_tile(as_int(m), as_int(n), as_int(batch), dtype)


def builtin(
    m: int,
    n: int,
    k: int,
    batch: int,
    dtype: str,
    sms: int,
    kind: str,
    swap: bool,
    rows16: tuple[bool, bool] = (False, False),
    b_major: str = "K",
    fused: bool | tuple[str, ...] = False,
) -> tuple[Any, float | None]:
    """The policy's built-in config of a checked call (plain ints >= 1, a kernel dtype) and
    its predicted seconds: :func:`builtin_sm90_config`'s for the sm90 family's dtypes on a
    device ``kind`` the cost model knows, ``swap`` allowing the swapped kernels, ``rows16``
    where the operands' rows sit (:func:`cutemma.kernels.call.rows16`), ``b_major`` B's
    major, ``fused``: the call fuses an epilogue (:func:`~cutemma.kernels.space.fused_kernels`
    then stand for the unswapped kernels; given as its op names, the model's pick also
    weighs the epilogue's cost against the pingpong tiles, :func:`_with_epilogue`); else
    :func:`builtin_config`'s (no prediction), without their argument checks. ``kind`` None:
    the sm90 kernel cannot read the operands.

    >>> builtin(8192, 8192, 8192, 1, "bf16", 132, "h100", False)[0].swap_ab
    False
    >>> builtin(8192, 8192, 8192, 1, "s8", 132, None, False)[0].name
    'b128x128x32_w2x2_s4'
    """
    if kind is None:
        return _sm80_tile(m, n, batch, dtype), None
    return _sm90_pick(m, n, k, dtype, batch, sms, kind, swap, rows16, b_major, fused)


def _sm80_tile(m: int, n: int, batch: int, dtype: str) -> GemmConfig:
    for name in ("large", "small"):
        cfg = BUILTIN_CONFIGS[name]
        if -(-m // cfg.block_m) * -(-n // cfg.block_n) * batch >= 132:  # H100: 132 SMs
            return FP8_LARGE if name == "large" and dtype in ELEM_BYTES and dtype[0] == "e" else cfg
    return BUILTIN_CONFIGS["skinny"]


# named sm90 tiles (tests and benches build these; the built-in pick prices the space's)
DEFAULT_SM90 = Sm90Config(128, 256)
SMALL_SM90 = Sm90Config(128, 128)
NARROW_16 = Sm90Config(64, 128, consumers=1)  # 128 x 64 of output's work as 64x128 tiles


def builtin_sm90_config(
    m: int,
    n: int,
    k: int,
    dtype: str = "bf16",
    batch: int = 1,
    sms: int = 132,
    kind: str = DEFAULT_KIND,
    swap: bool = False,
    rows16: tuple[bool, bool] = (False, False),
    b_major: str = "K",
) -> Sm90Config:
    """The built-in sm90 kernel for an (m, n, k) call of ``dtype`` (``batch`` of them) on
    ``sms`` SMs of device ``kind``: of the kernel space's candidates
    (:func:`~cutemma.kernels.space.candidates`; ``swap``: the swapped kernels too, as for a
    plain 2-D call; ``rows16``: whether A's and B's rows sit half a sector off,
    :func:`cutemma.kernels.call.rows16`; ``b_major``: B's, 'K' or 'N') the one the cost model
    (:func:`~cutemma.kernels.cost.best`) prices fastest.

    >>> builtin_sm90_config(8192, 8192, 8192).block_m
    128
    >>> builtin_sm90_config(16, 8192, 8192, swap=True).swap_ab
    True
    """
    counts = {"m": m, "n": n, "k": k, "sms": sms, "batch": batch}
    bad = [f"{f}={v!r}" for f, v in counts.items() if not whole_number(v) or v < 1]
    kinds = sorted(ATOMS_SM90)
    if bad or dtype not in kinds:
        wrong = bad + ([] if dtype in kinds else [f"dtype={dtype!r}"])
        raise TiledMmaError(
            f"builtin_sm90_config: {', '.join(wrong)}; m, n, k, sms and batch are ints >= 1 "
            f"and dtype one of {kinds}"
        )
    check_rows16(rows16, "builtin_sm90_config")
    check_b_major(b_major, "builtin_sm90_config")
    m, n, k, batch, sms = (int(v) for v in (m, n, k, batch, sms))  # (numpy's ints: plain)
    return _sm90_pick(m, n, k, dtype, batch, sms, kind, bool(swap), rows16, b_major)[0]


# a call's pick, kept per exact signature: a repeated shape whose tensors are new (the fast
# path keys launches by pointers) is priced once, not on every call
PICKS_KEPT = 4096


@lru_cache(maxsize=PICKS_KEPT)
def _sm90_pick(
    m: int,
    n: int,
    k: int,
    dtype: str,
    batch: int,
    sms: int,
    kind: str,
    swap: bool,
    rows16: tuple[bool, bool] = (False, False),
    b_major: str = "K",
    fused: bool | tuple[str, ...] = False,
) -> tuple[Sm90Config, float]:
    # best(candidates(...)) in one pass (tests/kernels/test_pick_fast.py holds them equal):
    # the space's kernels of the call, then the model's prices of them (a table per set of
    # kernels, built once: price_table is cached)
    swaps = swap and batch == 1 and _swaps_call(m, dtype)
    # (kept per what the kernels read of the shape: a new shape mostly meets reads seen
    # before, and one look-up costs it less than the space's own steps)
    reads = kernel_reads(m, n, k, dtype, batch, sms, swaps, b_major)
    key = (reads, dtype, batch == 1, sms, kind, rows16, b_major, bool(fused))
    priced = _PRICED.get(key)
    if priced is None:
        priced = _priced(key, reads, m, n, k, dtype, batch, sms, kind, rows16, b_major, fused)
    groups, tables, views, packed = priced
    found = _price(packed, m, n, k, batch) if packed is not None else None
    t, which, i = found or _cheapest(*(views or _views(tables)), m, n, k, batch)
    chosen = groups[which][i]
    # (listed last: they lose ties; 16-bit only where unswapped, so a fused call runs them
    # as they are, as it runs the swapped kernels)
    kcs = _kcluster_kernels(m, n, k, dtype, batch, sms, swaps)
    if kcs:
        kc_t, j = kcluster_best(kcs, m, n, k, dtype, kind, rows16)
        chosen, t = (kcs[j], kc_t) if kc_t < t else (chosen, t)
    # (2 x 2 clusters, last too: plain calls only, their fused epilogues never run on a GPU)
    quads = () if fused else _quad_kernels(m, dtype, batch, rows16)
    if quads:
        q_t, j = quad_best(quads, m, n, k, dtype, kind, rows16)
        chosen, t = (quads[j], q_t) if q_t < t else (chosen, t)
    # (swapped 2 x 2 clusters where a row sits off, last: priced on the swapped problem;
    # one token tile, up to SWAP_TOKENS rows, has none)
    off = swaps and not fused and m > SWAP_TOKENS and rows16 != (False, False)
    quads = _token_quads(_swap_classes(m, n, k, dtype, sms), dtype, b_major) if off else ()
    if quads:
        q_t, j = quad_best(quads, n, m, k, dtype, kind, rows16)
        chosen, t = (quads[j], q_t) if q_t < t else (chosen, t)
    if isinstance(fused, tuple) and batch == 1:
        return _with_epilogue(chosen, m, n, k, dtype, kind, rows16, fused)
    return chosen, t


def _with_epilogue(
    chosen: Sm90Config,
    m: int,
    n: int,
    k: int,
    dtype: str,
    kind: str,
    rows16: tuple[bool, bool],
    ops: tuple[str, ...],
) -> tuple[Sm90Config, float]:
    """A fused call's kernel: the space's pick (``chosen``, the plain model's: an epilogue
    adds about the same per output element to each of its kernels) or a pingpong tile
    (:func:`~cutemma.kernels.space.fused_pingpong`, whose epilogue runs under the other
    warpgroup's mainloop), whichever the model prices lower with the epilogue
    (:func:`~cutemma.kernels.cost.predict_fused`; ties to ``chosen``)."""
    from cutemma.kernels.epilogue import TRANSPOSED

    run = tuple(TRANSPOSED.get(op, op) for op in ops) if chosen.swap_ab else ops
    best = (predict_fused(chosen, m, n, k, dtype, run, kind, rows16), 0)
    rivals = (chosen, *fused_pingpong(dtype))
    for j, cfg in enumerate(rivals[1:], 1):
        best = min(best, (predict_fused(cfg, m, n, k, dtype, ops, kind, rows16), j))
    return rivals[best[1]], best[0]


def _priced(
    key: tuple,
    reads: tuple,
    m: int,
    n: int,
    k: int,
    dtype: str,
    batch: int,
    sms: int,
    kind: str,
    rows16: tuple[bool, bool],
    b_major: str,
    fused: bool | tuple[str, ...],
) -> tuple[tuple, tuple, tuple, object]:
    """A pick's kernels as groups (a tie goes to the space's own tiles, listed first, then
    to the fitted widths, then to the wave's, then to the narrow tiles, then to the earlier
    token tile) and their price tables, packed for the compiled pricer
    (:func:`~cutemma.kernels.native_cheapest._pack`) or, where it does not run, as
    :func:`~cutemma.kernels.cost.cheapest` reads them (their basis and views), kept under
    ``key``
    (:func:`~cutemma.kernels.space.kernel_reads`' ``reads`` and the rest of what the
    kernels and their prices read of the call)."""
    # (the space's unchecked forms: the policy checked the call)
    groups = kernels_of(reads, m, n, k, dtype, batch, sms, rows16, b_major)
    if fused:  # (the unswapped kernels: the tiles, the fitted, wave and narrow ones where any)
        plain = unswapped_groups(reads)
        groups = (*(fused_kernels(g, dtype) for g in groups[:plain]), *groups[plain:])
    tables = [price_table(g, dtype, kind, rows16) for g in groups]
    if len(_PRICED) >= PICKS_KEPT:
        _PRICED.clear()
    packed = _pack(tables)  # (the C pricer's form of the tables; else cheapest's, views)
    found = _PRICED[key] = (groups, tables, None if packed else _views(tables), packed)
    return found


_PRICED: dict[tuple, tuple] = {}


def pick_config(m: int, n: int, k: int, batch: int = 1, dtype: str = "bf16") -> GemmDesign:
    """The built-in sm80 design for a problem shape (:func:`builtin_config`'s config as a
    design; its ``.config`` is the config, its kernel the config's).

    >>> d = pick_config(1024, 1024, 64)
    >>> d.name, d.tiled_mma.atom.name, d.tile
    ('b64x64x32_w2x2_s4', 'SM80_16x8x16_F32BF16BF16F32_TN', (64, 64, 32))
    """
    from cutemma.kernels.design import GemmDesign

    return GemmDesign.from_config(builtin_config(m, n, k, batch, dtype), dtype)


def pick_sm90_config(
    m: int, n: int, k: int, dtype: str = "bf16", batch: int = 1, sms: int = 132
) -> GemmDesign:
    """The built-in sm90 design for an (m, n, k) call (:func:`builtin_sm90_config` as a
    design).

    >>> pick_sm90_config(4096, 4096, 4096, dtype="e4m3").config.promote
    'split'
    """
    from cutemma.kernels.design import GemmDesign

    return GemmDesign.from_config(builtin_sm90_config(m, n, k, dtype, batch, sms), dtype)
