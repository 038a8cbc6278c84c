"""The sm90 ring protocol (cutemma.kernels.ring) on a model of mbarriers, TMA and wgmma.

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

from cutemma.kernels.dispatch_sm90 import DEFAULT_SM90, SMALL_SM90  # noqa: E402
from cutemma.kernels.plan_sm90 import Sm90Config, Sm90Plan  # noqa: E402
from cutemma.kernels.ring import CONSUMER, consumer_ops, producer_ops  # noqa: E402

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
