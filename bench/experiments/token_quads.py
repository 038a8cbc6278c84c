"""Do swapped calls whose rows sit half a sector apart run faster in 2 x 2 clusters than in
the pairs along the tokens they take (space.token_pairs)? A 2 x 2 cluster of swapped CTAs
(``cluster=4, multicast="AB"`` on the swapped problem) shares the weights along the tokens
and the activations along the weights: each CTA loads half of each. For e4m3 calls of
257-2048 rows drawn at run time with K an odd multiple of 16 whose pick is a pair, it
times cuBLAS, the pick, the lone kernel and the quad, L2-flushed medians in turn (the tree's
``tmat_cooperative`` rule must allow clusters of 4 for the quad to build).

    python bench/experiments/token_quads.py OUT.json N SEED
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))


def drawn(count: int, seed: int) -> list[tuple[int, int, int]]:
    from probe import drawn_off_rows

    from cutemma.kernels.pick import builtin_sm90_config

    def paired(m: int, n: int, k: int) -> bool:
        pick = builtin_sm90_config(m, n, k, "e4m3", swap=True, rows16=(True, True))
        return pick.swap_ab and pick.cluster == 2

    return drawn_off_rows(count, seed, (257, 2048), paired)


def row(m: int, n: int, k: int) -> dict:
    from gemm_sweep import operands
    from probe import applied, timed_against_peer

    from cutemma.kernels.pick import builtin_sm90_config

    A, B, out, peer = operands("e4m3", m, n, k)
    pick = builtin_sm90_config(m, n, k, "e4m3", swap=True, rows16=(True, True))
    got = {"m": m, "n": n, "k": k, "pick": pick.name}
    changes = {"lone": {"cluster": 1, "multicast": "B", "promote": "split"},
               "quad": {"cluster": 4, "multicast": "AB"}}  # fmt: skip
    return timed_against_peer(A, B, out, peer, applied(pick, changes, got), got)


def main() -> None:
    from probe import write_rows

    write_rows(sys.argv[1], drawn(int(sys.argv[2]), int(sys.argv[3])), row, open(__file__).read())


if __name__ == "__main__":
    main()
