"""Compile many probe kernels at once: batched NVRTC programs, bisected on error, in parallel.

Each probe's SASS must contain one of its expected tensor-core kinds and touch no
local memory (issue 7, acceptance 1).
"""

from __future__ import annotations

import multiprocessing
import os
import re
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from cutemma.cuda.report import Progress
from cutemma.errors import CompileError

BATCH = 48  # probes per NVRTC program: big enough to amortise NVRTC start-up, small to bisect

_FUNCTION = re.compile(r"^\s*Function : (\S+)", re.M)


def split_sass(sass_text: str) -> dict[str, str]:
    """The SASS of each kernel of a cubin, by kernel name (cuobjdump's ``Function :`` headers).

    >>> split_sass("Function : k1\\n /*0000*/ EXIT ;\\nFunction : k2\\n /*0000*/ NOP ;")['k2']
    ' /*0000*/ NOP ;'
    """
    parts = _FUNCTION.split(sass_text)
    return {parts[i]: parts[i + 1].strip("\n") for i in range(1, len(parts) - 1, 2)}


@dataclass(frozen=True)
class CompiledProbe:
    """A probe's compile outcome: the cubin holding it (None on failure), kinds seen, problem."""

    probe: object
    cubin: object | None
    kinds: dict
    problem: str | None


def _program(probes: Sequence) -> str:
    from cutemma.cuda.source import FIXED_WIDTH_TYPES

    return "\n\n".join([FIXED_WIDTH_TYPES, *(p.source for p in probes)]) + "\n"


def _check_kernel(probe, kernel_sass: str | None, usage: dict) -> tuple[dict, str | None]:
    from cutemma.cuda.sass import count_instructions

    if kernel_sass is None:
        return {}, f"kernel {probe.kernel_name} not found in the cubin's SASS"
    counts = count_instructions(kernel_sass)
    kinds = {k: n for k, n in counts.items() if k.endswith("MMA") or k in probe.sass_kinds}
    local = counts.get("LDL", 0) + counts.get("STL", 0) + usage.get("STACK", 0)
    local += usage.get("LOCAL", 0)
    if probe.sass_kinds and not any(k in counts for k in probe.sass_kinds):
        return (
            kinds,
            f"SASS has none of {probe.sass_kinds} (tensor-core kinds seen: {kinds or 'none'})",
        )
    if local:
        return kinds, (
            f"local memory used (LDL/STL {counts.get('LDL', 0)}/{counts.get('STL', 0)}, "
            f"stack {usage.get('STACK', 0)} B)"
        )
    return kinds, None


def compile_batch(probes: Sequence, arch: str) -> list[CompiledProbe]:
    """Compile ``probes`` as one NVRTC program for ``arch``; bisect to find any that fail.

    >>> from cutemma.cuda.probe import probe_for
    >>> from cutemma.mma import mma_op
    >>> [c.problem for c in compile_batch([probe_for(mma_op('SM61_DP4A'))], 'sm_80')]
    [None]
    """
    from cutemma.cuda.compile import compile as nvrtc_compile
    from cutemma.cuda.sass import resource_usage, sass

    try:
        cubin = nvrtc_compile(_program(probes), arch)
    except CompileError as err:
        if len(probes) == 1:
            first = str(err).splitlines()
            return [CompiledProbe(probes[0], None, {}, "compile error: " + " | ".join(first[:4]))]
        half = len(probes) // 2
        return compile_batch(probes[:half], arch) + compile_batch(probes[half:], arch)
    per_kernel = split_sass(sass(cubin))
    usage = resource_usage(cubin)
    out = []
    for p in probes:
        kinds, problem = _check_kernel(
            p, per_kernel.get(p.kernel_name), usage.get(p.kernel_name, {})
        )
        out.append(CompiledProbe(p, cubin, kinds, problem))
    return out


def _compile_job(job: tuple[str, list]) -> list[CompiledProbe]:
    return compile_batch(job[1], job[0])


def compile_probes(
    probes: Sequence, arch: str | None = None, progress: Progress | None = None, workers: int = 0
) -> list[CompiledProbe]:
    """Compile probes in batches of :data:`BATCH` per program, grouped by target, in parallel.

    ``arch`` overrides every probe's own target (the hardware stage compiles for
    the GPU present). Results come back in the order of ``probes``.

    >>> from cutemma.cuda.probe import probe_for
    >>> from cutemma.mma import mma_ops
    >>> probes = [probe_for(op) for op in mma_ops(family='sm61.dp')]
    >>> [(c.probe.kernel_name, c.kinds, c.problem) for c in compile_probes(probes, workers=1)]
    [('probe_SM61_DP4A', {'IDP': 1}, None), ('probe_SM61_DP2A', {'IDP': 1}, None)]
    """
    groups: dict[str, list] = {}
    for p in probes:
        groups.setdefault(arch or p.arch, []).append(p)
    jobs = [
        (target, ps[i : i + BATCH])
        for target, ps in groups.items()
        for i in range(0, len(ps), BATCH)
    ]
    results: dict[str, CompiledProbe] = {}
    # NVRTC holds the GIL, so batches compile in worker processes. Forked where safe;
    # once torch is loaded (its threads make fork risky) from a fresh forkserver.
    n = workers or min(16, os.cpu_count() or 1, len(jobs) or 1)
    ctx = multiprocessing.get_context("forkserver" if "torch" in sys.modules else "fork")
    with _main_not_rerun(), ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
        for batch_result in pool.map(_compile_job, jobs):
            for r in batch_result:
                results[r.probe.kernel_name] = r
            if progress:
                progress.advance(len(batch_result))
    return [results[p.kernel_name] for p in probes]


@contextmanager
def _main_not_rerun():
    """Hide the caller's main script from forkserver workers while they start.

    A forkserver worker re-runs the parent's ``__main__`` file unless it is guarded by
    ``if __name__ == "__main__"`` (multiprocessing's "safe importing of main module"),
    so a plain script calling ``verify`` would recurse. The workers run
    :func:`_compile_job` from this module and need nothing from ``__main__``.
    """
    main = sys.modules.get("__main__")
    saved = {k: v for k, v in vars(main).items() if k in ("__file__", "__spec__")} if main else {}
    if "__file__" in saved:
        del main.__file__
    if "__spec__" in saved:
        main.__spec__ = None
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(main, k, v)
