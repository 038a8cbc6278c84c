"""The order of one sm80 GEMM mainloop: copies, waits, barriers, ldmatrix and mma, as data.

The generator renders these steps to CUDA; the tests run the same steps on a model
of the shared-memory stages (``tests/kernels/pipeline_sim.py``) and check that every
fragment is read after its tile landed and was published by a barrier, that no
stage is overwritten while a thread may still read it, and that every mma gets
the fragments of its own k tile and k block.

The schedule (``S`` stages, ``KB`` k blocks per k tile; fragments double-buffered):

- prologue: k tiles 0 .. S-2 in flight; wait for tile 0, barrier, ldmatrix k block 0.
- k tile ``kt``, k block ``kb``: ldmatrix k block kb+1 into the other buffer, then
  mma k block kb. Before the last k block's ldmatrix (of the next tile's block 0):
  wait for tile kt+1, barrier, advance the read stage. After k block 0's ldmatrix
  (or first of all when KB == 1): the copy of tile kt+S-1 into the stage tile kt-1
  used, which the barrier before freed.

>>> pro, body = mainloop_steps(3, 2)
>>> pro
(('copy', 0), ('commit',), ('copy', 1), ('commit',), ('wait', 1), ('sync',), ('ldsm', 0, 0))
>>> body
(('ldsm', 1, 1), ('copy', 2), ('commit',), ('mma', 0, 0), ('wait', 1), ('sync',), ('next_read',), ('ldsm', 0, 0), ('mma', 1, 1))
"""

from __future__ import annotations

Step = tuple


def mainloop_steps(stages: int, k_blocks: int) -> tuple[tuple[Step, ...], tuple[Step, ...]]:
    """(prologue, loop body) steps. Copy steps name k tiles: in the prologue the tile
    itself, in the body the distance from the current tile ``kt``.

    Steps: ``('copy', t)`` tile into the write stage, which then advances (skipped
    past the last tile); ``('commit',)``; ``('wait', n)`` until at most n copy groups
    are pending; ``('sync',)``; ``('next_read',)``; ``('ldsm', kb, buf)`` k block kb of
    the read stage into fragment buffer buf; ``('mma', kb, buf)``; ``('move', src, dst)``
    fragment buffers.

    With 3 stages the prologue puts k tiles 0 and 1 in flight, then waits until at most
    one group is pending (tile 0 has landed):

    >>> mainloop_steps(3, 2)[0][:5]
    (('copy', 0), ('commit',), ('copy', 1), ('commit',), ('wait', 1))
    """
    S, KB = stages, k_blocks
    pro: list[Step] = []
    for s in range(S - 1):
        pro += [("copy", s), ("commit",)]
    pro += [("wait", S - 2), ("sync",), ("ldsm", 0, 0)]
    body: list[Step] = []
    refill = [("copy", S - 1), ("commit",)]
    for kb in range(KB):
        last = kb == KB - 1
        if KB == 1:
            body += refill
        if last:
            body += [("wait", S - 2), ("sync",), ("next_read",)]
        body.append(("ldsm", (kb + 1) % KB, (kb + 1) % 2))
        if kb == 0 and KB > 1:
            body += refill
        body.append(("mma", kb, kb % 2))
    if KB % 2:  # the next tile's k block 0 went to buffer 1; the loop reads it from 0
        body.append(("move", 1, 0))
    return tuple(pro), tuple(body)
