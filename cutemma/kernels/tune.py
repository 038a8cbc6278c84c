"""``cutemma.tune``: time GemmConfigs (and, on sm_90, Sm90Configs) on the present GPU,
cache the winner per shape class (the cache: :mod:`cutemma.kernels.tuned`).

>>> [c.name for c in default_candidates("bf16")][:2]
['b128x128x32_w2x2_s4', 'b128x256x32_w2x4_s3']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cutemma.errors import LaunchError
from cutemma.kernels.call import device_arch as _arch
from cutemma.kernels.dispatch import gemm
from cutemma.kernels.sm80.plan import GemmConfig
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.timing import (  # (re-exported: tune's names before the core moved)
    EXTRA_CANDIDATES,
    MAX_CALLS,
    SM90_CANDIDATES,
    TIMED_S,
    WARM_S,
    default_candidates,
    event_timer,
    space_candidates,
    time_candidates,
)
from cutemma.kernels.tuned import _dims, device_name, kernel_dtype, kernel_majors, store

__all__ = ["EXTRA_CANDIDATES", "MAX_CALLS", "SM90_CANDIDATES", "TIMED_S", "WARM_S",
           "default_candidates", "tune"]  # fmt: skip


def tune(
    M: int,
    N: int,
    K: int,
    dtype: Any,
    a_major: str = "K",
    b_major: str = "K",
    candidates: Sequence[GemmConfig] | None = None,
    device: int = 0,
    *,
    timer: Callable[[GemmConfig], float] | None = None,
    device_name_: str | None = None,
    warmup: int = 3,
    reps: int = 10,
) -> GemmConfig:
    """Time ``candidates`` for one GEMM on GPU ``device``; cache and return the fastest.

    ``dtype`` is a torch dtype (or its name, or a kernel dtype such as 'e4m3_e5m2');
    ``a_major`` 'K' (A row-major) or 'M', ``b_major`` 'K' (B column-major) or 'N'.
    On an sm_90 GPU the candidates include sm90 configs (:data:`SM90_CANDIDATES`, and every
    kernel of :mod:`.space` for the shape, swapped ones included): the
    winner's family is what cutemma.gemm then runs for the class (an sm80 winner sends
    those calls to sm80). Each candidate runs once untimed (it builds and loads), at least
    ``warmup`` times and :data:`WARM_S` of GPU time, then at least ``reps`` times and
    :data:`TIMED_S` queued back to back, each between CUDA events after a write of twice
    the L2 (operands come from DRAM, as in a model's step and the bench); its time is the
    median. On sm90 the candidates include every kernel of :mod:`.space` for the shape,
    among them the built-in pick.
    A candidate that does not compile or launch is skipped. The winner is written to the
    cache file (see the module doc for the key) and from then on picked by
    :func:`cutemma.gemm` for every shape of the same class.

    ``timer`` (seconds for a config) replaces the GPU timing and ``device_name_`` the
    device's name, so the cache logic runs without a GPU (tests).

    >>> import cutemma                                                  # doctest: +SKIP
    >>> cutemma.tune(4096, 4096, 4096, "bfloat16", "K", "N").name        # doctest: +SKIP
    'b128x128x64_w2x2_s3'
    """
    M, N, K = _dims(M, N, K)
    dt = kernel_dtype(dtype)
    am, bm = kernel_majors(dt, a_major, b_major)
    cands = _check_tune_args(candidates, timer, device_name_, device)
    for what, v, least in (("warmup", warmup, 0), ("reps", reps, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise LaunchError(f"tune: {what}={v!r} must be a whole number >= {least}")
    if cands is None:
        sm90 = timer is None and _no_gpu_reason(device) is None and _is_sm90(device)
        cands = default_candidates(dt, am, bm, sm90)
        if sm90:  # every kernel of the space (the built-in pick's among them)
            extra = list(space_candidates(M, N, K, dt))
            cands += [c for c in extra if c not in cands]
    if not cands:
        raise LaunchError(f"tune: no candidate config builds a {dt} {am}{bm} plan")
    if timer is None:
        reason = _no_gpu_reason(device)
        if reason:
            raise LaunchError(
                f"tune: {reason}; tune times kernels on the GPU they will run on (pass "
                "timer= to exercise the cache without one)"
            )
        timer = event_timer(M, N, K, dt, am, bm, device, warmup, reps, gemm)
    if device_name_ is None and (reason := _no_gpu_reason(device)):
        raise LaunchError(f"tune: {reason}; with timer= pass device_name_= too")
    name = device_name_ if device_name_ is not None else device_name(device)
    timings, failures = time_candidates(cands, timer)
    if not timings:
        raise LaunchError(
            f"tune: every candidate failed for {M}x{N}x{K} {dt}: "
            + "; ".join(f"{k}: {v}" for k, v in failures.items())
        )
    best = min(cands, key=lambda c: timings.get(c.name, float("inf")))
    store(name, M, N, K, dt, am, bm, best, timings)
    return best


def _check_tune_args(
    candidates: object, timer: object, name: object, device: object
) -> list | None:
    """The candidates as a list (None: the defaults); LaunchErrors for tune's optional
    arguments, before anything is timed."""
    from cutemma.layout.checks import as_int

    if candidates is not None:
        if isinstance(candidates, str | bytes) or not hasattr(candidates, "__iter__"):
            raise LaunchError(
                f"tune: candidates={candidates!r}: a list of GemmConfig / Sm90Config, or None"
            )
        candidates = list(candidates)  # a generator is read once
        bad = [c for c in candidates if not isinstance(c, GemmConfig | Sm90Config)]
        if bad:
            raise LaunchError(f"tune: candidates hold {bad[0]!r}: each a GemmConfig or Sm90Config")
    if timer is not None and not callable(timer):
        raise LaunchError(f"tune: timer={timer!r}: a function config -> seconds, or None")
    if name is not None and (not isinstance(name, str) or not name or "|" in name):
        raise LaunchError(f"tune: device_name_={name!r}: a non-empty str without '|', or None")
    if as_int(device) is None or as_int(device) < 0:
        raise LaunchError(f"tune: device={device!r}: a CUDA device index >= 0")
    return candidates


def _is_sm90(device: int) -> bool:
    return _arch(device) == "sm_90a"


def _no_gpu_reason(device: int) -> str | None:
    try:
        import torch
    except ImportError:
        return "torch is not installed (tune makes its operands with it)"
    if not torch.cuda.is_available():
        return "no CUDA GPU is available (torch.cuda.is_available() is False)"
    if device >= torch.cuda.device_count():
        return f"device {device} does not exist ({torch.cuda.device_count()} CUDA devices)"
    return None
