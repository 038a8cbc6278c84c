"""What each GPU architecture allows a kernel, in one table: the opt-in shared memory per
block, registers per thread and per SM, threads per block and per SM (CUDA C++ Programming
Guide, "Technical Specifications per Compute Capability"), and the one parser of
architecture names that the API and the command line share. The design rules
(:mod:`cutemma.kernels.design`), the sm90 config, the tuner, and the TMA-box and descriptor
checks of the lower layers read these numbers here (a module of its own below every layer,
like :mod:`cutemma.errors`, so that no layer reaches up into the kernels for them).

>>> LIMITS["sm_90a"].smem_per_block // 1024, LIMITS["sm_80"].smem_per_block // 1024
(227, 163)
>>> limits("sm_86").smem_per_block, limits("sm120a").smem_per_block
(101376, 101376)
>>> parse_arch("sm90a"), parse_arch("SM_120A"), parse_arch("80")
('sm_90a', 'sm_120a', 'sm_80')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cutemma.errors import ArchError


@dataclass(frozen=True)
class ArchLimits:
    """Per-block and per-SM budgets of one compute capability."""

    smem_per_block: int  # opt-in dynamic shared memory of one block, bytes
    smem_per_sm: int  # shared memory of one SM, bytes
    regs_per_thread: int
    regs_per_sm: int
    threads_per_block: int
    threads_per_sm: int


_KB = 1024
# One row per compute capability. Figures: the Programming Guide's "Technical Specifications
# per Compute Capability" table, as NVIDIA's libcu++ encodes it (cuda/__device/arch_traits.h:
# opt-in per block = per SM - the 1 KB the driver reserves from sm_80 on).
_BY_CAPABILITY = {
    70: ArchLimits(96 * _KB, 96 * _KB, 255, 65536, 1024, 2048),
    75: ArchLimits(64 * _KB, 64 * _KB, 255, 65536, 1024, 1024),
    80: ArchLimits(163 * _KB, 164 * _KB, 255, 65536, 1024, 2048),
    86: ArchLimits(99 * _KB, 100 * _KB, 255, 65536, 1024, 1536),
    87: ArchLimits(163 * _KB, 164 * _KB, 255, 65536, 1024, 1536),
    88: ArchLimits(99 * _KB, 100 * _KB, 255, 65536, 1024, 1536),
    89: ArchLimits(99 * _KB, 100 * _KB, 255, 65536, 1024, 1536),
    90: ArchLimits(227 * _KB, 228 * _KB, 255, 65536, 1024, 2048),
    100: ArchLimits(227 * _KB, 228 * _KB, 255, 65536, 1024, 2048),
    103: ArchLimits(227 * _KB, 228 * _KB, 255, 65536, 1024, 2048),
    110: ArchLimits(227 * _KB, 228 * _KB, 255, 65536, 1024, 1536),
    120: ArchLimits(99 * _KB, 100 * _KB, 255, 65536, 1024, 1536),
    121: ArchLimits(99 * _KB, 100 * _KB, 255, 65536, 1024, 1536),
}
# the architecture-specific ('a') and family ('f', CUDA 12.9+) targets of each capability
_SUFFIXES = {90: "a", 100: "af", 103: "af", 110: "af", 120: "af", 121: "af"}

# compile target ('sm_90a') -> its budgets; a suffixed target has its capability's budgets
LIMITS = {
    f"sm_{cc}{suffix}": lim
    for cc, lim in _BY_CAPABILITY.items()
    for suffix in ("", *_SUFFIXES.get(cc, ""))
}

# the most shared memory any architecture gives one block: a tile larger than this fits nowhere
MAX_SMEM_PER_BLOCK = max(lim.smem_per_block for lim in LIMITS.values())
# the most threads every architecture gives one block: the one block limit a kernel checks
# (layouts, TiledMMAs and TiledCopies take any number of threads, as CuTe's do)
MAX_THREADS_PER_BLOCK = min(lim.threads_per_block for lim in LIMITS.values())

# wgmma's N (PTX ISA 9.7.15.5.2, "Matrix shape"): a multiple of this, up to the max, for
# 16-bit, tf32 and fp8 inputs (8-bit integers skip some: the GMMA catalog's N_INT). Here, below
# every layer, so the GMMA catalog and the kernels' configs read one figure and a cached
# kernel's call need not load the layout algebra for it
WGMMA_N_STEP = 8
WGMMA_N_MAX = 256
# the most CTAs a cluster holds without the non-portable opt-in (CUDA C++ Programming Guide,
# "Thread Block Clusters": 8 is portable, 16 needs cudaFuncAttributeNonPortableClusterSizeAllowed)
PORTABLE_CLUSTER = 8

_ARCH = re.compile(r"(?:sm_?)?(\d{2,3})([af]?)", re.IGNORECASE)


def parse_arch(arch: object) -> str:
    """The compile target (``'sm_90a'``) of an architecture name spelled ``sm_90a``,
    ``sm90a``, ``SM_90A`` or ``90a``; an ArchError naming the known targets for anything
    else (None, a number, an unknown architecture such as ``'sm_999'``).

    >>> parse_arch("sm_89"), parse_arch("sm100a")
    ('sm_89', 'sm_100a')
    >>> parse_arch("sm_999")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    cutemma.errors.ArchError: arch 'sm_999' is not an architecture cutemma knows; give one of sm_70, ...
    """
    m = _ARCH.fullmatch(arch.strip()) if isinstance(arch, str) else None
    target = f"sm_{m.group(1)}{m.group(2).lower()}" if m else None
    if target not in LIMITS:
        raise ArchError(
            f"arch {arch!r} is not an architecture cutemma knows; give one of "
            f"{', '.join(LIMITS)} (also spelled sm90a, SM_90A or 90a)"
        )
    return target


def arch_number(arch: str) -> int:
    """'sm_90a' -> 90 (any spelling :func:`parse_arch` reads).

    >>> arch_number("sm_89"), arch_number("sm90a")
    (89, 90)
    """
    return int(parse_arch(arch)[3:].rstrip("af"))


def limits(arch: str) -> ArchLimits:
    """The budgets of ``arch`` (any spelling :func:`parse_arch` reads).

    >>> limits("sm_87").smem_per_block == LIMITS["sm_80"].smem_per_block
    True
    """
    return LIMITS[parse_arch(arch)]
