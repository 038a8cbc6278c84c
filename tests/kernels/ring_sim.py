"""A model of the sm90 GEMM's stage ring: mbarriers, TMA loads and wgmma reads, any interleaving.

Written from the PTX rules, not from the generator:
- an mbarrier counts pending arrivals and transaction bytes; when both reach zero its
  phase completes (the phase number advances) and the arrival count resets
  (PTX ISA 9.7.13.15 "mbarrier"). ``try_wait.parity q`` succeeds when the phase of
  parity q just before the current one has completed, i.e. when the current phase
  number's parity is not q;
- a TMA load may write its stage at any moment between its issue and its completion,
  which performs ``complete_tx`` of its bytes on the barrier;
- a wgmma may read its stage at any moment between its issue and the ``wait_group`` that
  retires its commit group.

- a named barrier (``bar.sync``/``bar.arrive`` with a thread count) completes when that
  many threads have arrived; ``bar.sync`` also waits for that (PTX ISA 9.7.13.1
  "bar/barrier"). An agent is a warpgroup: 128 threads arrive together.

The agents run the orders of :func:`cutemma.kernels.sm90.ring.producer_ops` and
:func:`consumer_ops` (or, per warpgroup, :func:`pingpong_consumer_ops`); a random
scheduler interleaves them with the TMA completions.
Checked: no deadlock; no load issued into a stage a wgmma may still read; no stage
released while its wgmma may still read it; every wgmma reads the (tile, k tile) it
expects, fully landed; every wait observes exactly the phase meant for it (not one
two phases older or newer: the parity alone cannot tell those apart): a consumer's wait
on a full barrier is meant for the use of the stage that holds the (tile, k tile) its
next wgmma reads; no named barrier is left with arrivals when every agent is done.
"""

from __future__ import annotations

import random


class RingError(AssertionError):
    pass


class Barrier:
    def __init__(self, count: int):
        self.count, self.pending, self.tx, self.phase = count, count, 0, 0

    def _maybe_complete(self):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count

    def arrive(self, n: int = 1):
        if self.pending < n:
            raise RingError("more arrivals than the barrier's count in one phase")
        self.pending -= n
        self._maybe_complete()

    def expect_tx(self, nbytes: int):
        self.tx += nbytes
        self.arrive()

    def complete_tx(self, nbytes: int):
        self.tx -= nbytes
        self._maybe_complete()

    def try_wait(self, parity: int) -> bool:
        return self.phase % 2 != parity


def run_ring(
    ops_p,
    ops_c,
    stages,
    consumers,
    copies,
    seed=0,
    max_steps=10**6,
    arrive_every=128,
    cluster=1,
    release_peers=True,
    releasers=None,
    named_count=2,
) -> list:
    """Run ``cluster`` CTAs, each one producer and ``consumers`` consumer warpgroups; returns
    the mma order as (agent, tile, k tile).

    ``ops_c``: one consumer order for all warpgroups, or a list of orders, one per
    warpgroup (pingpong). ``releasers``: the warpgroups that release each stage use, the
    empty barriers' count (default ``consumers``; pingpong 1). ``named_count``: the
    warpgroups a named barrier waits for (pingpong's order barrier: both).

    ``copies``: (bytes, multicast) of each TMA load a producer issues per stage; a multicast
    load lands in the same stage of every CTA of the cluster and completes bytes on each
    one's full barrier. ``arrive_every``: a warpgroup's 128 threads arrive once per this
    many; a consumer releases a stage on the empty barrier of every CTA of its cluster
    (``release_peers=False``: only its own, twice, the bug a test plants).
    """
    rng = random.Random(seed)
    per_wg = 128 // arrive_every  # arrivals per warpgroup
    total = sum(b * (cluster if mc else 1) for b, mc in copies)  # bytes landing per CTA
    full = [[Barrier(1) for _ in range(stages)] for _ in range(cluster)]
    releasers = consumers if releasers is None else releasers
    empty = [[Barrier(per_wg * releasers * cluster) for _ in range(stages)] for _ in range(cluster)]
    per_agent = ops_c and isinstance(ops_c[0], list)
    named = [{} for _ in range(cluster)]  # id -> [warpgroups arrived, completions]
    loads_into = [[0] * stages for _ in range(cluster)]  # loads producer r issued per stage
    use_of: dict[tuple, int] = {}  # (cta, tile, kt) -> the use of its stage it was loaded in
    landed = [[dict() for _ in range(stages)] for _ in range(cluster)]  # copy id -> (tile, kt)
    want = len([1 for _, mc in copies for _ in range(cluster if mc else 1)])
    readers = [[0] * stages for _ in range(cluster)]  # wgmmas that may still read the stage
    flying = []  # (cta, stage, copy id, tile, kt, bytes)
    agents = []
    for r in range(cluster):
        agents.append((f"P{r}", r, list(ops_p), 0, {}))
        agents += [
            (f"C{r}.{i}", r, list(ops_c[i] if per_agent else ops_c), 0, {"groups": [], "open": []})
            for i in range(consumers)
        ]
    seen_uses: dict[tuple, int] = {}  # (agent, barrier, stage) -> waits done
    mmas = []

    def step(i) -> bool:
        name, r, ops, pc, st = agents[i]
        if pc == len(ops):
            return False
        op = ops[pc]
        kind = op[0]
        if kind == "wait":
            which, s, parity = op[1], op[2], op[3]
            bar = (full if which == "full" else empty)[r][s]
            if not bar.try_wait(parity):
                return False
            if which == "empty":  # the producer's n-th wait on a stage needs n phases done
                key = (name, which, s)
                need = seen_uses.get(key, 0)
                seen_uses[key] = need + 1
            else:  # meant for the use of the stage its next wgmma reads: that phase done
                nxt = next(o for o in ops[pc:] if o[0] == "mma")
                use = use_of.get((r, nxt[2], nxt[3]), loads_into[r][s])
                need = use + 1
            if bar.phase != need:
                raise RingError(
                    f"{name}: wait {op} passed with the barrier at phase {bar.phase}, "
                    f"meant for phase {need} (parity aliasing)"
                )
        elif kind == "expect_tx":
            full[r][op[1]].expect_tx(total)
        elif kind == "load":
            s, tile, kt = op[1], op[2], op[3]
            use_of[(r, tile, kt)] = loads_into[r][s]
            loads_into[r][s] += 1
            for c, (nbytes, mc) in enumerate(copies):
                for q in range(cluster) if mc else (r,):
                    if readers[q][s]:
                        raise RingError(f"{name}: load of {(tile, kt)} into stage {s} of CTA {q} "
                                        "while a wgmma may still read it")  # fmt: skip
                    old = landed[q][s]
                    if any(v != (tile, kt) for v in old.values()):
                        landed[q][s] = {}
                    flying.append((q, s, (r, c), tile, kt, nbytes))
        elif kind == "mma":
            s, tile, kt = op[1], op[2], op[3]
            got = set(landed[r][s].values())
            if len(landed[r][s]) != want or got != {(tile, kt)}:
                raise RingError(
                    f"{name}: wgmma of {(tile, kt)} reads stage {s} holding {landed[r][s]}"
                )
            readers[r][s] += 1
            st["open"].append(s)
            mmas.append((name, tile, kt))
        elif kind == "commit":
            st["groups"].append(st["open"])
            st["open"] = []
        elif kind == "wait_group":
            while len(st["groups"]) > op[1]:
                for s in st["groups"].pop(0):
                    readers[r][s] -= 1
        elif kind == "arrive":
            s = op[2]
            mine = [x for g in st["groups"] for x in g] + st["open"]
            if s in mine:
                raise RingError(f"{name}: releases stage {s} while its wgmma may read it")
            for q in range(cluster):
                empty[q if release_peers else r][s].arrive(per_wg)
        elif kind in ("bar_arrive", "bar_sync"):
            b = named[r].setdefault(op[1], [0, 0])
            if kind == "bar_sync" and "synced" in st:  # arrived before: wait for completion
                if b[1] <= st["synced"]:
                    return False
                del st["synced"]
            else:
                b[0] += 1
                if b[0] > named_count:  # pragma: no cover - completes at named_count
                    raise RingError(f"{name}: named barrier {op[1]} over its count")
                gen = b[1]
                if b[0] == named_count:
                    b[0], b[1] = 0, b[1] + 1
                if kind == "bar_sync":
                    st["synced"] = gen
                    agents[i] = (name, r, ops, pc, st)
                    return True  # arrived; the same op then waits for the completion
        elif kind == "epilogue":
            pass
        agents[i] = (name, r, ops, pc + 1, st)
        return True

    def land(k):
        q, s, cid, tile, kt, nbytes = flying.pop(k)
        landed[q][s][cid] = (tile, kt)
        full[q][s].complete_tx(nbytes)

    for _ in range(max_steps):
        order = list(range(len(agents)))
        rng.shuffle(order)
        moved = False
        if flying and rng.random() < 0.5:
            land(rng.randrange(len(flying)))
            moved = True
        else:
            for i in order:
                if step(i):
                    moved = True
                    break
        if not moved and flying:
            land(0)
            moved = True
        if all(pc == len(ops) for _, _, ops, pc, _ in agents) and not flying:
            left = {(r, k): b[0] for r in range(cluster) for k, b in named[r].items() if b[0]}
            if left:
                raise RingError(f"named barriers left with arrivals at exit: {left}")
            return mmas
        if not moved:
            where = {a[0]: a[2][a[3]] if a[3] < len(a[2]) else "done" for a in agents}
            raise RingError(f"deadlock: {where}")
    raise RingError("no end after max_steps")  # pragma: no cover
