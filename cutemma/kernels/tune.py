"""``cutemma.tune``: time GemmConfigs (and, on sm_90, Sm90Configs) on the present GPU,
cache the winner per shape class.

The winner is stored in ``gemm-tune.json`` in the cutemma cache folder
(``$CUTEMMA_CACHE_DIR``, see :mod:`cutemma.cuda.cache`), keyed by

    (device name, shape class, kernel dtype, A major, B major)

and :func:`cutemma.gemm` consults it before its built-in table: the file is read
once per process, then each call costs one dict look-up (none at all while nothing
was tuned).

Shape class: each of M, N and K rounded up to a power of two (:func:`shape_class`),
so 1000 and 1024 share a class and 1025 starts the next. A config tuned for one
shape serves every shape of its class; the batch count of a batched call is not
part of the key. Majors are the kernel's: 8- and 32-bit types (int8, tf32, fp8)
are always read K-major, so their key says 'KK' whatever the tensors' strides.

>>> shape_class(1000, 1024, 1025)
(1024, 1024, 2048)
>>> entry_key("NVIDIA H100 80GB HBM3", 4096, 4096, 4096, "bf16", "K", "N")
'NVIDIA H100 80GB HBM3|m4096,n4096,k4096|bf16|KN'
"""

from __future__ import annotations

import json
import math
import os
import statistics
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Any

from cutemma.errors import CutemmaError, LaunchError
from cutemma.kernels.plan import ELEM_BYTES, GemmConfig, GemmPlan
from cutemma.kernels.plan_sm90 import FP8, Sm90Config, Sm90Plan

FILE_NAME = "gemm-tune.json"
_FORMAT = 1  # bump when an entry's meaning changes: old files are then ignored
# what tune() times besides the built-in configs (BK=64 s3 beat the default at 4096 on the H100)
EXTRA_CANDIDATES = (
    GemmConfig(128, 128, 64, (2, 2), 3),
    GemmConfig(128, 128, 32, (4, 2), 4),
    GemmConfig(128, 64, 32, (2, 2), 4),
    GemmConfig(64, 128, 32, (2, 2), 4),
)
_SHARED_LIMIT = 227 * 1024  # opt-in shared memory per block on sm_80 / sm_90
# the sm90 configs tune() times on an sm_90 GPU (fast fp8 accumulation is never tried: it
# changes the numbers, not only the speed; clusters of 2 with either B major)
SM90_CANDIDATES = (
    Sm90Config(128, 256),
    Sm90Config(128, 128),
    Sm90Config(256, 128),
    Sm90Config(128, 256, group_m=16),
    Sm90Config(128, 256, cluster=2),
    Sm90Config(128, 128, cluster=2),
    Sm90Config(128, 128, schedule="pingpong"),  # each warpgroup its own tile, mainloops in turn
    Sm90Config(128, 192, promote="split"),  # fp8's default: promoted by N halves (run 22)
    Sm90Config(128, 192),  # promoted, both halves at once (2 x 96 accumulators per thread)
    Sm90Config(192, 128, consumers=3),  # promoted fp8's other fast tile (run 14: 0.996x)
)
_TORCH_TYPES = {  # torch dtype name -> kernel dtype (what the cache key says)
    "float16": "f16",
    "bfloat16": "bf16",
    "float32": "tf32",
    "int8": "s8",
    "float8_e4m3fn": "e4m3",
    "float8_e5m2": "e5m2",
}

# key tuple -> GemmConfig or Sm90Config, loaded from the file once (None: not yet read)
_TABLE: dict[tuple, GemmConfig | Sm90Config] | None = None


def shape_class(m: int, n: int, k: int) -> tuple[int, int, int]:
    """M, N, K each rounded up to a power of two (1 stays 1): the tuning cache's buckets.

    >>> shape_class(1, 17, 4096)
    (1, 32, 4096)
    """
    return tuple(1 << max(x - 1, 0).bit_length() for x in _dims(m, n, k))


def _dims(m: object, n: object, k: object) -> tuple[int, int, int]:
    """M, N, K as plain ints, each a whole number >= 1 (numpy ints too), else a LaunchError."""
    from cutemma.layout.checks import as_int

    for what, v in (("M", m), ("N", n), ("K", k)):
        if as_int(v) is None or as_int(v) < 1:
            raise LaunchError(f"tune: {what}={v!r} must be a whole number >= 1")
    return as_int(m), as_int(n), as_int(k)


def entry_key(device: str, m: int, n: int, k: int, dtype: str, a_major: str, b_major: str) -> str:
    """The JSON key of one cache entry (the shape is bucketed here).

    >>> entry_key("NVIDIA H100 80GB HBM3", 1000, 1000, 3000, "f16", "M", "K")
    'NVIDIA H100 80GB HBM3|m1024,n1024,k4096|f16|MK'
    """
    mb, nb, kb = shape_class(m, n, k)
    if not isinstance(device, str) or not device or "|" in device:
        raise LaunchError(f"tune: device name {device!r}: a non-empty str without '|'")
    kernel_majors(kernel_dtype(dtype), a_major, b_major)  # each a name the kernels know
    return f"{device}|m{mb},n{nb},k{kb}|{dtype}|{a_major}{b_major}"


def kernel_dtype(dtype: Any) -> str:
    """'bf16', 'e4m3', ... from a torch dtype, its name, or a kernel dtype name.

    >>> kernel_dtype("bfloat16"), kernel_dtype("float8_e4m3fn"), kernel_dtype("e4m3_e5m2")
    ('bf16', 'e4m3', 'e4m3_e5m2')
    """
    name = str(dtype).replace("torch.", "")
    name = _TORCH_TYPES.get(name, name)
    if not isinstance(dtype, str) and not type(dtype).__module__.startswith("torch"):
        name = repr(dtype)  # str(1) == '1' must not pass for a dtype name
    if name not in ELEM_BYTES:
        raise LaunchError(
            f"tune: dtype {dtype!r}; give a torch dtype ({', '.join(_TORCH_TYPES)}) or a kernel "
            f"dtype ({', '.join(ELEM_BYTES)})"
        )
    return name


def kernel_majors(dtype: str, a_major: str, b_major: str) -> tuple[str, str]:
    """The majors the kernel reads: as given for 16-bit types, 'K', 'K' for the others.

    >>> kernel_majors("bf16", "M", "N"), kernel_majors("s8", "M", "N")
    (('M', 'N'), ('K', 'K'))
    """
    if not isinstance(dtype, str) or dtype not in ELEM_BYTES:
        raise LaunchError(f"tune: kernel dtype {dtype!r}; one of {', '.join(ELEM_BYTES)}")
    if a_major not in ("K", "M") or b_major not in ("K", "N"):
        raise LaunchError(
            f"tune: a_major {a_major!r} is 'K' or 'M'; b_major {b_major!r} 'K' or 'N'"
        )
    return (a_major, b_major) if ELEM_BYTES[dtype] == 2 else ("K", "K")


def cache_path() -> Path:
    """Where the tuned configs live: ``gemm-tune.json`` in the cutemma cache folder.

    >>> from cutemma.cuda.cache import cache_dir
    >>> cache_path() == cache_dir() / "gemm-tune.json"
    True
    """
    from cutemma.cuda.cache import cache_dir

    return cache_dir() / FILE_NAME


def _read_file() -> dict[str, dict]:
    """The file's entries; {} when it is absent, unreadable or of another format."""
    try:
        data = json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return {}
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


def _config_of(entry: dict) -> GemmConfig | Sm90Config | None:
    try:
        cfg = dict(entry["config"])
        if entry.get("family") == "sm90":
            return Sm90Config(**cfg)
        cfg["warps"] = tuple(cfg["warps"])
        return GemmConfig(**cfg)
    except (KeyError, TypeError, ValueError, CutemmaError):
        return None  # a damaged or foreign entry is a miss, never an error in gemm()


def table() -> dict[tuple, GemmConfig]:
    """{(device, mb, nb, kb, dtype, a_major, b_major): GemmConfig}, read once per process.

    One entry stored in an empty cache folder, read back from the file:

    >>> import os, tempfile
    >>> os.environ["CUTEMMA_CACHE_DIR"] = tempfile.mkdtemp()
    >>> _ = store("some GPU", 1000, 64, 64, "bf16", "K", "N", GemmConfig(), {})
    >>> reload()
    >>> list(table())
    [('some GPU', 1024, 64, 64, 'bf16', 'K', 'N')]
    """
    global _TABLE
    if _TABLE is None:
        loaded = {}
        for key, entry in _read_file().items():
            parts = key.split("|")
            cfg = _config_of(entry) if isinstance(entry, dict) else None
            if len(parts) != 4 or cfg is None:
                continue
            device, shape, dtype, majors = parts
            try:
                mb, nb, kb = (int(x[1:]) for x in shape.split(","))
            except ValueError:
                continue
            loaded[(device, mb, nb, kb, dtype, majors[:1], majors[1:])] = cfg
        _TABLE = loaded
    return _TABLE


def reload() -> None:
    """Forget the loaded table: the next look-up reads the file again (e.g. a new cache dir),
    and the prepared launches of repeated calls, which chose their configs from the old one.

    >>> import os, tempfile
    >>> os.environ["CUTEMMA_CACHE_DIR"] = tempfile.mkdtemp()  # a new, empty cache folder
    >>> reload()
    >>> table()
    {}
    """
    global _TABLE
    _TABLE = None
    from cutemma.kernels.fastpath import FAST

    FAST.clear()


def lookup(
    device: str, m: int, n: int, k: int, dtype: str, a_major: str, b_major: str
) -> GemmConfig | None:
    """The tuned config of this device name and shape class, or None.

    >>> lookup("no such GPU", 64, 64, 64, "bf16", "K", "K") is None
    True
    """
    tab = _TABLE if _TABLE is not None else table()
    if not tab:
        return None
    mb, nb, kb = shape_class(m, n, k)
    try:
        return tab.get((device, mb, nb, kb, dtype, a_major, b_major))
    except TypeError:  # a list or dict where a name belongs
        raise LaunchError(
            f"tune.lookup: device {device!r}, dtype {dtype!r}, majors {a_major!r} {b_major!r}: "
            "each a str"
        ) from None


def lookup_device(
    device: int, m: int, n: int, k: int, dtype: str, a_major: str, b_major: str
) -> GemmConfig | None:
    """:func:`lookup` for a CUDA device index (gemm's hot path: nothing tuned, no work).

    With nothing tuned it returns None without asking torch for the device's name:

    >>> import os, tempfile
    >>> os.environ["CUTEMMA_CACHE_DIR"] = tempfile.mkdtemp()
    >>> reload()
    >>> lookup_device(0, 4096, 4096, 4096, "bf16", "K", "N") is None
    True
    """
    tab = _TABLE if _TABLE is not None else table()
    if not tab:
        return None
    mb, nb, kb = shape_class(m, n, k)
    return tab.get((device_name(device), mb, nb, kb, dtype, a_major, b_major))


@cache
def device_name(device: int) -> str:
    """The GPU's name as torch reports it (asked once per device).

    >>> device_name(0)  # doctest: +SKIP
    'NVIDIA H100 80GB HBM3'
    """
    import torch

    return torch.cuda.get_device_name(device)


def store(
    device: str,
    m: int,
    n: int,
    k: int,
    dtype: str,
    a_major: str,
    b_major: str,
    config: GemmConfig,
    timings: dict[str, float],
) -> Path:
    """Merge one winner into the file (atomic rename) and into the loaded table.

    The config then serves every shape of the class (here 1024 x 1024 x 1024):

    >>> import os, tempfile
    >>> os.environ["CUTEMMA_CACHE_DIR"] = tempfile.mkdtemp()
    >>> reload()
    >>> cfg = GemmConfig(128, 128, 64, (2, 2), 3)
    >>> store("some GPU", 1000, 1000, 1000, "bf16", "K", "N", cfg, {cfg.name: 1e-4}).name
    'gemm-tune.json'
    >>> lookup("some GPU", 1024, 999, 513, "bf16", "K", "N").name
    'b128x128x64_w2x2_s3'
    """
    key = entry_key(device, m, n, k, dtype, a_major, b_major)
    if not isinstance(config, GemmConfig | Sm90Config):
        raise LaunchError(f"tune.store: config {config!r}: a GemmConfig or an Sm90Config")
    bad = _bad_timings(timings)
    if bad:
        raise LaunchError(f"tune.store: timings {bad}: a dict of config name -> seconds > 0")
    path = cache_path()
    entries = _read_file()
    entries[key] = {
        "family": "sm90" if isinstance(config, Sm90Config) else "sm80",
        "config": asdict(config),
        "seconds": timings.get(config.name),
        "timings": timings,
        "shape": [m, n, k],
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".gemm-tune-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump({"format": _FORMAT, "entries": entries}, f, indent=1, sort_keys=True)
        os.replace(tmp, path)  # readers see the old file or the new one, never half
    except OSError as e:  # the cache folder is a file, read-only, full ...
        raise LaunchError(
            f"tune: cannot write the tuning cache {path}: {e.strerror or e}; point "
            "CUTEMMA_CACHE_DIR at a writable folder"
        ) from e
    mb, nb, kb = shape_class(m, n, k)
    table()[(device, mb, nb, kb, dtype, a_major, b_major)] = config
    from cutemma.kernels.fastpath import FAST

    FAST.clear()  # prepared launches chose their config before this winner existed
    return path


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
    ['b128x256_c2_sauto_g16', 'b128x256_c2_sauto_x2', 'b128x128_c2_sauto_x2', 'b128x128_c2_sauto_pp', 'b128x192_c2_sauto', 'b192x128_c3_sauto']
    >>> [c.name for c in default_candidates("e4m3", sm90=True) if isinstance(c, Sm90Config)]
    ['b128x128_c2_sauto', 'b128x128_c2_sauto_x2', 'b128x192_c2_sauto_spl', 'b128x192_c2_sauto', 'b192x128_c3_sauto']
    """
    from cutemma.kernels.dispatch import BUILTIN_CONFIGS, FP8_LARGE

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
    On an sm_90 GPU the candidates include sm90 configs (:data:`SM90_CANDIDATES`): the
    winner's family is what cutemma.gemm then runs for the class (an sm80 winner sends
    those calls to sm80). Each candidate runs ``warmup`` times, then ``reps`` times between CUDA events; its
    time is the median. A candidate that does not compile or launch is skipped. The
    winner is written to the cache file (see the module doc for the key) and from then
    on picked by :func:`cutemma.gemm` for every shape of the same class.

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
    if cands is None:
        sm90 = timer is None and _no_gpu_reason(device) is None and _is_sm90(device)
        cands = default_candidates(dt, am, bm, sm90)
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
        if _is_time(t):
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


def _bad_timings(timings: object) -> str | None:
    """What is wrong with a {name: seconds} dict (None when each is a finite time > 0)."""
    if not isinstance(timings, dict):
        return repr(timings)
    for name, t in timings.items():
        if not isinstance(name, str) or not _is_time(t):
            return f"{{{name!r}: {t!r}}}"
    return None


def _is_time(t: object) -> bool:
    return isinstance(t, int | float) and not isinstance(t, bool) and 0 < t < math.inf


def _is_sm90(device: int) -> bool:
    from cutemma.kernels.dispatch import _arch

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

    from cutemma.kernels.dispatch import gemm

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

    def timer(cfg: GemmConfig) -> float:
        with torch.cuda.device(dev):
            for _ in range(warmup):
                gemm(A, B, config=cfg)
            times = []
            for _ in range(reps):
                start, end = (
                    torch.cuda.Event(enable_timing=True),
                    torch.cuda.Event(enable_timing=True),
                )
                start.record()
                gemm(A, B, config=cfg)
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) / 1e3)
        return statistics.median(times)

    return timer
