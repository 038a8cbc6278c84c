"""``CUTEMMA_AUTOTUNE=1``: the first call of each new shape bucket tunes it, then runs the winner.

A bucket is the tuning cache's key (:mod:`cutemma.kernels.tuned`): the device's name, the
shape class (M, N, K each rounded up to a power of two), the kernel dtype and the majors.
With the switch set when ``cutemma.gemm`` is first looked up, ``cutemma.gemm`` is this
module's :func:`gemm`: a front above the dispatcher (which knows nothing of tuning). A call
signature it has not seen, asking for no config, design or TiledMMA, is checked
(:func:`cutemma.kernels.dispatch.checked`) and its bucket tuned by :func:`first_use`; then, as
every call, it goes to :func:`cutemma.kernels.dispatch.gemm`, whose policy finds the bucket's
entry. A repeat costs the front one set look-up before the dispatcher's fast path.

What runs: the built-in pick of this call (the policy's choice) and every candidate
:func:`cutemma.tune` would time (:func:`cutemma.kernels.timing.default_candidates`, on sm_90
also the kernel space's for the shape), each timed by the cold-L2 timer
(:func:`cutemma.kernels.timing.event_timer`) on fresh operands of the call's shape, dtype and
majors: the caller's tensors are never written. A candidate is stored only when it beats
the built-in by :data:`cutemma.kernels.timing.MARGIN`
(:func:`cutemma.kernels.timing.beats_builtin`); else the bucket is stored as "built-in kept",
so it is not tuned again and gemm keeps its per-shape pick there.

Once per bucket and device: across processes by the cache file (read again before tuning, so
a bucket another process stored meanwhile is taken, not tuned), across threads by one lock
per process (a second thread waits, then uses what the first stored; tunings never overlap
on the GPU, where they would time each other). Skipped, with the built-in pick: batched
calls, calls with C or a fused epilogue (the timer runs plain 2-D GEMMs), and calls while a
CUDA graph is captured (a capture cannot time). A call torch traces never reaches here: it
becomes the custom op's node before the policy runs.

>>> import os
>>> os.environ.pop(ENV, None) and None
>>> enabled()
False
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from typing import Any

from cutemma.errors import LaunchError
from cutemma.kernels import dispatch, tuned
from cutemma.kernels.runtime.capture import capturing

ENV = "CUTEMMA_AUTOTUNE"

# held while a bucket is tuned: one tuning at a time per process (see the module doc)
_TUNE_LOCK = threading.Lock()


def enabled() -> bool:
    """Whether ``CUTEMMA_AUTOTUNE`` asks for tuning on first use: '1' yes; unset, '' or '0' no.

    >>> os.environ[ENV] = "1"; enabled()
    True
    >>> os.environ[ENV] = "yes"; enabled()
    Traceback (most recent call last):
    ...
    cutemma.errors.LaunchError: gemm: CUTEMMA_AUTOTUNE='yes'; set it to 1 (tune each new shape bucket on its first call) or 0 / unset (off)
    >>> del os.environ[ENV]
    """
    value = os.environ.get(ENV, "")
    if value in ("", "0"):
        return False
    if value == "1":
        return True
    raise LaunchError(
        f"gemm: {ENV}={value!r}; set it to 1 (tune each new shape bucket on its first call) "
        "or 0 / unset (off)"
    )


def gemm(A: Any, B: Any, C: Any = None, **kwargs: Any) -> Any:
    """:func:`cutemma.kernels.dispatch.gemm` (same arguments, same answer), the first call of
    each signature tuning its shape bucket first where the switch is on (module doc).

    >>> os.environ.pop(ENV, None) and None
    >>> gemm.__name__
    'gemm'
    """
    if enabled() and not any(kwargs.get(k) is not None for k in _ASKED):
        _first(A, B, C, kwargs)
    return dispatch.gemm(A, B, C, **kwargs)


_ASKED = ("config", "design", "tiled_mma")  # a kernel the caller chose: nothing to tune
_SEEN: dict[tuple, None] = {}  # signatures whose bucket is settled in this process
_SEEN_MAX = 4096


def _first(A: Any, B: Any, C: Any, kwargs: dict) -> None:
    """Tune the bucket of a call signature not seen yet (its operands' shapes, strides,
    dtypes and device, and which optional tensors it has)."""
    try:
        key = (A.shape, A.stride(), A.dtype, B.shape, B.stride(), B.dtype, A.device, C is None,
               tuple(k for k, v in kwargs.items() if v is not None))  # fmt: skip
    except (AttributeError, TypeError):  # not tensors: the dispatcher names what is wrong
        return
    if key in _SEEN or dispatch.traced(A, B):
        return
    call, choice = dispatch.checked(A, B, C, **kwargs)
    if call.done is None:
        first_use(call, choice, dispatch.gemm)
    if len(_SEEN) >= _SEEN_MAX:
        _SEEN.clear()
    _SEEN[key] = None


def builtin_config(choice: Any) -> Any:
    """The config the policy's built-in ``choice`` names, as :func:`cutemma.gemm` takes it back
    (a swapped choice runs its config with ``swap_ab`` cleared: set again here).

    >>> from cutemma.kernels.policy import Choice
    >>> from cutemma.kernels.sm90.config import Sm90Config
    >>> builtin_config(Choice("sm90", Sm90Config(128, 128), swap=True)).swap_ab
    True
    """
    return replace(choice.config, swap_ab=True) if choice.swap else choice.config


def first_use(call: Any, choice: Any, run: Any, timer: Any = None) -> bool:
    """Tune ``call``'s bucket when it has no entry yet (see the module doc); True when the
    bucket has one now (the dispatcher's policy then finds it), False when nothing changed.

    ``choice``: the policy's built-in choice for ``call``; ``run``: :func:`cutemma.gemm`, which
    the timer calls with each candidate's ``config=``; ``timer`` (config -> seconds) replaces
    the GPU timer (tests).

    >>> import os, tempfile, types
    >>> os.environ["CUTEMMA_CACHE_DIR"] = tempfile.mkdtemp(); tuned.reload()
    >>> from cutemma.kernels.policy import Choice
    >>> from cutemma.kernels.sm80.config import GemmConfig
    >>> call = types.SimpleNamespace(M=500, N=512, K=512, batch=None, C=None, epilogue=None,
    ...     dtype="bf16", a_major="K", b_major="N", device=0, arch="sm_80", gpu="")
    >>> named = tuned.device_name
    >>> tuned.device_name = lambda device: "some GPU"  # (no GPU here)
    >>> quick = GemmConfig(64, 64, 32)
    >>> first_use(call, Choice("sm80", GemmConfig()), None, lambda c: 1.0 if c == quick else 2.0)
    True
    >>> tuned.lookup("some GPU", 512, 512, 512, "bf16", "K", "N") == quick  # the bucket's winner
    True
    >>> first_use(call, Choice("sm80", GemmConfig()), None, lambda c: 1 / 0)  # tuned: not again
    False
    >>> tuned.device_name = named; tuned.reload()
    """
    if call.batch is not None or call.C is not None or call.epilogue is not None:
        return False
    if capturing():  # a capture cannot time; the built-in pick runs
        return False
    bucket = (tuned.device_name(call.device), call.M, call.N, call.K, call.dtype,
              call.a_major, call.b_major)  # fmt: skip
    if tuned.decided(*bucket):
        return False
    with _TUNE_LOCK:  # a second thread of this bucket waits here, then finds it decided
        if tuned.decided(*bucket):
            return True
        tuned.refresh()  # another process may have stored it since this one read the file
        if not tuned.decided(*bucket):
            _tune(call, builtin_config(choice), run, bucket[0], timer)
    return True


def _tune(call: Any, builtin: Any, run: Any, name: str, timer: Any) -> None:
    """Time the built-in and the candidates for ``call``'s problem; store the winner, or that
    the built-in stays (also when nothing could be timed: the bucket is not tried again)."""
    from cutemma.kernels import timing

    M, N, K, dt, am, bm = call.M, call.N, call.K, call.dtype, call.a_major, call.b_major
    sm90 = call.arch == "sm_90a"
    cands = [builtin]
    for c in (*timing.default_candidates(dt, am, bm, sm90),
              *(timing.space_candidates(M, N, K, dt) if sm90 else ())):  # fmt: skip
        if c not in cands:
            cands.append(c)
    if timer is None:
        timer = timing.event_timer(M, N, K, dt, am, bm, call.device, 3, 10, run)
    timings, _ = timing.time_candidates(cands, timer)
    best = timing.beats_builtin(cands, timings, builtin)
    tuned.store(name, M, N, K, dt, am, bm, best, timings)
