"""What each GPU architecture allows a kernel, in one table: the opt-in shared memory per
block, registers per thread and per SM, threads per block and per SM (CUDA C++ Programming
Guide, "Technical Specifications per Compute Capability"). The design rules
(:mod:`cutemma.kernels.design`), the sm90 config, the tuner, and the TMA-box and descriptor
checks of the lower layers read these numbers here (a module of its own below every layer,
like :mod:`cutemma.errors`, so that no layer reaches up into the kernels for them).

>>> LIMITS["sm_90a"].smem_per_block // 1024, LIMITS["sm_80"].smem_per_block // 1024
(227, 163)
>>> limits("sm_86").smem_per_block
101376
"""

from __future__ import annotations

from dataclasses import dataclass

from cutemma.errors import TiledMmaError


@dataclass(frozen=True)
class ArchLimits:
    """Per-block and per-SM budgets of one compute capability."""

    smem_per_block: int  # opt-in dynamic shared memory of one block, bytes
    smem_per_sm: int  # shared memory of one SM, bytes
    regs_per_thread: int
    regs_per_sm: int
    threads_per_block: int
    threads_per_sm: int


LIMITS = {
    "sm_70": ArchLimits(96 * 1024, 96 * 1024, 255, 65536, 1024, 2048),
    "sm_75": ArchLimits(64 * 1024, 64 * 1024, 255, 65536, 1024, 1024),
    "sm_80": ArchLimits(163 * 1024, 164 * 1024, 255, 65536, 1024, 2048),
    "sm_86": ArchLimits(99 * 1024, 100 * 1024, 255, 65536, 1024, 1536),
    "sm_89": ArchLimits(99 * 1024, 100 * 1024, 255, 65536, 1024, 1536),
    "sm_90": ArchLimits(227 * 1024, 228 * 1024, 255, 65536, 1024, 2048),
    "sm_90a": ArchLimits(227 * 1024, 228 * 1024, 255, 65536, 1024, 2048),
}

# the most shared memory any architecture gives one block: a tile larger than this fits nowhere
MAX_SMEM_PER_BLOCK = max(lim.smem_per_block for lim in LIMITS.values())


def arch_number(arch: str) -> int:
    """'sm_90a' -> 90.

    >>> arch_number("sm_89"), arch_number("sm_90a")
    (89, 90)
    """
    try:
        return int(arch.removeprefix("sm_").rstrip("a"))
    except ValueError:
        raise TiledMmaError(f"arch {arch!r}: give a compile target such as 'sm_90a'") from None


def limits(arch: str) -> ArchLimits:
    """The budgets of ``arch``; an architecture not in the table takes the newest one below it.

    >>> limits("sm_87").smem_per_block == LIMITS["sm_86"].smem_per_block
    True
    """
    if arch in LIMITS:
        return LIMITS[arch]
    n = arch_number(arch)
    below = [a for a in LIMITS if arch_number(a) <= n]
    if not below:
        raise TiledMmaError(f"arch {arch!r}: cutemma's kernels need sm_70 or newer")
    return LIMITS[max(below, key=arch_number)]
