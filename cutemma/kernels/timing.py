"""How cutemma times GEMM kernels for tuning: the candidate configs, a cold-L2 timer, and
the rule that keeps a winner. :func:`cutemma.tune` (:mod:`cutemma.kernels.tune`) and the
first-use autotune of ``CUTEMMA_AUTOTUNE=1`` (:mod:`cutemma.kernels.autotune`) both time
through here; neither this module nor the autotune hook imports the dispatcher (the
dispatcher calls the hook): the timer receives the function that runs a config.

>>> [c.name for c in default_candidates("bf16")][:2]
['b128x128x32_w2x2_s4', 'b128x256x32_w2x4_s3']
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from cutemma.errors import CutemmaError
from cutemma.hardware import LIMITS
from cutemma.kernels.pick import BUILTIN_CONFIGS, FP8_LARGE, NARROW_16
from cutemma.kernels.sm80.plan import GemmConfig, GemmPlan
from cutemma.kernels.sm90.config import FP8, Sm90Config
from cutemma.kernels.sm90.plan import Sm90Plan
from cutemma.kernels.space import WIDE_16
from cutemma.kernels.tuned import _TORCH_TYPES, is_time, kernel_majors

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


def space_candidates(M: int, N: int, K: int, dtype: str) -> tuple[Sm90Config, ...]:
    """The sm90 kernels of :mod:`.space` for this shape (the built-in pick is one of them,
    so a tuned winner is never one the built-in pick beat in the same timing); none for a
    dtype the sm90 kernel does not take.

    >>> any(c.stream_k for c in space_candidates(700, 8192, 28672, "bf16"))
    True
    """
    from cutemma.kernels.space import candidates

    try:
        return candidates(M, N, K, dtype)
    except CutemmaError:
        return ()


# a candidate replaces the built-in pick only when its median is at least this much shorter:
# below it, two timings of one kernel can rank either way (the run-to-run spread of a cold-L2
# median; tests/kernels/gpu_autotune.py times the built-in twice and reports that spread)
MARGIN = 0.03


def time_candidates(
    cands: Sequence[GemmConfig | Sm90Config], timer: Callable[[Any], float]
) -> tuple[dict[str, float], dict[str, str]]:
    """Each candidate's time in seconds by ``timer``, and why each one without a time has none
    (it does not build, compile or launch: a CutemmaError; or the timer gave no time > 0).

    >>> time_candidates([GemmConfig(), GemmConfig(64, 64, 32)], lambda c: 1e-4 * c.block_m / 64)
    ({'b128x128x32_w2x2_s4': 0.0002, 'b64x64x32_w2x2_s4': 0.0001}, {})
    """
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
    return timings, failures


def beats_builtin(
    cands: Sequence[GemmConfig | Sm90Config], timings: dict[str, float], builtin: Any
) -> GemmConfig | Sm90Config | None:
    """The fastest timed candidate when its time is at most (1 - :data:`MARGIN`) of the
    built-in pick's (timed in the same run), else None: the built-in pick stays, so a
    tuned choice is never one the built-in beat or tied. None also when the built-in has
    no time (nothing to compare with).

    >>> a, b = GemmConfig(), GemmConfig(64, 64, 32)
    >>> beats_builtin([a, b], {a.name: 1.0, b.name: 0.9}, a) == b  # 10% faster: kept
    True
    >>> beats_builtin([a, b], {a.name: 1.0, b.name: 0.99}, a) is None  # within the noise
    True
    """
    base = timings.get(builtin.name)
    if base is None:
        return None
    best = min(cands, key=lambda c: timings.get(c.name, math.inf))
    t = timings.get(best.name, math.inf)
    return best if best != builtin and t <= (1 - MARGIN) * base else None


def event_timer(
    M: int,
    N: int,
    K: int,
    dtype: str,
    a_major: str,
    b_major: str,
    device: int,
    warmup: int,
    reps: int,
    run: Callable[..., Any],
) -> Callable[[Any], float]:
    """A timer(config) -> median seconds of ``run(A, B, out=, config=)`` (``cutemma.gemm``)
    on fresh operands of this shape, dtype and majors (never the caller's: their contents
    are kept), with the L2 flushed before each timed call.

    >>> callable(event_timer)  # its operands live on a GPU: see tests/kernels/gpu_autotune.py
    True
    """
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
            run(A, B, out=out, config=cfg)
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
            out = run(A, B, config=cfg)  # builds and loads the kernel; D of gemm's type
            each = max(statistics.median(calls(cfg, out, 3)), 1e-7)
            calls(cfg, out, max(warmup, min(MAX_CALLS, math.ceil(WARM_S / each))))
            times = calls(cfg, out, max(reps, min(MAX_CALLS, math.ceil(TIMED_S / each))))
        return statistics.median(times)

    return timer
