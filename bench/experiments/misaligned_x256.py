"""Do e4m3 calls whose rows sit half a sector apart (K an odd multiple of 16 bytes) load
faster on 256-byte k tiles? A 128-byte k tile's row then spans two 128-byte lines where an
aligned one spans one (about half speed: the cost model's ``half_sector``); a 256-byte one
spans three where an aligned one spans two. For such calls drawn at run time (M log-uniform
in 129..16384, N and K as bench/gemm_sweep.py draws them, K an odd multiple of 16), it
times cuBLAS, the pick, the pick's tile alone (no cluster) on 128- and 256-byte k tiles,
and the pick itself on 256-byte k tiles where it plans, L2-flushed medians in turn.

    python bench/experiments/misaligned_x256.py OUT.json N SEED
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))


def drawn(count: int, seed: int) -> list[tuple[int, int, int]]:
    from probe import drawn_off_rows

    return drawn_off_rows(count, seed, (129, 16384))


def variants(pick) -> dict:
    """The changes timed beside the pick, each applied to it (a refused one: its text)."""
    from cutemma.kernels.space import FP8_BLOCK_K

    lone = {"cluster": 1, "multicast": "B"}
    k256 = {"block_k": FP8_BLOCK_K, "stages": None}
    return {"lone": lone, "lone_k256": lone | k256, "pick_k256": k256}


def row(m: int, n: int, k: int) -> dict:
    from gemm_sweep import operands
    from probe import applied, timed_against_peer

    from cutemma.kernels.pick import builtin_sm90_config

    A, B, out, peer = operands("e4m3", m, n, k)
    pick = builtin_sm90_config(m, n, k, "e4m3", swap=True, rows16=(True, True))
    got = {"m": m, "n": n, "k": k, "pick": pick.name}
    return timed_against_peer(A, B, out, peer, applied(pick, variants(pick), got), got)


def main() -> None:
    from probe import write_rows

    write_rows(sys.argv[1], drawn(int(sys.argv[2]), int(sys.argv[3])), row, open(__file__).read())


if __name__ == "__main__":
    main()
