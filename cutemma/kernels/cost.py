"""The cost model: a predicted time for each kernel of the space (:mod:`.space`), from the
shape, with constants calibrated per device kind (``bench/calibrate.py`` writes
``cutemma/kernels/devices/<kind>.json``).

For a kernel of ``bm x bn`` tiles and ``bk``-deep k tiles on a problem of (m, n, k) (its
own m and n: a swapped kernel's m is the call's n):

- a k tile costs a CTA ``max(flops / (rate x eff), operand bytes / load)``: the tile's
  2 bm bn bk flops at the dtype's per-SM rate times the tile's measured efficiency (times
  ``cluster_eff`` in a cluster), or its (bm + bn) bk operand bytes at one SM's load
  bandwidth, whichever is slower. Rows whose pitch is an odd multiple of 16 bytes (half a
  32-byte sector off: ``rows16``) cost TMA ``half_sector`` times their bytes; an operand a
  cluster multicasts costs each CTA its share of the rows (:func:`loaded_rows`);
- a whole tile costs its k tiles plus ``tile_us`` (pipeline fill, epilogue);
- whole tiles go round the SMs in waves, the last one partial (quantisation; clusters of 4
  round the clusters that fit at once, :func:`cluster_grid`), and a cluster kernel's
  call ``cluster_us`` more (its launch, its start and end cluster barriers); stream-K
  (:func:`~cutemma.kernels.sm90.streamk.sk_split`, capped by the config's ``split``) shares
  the k tiles of the tiles it names equally over its CTAs, then adds per partial sum an
  owner adds ``fixup_us`` and the partial's f32 bytes at one SM's load bandwidth; where
  the shares are whole tiles' k chunks, ``TOGETHER_MIN`` or more to a tile (a ``split``), the partials
  are added together (:func:`~cutemma.kernels.sm90.streamk.fixup`, :func:`_together`) for ``together_us``
  and three partials' bytes (stored, added, read by the owner), whatever their count;
- the whole call takes at least its compulsory DRAM bytes (A, B read once, D written
  once) at ``dram_gbps``, and ``launch_us`` more; stream-K's CTAs read a part
  (``reread``) of their operand bytes past those from DRAM again, but where the shares
  are whole tiles' k chunks of a swapped kernel or of a call of more than
  :data:`READS_ONCE_ROWS` rows (:func:`_reads_once`).

The prediction is in seconds.

>>> from cutemma.kernels.sm90.config import Sm90Config
>>> big, small = Sm90Config(128, 256), Sm90Config(128, 128)
>>> predict(big, 8192, 8192, 8192, "bf16") < predict(small, 8192, 8192, 8192, "bf16")
True
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass, field
from functools import cache, lru_cache
from operator import itemgetter
from pathlib import Path

from cutemma.errors import TiledMmaError
from cutemma.kernels.common.scheduler import FULL_WAVE
from cutemma.kernels.epilogue import validate_ops
from cutemma.kernels.sm90.config import ATOMS_SM90, FP8, Sm90Config
from cutemma.kernels.sm90.kcluster import clusters
from cutemma.kernels.sm90.streamk import (
    ITERS_MAX,
    SPLIT_MAX,
    TOGETHER_MIN,
    shared_tiles,
    sk_split,
    split_ctas,
)

DEVICES = Path(__file__).with_name("devices")
DEFAULT_KIND = "h100"  # what a GPU without its own file is priced as
# the kinds with a file, as their names appear in a GPU's name ('NVIDIA H200')
UNFITTED_EFF = 0.8  # about the fitted 16-bit classes' middle (devices/h200.json)
KINDS = tuple(sorted(p.stem for p in DEVICES.glob("*.json")))
# the type classes whose loads count only a tile's rows inside the problem (loaded_rows'
# extent): over the H200 calibration sets a call of fewer rows than a tile then took 16-bit
# plain tiles over swapped ones, and the new picks ran 6-14% faster; fp8's flipped picks
# ran 3-8% slower (its plain tiles' fitted rates overstate them at few rows), so fp8 counts
# whole tiles until its classes are refitted there (raw/calibrate-h200-s33-run2.json,
# -s34.json, -small-together.json, -longk-together.json)
CLAMPED = ("16", "tf32")


@dataclass(frozen=True)
class Device:
    """One device kind's constants (``bench/calibrate.py`` fits them; see the module doc).

    ``rate_tflops``: per-SM dense rate by type class ('16', 'tf32', 'fp8'); ``eff``: a tile
    class's share of it (:func:`tile_class`); ``load_gbps``: one SM's operand bandwidth;
    ``dram_gbps``: the card's; times in microseconds; ``half_sector``: what a row at an
    odd multiple of 16 bytes costs TMA, in aligned rows' bytes; ``cluster_eff``: a
    cluster kernel's share of its tile's rate (measured on pairs, and taken for 2 x 2
    clusters too; 1.0 where a file has neither); ``cluster_us``: what a call of a cluster
    kernel (pairs, 2 x 2) costs once beyond its tiles (the cluster launch, the start and
    end cluster barriers; 0 where a file has none);
    ``together_us``: the fixed cost of a fix-up that adds a tile's partials together (two
    rounds of flags); ``epilogue_ns``: what each fused op costs a warpgroup per output
    element, in nanoseconds (:func:`epilogue_us`); ``kcluster_us`` and ``dsmem_gbps``:
    the fixed cost of split-K in a cluster's fix-up and one SM's bandwidth through
    distributed shared memory (:func:`_kcluster_us`)."""

    kind: str
    sms: int
    rate_tflops: dict
    eff: dict
    load_gbps: float
    dram_gbps: float
    tile_us: float
    fixup_us: float
    launch_us: float
    reread: float
    sharpness: float
    together_us: float
    kcluster_us: float
    dsmem_gbps: float
    half_sector: float = 1.0
    cluster_eff: float = 1.0
    cluster_us: float = 0.0
    epilogue_ns: dict = field(default_factory=dict)


def device_kind(name: str) -> str:
    """The kind of a GPU by its name: the first known kind named in it, else the default.

    >>> device_kind("NVIDIA H200"), device_kind("NVIDIA H100 80GB HBM3"), device_kind("?")
    ('h200', 'h100', 'h100')
    """
    _check_kind(name)
    low = name.lower()
    return next((kind for kind in KINDS if kind in low), DEFAULT_KIND)


def type_class(dtype: str) -> str:
    """'16', 'tf32' or 'fp8': the rate a kernel dtype runs at.

    >>> type_class("bf16"), type_class("e4m3")
    ('16', 'fp8')
    """
    return "fp8" if dtype in FP8 else "tf32" if dtype == "tf32" else "16"


def tile_class(config: Sm90Config, dtype: str) -> str:
    """The efficiency class of a config: type class, rows x columns, and 'swap' for the
    swapped kernels (whose columns are the call's tokens: one class per row count); 'pp'
    after a pingpong tile's (each warpgroup its own tile: another rate).

    >>> tile_class(Sm90Config(128, 256), "bf16"), tile_class(Sm90Config(64, 24, consumers=1, swap_ab=True, epilogue="regs"), "e4m3")
    ('16/128x256', 'fp8/swap64')
    >>> tile_class(Sm90Config(128, 128, schedule="pingpong"), "bf16")
    '16/128x128pp'
    >>> tile_class(Sm90Config(192, 192, consumers_n=2), "bf16")
    '16/wn192x192'
    """
    what = f"swap{config.block_m}" if config.swap_ab else f"{_rows(config)}{config.block_n}"
    return f"{type_class(dtype)}/{what}{'pp' if config.schedule == 'pingpong' else ''}"


def _rows(config: Sm90Config) -> str:
    """An unswapped class's name up to its width: rows, 'wn' before them for warpgroups side
    by side along N (``consumers_n``): ``192x`` or ``wn192x``."""
    return f"{'wn' if config.consumers_n > 1 else ''}{config.block_m}x"


def _check_kind(kind: object) -> None:
    if not isinstance(kind, str):
        raise TiledMmaError(
            f"cost model: device kind {kind!r} ({type(kind).__name__}); give a kind's name, one "
            f"of {list(KINDS)}, or a GPU's name ('NVIDIA H200')"
        )


def device(kind: str) -> Device:
    """The constants of device ``kind`` ('h100', 'h200', ...), from its JSON file; a GPU's
    name is read as its kind (:func:`device_kind`), an unknown one as the default kind.

    >>> device("h100").sms, device("NVIDIA H200").kind
    (132, 'h200')
    """
    _check_kind(kind)
    return _device(kind)


@cache
def _device(kind: str) -> Device:
    path = DEVICES / f"{kind}.json"
    if not path.exists():  # a GPU's name ('NVIDIA H200'), or a kind without a file
        path = DEVICES / f"{device_kind(kind)}.json"
    data = json.loads(path.read_text())
    fields = set(Device.__dataclass_fields__)
    return Device(**{k: v for k, v in data.items() if k in fields})


@lru_cache(maxsize=4096)
def _shape_free(config: Sm90Config, dtype: str, kind: str) -> tuple:
    return shape_free(config, dtype, device(kind))


def shape_free(config: Sm90Config, dtype: str, dev: Device) -> tuple[float, float]:
    """What a config costs whatever the shape: (its rate in TFLOP/s, us per tile)."""
    rate = dev.rate_tflops[type_class(dtype)] * efficiency(config, dtype, dev)
    return rate * (dev.cluster_eff if config.cluster > 1 else 1.0), dev.tile_us


def efficiency(config: Sm90Config, dtype: str, dev: Device) -> float:
    """A config's share of its type's rate: its class's (:func:`tile_class`) as calibrated
    (a swapped tile of 128 rows at most the plain 128-row tile's of its token width: on
    drawn calls whose pick that moved, 40 of 268 of 12,000, the new picks ran 0.933 of
    cuBLAS against 0.915, 25 faster, bench/results/raw/swapeff-ab-drawn-h200.json; an fp8
    one wider than 128 tokens the plain tile's);
    an unswapped tile of a width no calibration measured (the space's widths fitted to a
    call's N), interpolated between its rows' measured widths (the nearest one past them);
    a class of rows never measured (tf32's, so far), :data:`UNFITTED_EFF`.

    >>> dev = device("h200")
    >>> e = efficiency(Sm90Config(128, 160), "bf16", dev)
    >>> dev.eff["16/128x128"] < e < dev.eff["16/128x192"]
    True
    """
    if not isinstance(config, Sm90Config) or dtype not in ATOMS_SM90 or not isinstance(dev, Device):
        raise TiledMmaError(
            f"cost model: efficiency() of an Sm90Config, a dtype of {sorted(ATOMS_SM90)} and a "
            f"Device (cost.device(kind)); got {type(config).__name__}, {dtype!r}, "
            f"{type(dev).__name__}"
        )
    cls = tile_class(config, dtype)
    if cls in dev.eff:
        if config.swap_ab and config.consumers > 1:
            # two warpgroups of 64 x tokens wgmmas: no faster than the plain tile of as many
            # rows and that width (the class is fitted where loads, not flops, set the pace)
            plain = _interpolated(dev.eff, f"{type_class(dtype)}/{_rows(config)}", config.block_n)
            if type_class(dtype) == "fp8" and config.block_n > config.block_m:
                # fp8 token tiles wider than the weights' rows: the plain tile's rate. The
                # class rate, fitted on narrow token tiles, sits under every plain fp8 tile's;
                # with several token tiles they measured 0.79-0.83 of their price (550 timed
                # in the H200 calibration sets), and on 100 drawn calls whose pick this moved
                # the new picks ran 1.053x the old, 71 faster (bench/results/raw/
                # wide-fp8-swap-ab-drawn{,2}-h200.json); narrow ones lost (-rejected.json)
                return plain
            return min(dev.eff[cls], plain)
        return dev.eff[cls]
    if config.swap_ab or config.schedule != "cooperative":
        return UNFITTED_EFF
    return _interpolated(dev.eff, f"{type_class(dtype)}/{_rows(config)}", config.block_n)


@lru_cache(maxsize=256)
def _widths(eff_items: tuple, prefix: str) -> tuple[tuple[int, float], ...]:
    found = ((k[len(prefix) :], v) for k, v in eff_items if k.startswith(prefix))
    return tuple(sorted((int(w), v) for w, v in found if w.isdigit()))  # (not 'pp' classes)


def _interpolated(eff: dict, prefix: str, width: int) -> float:
    known = _widths(tuple(eff.items()), prefix)
    if not known:
        return UNFITTED_EFF
    below = [(w, e) for w, e in known if w <= width]
    above = [(w, e) for w, e in known if w >= width]
    if not below or not above:
        return (above or below)[0 if above else -1][1]
    (w0, e0), (w1, e1) = below[-1], above[0]
    return e0 if w1 == w0 else e0 + (e1 - e0) * (width - w0) / (w1 - w0)


def loaded_rows(
    config: Sm90Config,
    rows16: tuple[bool, bool],
    dev: Device,
    extent: tuple[int, int] | None = None,
) -> float:
    """The rows of A and B one CTA's TMA moves per k tile, in aligned rows: a row of an
    operand whose pitch is half a sector off (``rows16``: (A's, B's), as ``config``'s
    kernel reads them) counts ``dev.half_sector``, an operand the config's cluster
    multicasts half its rows (bench/results/raw/align-probe-h200.json). ``extent``: the
    problem's (m, n) as the kernel sees it, where a tile's rows past it count nothing
    (TMA fills them with zeros without reading memory; :data:`CLAMPED`).

    >>> from cutemma.kernels.cost import device
    >>> loaded_rows(Sm90Config(128, 256), (False, False), device("h200"))
    384.0
    >>> loaded_rows(Sm90Config(128, 256), (False, False), device("h200"), (40, 8192))
    296.0
    """
    check_rows16(rows16, "cost model: loaded_rows")
    if extent is not None and not (
        isinstance(extent, tuple) and len(extent) == 2
        and all(type(v) is int and v >= 1 for v in extent)
    ):  # fmt: skip
        raise TiledMmaError(
            f"cost model: loaded_rows extent={extent!r}; give the problem's (m, n) as two "
            "ints >= 1, or None for whole tiles"
        )
    m, n = extent or (config.block_m, config.block_n)
    a = min(config.block_m, m) * (dev.half_sector if rows16[0] else 1.0)
    b = min(config.block_n, n) * (dev.half_sector if rows16[1] else 1.0)
    cm, cn = config.cluster_mn  # each CTA loads its share of an operand its cluster shares
    return a / cn + b / cm


def check_rows16(rows16: object, what: str) -> None:
    """Raise a TiledMmaError naming ``what`` unless ``rows16`` is (A's, B's) as two bools.

    >>> check_rows16((True, False), "predict")
    """
    if not (
        isinstance(rows16, tuple) and len(rows16) == 2 and all(type(r) is bool for r in rows16)
    ):
        raise TiledMmaError(
            f"{what}: rows16={rows16!r}; give (A's, B's) as two bools: whether that operand's "
            "rows sit an odd multiple of 16 bytes apart"
        )


def pairs(config: Sm90Config) -> tuple[int, int]:
    """How many M and N tiles a config's cluster takes at once: (2, 1) for pairs along M
    that share B, (1, 2) for pairs along N that share A, (2, 2) for a 2 x 2 cluster, else
    (1, 1) (:attr:`Sm90Config.cluster_mn`).

    >>> pairs(Sm90Config(cluster=2)), pairs(Sm90Config(cluster=2, multicast="A"))
    ((2, 1), (1, 2))
    """
    return config.cluster_mn


def cluster_grid(config: Sm90Config, sms: int) -> int:
    """The tiles a persistent grid of ``config`` runs at once on ``sms`` SMs: one per SM, but
    clusters of 4 fit fewer (:func:`~cutemma.kernels.sm90.kcluster.clusters`: 30 on 132).

    >>> cluster_grid(Sm90Config(), 132), cluster_grid(Sm90Config(cluster=4, multicast="AB"), 132)
    (132, 120)
    """
    cl = config.cluster
    return sms if cl <= 2 else cl * clusters(cl, sms)


def _tile_grid(config: Sm90Config, m: int, n: int, k: int, dtype: str) -> tuple[int, int, int]:
    """(tile rows, tile columns, k tiles) of ``config`` on an (m, n, k) call of ``dtype``, as
    the kernel sees the problem (a swapped config's is (n, m, k)); a cluster's CTAs run
    whole pairs of tiles (:func:`pairs`).

    >>> _tile_grid(Sm90Config(128, 256), 1000, 1000, 1000, "bf16")
    (8, 4, 16)
    """
    if config.swap_ab:
        m, n = n, m
    pm, pn = pairs(config)
    bk = config.k_tiles[ATOMS_SM90[dtype][1]]
    return -(-m // (config.block_m * pm)) * pm, -(-n // (config.block_n * pn)) * pn, -(-k // bk)


def predict(
    config: Sm90Config,
    m: int,
    n: int,
    k: int,
    dtype: str,
    batch: int = 1,
    kind: str = DEFAULT_KIND,
    out_bytes: int = 2,
    rows16: tuple[bool, bool] = (False, False),
) -> float:
    """Predicted seconds of ``config`` on an (m, n, k) call (``batch`` of them) of ``dtype``
    on device ``kind``; a swapped config (``swap_ab``) runs the transposed problem.
    ``rows16``: whether the call's A and B rows sit at an odd multiple of 16 bytes
    (:func:`loaded_rows`).

    >>> predict(Sm90Config(128, 128), 4096, 4096, 4096, "bf16") > 0
    True
    """
    _check_priced(config, dtype, rows16, "predict")
    _check_call(m, n, k, batch, "predict", out_bytes=out_bytes)
    free = _shape_free(config, dtype, kind)
    dev = device(kind)
    return price(free, config, m, n, k, dtype, batch, dev, out_bytes, rows16)


# the largest count the model prices (a float holds every whole number up to it exactly)
COUNT_MAX = 1 << 53


def whole_number(v: object) -> bool:
    """Whether ``v`` is an integer: an int or numpy's, not a bool (the kernels' light path's
    test; layout.checks.as_int's module loads the layout algebra).

    >>> whole_number(3), whole_number(True), whole_number(3.0)
    (True, False, False)
    """
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _check_call(m: int, n: int, k: int, batch: int, what: str, **more: int) -> None:
    """Raise a TiledMmaError naming ``what`` unless the call's counts are ints >= 1 (a bool
    is not a count; numpy's integers are)."""
    counts = {"m": m, "n": n, "k": k, "batch": batch, **more}
    bad = [f"{f}={v!r:.40}" for f, v in counts.items()
           if not whole_number(v) or not 1 <= v <= COUNT_MAX]  # fmt: skip
    if bad:
        raise TiledMmaError(
            f"cost model: {what}: {', '.join(bad)}; the call's m, n, k and batch (and "
            "out_bytes) are whole numbers from 1 to 2**53"
        )


def _check_priced(config: Sm90Config, dtype: str, rows16: tuple[bool, bool], what: str) -> None:
    if not isinstance(dtype, str) or dtype not in ATOMS_SM90 or not isinstance(config, Sm90Config):
        raise TiledMmaError(
            f"cost model: prices an Sm90Config and a dtype of {sorted(ATOMS_SM90)}; got "
            f"{type(config).__name__} and {dtype!r}"
        )
    check_rows16(rows16, f"cost model: {what}")


def price(
    free: tuple,
    config: Sm90Config,
    m: int,
    n: int,
    k: int,
    dtype: str,
    batch: int,
    dev: Device,
    out_bytes: int = 2,
    rows16: tuple[bool, bool] = (False, False),
) -> float:
    """:func:`predict` with the config's shape-free costs (:func:`shape_free`) and the
    device's constants given (what a calibration varies): the model itself (module doc)."""
    rate, tile_us = free
    eb = ATOMS_SM90[dtype][1]
    bm, bn, bk = config.block_m, config.block_n, config.k_tiles[eb]
    tm, tn, kt = _tile_grid(config, m, n, k, dtype)
    if config.swap_ab:
        m, n, rows16 = n, m, rows16[::-1]
    tiles, grid = tm * tn * batch, cluster_grid(config, dev.sms)
    sk, ctas = sk_split(tm, tn, kt, grid, config.split) if config.stream_k else (0, grid)
    extent = (m, n) if type_class(dtype) in CLAMPED else None
    k_us = _k_us(bm, bn, loaded_rows(config, rows16, dev, extent), bk, eb, rate, dev)
    whole_tile = kt * k_us + tile_us
    once = batch * (m + n) * k * eb  # A and B, each read from DRAM once
    if config.kcluster > 1:  # one tile per cluster, each CTA 1 / kcluster of its k tiles
        kc, cl = config.kcluster, config.cluster  # (pairs: a cluster of kc pairs, two tiles)
        waves = -(-tiles // (cl * clusters(kc * cl, grid)))
        us = waves * (-(-kt // kc) * k_us + tile_us + _kcluster_us(bm, bn, kc, dev))
    elif sk:
        whole = (tiles - sk) // grid
        shared = -(-sk * kt // ctas)
        fix_us = _fix_us(bm, bn, ctas, sk, config.split, dev)
        us = whole * whole_tile + shared * k_us + tile_us + fix_us
        if not _reads_once(config.swap_ab, m, tn, ctas, sk, config.split):
            # shares at unrelated k: neighbours' slices of A and B no longer meet in L2, so
            # a part (``reread``) of every CTA's own operand bytes comes from DRAM again
            own = sk * (bm + bn) * k * eb
            once += dev.reread * max(0, own - once)
    else:
        us = -(-tiles // grid) * whole_tile
    if config.cluster > 1:  # (once a call, on the compute side: the tiles wait for it)
        us += dev.cluster_us
    dram_us = (once + batch * m * n * out_bytes) / (dev.dram_gbps * 1e3)
    # the slower of compute and DRAM, smoothly: where they are close, both cost
    p = dev.sharpness
    return ((us**p + dram_us**p) ** (1 / p) + dev.launch_us) * 1e-6


def kcluster_best(
    configs: tuple[Sm90Config, ...],
    m: int,
    n: int,
    k: int,
    dtype: str,
    kind: str = DEFAULT_KIND,
    rows16: tuple[bool, bool] = (False, False),
) -> tuple[float, int]:
    """(the least predicted seconds of the kcluster ``configs`` on a 2-D (m, n, k) call, its
    index; (inf, -1) for none): :func:`best`'s answer, each config priced by :func:`price`'s
    operations in its order from constants kept per config (:func:`_kcluster_terms`), so a
    pick weighs the space's kcluster kernels (:func:`~cutemma.kernels.space.kcluster_kernels`)
    at a few operations each. Arguments as the pick checked them (unchecked here).

    >>> from cutemma.kernels.space import kcluster_kernels
    >>> found = kcluster_kernels(399, 448, 4160, "bf16")
    >>> t, i = kcluster_best(found, 399, 448, 4160, "bf16", "h200")
    >>> (found[i], t) == best(found, 399, 448, 4160, "bf16", 1, "h200")
    True
    """
    least, at = math.inf, -1
    for i, config in enumerate(configs):
        (bm, bn, bk, eb, swap, kc, cm, cn, flops_us, ha, hb, clamp, load, tile_us, fix, cap,
         once_us, dram, p, launch) = _kcluster_terms(config, dtype, kind, rows16)  # fmt: skip
        mm, nn = (n, m) if swap else (m, n)
        tiles, kt = -(-mm // (bm * cm)) * cm * -(-nn // (bn * cn)) * cn, -(-k // bk)
        rows = (
            (min(bm, mm) * ha / cn + min(bn, nn) * hb / cm)
            if clamp
            else bm * ha / cn + bn * hb / cm
        )
        k_us = max(flops_us, rows * bk * eb / load)
        us = -(-tiles // cap) * (-(-kt // kc) * k_us + tile_us + fix) + once_us
        dram_us = ((mm + nn) * k * eb + mm * nn * 2) / dram
        t = ((us**p + dram_us**p) ** (1 / p) + launch) * 1e-6
        if t < least:
            least, at = t, i
    return least, at


def quad_best(
    configs: tuple[Sm90Config, ...],
    m: int,
    n: int,
    k: int,
    dtype: str,
    kind: str = DEFAULT_KIND,
    rows16: tuple[bool, bool] = (False, False),
) -> tuple[float, int]:
    """(the least predicted seconds of the whole-tile clusters ``configs`` on a 2-D (m, n, k)
    call, its index; (inf, -1) for none): :func:`best`'s answer, each config priced by
    :func:`price`'s operations in its order from constants kept per config
    (:func:`_quad_terms`), for the few clusters of 2 x 2 a pick weighs apart
    (:func:`~cutemma.kernels.space.quad_kernels`). Arguments as the pick checked them
    (unchecked here).

    >>> from cutemma.kernels.space import quad_kernels
    >>> found = quad_kernels(2048, "e4m3", 1, (True, True))
    >>> t, i = quad_best(found, 2048, 8192, 8208, "e4m3", "h200", (True, True))
    >>> (found[i], t) == best(found, 2048, 8192, 8208, "e4m3", 1, "h200", (True, True))
    True
    """
    least, at = math.inf, -1
    for i, config in enumerate(configs):
        (bm, bn, bk, eb, pm, pn, flops_us, ha, hb, clamp, load, tile_us, grid, dram, p,
         launch, cluster_us) = _quad_terms(config, dtype, kind, rows16)  # fmt: skip
        tiles, kt = -(-m // (bm * pm)) * pm * -(-n // (bn * pn)) * pn, -(-k // bk)
        a, b = (min(bm, m) * ha, min(bn, n) * hb) if clamp else (bm * ha, bn * hb)
        k_us = max(flops_us, (a / pn + b / pm) * bk * eb / load)  # (A shared along N)
        us = -(-tiles // grid) * (kt * k_us + tile_us)
        us += cluster_us
        dram_us = ((m + n) * k * eb + m * n * 2) / dram
        t = ((us**p + dram_us**p) ** (1 / p) + launch) * 1e-6
        if t < least:
            least, at = t, i
    return least, at


def _tile_terms(config: Sm90Config, dtype: str, kind: str, rows16: tuple) -> tuple:
    """What :func:`price` reads of any config whatever the shape, as it computes it: (its
    tile and k tile, element bytes), (a k tile's flop microseconds, A's and B's half-sector
    factors as the kernel sees its operands, whether rows are clamped to the call, the
    load rate), (a tile's fixed microseconds)."""
    dev = device(kind)
    rate, tile_us = _shape_free(config, dtype, kind)
    eb = ATOMS_SM90[dtype][1]
    bm, bn, bk = config.block_m, config.block_n, config.k_tiles[eb]
    ra, rb = rows16[::-1] if config.swap_ab else rows16
    ha, hb = (dev.half_sector if ra else 1.0), (dev.half_sector if rb else 1.0)
    loads = (2 * bm * bn * bk / (rate * 1e6), ha, hb, type_class(dtype) in CLAMPED,
             dev.load_gbps * 1e3)  # fmt: skip
    return (bm, bn, bk, eb), loads, tile_us


@lru_cache(maxsize=256)
def _quad_terms(config: Sm90Config, dtype: str, kind: str, rows16: tuple) -> tuple:
    """What :func:`price` reads of a whole-tile unswapped config whatever the shape, as it
    computes it."""
    dev = device(kind)
    tile, loads, tile_us = _tile_terms(config, dtype, kind, rows16)
    return (*tile, *config.cluster_mn, *loads, tile_us, cluster_grid(config, dev.sms),
            dev.dram_gbps * 1e3, dev.sharpness, dev.launch_us, dev.cluster_us)  # fmt: skip


@lru_cache(maxsize=1024)
def _kcluster_terms(config: Sm90Config, dtype: str, kind: str, rows16: tuple) -> tuple:
    """What :func:`price` reads of a kcluster config whatever the shape, as it computes it."""
    dev = device(kind)
    tile, loads, tile_us = _tile_terms(config, dtype, kind, rows16)
    kc, cl, (bm, bn, _, _) = config.kcluster, config.cluster, tile
    return (*tile, config.swap_ab, kc, *config.cluster_mn, *loads, tile_us,
            _kcluster_us(bm, bn, kc, dev), cl * clusters(kc * cl, dev.sms),
            dev.cluster_us if cl > 1 else 0.0, dev.dram_gbps * 1e3, dev.sharpness,
            dev.launch_us)  # fmt: skip


def epilogue_us(config: Sm90Config, ops: tuple[str, ...], dev: Device) -> float:
    """Microseconds one tile's fused epilogue costs: each op's ``dev.epilogue_ns`` per
    output element, the tile's elements shared by the warpgroups that compute it (a pingpong
    warpgroup runs its tile's alone). ``ops`` as the kernel runs them (a swapped kernel's
    twins, cutemma.kernels.epilogue.TRANSPOSED). Column vectors (bias, scale_col) are read
    per value and row vectors once per row, so the twins cost differently
    (bench/results/raw/epilogue-cost-ops-h200.json).

    >>> dev = device("h200")
    >>> epilogue_us(Sm90Config(128, 256), ("relu",), dev) < epilogue_us(Sm90Config(128, 256), ("gelu",), dev)
    True
    """
    if not (
        isinstance(config, Sm90Config) and isinstance(dev, Device) and isinstance(ops, tuple)
        and all(isinstance(op, str) for op in ops)
    ):  # fmt: skip
        raise TiledMmaError(
            f"cost model: epilogue_us() of an Sm90Config, a tuple of op names and a Device "
            f"(cost.device(kind)); got {type(config).__name__}, {ops!r}, {type(dev).__name__}"
        )
    unknown = [op for op in ops if op not in dev.epilogue_ns]
    if unknown:
        raise TiledMmaError(
            f"cost model: no epilogue cost for {unknown} on device kind {dev.kind!r}; its file "
            f"prices {sorted(dev.epilogue_ns)}"
        )
    per_element = sum(dev.epilogue_ns[op] for op in ops)
    return config.block_m * config.block_n * per_element / config.tile_warpgroups * 1e-3


def predict_fused(
    config: Sm90Config,
    m: int,
    n: int,
    k: int,
    dtype: str,
    ops: tuple[str, ...],
    kind: str = DEFAULT_KIND,
    rows16: tuple[bool, bool] = (False, False),
) -> float:
    """:func:`predict` of a 2-D call that fuses the epilogue ``ops`` (as ``config``'s kernel
    runs them, :func:`epilogue_us`): each tile's epilogue adds to its fixed cost while the
    tensor cores wait, but a pingpong tile's runs under the other warpgroup's mainloop, so
    after the first its tiles cost max(M, (M + E) / 2) each (M: a tile's mainloop, E: its
    epilogue) and the last one's epilogue shows whole (bench/results/raw/
    epilogue-schedules-h200.json: bias + gelu_tanh at K <= 512, 1.19-1.52x the plain call
    cooperative, 1.04-1.21x pingpong).

    >>> pp, coop = Sm90Config(128, 128, schedule="pingpong"), Sm90Config(128, 256)
    >>> ops = ("bias", "gelu_tanh")
    >>> predict_fused(pp, 9643, 15616, 352, "bf16", ops, "h200") < predict_fused(coop, 9643, 15616, 352, "bf16", ops, "h200")
    True
    """
    _check_priced(config, dtype, rows16, "predict_fused")
    _check_call(m, n, k, 1, "predict_fused")
    validate_ops(ops)  # (an op list a call could not give is not priced)
    dev = device(kind)
    rate, tile_us = _shape_free(config, dtype, kind)
    e = epilogue_us(config, ops, dev)
    if config.schedule == "pingpong":
        tm, tn, kt = _tile_grid(config, m, n, k, dtype)
        eb, bk = ATOMS_SM90[dtype][1], config.k_tiles[ATOMS_SM90[dtype][1]]
        extent = (m, n) if type_class(dtype) in CLAMPED else None
        rows = loaded_rows(config, rows16, dev, extent)
        mainloop = kt * _k_us(config.block_m, config.block_n, rows, bk, eb, rate, dev)
        e = max(0.0, (e - mainloop) / 2) + e / -(-tm * tn // dev.sms)
    return price((rate, tile_us + e), config, m, n, k, dtype, 1, dev, 2, rows16)


def _clamp_terms(
    cfg: Sm90Config, rows16: tuple[bool, bool], bk: int, eb: int, rate: float, dev: Device
) -> tuple:
    """What :func:`cheapest` needs to price a k tile of ``cfg`` on a call of fewer rows
    than its tile as :func:`_k_us` of :func:`loaded_rows` with an extent does: the flops'
    microseconds; a k tile's bytes per row where rows count whole (neither half a sector
    off nor shared by a cluster: the rows' sum is then exact in ints), else 0; each
    operand's row weight (half sector) and cluster share."""
    ha = dev.half_sector if rows16[0] else 1.0
    hb = dev.half_sector if rows16[1] else 1.0
    cb, ca = cfg.cluster_mn  # A is shared by the CTAs along N, B by those along M
    whole_rows = ha == hb == 1.0 and ca == cb == 1
    flop_us = 2 * cfg.block_m * cfg.block_n * bk / (rate * 1e6)
    return flop_us, bk * eb if whole_rows else 0, ha, hb, ca, cb


def _k_us(bm: int, bn: int, rows: float, bk: int, eb: int, rate: float, dev: Device) -> float:
    """A CTA's microseconds per k tile: its flops at ``rate`` or its ``rows`` of operand
    bytes (:func:`loaded_rows`) at one SM's load bandwidth, whichever is slower (module
    doc)."""
    return max(2 * bm * bn * bk / (rate * 1e6), rows * bk * eb / (dev.load_gbps * 1e3))


def _partial_us(bm: int, bn: int, dev: Device) -> float:
    """Each stream-K partial an owner adds: a wait on its flag, then its f32 slot read by
    one SM."""
    return dev.fixup_us + bm * bn * 4 / (dev.load_gbps * 1e3)


def _together_us(bm: int, bn: int, dev: Device) -> float:
    """A fix-up that adds a tile's partials together: two rounds of flags, then three
    partials' bytes at one SM's load bandwidth (its own stored, its part of all added,
    the owner's one read), whatever the count."""
    return dev.together_us + 3 * bm * bn * 4 / (dev.load_gbps * 1e3)


def _kcluster_us(bm: int, bn: int, kc: int, dev: Device) -> float:
    """Split-K in a cluster's fix-up (:mod:`cutemma.kernels.sm90.kcluster`): two cluster
    barriers, then the tile's f32 bytes stored and read back by rank 0, and once more per
    CTA of the cluster (each reads a tile's bytes, its peers' reads contending with its
    own, and the slowest CTA sets the pace), at ``dsmem_gbps``. Fitted on the residuals of
    bench/results/raw/kcluster-probe-h200.json (H200: 2 - 8 CTAs, 64x128 - 128x256 tiles,
    the measured time less the model's price without a fix-up)."""
    return dev.kcluster_us + (2 + kc) * bm * bn * 4 / (dev.dsmem_gbps * 1e3)


def _together(ctas: int, sk: int, split: int | None) -> bool:
    """Whether a launch of ``ctas`` CTAs sharing ``sk`` tiles adds each tile's partials
    together: a ``split`` config whose shares are whole tiles' k chunks, at least
    :data:`~cutemma.kernels.sm90.streamk.TOGETHER_MIN` to a tile (as the kernel decides).

    >>> _together(140, 28, 8), _together(140, 28, None), _together(112, 28, 4)
    (True, False, False)
    """
    return _aligned(ctas, sk, split) and ctas // sk >= TOGETHER_MIN


def _aligned(ctas: int, sk: int, split: int | None) -> bool:
    """Whether a launch of ``ctas`` CTAs sharing ``sk`` tiles cuts each tile into the same
    k chunks (a ``split`` config, as many CTAs to each tile).

    >>> _aligned(132, 66, 16), _aligned(132, 66, None), _aligned(132, 160, 16)
    (True, False, False)
    """
    return split is not None and ctas >= sk and ctas % sk == 0


def _reads_once(swap: bool, rows: int, tiles_n: int, ctas: int, sk: int, split: int | None) -> bool:
    """Whether stream-K's shares read no operand byte twice: :func:`_aligned` shares (every
    shared tile cut into the same k chunks, the CTAs of a chunk starting at the same k
    together, so that tiles sharing an operand slice meet in L2 as whole tiles do) of a
    swapped kernel (the CTAs of a k chunk read that chunk of the weights and of the tokens
    at once, over one token tile or several), or of an unswapped kernel on more than
    :data:`READS_ONCE_ROWS` ``rows``.

    Over the H200 calibration sets, pricing the swapped column's re-reads as other shares'
    had the model take unswapped tiles at 32-64 tokens that ran 10-35% slower (the decode
    set's picks 0.968 -> 1.062 of the peer without them; raw/calibrate-h200-{decode,named,
    s35,s36}.json). Unswapped aligned shares measured 0.88-0.90 of their price with the
    re-reads and 0.93-1.05 without (medians over the 23 sets, the long-K ones at 1.02-1.05).
    On the sweeps' worst long-K calls the shares the model priced dearest for their
    re-reads ran fastest: (1287, 848, 22064) 128x224 over 3 CTAs a tile 0.87 of cuBLAS where
    the pick, whole 64x144, ran 0.57 (bench/results/raw/wide-split-h200.json). Over 86
    calls whose pick reading once moved (drawn, and the sweeps' worst), those of 129 rows
    or more ran 1.12 times as fast, those of at most 128 rows 0.93
    (raw/reads-once-ab-tm2-*-h200.json, where the rule asked two tile rows); held out,
    on 80 calls drawn after the rule was set (seeds 742791941, 2091543497), the moved picks
    ran 1.08 times as fast, 51 of them faster (raw/reads-once-ab-{drawn,longk}-h200.json).
    Swapped kernels of several token tiles: over the calibration sets the model's choices
    went 0.8759 -> 0.8776 of the peer (long-K sets +1-3%, skinny +1%, mid-tmat -0.2%);
    held out on 40 drawn calls whose pick that moved (seed 2559650963, 228 of 18,000 drawn
    calls moved): 0.826 -> 0.869 of cuBLAS, 31 faster (raw/reads-once-swapped-ab-h200.json).

    >>> _reads_once(True, 16, 1, 132, 66, 16), _reads_once(False, 768, 11, 132, 66, 16)
    (True, True)
    >>> _reads_once(False, 128, 66, 132, 66, 16), _reads_once(False, 768, 11, 132, 66, None)
    (False, False)
    """
    return (swap or rows > READS_ONCE_ROWS) and _aligned(ctas, sk, split)


# unswapped aligned shares read once on calls of more rows than this (_reads_once); on
# calls of one 128-row tile or fewer (where the swapped kernels serve) they ran slower than
# priced so
READS_ONCE_ROWS = 128


def _fix_us(bm: int, bn: int, ctas: int, sk: int, split: int | None, dev: Device) -> float:
    """What the fix-up adds to the critical path of ``sk`` tiles shared by ``ctas`` CTAs:
    where there are more shared tiles than CTAs, each CTA's share still ends inside a tile
    that another finishes, so it adds one partial at least."""
    if _together(ctas, sk, split):
        return _together_us(bm, bn, dev)
    return _partial_us(bm, bn, dev) * max(1, ctas // sk)


def best(
    configs: tuple[Sm90Config, ...],
    m: int,
    n: int,
    k: int,
    dtype: str,
    batch: int = 1,
    kind: str = DEFAULT_KIND,
    rows16: tuple[bool, bool] = (False, False),
) -> tuple[Sm90Config, float]:
    """(the config of ``configs`` with the least predicted time, that time in seconds);
    ties go to the earlier config. ``rows16``: as :func:`predict`'s.

    >>> from cutemma.kernels.space import candidates
    >>> best(candidates(8192, 8192, 8192, "bf16"), 8192, 8192, 8192, "bf16")[0].block_m
    128
    """
    if not isinstance(configs, tuple | list) or not configs:
        raise TiledMmaError(
            f"cost model: best() of {type(configs).__name__} {configs!r:.60}: no configs; give "
            "a tuple of at least one Sm90Config (space.candidates' answer)"
        )
    dev = device(kind)  # (predict's steps, each asked once for all the configs)
    _check_call(m, n, k, batch, "best")
    if (
        not isinstance(dtype, str)
        or dtype not in ATOMS_SM90
        or not all(isinstance(c, Sm90Config) for c in configs)
    ):
        raise TiledMmaError(
            f"cost model: best() prices Sm90Configs of a dtype of {sorted(ATOMS_SM90)}; got "
            f"{sorted({type(c).__name__ for c in configs})} and {dtype!r}"
        )
    check_rows16(rows16, "cost model: best")
    frees = [_shape_free(c, dtype, kind) for c in configs]
    timed = [(price(f, c, m, n, k, dtype, batch, dev, 2, rows16), i)
             for i, (f, c) in enumerate(zip(frees, configs))]  # fmt: skip
    t, i = min(timed)
    return configs[i], t


def price_table(
    configs: tuple[Sm90Config, ...],
    dtype: str,
    kind: str = DEFAULT_KIND,
    rows16: tuple[bool, bool] = (False, False),
) -> tuple:
    """What :func:`cheapest` needs of ``configs`` whatever the shape (of calls whose rows
    are as ``rows16`` says, :func:`predict`): the dtype's and device's constants
    (:func:`_basis`), and the configs grouped by tile (rows, columns, k tile, rate, swap,
    cluster pairs), plain tiles then swapped ones, in index order, each group with the
    rows of a call up to which another tile prices it out (:func:`_dominates`), its k
    tile's microseconds, its first whole config's index (-1: none) and its stream-K configs
    (:func:`_shared_part`). Build it once per set of configs: a pick then prices them all
    in one call (cached by the tuple itself: the space hands a pick one of a few cached
    tuples, and hashing its configs would cost more than the look-up saves; and per what
    the model reads of the configs, which a few tuples share).

    >>> from cutemma.kernels.space import candidates
    >>> found = candidates(4096, 4096, 4096, "e4m3")
    >>> basis, ((swapped, groups),) = price_table(found, "e4m3")
    >>> swapped, len(groups) < len(found), price_table(found, "e4m3") is price_table(found, "e4m3")
    (False, True, True)
    """
    key = (id(configs), dtype, kind, rows16)
    hit = _TABLES.get(key)
    if hit is not None and hit[0] is configs:
        return hit[1]
    if any(c.kcluster > 1 for c in configs):  # (cheapest's arithmetic has no kcluster term)
        raise TiledMmaError(
            "cost model: price_table of kcluster configs; price those with best() or predict() "
            "(the pick weighs space.kcluster_kernels apart)"
        )
    if any(c.cluster > 2 for c in configs):  # (cheapest's grid is every SM)
        raise TiledMmaError(
            "cost model: price_table of clusters of 4, whose persistent grid is not every SM's; "
            "price those with quad_best(), best() or predict()"
        )
    table = _price_table(configs, dtype, kind, rows16)
    if len(_TABLES) >= _TABLES_MAX:
        _TABLES.clear()
    _TABLES[key] = (configs, table)  # (the tuple kept alive: its id stays its own)
    return table


_TABLES: dict[tuple, tuple] = {}
_TABLES_MAX = 8192  # one per swapped class too: space._swapped_of_class's size


@cache
def _basis(eb: int, kind: str) -> tuple:
    """(element bytes, the device's constants as :func:`cheapest` reads them): one tuple per
    dtype size and device kind, so that a pick's tables share it."""
    dev = device(kind)
    constants = (dev.sms, dev.sharpness, 1 / dev.sharpness, dev.launch_us, dev.reread)
    return eb, constants + (dev.tile_us, dev.dram_gbps * 1e3, dev.load_gbps * 1e3)


def _price_table(
    configs: tuple[Sm90Config, ...], dtype: str, kind: str, rows16: tuple[bool, bool]
) -> tuple:
    if dtype not in ATOMS_SM90 or not all(isinstance(c, Sm90Config) for c in configs):
        raise TiledMmaError(
            f"cost model: price_table() takes Sm90Configs and a dtype of {sorted(ATOMS_SM90)}; "
            f"got {sorted({type(c).__name__ for c in configs})} and {dtype!r}"
        )
    check_rows16(rows16, "cost model: price_table")
    eb = ATOMS_SM90[dtype][1]
    # what the model reads of each config (a swapped class's kernels differ from another's
    # in their ring and hints, not their prices: one table serves them all)
    read = [
        (
            c.block_m,
            c.block_n,
            c.k_tiles[eb],
            c.stream_k,
            c.split,
            c.swap_ab,
            c.cluster,
            c.multicast,
            c.schedule,
            c.consumers_n,
        )
        for c in configs
    ]  # fmt: skip (schedule, consumers_n: tile_class)
    key = (tuple(read), dtype, kind, rows16)
    table = _ALIKE.get(key)
    if table is None:
        if len(_ALIKE) >= _TABLES_MAX:
            _ALIKE.clear()
        table = _ALIKE[key] = _new_price_table(configs, dtype, kind, rows16)
    return table


_ALIKE: dict[tuple, tuple] = {}  # (a table per what the model reads of its configs)


def _new_price_table(
    configs: tuple[Sm90Config, ...], dtype: str, kind: str, rows16: tuple[bool, bool]
) -> tuple:
    dev = device(kind)
    eb = ATOMS_SM90[dtype][1]
    clamped = type_class(dtype) in CLAMPED
    groups: dict[tuple, tuple[list, list, tuple | None]] = {}
    for i, cfg in enumerate(configs):
        rate, _ = _shape_free(cfg, dtype, kind)
        bm, bn, bk = cfg.block_m, cfg.block_n, cfg.k_tiles[eb]
        # price's own expressions, so that each figure is the same float
        r16 = rows16[::-1] if cfg.swap_ab else rows16
        k_us = _k_us(bm, bn, loaded_rows(cfg, r16, dev), bk, eb, rate, dev)
        key = (cfg.swap_ab, bm, bn, bk, k_us, *pairs(cfg), rate)
        # what prices a k tile of a call with fewer rows than the tile (loaded_rows' extent)
        clamp = _clamp_terms(cfg, r16, bk, eb, rate, dev) if clamped else None
        whole, shared, _ = groups.setdefault(key, ([], [], clamp))
        (shared if cfg.stream_k else whole).append((i, cfg.split) if cfg.stream_k else i)
    views: dict[bool, list] = {False: [], True: []}
    # (in the order of their configs: a whole price at a later index than the best one's
    # and no cheaper in compute cannot win, and _whole_prices skips it)
    for key, (whole, shared, clamp) in groups.items():
        swap, bm, bn, bk, k_us, pm, pn, _ = key
        # a later whole config of the same tile costs the same: only the first can win
        first = whole[0] if whole else -1
        part = _shared_part(first, shared, bm, bn, dev) if shared else None
        # (a cluster's tiles come in pairs; its call costs dev.cluster_us more: price's)
        paired = (pm, pn, dev.cluster_us) if pm * pn > 1 else None
        views[swap].append((bm, bn, bm * pm, bn * pn, paired, bk, k_us, clamp, first, part))
    for found in views.values():
        found[:] = [(_dominated_rows(g, found, dev), *g) for g in found]
    # (the problem as each view's kernels see it: plain, then swapped)
    return _basis(eb, kind), tuple((swap, tuple(g)) for swap, g in views.items() if g)


def _dominated_rows(b: tuple, groups: list, dev: Device) -> int:
    """The most rows (as its kernels see the problem) of a call on which another tile of
    ``groups`` prices every config of tile ``b`` no lower, at an earlier index
    (:func:`_dominates`): the pick then skips ``b``; 0 where none does."""
    return max((a[0] for a in groups if _dominates(a, b, dev)), default=0)


def _dominates(a: tuple, b: tuple, dev: Device) -> bool:
    """Whether tile ``a`` costs no more than tile ``b`` config for config, each at an earlier
    index, on every call of at most ``a``'s rows: both are then one tile row of the same
    columns and k tile (the same tiles, shares and splits), and ``b``'s k tile (its flops
    more, its loaded rows the same), fix-ups and re-read bytes cost as much or more.
    Over such calls a 64-row tile prices the 128- and 256-row ones of its width out."""
    abm, abn, _, abnp, apaired, abk, ak_us, aclamp, afirst, apart = a
    bbm, bbn, _, bbnp, bpaired, bbk, bk_us, bclamp, bfirst, bpart = b
    if apaired is not None or bpaired is not None:  # (one tile row: no pairs along M)
        if not (apaired and bpaired and apaired[0] == bpaired[0] == 1):
            return False
    if not (abm < bbm and (abn, abnp, apaired, abk) == (bbn, bbnp, bpaired, bbk)):
        return False
    if ak_us > bk_us or (aclamp is None) != (bclamp is None):
        return False
    if aclamp is not None and (aclamp[1:] != bclamp[1:] or aclamp[0] > bclamp[0]):
        return False
    if _partial_us(abm, abn, dev) > _partial_us(bbm, bbn, dev):
        return False
    if _together_us(abm, abn, dev) > _together_us(bbm, bbn, dev):
        return False
    if bfirst >= 0 and not 0 <= afirst < bfirst:  # b's whole kernel: a's, earlier
        return False
    if bpart is None:
        return True
    # b's stream-K configs: a's of each split, earlier; sharing nothing, a's whole price
    if apart is None or apart[5] != bpart[5] or apart[0] >= bpart[0]:
        return False
    return all(i < j for i, j in zip(apart[4], bpart[4]))


def _shared_part(first: int, shared: list, bm: int, bn: int, dev: Device) -> tuple:
    """A tile's stream-K configs as :func:`cheapest` reads them: the index that takes the
    whole kernel's price where stream-K shares nothing (the earlier of the whole and the
    first stream-K config); the least fix-up any split adds; the first stream-K index; the
    tile's rows and columns; the indices and splits; a partial's and a fix-up together's
    microseconds; the most CTAs a split gives a tile; and the splits' prices
    (:func:`_split_prices`), filled in as calls ask for them, one per room up to that many
    CTAs, with all the tiles in one wave or not."""
    indices, splits = tuple(i for i, _ in shared), tuple(s for _, s in shared)
    idle = indices[0] if first < 0 or indices[0] < first else first
    partial_us, together_us = _partial_us(bm, bn, dev), _together_us(bm, bn, dev)
    least_fix = min(partial_us, together_us)
    cap = max(s or SPLIT_MAX for s in splits)  # the most CTAs a split gives a tile
    prices = [None] * (2 * cap + 2)  # (a list look-up: a pick asks for one per shared tile)
    return (idle, least_fix, indices[0], bm + bn, indices, splits, partial_us, together_us, cap,
            prices)  # fmt: skip


def cheapest(
    tables: tuple[tuple, ...], m: int, n: int, k: int, batch: int = 1
) -> tuple[float, int, int]:
    """(the least predicted seconds of the configs of ``tables`` (each a :func:`price_table`,
    all of one element size and device kind) on an (m, n, k) call (``batch`` of them),
    which table, the index there of the config that takes it; ties go to the earlier table,
    then the earlier config): :func:`best` in two passes, each figure computed as
    :func:`price` computes it. The first prices the tiles' whole kernels
    (:func:`_whole_prices`) and keeps the stream-K tiles that share something and may come
    under the best; the second prices their splits, least bound first, until a bound comes
    above the best price (:func:`_shared_prices`). A stream-K config that shares nothing
    costs what its tile's whole kernel costs, so such a tile is priced once. Bounds skip
    only what cannot win a tie either: see the passes for why each holds.

    >>> from cutemma.kernels.space import candidates
    >>> found = candidates(512, 8192, 8192, "bf16")
    >>> t, _, i = cheapest((price_table(found, "bf16"),), 512, 8192, 8192)
    >>> (found[i], t) == best(found, 512, 8192, 8192, "bf16")
    True
    """
    if not (isinstance(tables, tuple) and tables):
        raise TiledMmaError(
            f"cost model: cheapest() of {tables!r:.60}; give a tuple of at least one price_table"
        )
    _check_call(m, n, k, batch, "cheapest")
    return _cheapest(*_views(tables), m, n, k, batch)


def _views(tables: tuple[tuple, ...]) -> tuple[tuple, tuple[tuple, ...]]:
    """:func:`cheapest`'s ``tables`` as their one basis and their views in order, each as
    (its table's position, swap, groups): a pick keeps them with its tables."""
    basis, views = tables[0][0], []
    for w, (table_basis, table) in enumerate(tables):
        if table_basis is not basis:
            raise TiledMmaError(
                "cost model: cheapest() prices tables of one element size and device kind"
            )
        for swap, groups in table:
            views.append((w, swap, groups))
    return basis, tuple(views)


def _cheapest(
    basis: tuple, views: tuple[tuple, ...], m: int, n: int, k: int, batch: int
) -> tuple[float, int, int]:
    """:func:`cheapest` of tables given as :func:`_views` gives them."""
    eb, (grid, p, _, _, reread, tile_us, dram, _) = basis
    once0 = batch * (m + n) * k * eb  # A and B once; the swapped problem's are the same
    d0 = ((once0 + batch * m * n * 2) / dram) ** p
    bounded = _bounded(batch, k, grid, tile_us, reread)
    best, later = _whole_prices(basis, views, m, n, k, batch, d0, bounded)
    if later:
        best = _shared_prices(later, best, basis, m, n, k, batch, once0, d0, bounded)
    return best


def _us_limit(t: float, d0: float, p: float, ip: float, launch: float) -> float:
    """The compute microseconds past which every price whose DRAM term (raised to the
    sharpness ``p``; ``ip`` is 1 / p) is at least ``d0`` comes above ``t`` seconds, a
    millionth over for rounding: -1 where that term alone does; inf where rounding could tie
    such a price with ``t`` (the two terms' parts too close to call)."""
    x = t * 1e6 - launch
    if not 1e-3 * launch < x < math.inf:
        return math.inf
    room = x**p - d0
    if room > 1e-3 * d0:
        return room**ip * (1 + 1e-6)
    return -1.0 if room < -1e-3 * d0 else math.inf


def _whole_prices(
    basis: tuple, views: tuple, m: int, n: int, k: int, batch: int, d0: float, bounded: bool
) -> tuple[tuple[float, int, int], list[tuple]]:
    """:func:`cheapest`'s first pass: the least whole price (seconds, table, index), and the
    stream-K tiles that share something and may still come under it, each with the least
    its splits can cost (every SM busy on an equal share of the tiles' k iterations, then
    the least fix-up). Whole prices share a DRAM term (``d0``): one no cheaper in compute
    than the best so far comes to its price at least, and wins only a tie at an earlier
    index; so does a stream-K tile's least. (The tables list their groups in index order:
    later ones rarely need the price itself.) ``views``: :func:`_views`'; ``bounded``:
    :func:`_bounded`'s."""
    eb, (grid, p, ip, launch, _, tile_us, _, load) = basis
    one, full = batch == 1, FULL_WAVE  # (the hot loop's names as locals)
    bt, bw, bi, bu = math.inf, -1, -1, math.inf  # (bu: the best whole price's compute)
    above = math.inf  # (bu, with a bound's slack for rounding)
    later = []
    k1, kt_bk, kt = k - 1, 0, 0
    for w, swap, groups in views:
        mk, nk = (n, m) if swap else (m, n)  # the problem as the kernel sees it
        mk1, nk1 = mk - 1, nk - 1  # (a ceiling division as (x - 1) // d + 1)
        for dominated, bm, bn, bmp, bnp, paired, bk, k_us, clamp, index, part in groups:
            if mk <= dominated:  # (another tile prices every config lower, earlier)
                continue
            if clamp is not None and (mk < bm or nk < bn):  # fewer rows than the tile
                # (loaded_rows and _k_us inline, the same floats)
                flop_us, bkeb, ha, hb, ca, cb = clamp
                if bkeb:  # (whole rows: their sum and bytes exact in ints)
                    k_us = ((mk if mk < bm else bm) + (nk if nk < bn else bn)) * bkeb / load
                else:  # (x / 1 is x)
                    a = (mk if mk < bm else bm) * ha / ca
                    k_us = (a + (nk if nk < bn else bn) * hb / cb) * bk * eb / load
                if k_us < flop_us:  # (max(): the flops or the loads, whichever is slower)
                    k_us = flop_us
            if bk != kt_bk:  # (a view's tiles mostly share their k tile)
                kt_bk, kt = bk, k1 // bk + 1
            tm, tn = mk1 // bmp + 1, nk1 // bnp + 1
            if paired is not None:  # (a cluster's whole pairs)
                tm, tn = tm * paired[0], tn * paired[1]
            tiles = tm * tn
            whole_tile = kt * k_us + tile_us
            waves = -(-tiles // grid)
            if part is not None:
                if tiles / (waves * grid) >= full:  # (shared_tiles')
                    index = part[0]  # nothing shared: the earlier of whole and stream-K
                else:
                    low = tiles * (whole_tile - tile_us) / grid + tile_us + part[1]
                    if low <= above or not bounded or (w == bw and part[2] < bi):
                        later.append((low, w, swap, tn, kt, k_us, whole_tile, tiles, part))
            if index >= 0:
                us = (waves if one else -(-tiles * batch // grid)) * whole_tile
                if paired is not None:
                    us += paired[2]
                if us < bu or (w == bw and index < bi):  # (bw <= w: tables in order)
                    t = ((us**p + d0) ** ip + launch) * 1e-6
                    if t < bt or (t == bt and (w, index) < (bw, bi)):
                        bt, bw, bi, bu = t, w, index, us
                        above = us * _ROUNDING
    return (bt, bw, bi), later


def _bounded(batch: int, k: int, grid: int, tile_us: float, reread: float) -> bool:
    """Whether :func:`cheapest`'s stream-K bounds hold: one problem whose shares fit
    ITERS_MAX (sk_split's), on a device whose tile and re-read costs take no time off."""
    return batch == 1 and k <= ITERS_MAX // (2 * grid) and tile_us >= 0 and reread >= 0


# a bound's relative slack for rounding (its float against the exact figure's)
_ROUNDING = 1 + 1e-12


def _shared_prices(
    later: list[tuple],
    best: tuple[float, int, int],
    basis: tuple,
    m: int,
    n: int,
    k: int,
    batch: int,
    once0: int,
    d0: float,
    bounded: bool,
) -> tuple[float, int, int]:
    """:func:`cheapest`'s second pass: ``best`` or a cheaper stream-K price, of the tiles of
    :func:`_whole_prices` whose least price still comes to the best so far, least first."""
    eb, constants = basis
    grid, p, ip, launch, reread, tile_us, dram, _ = constants
    bt, bw, bi = best
    out = batch * m * n * 2
    ordered = reread >= 0  # (an aligned share's DRAM term no more than others')
    if len(later) > 1:
        later.sort(key=_FIRST)
    limit = _us_limit(bt, d0, p, ip, launch)
    for low, w, swap, tn, kt, k_us, whole_tile, tiles, part in later:
        if low > limit and bounded:
            break
        idle, least_fix, _, bmn, indices, splits, partial_us, together_us, cap, prices = part
        sk = shared_tiles(tiles // tn, tn, grid)  # (> 0: _whole_prices kept no full wave)
        if sk * kt > ITERS_MAX:  # nothing shared after all: the whole price, at ``idle``
            t = (((-(-tiles * batch // grid) * whole_tile) ** p + d0) ** ip + launch) * 1e-6
            if t < bt or (t == bt and (w, idle) < (bw, bi)):
                bt, bw, bi = t, w, idle
            continue
        per_sk = grid // sk  # (the CTAs the grid holds per shared tile)
        one_wave, room = tiles <= grid, per_sk if per_sk < kt else kt
        done = (tiles * batch - sk) // grid * whole_tile
        # the least its splits can take (the most CTAs a split gives a tile and the least
        # fix-up, or the grid's CTAs and their partials) at the least DRAM term: a price at
        # least its splits' (each figure's floats in the same order)
        if room:
            least = done + -(-kt // (room if room < cap else cap)) * k_us + tile_us + least_fix
        if not room or one_wave:  # (one wave: split None takes the grid)
            grid_us = done + -(-sk * kt // grid) * k_us + tile_us + partial_us * (per_sk or 1)
            least = grid_us if not room or grid_us < least else least
        if ordered and least > limit:  # (every DRAM term here at least d0: _us_limit's)
            continue
        # (shares re-read a part of their operands but where _reads_once says not)
        own = sk * bmn * k * eb - once0
        d = ((once0 + reread * (own if own > 0 else 0) + out) / dram) ** p
        d_aligned = d0 if swap or m > READS_ONCE_ROWS else d  # (_reads_once)
        if ((least**p + (d if d < d_aligned else d_aligned)) ** ip + launch) * 1e-6 > bt:
            continue
        at = (room if room < cap else cap) + (cap + 1 if one_wave else 0)
        how = prices[at]
        if how is None:  # (past cap CTAs every room prices alike: _split_prices)
            how = prices[at] = _split_prices(splits, one_wave, room, ordered)
        for j, per, together, aligned in how:
            if per:  # sk * per CTAs: per to a tile
                us = -(-kt // per) * k_us
            else:  # the grid's CTAs, whatever the tiles
                us = -(-sk * kt // grid) * k_us
                per = per_sk or 1
            us = done + us + tile_us + (together_us if together else partial_us * per)
            if ordered and us > limit:  # (as above: it comes above the best)
                continue
            t = ((us**p + (d_aligned if aligned else d)) ** ip + launch) * 1e-6
            if t < bt or (t == bt and (w, indices[j]) < (bw, bi)):
                bt, bw, bi = t, w, indices[j]
                limit = _us_limit(t, d0, p, ip, launch)
    return bt, bw, bi


_FIRST = itemgetter(0)


@lru_cache(maxsize=4096)
def _split_prices(
    splits: tuple, one_wave: bool, room: int, ordered: bool
) -> tuple[tuple[int, int, bool, bool], ...]:
    """The prices of stream-K configs of ``splits`` that can win where some tiles are
    shared (:func:`~cutemma.kernels.sm90.streamk.split_ctas`; ``room`` 0: more of them
    than CTAs): (the position of the first split of each, the CTAs it gives a tile (0: the
    grid's, whatever the tiles), whether its fix-up adds the partials together
    (:func:`_fix_us`), whether its shares are :func:`_aligned`). Splits that come to the
    same price cost the same, and the earlier wins the tie; so does an earlier split that
    adds its partials together over as many CTAs or more, or (``ordered``: aligned shares'
    DRAM term no more than others', ``reread`` >= 0) one aligned over as many CTAs that
    adds as many partials. One tuple per ``room`` up to the most CTAs a split gives a tile
    (past it they all price the same).

    >>> _split_prices((16, 8, 4, None), False, 40, True)
    ((0, 16, True, True), (2, 4, False, True))
    >>> _split_prices((16, 8, 4, None), True, 3, True), _split_prices((16, 8, 4, None), False, 0, True)
    (((0, 3, False, True), (3, 0, False, False)), ((0, 0, False, False),))
    """
    cap = max(s or SPLIT_MAX for s in splits)
    if room > cap:
        return _split_prices(splits, one_wave, cap, ordered)
    # one shared tile on a grid that holds room of them (or room 0: two on a grid of one)
    sk, grid = (1, room) if room else (2, 1)
    found: dict[tuple, int] = {}
    for j, (ctas, split) in enumerate(zip(split_ctas(sk, one_wave, room, grid, splits), splits)):
        aligned = _aligned(ctas, sk, split)
        if not room or (one_wave and split is None):
            how = (0, False, aligned)
        else:  # _fix_us's rule
            how = (ctas // sk, aligned and ctas // sk >= TOGETHER_MIN, aligned)
        found.setdefault(how, j)
    kept = []
    for how, j in found.items():
        if not any(_outprices(was, how, ordered) for was, _ in kept):
            kept.append((how, j))
    return tuple((j, *how) for how, j in kept)


def _outprices(was: tuple, how: tuple, ordered: bool) -> bool:
    """Whether a split priced as ``was`` (per tile CTAs, together, aligned) costs no more
    than a later one priced as ``how`` on every call: more CTAs to a tile, both adding
    their partials together over aligned shares; or the same CTAs and partials, ``was``'s
    aligned (its DRAM term no more where ``ordered``)."""
    (per0, together0, aligned0), (per, together, aligned) = was, how
    if not per or not per0:  # (the grid's CTAs)
        return False
    if together0 and together and aligned0 and aligned:
        return per0 >= per
    return ordered and per0 == per and aligned0 and not together0 and not together


__all__ = [
    "Device",
    "best",
    "cheapest",
    "check_rows16",
    "device",
    "efficiency",
    "epilogue_us",
    "loaded_rows",
    "pairs",
    "predict",
    "predict_fused",
    "price",
    "price_table",
    "shape_free",
    "tile_class",
    "type_class",
]
