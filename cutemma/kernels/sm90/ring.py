"""The stage ring of the sm90 GEMM as data: who waits on which mbarrier with which parity.

Each stage ``s`` has a *full* barrier (the producer arms it with ``expect_tx`` of the
stage's bytes; the TMA loads complete the transaction) and an *empty* barrier (every
consumer thread arrives once it no longer reads the stage). Both sides walk the ring
in the same order — tile after tile, k tile after k tile — with ``(stage, phase)``
advancing by :func:`advance`: the phase bit flips each time the stage index wraps.

A barrier's phase of parity ``q`` counts as complete for ``try_wait.parity q`` once it
has completed, and the phase *before* the first (parity 1) counts as complete from the
start (PTX ISA 9.7.13.15.16 ``mbarrier.test_wait/try_wait``: "the phase indicated by
phaseParity ... of the current or the immediately preceding phase"). Hence the producer
waits on ``empty`` with parity ``phase ^ 1`` (its first pass over the ring finds every
stage free) and consumers wait on ``full`` with parity ``phase``.

Consumers keep one wgmma batch in flight (``wait_group 1``), so a stage is released one
k tile late (``release_lag``); the last stage of a tile after ``wait_group 0``.

Pingpong (``Sm90Config(schedule="pingpong")``): the two consumer warpgroups take the
CTA's tiles in turn (warpgroup w: tiles w, w + 2, ...), each releasing its stages alone
(one arrival per stage use); each skips the k tiles of the other's tile in the ring, and
an *order barrier* (two named barriers, one per warpgroup, counted over both) lets a
warpgroup start a tile's mainloop only once the other has issued its previous tile's last
wgmma: :func:`pingpong_consumer_ops`.

:func:`producer_ops` and :func:`consumer_ops` spell these orders out for a list of tiles;
the generated kernel's loops do the same (``cutemma.kernels.sm90.source``), and
``tests/kernels/ring_sim.py`` runs them on a model of mbarriers, TMA and wgmma.

>>> advance(3, 0, 4), advance(1, 1, 4)
((0, 1), (2, 1))
>>> producer_ops([1], 2)
[('wait', 'empty', 0, 1), ('expect_tx', 0), ('load', 0, 0, 0)]
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Role:
    """One side of the ring: its barrier waits and arrivals.

    ``wait_flip``: the parity waited for is ``phase ^ wait_flip``. ``arrivals``: the
    barrier arrivals this role contributes per stage use. ``arrive_every``: consumers
    arrive once per this many threads (128: one thread per warpgroup, after
    ``wgmma.wait_group``, which retires the warpgroup's whole wgmma and so all its shared
    reads). ``release_lag``: k tiles between reading a stage and releasing it.
    """

    name: str
    waits_on: str
    start_phase: int
    wait_flip: int
    arrivals: int
    arrive_every: int = 1
    release_lag: int = 0


PRODUCER = Role("producer", "empty", start_phase=0, wait_flip=1, arrivals=1)
CONSUMER = Role(
    "consumer", "full", start_phase=0, wait_flip=0, arrivals=1, arrive_every=128, release_lag=1
)


def release_lag(promote: bool, overlap: bool = False) -> int:
    """k tiles between reading a stage and releasing it: promoted fp8 retires every batch
    (``wait_group 0``) before adding it into f32, so it releases the stage just read;
    promoted with ``overlap`` (``Sm90Config(promote="overlap")``: two wgmma sets, one batch
    in flight) releases a stage one k tile late, like the plain loop.

    >>> release_lag(False), release_lag(True), release_lag(True, overlap=True)
    (1, 0, 1)
    """
    return 0 if promote and not overlap else CONSUMER.release_lag


def advance(stage: int, phase: int, stages: int) -> tuple[int, int]:
    """The next ring slot: stage + 1, the phase bit flipped on wrapping.

    >>> advance(0, 0, 2)
    (1, 0)
    """
    stage += 1
    if stage == stages:
        return 0, phase ^ 1
    return stage, phase


def producer_ops(k_tiles: list[int], stages: int) -> list[tuple]:
    """The producer's order over tiles with ``k_tiles[i]`` k tiles each.

    ``('wait', 'empty', s, parity)``, ``('expect_tx', s)``, ``('load', s, tile, kt)``.

    >>> producer_ops([2], 1)
    [('wait', 'empty', 0, 1), ('expect_tx', 0), ('load', 0, 0, 0), ('wait', 'empty', 0, 0), ('expect_tx', 0), ('load', 0, 0, 1)]
    """
    ops, stage, phase = [], 0, PRODUCER.start_phase
    for tile, kts in enumerate(k_tiles):
        for kt in range(kts):
            ops += [
                ("wait", "empty", stage, phase ^ PRODUCER.wait_flip),
                ("expect_tx", stage),
                ("load", stage, tile, kt),
            ]
            stage, phase = advance(stage, phase, stages)
    return ops


def consumer_ops(k_tiles: list[int], stages: int, release_lag: int | None = None) -> list[tuple]:
    """One consumer warpgroup's order: wait full, wgmma batch, keep one batch in flight,
    release the stage read one k tile earlier; after a tile, drain and release the last.
    ``release_lag`` 0 (promoted fp8: ``wait_group 0`` every k tile): release the stage
    just read, once its batch is retired.

    ``('wait', 'full', s, parity)``, ``('mma', s, tile, kt)``, ``('commit',)``,
    ``('wait_group', n)``, ``('arrive', 'empty', s)``, ``('epilogue', tile)``.

    >>> consumer_ops([1], 2)
    [('wait', 'full', 0, 0), ('mma', 0, 0, 0), ('commit',), ('wait_group', 1), ('wait_group', 0), ('arrive', 'empty', 0), ('epilogue', 0)]
    """
    ops, stage, phase = [], 0, CONSUMER.start_phase
    for tile, kts in enumerate(k_tiles):
        tile_ops, stage, phase = _tile_ops(tile, kts, stage, phase, stages, release_lag)
        ops += tile_ops + [("epilogue", tile)]
    return ops


def _tile_ops(tile, kts, stage, phase, stages, release_lag=None):
    """A consumer's mainloop of one tile from ring slot (stage, phase), ending with every
    wgmma retired and every stage released; also returns the slot after it."""
    lag = CONSUMER.release_lag if release_lag is None else release_lag
    ops, prev = [], None
    for kt in range(kts):
        ops += [
            ("wait", "full", stage, phase ^ CONSUMER.wait_flip),
            ("mma", stage, tile, kt),
            ("commit",),
            ("wait_group", lag),
        ]
        if lag == 0:
            ops.append(("arrive", "empty", stage))
        elif prev is not None:
            ops.append(("arrive", "empty", prev))
        prev = stage
        stage, phase = advance(stage, phase, stages)
    ops.append(("wait_group", 0))
    if lag:
        ops.append(("arrive", "empty", prev))
    return ops, stage, phase


def split_consumer_ops(k_tiles: list[int], stages: int) -> list[tuple]:
    """``Sm90Config(promote="split")``: each k tile is two batches from one stage, lo then
    hi. ``wait_group 1`` after hi(kt) retires lo(kt); after lo(kt + 1) it retires hi(kt),
    and only then is stage kt released (the plain loop's lag 1); a tile ends with
    ``wait_group 0`` and the release of its last stage.

    >>> split_consumer_ops([1], 2)[:6]
    [('wait', 'full', 0, 0), ('mma', 0, 0, 0), ('commit',), ('mma', 0, 0, 0), ('commit',), ('wait_group', 1)]
    """
    ops, stage, phase = [], 0, CONSUMER.start_phase
    for tile, kts in enumerate(k_tiles):
        prev = None
        for kt in range(kts):
            ops += [("wait", "full", stage, phase ^ CONSUMER.wait_flip), ("mma", stage, tile, kt),
                    ("commit",)]  # fmt: skip
            if prev is not None:  # hi(kt - 1) retired: its stage is read
                ops += [("wait_group", 1), ("arrive", "empty", prev)]
            ops += [("mma", stage, tile, kt), ("commit",), ("wait_group", 1)]
            prev = stage
            stage, phase = advance(stage, phase, stages)
        ops += [("wait_group", 0), ("arrive", "empty", prev), ("epilogue", tile)]
    return ops


def ring_position(k_tiles: list[int], tile: int, stages: int) -> tuple[int, int]:
    """(stage, phase) of the first k tile of ``tile``: the ring advanced by every k tile of
    the tiles before it (what a pingpong warpgroup skips to).

    >>> ring_position([3, 3, 3], 2, 4)
    (2, 1)
    """
    pos = sum(k_tiles[:tile])
    return pos % stages, (CONSUMER.start_phase + pos // stages) % 2


def pingpong_consumer_ops(
    k_tiles: list[int], stages: int, warpgroup: int, release_lag: int | None = None
) -> list[tuple]:
    """Pingpong warpgroup ``warpgroup`` (0 or 1): tiles ``warpgroup``, +2, ... of the CTA's
    list. Before a tile (but the CTA's first) ``('bar_sync', w)``: wait for its turn on order
    barrier w; after issuing the tile's last wgmma, if the CTA has a next tile,
    ``('bar_arrive', 1 - w)``: the other warpgroup's turn. The rest as :func:`consumer_ops`.

    >>> pingpong_consumer_ops([1, 1], 2, 1)
    [('bar_sync', 1), ('wait', 'full', 1, 0), ('mma', 1, 1, 0), ('commit',), ('wait_group', 1), ('wait_group', 0), ('arrive', 'empty', 1), ('epilogue', 1)]
    """
    ops = []
    for tile in range(warpgroup, len(k_tiles), 2):
        if tile > 0:
            ops.append(("bar_sync", warpgroup))
        stage, phase = ring_position(k_tiles, tile, stages)
        tile_ops, _, _ = _tile_ops(tile, k_tiles[tile], stage, phase, stages, release_lag)
        if tile + 1 < len(k_tiles):  # after the tile's last k tile, before the drain
            drain = 1 if tile_ops[-1] == ("wait_group", 0) else 2  # (+ the last release)
            tile_ops.insert(len(tile_ops) - drain, ("bar_arrive", 1 - warpgroup))
        ops += tile_ops + [("epilogue", tile)]
    return ops


def alternate_consumer_ops(
    k_tiles: list[int], stages: int, warpgroup: int, consumers: int, release_lag: int | None = None
) -> list[tuple]:
    """Schedule "alternate": :func:`consumer_ops` (cooperative tiles) with the warpgroups
    taking turns at each k tile's batch: ``('bar_sync', w)`` before warpgroup w's batch (not
    warpgroup 0's first), ``('bar_arrive', (w + 1) % consumers)`` once it is issued (not
    after the CTA's last batch of the last warpgroup).

    >>> alternate_consumer_ops([1], 2, 1, 2)[:4]
    [('wait', 'full', 0, 0), ('bar_sync', 1), ('mma', 0, 0, 0), ('commit',)]
    """
    ops = consumer_ops(k_tiles, stages, release_lag)
    batches = sum(k_tiles)
    out, done = [], 0
    for op in ops:
        if op[0] == "mma" and (warpgroup > 0 or done > 0):
            out.append(("bar_sync", warpgroup))
        out.append(op)
        if op[0] == "commit":
            done += 1
            if warpgroup < consumers - 1 or done < batches:
                out.append(("bar_arrive", (warpgroup + 1) % consumers))
    return out


# named barriers (bar.sync ids; 0 is __syncthreads): the TMA-store epilogue's (cooperative:
# EPI_BAR; pingpong: EPI_BAR + warpgroup) and pingpong's order barrier (ORDER_BAR + the
# warpgroup whose turn it is)
EPI_BAR, ORDER_BAR = 1, 4
