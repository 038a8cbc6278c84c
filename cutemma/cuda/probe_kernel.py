"""The record every probe builder returns: :class:`Probe`, and :class:`ProbeUnavailable`.

The builders (:func:`cutemma.cuda.codegen.warp_probe` for register-sourced atoms,
:mod:`cutemma.cuda.probe_gmma`, :mod:`cutemma.cuda.probe_umma`) import it from here, and
:func:`cutemma.cuda.probe.probe_for` picks the builder, so the imports run one way:
probe -> builders -> probe_kernel. The kernel contract is in :mod:`cutemma.cuda.probe`.

>>> issubclass(ProbeUnavailable, CompileError)
True
"""

from __future__ import annotations

from dataclasses import dataclass

from cutemma.errors import CompileError
from cutemma.mma.operation import Operation


class ProbeUnavailable(CompileError):
    """No probe can be built here: its builder is missing, or NVRTC is too old for it."""


@dataclass(frozen=True)
class Probe:
    """A compilable kernel that runs one atom's instruction once on a whole tile.

    ``source`` is one complete ``__global__`` definition without headers (the
    program prepends :data:`cutemma.cuda.source.FIXED_WIDTH_TYPES` once);
    ``runnable_on`` lists the NVRTC archs whose GPUs may launch it (empty:
    compile-only). Its parameters are ``(A, B, C, D)`` tiles in the atom's formats,
    plus ``E``, one sparsity-metadata word per thread, for sparse GMMA
    (:mod:`cutemma.cuda.probe_gmma`).

    >>> Probe(None, 'k', 'extern "C" __global__ void k() {}', 'sm_80', ('HMMA',), 32).runnable_on
    ()
    """

    op: Operation
    kernel_name: str
    source: str
    arch: str
    sass_kinds: tuple[str, ...]
    threads: int
    shared_bytes: int = 0
    runnable_on: tuple[str, ...] = ()
