"""The mainloop's order of copies, waits, barriers, ldmatrix and mma, run on a stage model."""

from __future__ import annotations

import pytest
from pipeline_sim import PipelineError, run_schedule

from cutemma.kernels.sm80.pipeline import mainloop_steps


@pytest.mark.parametrize("stages", [2, 3, 4, 5])
@pytest.mark.parametrize("k_blocks", [1, 2, 3, 4])
def test_every_mma_gets_its_own_landed_fragments(stages, k_blocks):
    pro, body = mainloop_steps(stages, k_blocks)
    for k_tiles in range(1, 9):
        done = run_schedule(pro, body, stages, k_blocks, k_tiles)
        assert done == [(kt, kb) for kt in range(k_tiles) for kb in range(k_blocks)]


def test_the_model_catches_a_missing_barrier():
    """Drop the barrier: the prefetch of the next tile reads a stage not yet published."""
    pro, body = mainloop_steps(3, 2)
    broken = tuple(s for s in body if s != ("sync",))
    with pytest.raises(PipelineError, match="reads stage"):
        run_schedule(pro, broken, 3, 2, 5)


def test_the_model_catches_an_overwritten_stage():
    """Three stages' schedule on two stages: the refill lands on the stage being read."""
    pro, body = mainloop_steps(3, 2)
    with pytest.raises(PipelineError, match="before a barrier"):
        run_schedule(pro, body, 2, 2, 5)


def test_fragments_cross_the_barrier():
    """The next tile's k block 0 is loaded before the last k block's mma (CUTLASS-style)."""
    _, body = mainloop_steps(4, 2)
    assert body.index(("ldsm", 0, 0)) < body.index(("mma", 1, 1))
    assert body.index(("sync",)) < body.index(("ldsm", 0, 0))
