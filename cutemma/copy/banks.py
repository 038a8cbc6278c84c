"""Shared-memory banks and global-memory sectors: how one warp instruction's accesses are served.

Hardware facts (one place):

- Shared memory has 32 banks of 4 bytes; successive 32-bit words go to successive banks.
  Within one access phase, requests to different words of one bank are serialized, requests
  to the same word are served once (broadcast). (CUDA C++ Programming Guide, "Shared Memory",
  compute capability 5.x and later.)
- A warp's shared-memory access of w bytes per thread is served in phases of 128 bytes:
  32-bit (or narrower) accesses in one phase of 32 threads, 64-bit in two phases of 16
  threads, 128-bit in four phases of 8 threads (the quarter-warp rule for 128-bit accesses;
  Nsight Compute counts each served phase as one shared-memory *wavefront*).
- ``ldmatrix``/``stmatrix`` move each 8x8 matrix (eight 16-byte rows, 128 bytes) in one
  phase, the rows' addresses given by lanes ``8j..8j+7`` for matrix j (PTX ISA, ldmatrix);
  a matrix is conflict-free when its eight rows fall in eight different 16-byte bank groups.
- Global memory is accessed in 32-byte sectors; a warp request touching ``s`` sectors costs
  ``s`` sector transfers, ideally ``bytes / 32`` (CUDA C++ Best Practices Guide, "Coalesced
  Access to Global Memory").

>>> wavefronts([[(0, 4)], [(128, 4)]])          # two words of bank 0 in one phase: 2-way
2
>>> wavefronts([[(0, 4)], [(0, 4)]])            # the same word: broadcast
1
"""

from __future__ import annotations

from collections.abc import Sequence

BANKS = 32
BANK_BYTES = 4
PHASE_BYTES = BANKS * BANK_BYTES  # 128 bytes served per phase
SECTOR_BYTES = 32
WARP = 32
MATRIX_ROW_BYTES = 16  # one ldmatrix/stmatrix row
MATRIX_ROWS = 8

Access = tuple[int, int]  # (byte address, bytes)


def lanes_per_phase(bytes_per_thread: int) -> int:
    """Threads served together in one phase for a per-thread access of that width.

    >>> lanes_per_phase(16), lanes_per_phase(8), lanes_per_phase(4), lanes_per_phase(2)
    (8, 16, 32, 32)
    """
    return max(1, min(WARP, PHASE_BYTES // max(bytes_per_thread, BANK_BYTES)))


def wavefronts(phase: Sequence[Sequence[Access]]) -> int:
    """Wavefronts to serve one phase: the most distinct words any bank must deliver.

    ``phase`` holds, per participating thread, its accesses as (byte address, bytes).

    >>> wavefronts([[(16 * r * 8, 16)] for r in range(8)])   # 8 rows 128 bytes apart: 8-way
    8
    """
    words: dict[int, set[int]] = {}
    for accesses in phase:
        for addr, nbytes in accesses:
            for w in range(addr // BANK_BYTES, (addr + nbytes - 1) // BANK_BYTES + 1):
                words.setdefault(w % BANKS, set()).add(w)
    return max((len(s) for s in words.values()), default=0)


def sectors(accesses: Sequence[Access]) -> int:
    """Distinct 32-byte global-memory sectors a warp request touches.

    >>> sectors([(4 * t, 4) for t in range(32)]), sectors([(128 * t, 4) for t in range(32)])
    (4, 32)
    """
    out = set()
    for addr, nbytes in accesses:
        out.update(range(addr // SECTOR_BYTES, (addr + nbytes - 1) // SECTOR_BYTES + 1))
    return len(out)
