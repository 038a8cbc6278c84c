"""The sm90 ring protocol (cutemma.kernels.sm90.ring) on a model of mbarriers, TMA and wgmma.

Every built-in config's ring depth and TMA copies, many tiles of uneven k-tile counts,
one producer and the config's consumer warpgroups, random interleavings: no deadlock, no
stage reused before its consumers release it, the right phase at every wait, and every
wgmma reads its own (tile, k tile) in order (see ring_sim.py for the rules).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from ring_sim import RingError, run_ring  # noqa: E402

from cutemma.kernels.pick import DEFAULT_SM90, SMALL_SM90  # noqa: E402
from cutemma.kernels.sm90.plan import Sm90Config, Sm90Plan  # noqa: E402
from cutemma.kernels.sm90.ring import (  # noqa: E402
    CONSUMER,
    alternate_consumer_ops,
    consumer_ops,
    pingpong_consumer_ops,
    producer_ops,
    release_lag,
    ring_position,
    split_consumer_ops,
)

CONFIGS = [
    DEFAULT_SM90,
    SMALL_SM90,
    Sm90Config(128, 256, stages=2),
    Sm90Config(64, 128, consumers=1),
    Sm90Config(128, 256, cluster=2),
    Sm90Config(128, 128, stages=2, cluster=2),
    Sm90Config(128, 256, cluster=2, multicast="A"),  # pairs along N share A
    Sm90Config(192, 128, consumers=3),  # 3 consumer warpgroups arrive on each empty barrier
]
PINGPONG = [
    Sm90Config(128, 128, schedule="pingpong"),
    Sm90Config(64, 256, schedule="pingpong", stages=2),
    Sm90Config(64, 128, schedule="pingpong"),
]


def _copies(plan: Sm90Plan) -> list[tuple[int, bool]]:
    """(bytes, multicast) of each load one producer issues per stage."""
    return [
        (plan.tma[w].box_bytes, plan.split(w) > 1) for w in ("A", "B") for _ in plan.tma[w].copies
    ]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.name)
@pytest.mark.parametrize("majors", [("K", "K"), ("M", "N")])
def test_ring_runs_every_config(config, majors):
    plan = Sm90Plan(config, "bf16", *majors)
    rng = random.Random(config.name)
    for seed in range(6):
        k_tiles = [rng.choice([1, 2, 3, plan.stages, plan.stages + 1, 9]) for _ in range(40)]
        mmas = run_ring(
            producer_ops(k_tiles, plan.stages),
            consumer_ops(k_tiles, plan.stages),
            plan.stages,
            config.consumers,
            _copies(plan),
            seed=seed,
            arrive_every=CONSUMER.arrive_every,
            cluster=config.cluster,
        )
        for r in range(config.cluster):
            for c in range(config.consumers):
                mine = [(t, kt) for name, t, kt in mmas if name == f"C{r}.{c}"]
                assert mine == [(t, kt) for t, n in enumerate(k_tiles) for kt in range(n)]


def test_model_catches_a_wrong_parity():
    """A consumer that waits with the producer's parity reads a stage before it lands."""
    k_tiles = [3, 2]
    bad = [
        (op[0], op[1], op[2], op[3] ^ 1) if op[:2] == ("wait", "full") else op
        for op in consumer_ops(k_tiles, 2)
    ]
    with pytest.raises(RingError):
        run_ring(producer_ops(k_tiles, 2), bad, 2, 1, [(16384, False)], seed=1)


def test_model_catches_an_early_release():
    """Releasing the stage just read, before wait_group retires its wgmma, is caught."""
    k_tiles = [4]
    ops = consumer_ops(k_tiles, 2)
    early = []
    for op in ops:
        if op[0] == "arrive":
            continue
        early.append(op)
        if op[0] == "mma":
            early.append(("arrive", "empty", op[1]))
    with pytest.raises(RingError, match="may read"):
        run_ring(producer_ops(k_tiles, 2), early, 2, 1, [(16384, False)], seed=0)


def test_cluster_needs_the_peer_release():
    """With B multicast, a consumer must release the stage on its peer's empty barrier too:
    releasing only its own (twice, so the counts still add up) lets a producer overwrite
    a stage the other CTA still reads, which the model catches."""
    k_tiles = [7, 3, 5]
    copies = [(16384, False), (16384, True)]
    args = (producer_ops(k_tiles, 2), consumer_ops(k_tiles, 2), 2, 1, copies)
    for seed in range(10):  # the kernel's protocol runs
        run_ring(*args, seed=seed, arrive_every=64, cluster=2)
    with pytest.raises(RingError):
        for seed in range(50):
            run_ring(*args, seed=seed, arrive_every=64, cluster=2, release_peers=False)


def test_model_catches_a_deadlock():
    """A consumer that never releases its stages starves the producer."""
    k_tiles = [5]
    ops = [op for op in consumer_ops(k_tiles, 2) if op[0] != "arrive"]
    with pytest.raises(RingError, match="deadlock"):
        run_ring(producer_ops(k_tiles, 2), ops, 2, 1, [(16384, False)], seed=0)


def _pingpong(k_tiles, stages, copies, seed, ops=None, **kw):
    """One pingpong CTA: the producer's order, each warpgroup's own order, 1 release each."""
    ops = ops or [pingpong_consumer_ops(k_tiles, stages, w) for w in (0, 1)]
    kw.setdefault("releasers", 1)
    return run_ring(producer_ops(k_tiles, stages), ops, stages, 2, copies, seed=seed,
                    arrive_every=CONSUMER.arrive_every, **kw)  # fmt: skip


@pytest.mark.parametrize("config", PINGPONG, ids=lambda c: c.name)
def test_pingpong_ring(config):
    """Warpgroup w runs the CTA's tiles w, w + 2, ... in order, through any interleaving, with
    tile counts odd and even (the last order-barrier arrival must match a wait) and k-tile
    counts below, at and above the ring depth (one warpgroup's tile wraps the ring)."""
    plan = Sm90Plan(config, "bf16", "K", "N", "bf16")
    assert plan.tile_wgs == 1 and plan.d_tiles == 2
    rng = random.Random(config.name)
    for seed in range(8):
        k_tiles = [rng.choice([1, 2, 3, plan.stages, plan.stages + 1, 9])
                   for _ in range(rng.choice([1, 2, 7, 30, 31]))]  # fmt: skip
        mmas = _pingpong(k_tiles, plan.stages, _copies(plan), seed)
        for w in (0, 1):
            mine = [(t, kt) for name, t, kt in mmas if name == f"C0.{w}"]
            want = [(t, kt) for t in range(w, len(k_tiles), 2) for kt in range(k_tiles[t])]
            assert mine == want


def test_ring_position_counts_whole_passes():
    """The phase bit flips once per pass over the ring: 9 k tiles over 4 stages = 2 passes
    and 1 stage (phase back to 0), 12 = 3 passes."""
    assert ring_position([4, 5, 1], 2, 4) == (1, 0)
    assert ring_position([6, 6, 1], 2, 4) == (0, 1)


def _mutate(k_tiles, stages, fn):
    return [fn(w, pingpong_consumer_ops(k_tiles, stages, w)) for w in (0, 1)]


def _raises(k_tiles, stages, ops, seeds=20, **kw):
    with pytest.raises(RingError) as info:
        for seed in range(seeds):
            _pingpong(k_tiles, stages, [(8192, False), (8192, False)], seed, ops=ops, **kw)
    return str(info.value)


def test_pingpong_mutations_are_caught():
    """Broken variants of the pingpong protocol, each caught by the model."""
    k_tiles, S = [3, 2, 5, 3, 4], 3
    copies = [(8192, False), (8192, False)]
    for seed in range(10):  # the protocol itself runs
        _pingpong(k_tiles, S, copies, seed)

    # 1. warpgroup 1 does not skip warpgroup 0's k tiles: it waits on the wrong stages
    def no_skip(w, ops):
        if w == 0:
            return ops
        solo = consumer_ops([k_tiles[t] for t in range(1, len(k_tiles), 2)], S)
        mmas = iter(o for o in ops if o[0] == "mma")  # keep the tile numbers it reads
        out = []
        for o in solo:
            if o[0] == "mma":
                o = ("mma", o[1], *next(mmas)[2:])
            out.append(o)
        return out

    _raises(k_tiles, S, _mutate(k_tiles, S, no_skip))
    # 2. the cooperative empty-barrier count (2 arrivals) with one releasing warpgroup
    assert "deadlock" in _raises(k_tiles, S, None, releasers=2)

    # 3. warpgroup 0 forgets to hand over after its tile: warpgroup 1 waits for ever
    def no_handover(w, ops):
        return [o for o in ops if not (w == 0 and o[0] == "bar_arrive")]

    assert "deadlock" in _raises(k_tiles, S, _mutate(k_tiles, S, no_handover))

    # 4. a hand-over after the CTA's last tile: an arrival nobody waits for
    def extra_arrive(w, ops):
        return ops + [("bar_arrive", 1 - w)] if w == (len(k_tiles) - 1) % 2 else ops

    assert "left with arrivals" in _raises(k_tiles, S, _mutate(k_tiles, S, extra_arrive))

    # 5. warpgroup 1 skips the stages but not the phase flips: a parity aliasing
    def no_flip(w, ops):
        if w == 0:
            return ops
        out = []
        for o in ops:
            if o[:2] == ("wait", "full"):
                o = (*o[:3], o[3] ^ 1)
            out.append(o)
        return out

    _raises(k_tiles, S, _mutate(k_tiles, S, no_flip))

    # 6. releasing a stage as soon as its wgmma is issued (before wait_group retires it)
    def early(w, ops):
        out = []
        for o in ops:
            if o[0] == "arrive":
                continue
            out.append(o)
            if o[0] == "mma":
                out.append(("arrive", "empty", o[1]))
        return out

    assert "may read" in _raises(k_tiles, S, _mutate(k_tiles, S, early))


PROMOTED = [
    Sm90Config(128, 192),
    Sm90Config(192, 128, consumers=3),
    Sm90Config(128, 128, cluster=2),
]


@pytest.mark.parametrize("config", PROMOTED, ids=lambda c: c.name)
def test_promoted_ring_releases_at_once(config):
    """Promoted fp8 releases each stage right after wait_group 0 (lag 0): the model runs it
    (cooperative and pingpong), and every wgmma still reads its own, landed stage."""
    plan = Sm90Plan(config, "e4m3", "K", "K", "bf16")
    lag = release_lag(plan.promote)
    assert lag == 0
    rng = random.Random(config.name)
    for seed in range(6):
        k_tiles = [rng.choice([1, 2, plan.stages, plan.stages + 1, 9]) for _ in range(25)]
        mmas = run_ring(producer_ops(k_tiles, plan.stages), consumer_ops(k_tiles, plan.stages, lag),
                        plan.stages, config.consumers, _copies(plan), seed=seed,
                        arrive_every=CONSUMER.arrive_every, cluster=config.cluster)  # fmt: skip
        mine = [(t, kt) for name, t, kt in mmas if name == "C0.0"]
        assert mine == [(t, kt) for t, n in enumerate(k_tiles) for kt in range(n)]
    pp = Sm90Plan(Sm90Config(64, 192, schedule="pingpong"), "e4m3", "K", "K", "bf16")
    ops = [pingpong_consumer_ops([3, 5, 1, 4, 2], pp.stages, w, lag) for w in (0, 1)]
    for seed in range(6):
        _pingpong([3, 5, 1, 4, 2], pp.stages, _copies(pp), seed, ops=ops)


@pytest.mark.parametrize("cluster", [1, 2])
def test_overlap_ring_releases_one_tile_late(cluster):
    """promote="overlap" keeps a batch in flight: lag 1 (the plain loop's order), which the
    model runs; releasing the stage just read at wait_group 1 (lag 0 there) is caught by
    test_lag0_release_before_the_wait_is_caught."""
    config = Sm90Config(128, 128, promote="overlap", cluster=cluster)
    plan = Sm90Plan(config, "e4m3", "K", "K", "bf16")
    assert plan.overlap and release_lag(plan.promote, plan.overlap) == 1
    rng = random.Random(config.name)
    for seed in range(6):
        k_tiles = [rng.choice([1, 2, 3, plan.stages, plan.stages + 1, 9]) for _ in range(25)]
        mmas = run_ring(producer_ops(k_tiles, plan.stages), consumer_ops(k_tiles, plan.stages, 1),
                        plan.stages, config.consumers, _copies(plan), seed=seed,
                        arrive_every=CONSUMER.arrive_every, cluster=cluster)  # fmt: skip
        mine = [(t, kt) for name, t, kt in mmas if name == "C0.1"]
        assert mine == [(t, kt) for t, n in enumerate(k_tiles) for kt in range(n)]


def test_lag0_release_before_the_wait_is_caught():
    """Lag 0 releases only after wait_group 0: releasing the stage before its batch retires
    (wait_group 1 kept) lets the producer overwrite what a wgmma may read."""
    k_tiles = [5, 3]
    bad = [("wait_group", 1) if op == ("wait_group", 0) else op
           for op in consumer_ops(k_tiles, 2, release_lag=0)]  # fmt: skip
    with pytest.raises(RingError, match="may read"):
        run_ring(producer_ops(k_tiles, 2), bad, 2, 1, [(16384, False)], seed=0)


@pytest.mark.parametrize("consumers", [2, 3])
def test_alternate_turns(consumers):
    """Schedule "alternate": cooperative tiles, the warpgroups issuing each k tile's batch in
    turn (round robin over named barriers): no deadlock, every turn wait paired with one
    hand-over (none left at exit), each warpgroup reads every (tile, k tile) in order; the
    model sees the turns (warpgroup w's batch k never before warpgroup w - 1's)."""
    cfg = Sm90Config(64 * consumers, 128, consumers=consumers, schedule="alternate")
    plan = Sm90Plan(cfg, "e4m3", "K", "K", "bf16")
    rng = random.Random(consumers)
    for lag in (0, 1):
        for seed in range(5):
            k_tiles = [rng.choice([1, 2, plan.stages, 9]) for _ in range(rng.choice([1, 6, 13]))]
            ops = [alternate_consumer_ops(k_tiles, plan.stages, w, consumers, lag)
                   for w in range(consumers)]  # fmt: skip
            mmas = run_ring(producer_ops(k_tiles, plan.stages), ops, plan.stages, consumers,
                            _copies(plan), seed=seed, arrive_every=CONSUMER.arrive_every)  # fmt: skip
            want = [(t, kt) for t, n in enumerate(k_tiles) for kt in range(n)]
            for w in range(consumers):
                assert [(t, kt) for name, t, kt in mmas if name == f"C0.{w}"] == want
            turns = [int(name[-1]) for name, _, _ in mmas]
            assert turns == [i % consumers for i in range(len(turns))]
    # a last warpgroup that hands over after the CTA's last batch leaves an arrival behind
    k_tiles = [2, 3]
    ops = [alternate_consumer_ops(k_tiles, 2, w, consumers) for w in range(consumers)]
    ops[-1] = ops[-1] + [("bar_arrive", 0)]
    with pytest.raises(RingError, match="left with arrivals"):
        run_ring(producer_ops(k_tiles, 2), ops, 2, consumers, [(8192, False)], seed=0)
    # warpgroup 0 waiting before its first batch too: nobody hands it the first turn
    ops = [alternate_consumer_ops(k_tiles, 2, w, consumers) for w in range(consumers)]
    first = next(i for i, o in enumerate(ops[0]) if o[0] == "mma")
    ops[0] = ops[0][:first] + [("bar_sync", 0)] + ops[0][first:]
    with pytest.raises(RingError, match="deadlock"):
        run_ring(producer_ops(k_tiles, 2), ops, 2, consumers, [(8192, False)], seed=0)


def test_split_ring():
    """promote="split": two batches per stage (lo, hi), the stage released only after
    ``wait_group 1`` retires hi, one k tile late. The model runs it over random tiles (each
    (tile, k tile) read twice, in order, by both warpgroups); releasing a stage as soon as
    lo retires (hi still reading it) is caught."""
    config = Sm90Config(128, 192, promote="split")
    plan = Sm90Plan(config, "e4m3", "K", "K", "bf16")
    S = plan.stages
    rng = random.Random(config.name)
    for seed in range(6):
        k_tiles = [rng.choice([1, 2, 3, S, S + 1, 9]) for _ in range(25)]
        mmas = run_ring(producer_ops(k_tiles, S), split_consumer_ops(k_tiles, S), S,
                        config.consumers, _copies(plan), seed=seed,
                        arrive_every=CONSUMER.arrive_every)  # fmt: skip
        mine = [(t, kt) for name, t, kt in mmas if name == "C0.1"]
        assert mine == [(t, kt) for t, n in enumerate(k_tiles) for kt in range(n) for _ in "lh"]

    def early(ops):  # release each stage once lo is retired: hi may still read it
        out, moved, last, hi_stage = [], set(), None, None
        for o in ops:
            if o[0] == "arrive" and o[2] in moved:
                moved.discard(o[2])
                continue
            out.append(o)
            if o[0] == "mma":
                hi_stage = o[1] if o[2:] == last else None
                last = o[2:]
            elif o == ("wait_group", 1) and hi_stage is not None:
                out.append(("arrive", "empty", hi_stage))
                moved.add(hi_stage)
                hi_stage = None
        return out

    assert early(split_consumer_ops([1], S))[5:7] == [("wait_group", 1), ("arrive", "empty", 0)]
    k_tiles = [5, 3, 4]
    with pytest.raises(RingError, match="may read"):
        run_ring(producer_ops(k_tiles, S), early(split_consumer_ops(k_tiles, S)), S, 1,
                 _copies(plan), seed=0, arrive_every=1)  # fmt: skip
