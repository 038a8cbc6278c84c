"""``cutemma.tune``: time GemmConfigs (and, on sm_90, Sm90Configs) on the present GPU,
cache the winner per shape class (the cache: :mod:`cutemma.kernels.tuned`).

>>> [c.name for c in default_candidates("bf16")][:2]
['b128x128x32_w2x2_s4', 'b128x256x32_w2x4_s3']
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from cutemma.errors import CutemmaError, LaunchError
from cutemma.hardware import LIMITS
from cutemma.kernels.call import device_arch as _arch
from cutemma.kernels.dispatch import gemm
from cutemma.kernels.pick import BUILTIN_CONFIGS, FP8_LARGE, NARROW_16
from cutemma.kernels.sm80.plan import GemmConfig, GemmPlan
from cutemma.kernels.sm90.config import FP8, Sm90Config
from cutemma.kernels.sm90.plan import Sm90Plan
from cutemma.kernels.space import WIDE_16
from cutemma.kernels.tuned import (
    _TORCH_TYPES,
    _dims,
    device_name,
    is_time,
    kernel_dtype,
    kernel_majors,
    store,
)

# what tune() times besides the built-in configs (BK=64 s3 beat the default at 4096 on the H100)
EXTRA_CANDIDATES = (
    GemmConfig(128, 128, 64, (2, 2), 3),
    GemmConfig(128, 128, 32, (4, 2), 4),
    GemmConfig(128, 64, 32, (2, 2), 4),
    GemmConfig(64, 128, 32, (2, 2), 4),
)
_SHARED_LIMIT = LIMITS["sm_90a"].smem_per_block  # candidates are built for the H100
# the sm90 configs tune() times on an sm_90 GPU (fast fp8 accumulation is never tried: it
# changes the numbers, not only the speed; clusters of 2 with either B major)
SM90_CANDIDATES = (
    Sm90Config(128, 256),
    Sm90Config(128, 128),
    NARROW_16,  # the 16-bit narrow tile: 64x128 of one warpgroup
    Sm90Config(256, 128),
    Sm90Config(128, 256, group_m=16),
    Sm90Config(128, 256, cluster=2),
    Sm90Config(128, 128, cluster=2),
    Sm90Config(128, 128, schedule="pingpong"),  # each warpgroup its own tile, mainloops in turn
    Sm90Config(128, 192, promote="split"),  # fp8's default: promoted by N halves (run 22)
    Sm90Config(128, 192),  # promoted, both halves at once (2 x 96 accumulators per thread)
    Sm90Config(192, 128, consumers=3),  # promoted fp8's other fast tile (run 14: 0.996x)
    Sm90Config(128, 160, promote="split"),  # fp8 where N is a multiple of 160 (run 6)
    Sm90Config(128, 128, stream_k=True),  # stream-K: a last partial wave's k iterations shared
    Sm90Config(128, 256, stream_k=True),
    WIDE_16,  # 128x320 as m64n256 + m64n64 (16-bit): whole waves where 128x256's are not
)


# GPU time a candidate runs before it is timed (the clocks settle after the idle of its
# compile), and at least as much timed; a call count is capped for kernels of a few us
WARM_S = 5e-3
TIMED_S = 5e-3
MAX_CALLS = 2000


def default_candidates(
    dtype: str, a_major: str = "K", b_major: str = "K", sm90: bool = False
) -> list[GemmConfig | Sm90Config]:
    """Built-in configs and a few more that build a valid plan for ``dtype`` and fit in smem;
    with ``sm90`` (an sm_90 GPU) also the sm90 configs whose plan builds (fp8: promoted
    accumulation only, so tiles of at most 2 x 96 accumulators per thread: 128x128,
    128x192, 192x128 with 3 consumers; pingpong 128x128 is bf16/f16/tf32 only).

    >>> [c.name for c in default_candidates("s8")][:2]
    ['b128x128x32_w2x2_s4', 'b128x256x32_w2x4_s3']
    >>> [c.name for c in default_candidates("bf16", "K", "N", sm90=True) if isinstance(c, Sm90Config)][3:]
    ['b256x128_c2_sauto', 'b128x256_c2_sauto_g16', 'b128x256_c2_sauto_x2', 'b128x128_c2_sauto_x2', 'b128x128_c2_sauto_pp', 'b128x192_c2_sauto', 'b192x128_c3_sauto', 'b128x128_c2_sauto_sk', 'b128x256_c2_sauto_sk', 'b128x320x32_c2_sauto_etma2_n256_64']
    >>> [c.name for c in default_candidates("e4m3", sm90=True) if isinstance(c, Sm90Config)]
    ['b128x128_c2_sauto', 'b64x128_c1_sauto', 'b128x128_c2_sauto_x2', 'b128x192_c2_sauto_spl', 'b128x192_c2_sauto', 'b192x128_c3_sauto', 'b128x160_c2_sauto_spl', 'b128x128_c2_sauto_sk']
    """
    kernel_majors(dtype, a_major, b_major)  # names the kernels know, else a LaunchError
    out: list[GemmConfig | Sm90Config] = []
    for cfg in (*BUILTIN_CONFIGS.values(), FP8_LARGE, *EXTRA_CANDIDATES):
        if cfg in out:
            continue
        try:
            plan = GemmPlan(cfg, dtype, a_major, b_major)
        except CutemmaError:
            continue  # e.g. block_k below the atom's K
        if plan.shared_bytes <= _SHARED_LIMIT:
            out.append(cfg)
    if sm90:
        for cfg in SM90_CANDIDATES:
            if cfg.promote is not True and dtype not in FP8:
                continue  # an fp8 accumulation variant: for other types its twin's kernel
            try:
                Sm90Plan(cfg, dtype, a_major, b_major, "bf16")
            except CutemmaError:
                continue  # a dtype sm90 does not take (fp8 with an MN-major operand), ...
            out.append(cfg)
    return out


def _space_candidates(M: int, N: int, K: int, dtype: str) -> tuple[Sm90Config, ...]:
    """The sm90 kernels of :mod:`.space` for this shape (the built-in pick is one of them,
    so a tuned winner is never one the built-in pick beat in the same timing); none for a
    dtype the sm90 kernel does not take.

    >>> any(c.stream_k for c in _space_candidates(700, 8192, 28672, "bf16"))
    True
    """
    from cutemma.kernels.space import candidates

    try:
        return candidates(M, N, K, dtype)
    except CutemmaError:
        return ()


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
            extra = list(_space_candidates(M, N, K, dt))
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
        timer = _event_timer(M, N, K, dt, am, bm, device, warmup, reps)
    if device_name_ is None and (reason := _no_gpu_reason(device)):
        raise LaunchError(f"tune: {reason}; with timer= pass device_name_= too")
    name = device_name_ if device_name_ is not None else device_name(device)
    timings: dict[str, float] = {}
    failures: dict[str, str] = {}
    for cfg in cands:
        try:
            t = timer(cfg)
        except CutemmaError as exc:  # does not build, compile or launch: not a candidate
            failures[cfg.name] = f"{type(exc).__name__}: {exc}"
            continue
        if is_time(t):
            timings[cfg.name] = float(t)
        else:  # NaN, inf, 0 or not a number: no measurement, never a winner
            failures[cfg.name] = f"the timer gave {t!r}, not a time in seconds > 0"
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


def _event_timer(M, N, K, dtype, a_major, b_major, device, warmup, reps):
    """A timer(config) -> median seconds of gemm on fresh operands of the tuned majors."""
    import torch

    dev = torch.device("cuda", device)
    name = {v: k for k, v in _TORCH_TYPES.items()}
    parts = dtype.split("_")  # 'e4m3_e5m2': A e4m3, B e5m2
    ta, tb = name[parts[0]], name[parts[-1]]

    def make(rows, cols, contiguous_rows, tname):
        shape = (cols, rows) if contiguous_rows else (rows, cols)
        t = torch.randn(shape, device=dev)
        t = t.clamp(-100, 100).round() if tname == "int8" else t
        t = t.to(getattr(torch, tname))
        return t.t() if contiguous_rows else t

    A = make(M, K, a_major == "M", ta)
    B = make(K, N, b_major == "K", tb)
    # written between timed calls: twice L2, so each call reads its operands from DRAM
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    flush = torch.empty(2 * max(l2, 1 << 20), dtype=torch.uint8, device=dev)

    def calls(cfg: GemmConfig | Sm90Config, out: Any, n: int) -> list:
        """``n`` calls queued back to back, each between a pair of CUDA events."""
        events = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(n)
        ]
        for start, end in events:
            flush.zero_()  # operands out of L2, as a model's call finds them (untimed)
            start.record()
            gemm(A, B, out=out, config=cfg)
            end.record()
        events[-1][1].synchronize()
        return [s.elapsed_time(e) / 1e3 for s, e in events]

    def timer(cfg: GemmConfig) -> float:
        # Queued back to back and synchronized once, each pair of events brackets a kernel
        # alone. Synchronizing after every call (as before) started the clock while the
        # host was still inside gemm (~10-20 us of Python), which ranked short kernels by
        # their host paths: a bf16 (16, 8192, 8192) decode call measured 71 us against 54
        # us of kernel, and an sm80 32x32 tile won (gpu_tune_sm90.py). And a few calls of
        # 30 us after a compile's idle ran at the clocks of an idle GPU: e4m3 (16, 10240,
        # 8192)'s decode config measured 33 us in one run and 43 in the next.
        with torch.cuda.device(dev):
            out = gemm(A, B, config=cfg)  # builds and loads the kernel; D of gemm's type
            each = max(statistics.median(calls(cfg, out, 3)), 1e-7)
            calls(cfg, out, max(warmup, min(MAX_CALLS, math.ceil(WARM_S / each))))
            times = calls(cfg, out, max(reps, min(MAX_CALLS, math.ceil(TIMED_S / each))))
        return statistics.median(times)

    return timer
