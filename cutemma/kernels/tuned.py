"""The tuning cache of ``cutemma.tune``: read, looked up (by ``cutemma.gemm``) and written
here; :mod:`cutemma.kernels.tune` times the candidates.

The winner is stored in ``gemm-tune.json`` in the cutemma cache folder
(``$CUTEMMA_CACHE_DIR``, see :mod:`cutemma.cuda.cache`), keyed by

    (device name, shape class, kernel dtype, A major, B major)

and :func:`cutemma.gemm` consults it before its built-in table: the file is read
once per process, then each call costs one dict look-up (none at all while nothing
was tuned).

An entry of family ``builtin`` (``config`` null) records that tuning found no candidate
faster than the built-in pick (the autotune of ``CUTEMMA_AUTOTUNE=1``,
:mod:`cutemma.kernels.autotune`): the bucket counts as tuned, and gemm keeps its built-in
pick there, which the cost model makes per shape.

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
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Any

from cutemma.errors import CutemmaError, LaunchError
from cutemma.kernels.call import KERNEL_TYPES
from cutemma.kernels.sm80.config import ELEM_BYTES, GemmConfig
from cutemma.kernels.sm90.config import Sm90Config

FILE_NAME = "gemm-tune.json"


_FORMAT = 1  # bump when an entry's meaning changes: old files are then ignored


# torch dtype name -> kernel dtype (what the cache key says): the call's own table
_TORCH_TYPES = {name: kind for name, (kind, _) in KERNEL_TYPES.items()}


# key tuple -> GemmConfig or Sm90Config, loaded from the file once (None: not yet read)
_TABLE: dict[tuple, GemmConfig | Sm90Config] | None = None
# key tuples whose tuning kept the built-in pick (no candidate beat it): tuned, nothing to use
_KEPT: set[tuple] = set()
_STORE_LOCK = threading.Lock()


def shape_class(m: int, n: int, k: int) -> tuple[int, int, int]:
    """M, N, K each rounded up to a power of two (1 stays 1): the tuning cache's buckets.

    >>> shape_class(1, 17, 4096)
    (1, 32, 4096)
    """
    return _classes(*_dims(m, n, k))


def _classes(m: int, n: int, k: int) -> tuple[int, int, int]:
    return tuple(1 << max(x - 1, 0).bit_length() for x in (m, n, k))


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
    from cutemma.cuda.cache import read_regular

    raw = read_regular(cache_path())  # never blocks on a FIFO; a folder there is a miss
    try:
        data = json.loads(raw) if isinstance(raw, bytes) else None
    except ValueError:
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
        _TABLE, kept = _load()
        _KEPT.clear()
        _KEPT.update(kept)
    return _TABLE


def _load() -> tuple[dict[tuple, GemmConfig | Sm90Config], set[tuple]]:
    """The file's configs by key tuple, and the key tuples whose tuning kept the built-in."""
    loaded, kept = {}, set()
    for key, entry in _read_file().items():
        parts = key.split("|")
        builtin = isinstance(entry, dict) and entry.get("family") == "builtin"
        cfg = _config_of(entry) if isinstance(entry, dict) and not builtin else None
        if len(parts) != 4 or (cfg is None and not builtin):
            continue
        device, shape, dtype, majors = parts
        try:
            mb, nb, kb = (int(x[1:]) for x in shape.split(","))
        except ValueError:
            continue
        k = (device, mb, nb, kb, dtype, majors[:1], majors[1:])
        if builtin:
            kept.add(k)
        else:
            loaded[k] = cfg
    return loaded, kept


def refresh() -> bool:
    """Merge into the loaded table what other processes stored since it was read; True when
    a config changed (the prepared launches of repeated calls are then forgotten).

    >>> import os, tempfile
    >>> os.environ["CUTEMMA_CACHE_DIR"] = tempfile.mkdtemp()
    >>> reload()
    >>> refresh()  # an empty cache folder: nothing new
    False
    """
    configs, kept = _load()
    tab = table()
    changed = {k: v for k, v in configs.items() if tab.get(k) != v}
    tab.update(changed)
    _KEPT.update(kept - tab.keys())
    if changed:
        from cutemma.kernels.runtime.fastpath import FAST

        FAST.clear()
    return bool(changed)


def decided(device: str, m: int, n: int, k: int, dtype: str, a_major: str, b_major: str) -> bool:
    """Whether this device's shape class was tuned: a config stored for it, or the built-in
    pick kept (see the module doc).

    >>> import os, tempfile
    >>> os.environ["CUTEMMA_CACHE_DIR"] = tempfile.mkdtemp()
    >>> reload()
    >>> _ = store("some GPU", 64, 64, 64, "bf16", "K", "N", None, {"b128x128x32_w2x2_s4": 1e-5})
    >>> decided("some GPU", 60, 64, 64, "bf16", "K", "N"), lookup("some GPU", 64, 64, 64, "bf16", "K", "N")
    (True, None)
    """
    key = (device, *shape_class(m, n, k), dtype, a_major, b_major)
    try:
        return key in table() or key in _KEPT
    except TypeError:  # a list or dict where a name belongs
        raise LaunchError(
            f"tune.decided: device {device!r}, dtype {dtype!r}, majors {a_major!r} {b_major!r}: "
            "each a str"
        ) from None


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
    _KEPT.clear()
    from cutemma.kernels.runtime.fastpath import FAST

    FAST.clear()


def lookup(
    device: str, m: int, n: int, k: int, dtype: str, a_major: str, b_major: str
) -> GemmConfig | None:
    """The tuned config of this device name and shape class, or None.

    >>> lookup("no such GPU", 64, 64, 64, "bf16", "K", "K") is None
    True
    """
    shape_class(m, n, k)  # whole numbers >= 1, else a LaunchError (also with nothing tuned)
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
    """:func:`lookup` for a CUDA device index and a checked call's plain ints >= 1 (gemm's
    hot path: nothing tuned, no work).

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
    mb, nb, kb = _classes(m, n, k)
    return tab.get((device_name(device), mb, nb, kb, dtype, a_major, b_major))


@cache
def device_name(device: int) -> str:
    """The GPU's name as torch reports it (asked once per device).

    >>> device_name(0)  # doctest: +SKIP
    'NVIDIA H100 80GB HBM3'
    """
    import torch

    return torch.cuda.get_device_name(device)


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path``'s lock file (``<name>.lock`` beside it) while a process
    reads, merges and writes the file; where locks are not available (no fcntl, a
    read-only folder) the write is still atomic, only a concurrent writer's entry may be
    lost."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here
        yield
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def store(
    device: str,
    m: int,
    n: int,
    k: int,
    dtype: str,
    a_major: str,
    b_major: str,
    config: GemmConfig | Sm90Config | None,
    timings: dict[str, float],
) -> Path:
    """Merge one winner into the file (atomic rename) and into the loaded table; ``config``
    None records that the built-in pick stays for the class (an entry of family ``builtin``).

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
    if config is not None and not isinstance(config, GemmConfig | Sm90Config):
        raise LaunchError(
            f"tune.store: config {config!r}: a GemmConfig, an Sm90Config, or None (the built-in "
            "pick stays)"
        )
    bad = _bad_timings(timings)
    if bad:
        raise LaunchError(f"tune.store: timings {bad}: a dict of config name -> seconds > 0")
    from cutemma.cuda.cache import CACHE_ENV, write_atomic

    path = cache_path()
    # two threads, or two processes, storing at once: each merges into the other's file
    with _STORE_LOCK, _file_lock(path):
        entries = _read_file()
        family = "sm90" if isinstance(config, Sm90Config) else "sm80"
        entries[key] = {
            "family": "builtin" if config is None else family,
            "config": None if config is None else asdict(config),
            "seconds": None if config is None else timings.get(config.name),
            "timings": timings,
            "shape": [m, n, k],
        }
        text = json.dumps({"format": _FORMAT, "entries": entries}, indent=1, sort_keys=True)
        written = write_atomic(path, text.encode())  # readers see the old file or the new one
    if written is None:
        raise LaunchError(
            f"tune: cannot write the tuning cache {path} (read-only, full, or a folder in the "
            f"way); set {CACHE_ENV} to a writable folder"
        )
    mb, nb, kb = shape_class(m, n, k)
    k_ = (device, mb, nb, kb, dtype, a_major, b_major)
    tab = table()  # (loaded first: a first load resets _KEPT)
    if config is None:
        _KEPT.add(k_)
        if tab.pop(k_, None) is None:
            return path  # the built-in pick stays: the prepared launches hold it already
    else:
        tab[k_] = config
        _KEPT.discard(k_)
    from cutemma.kernels.runtime.fastpath import FAST

    FAST.clear()  # prepared launches chose their config before this winner existed
    return path


def _bad_timings(timings: object) -> str | None:
    """What is wrong with a {name: seconds} dict (None when each is a finite time > 0)."""
    if not isinstance(timings, dict):
        return repr(timings)
    for name, t in timings.items():
        if not isinstance(name, str) or not is_time(t):
            return f"{{{name!r}: {t!r}}}"
    return None


def is_time(t: object) -> bool:
    """A measured time: a finite number of seconds > 0 (NaN, inf, 0 and bools are not).

    >>> is_time(1e-4), is_time(float("nan")), is_time(0)
    (True, False, False)
    """
    return isinstance(t, int | float) and not isinstance(t, bool) and 0 < t < math.inf
