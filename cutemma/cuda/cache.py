"""The on-disk cubin cache: one file per (source, options, NVRTC version).

A second process that compiles the same kernel reads the cubin back instead of
running NVRTC again. The folder is ``$CUTEMMA_CACHE_DIR`` when set, otherwise
``$XDG_CACHE_HOME/cutemma`` or ``~/.cache/cutemma``.

>>> key = cache_key("__global__ void k() {}", ("--gpu-architecture=sm_80",), (13, 0))
>>> len(key), key == cache_key("__global__ void k() {}", ("--gpu-architecture=sm_80",), (13, 0))
(64, True)
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

CACHE_ENV = "CUTEMMA_CACHE_DIR"

# Bump when the meaning of a cached file changes, so old entries are never misread.
_FORMAT = 1

# Every cubin is an ELF file; anything else in the cache is damage, not a hit.
_ELF_MAGIC = b"\x7fELF"


def cache_dir() -> Path:
    """The folder cubins are cached in (created on first store, not here).

    >>> import os
    >>> os.environ.get("CUTEMMA_CACHE_DIR", str(cache_dir())) == str(cache_dir())
    True
    """
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cutemma"


def cache_key(source: str, options: tuple[str, ...], nvrtc_version: tuple[int, int]) -> str:
    """A hex SHA-256 of everything that decides the cubin's bytes.

    Options are hashed in order because NVRTC reads them in order (a later
    ``-arch`` wins).

    >>> cache_key("x", ("-a",), (13, 0)) != cache_key("x", ("-a",), (12, 8))
    True
    """
    record = json.dumps(
        {"format": _FORMAT, "source": source, "options": list(options), "nvrtc": nvrtc_version},
        sort_keys=True,
    )
    return hashlib.sha256(record.encode()).hexdigest()


def _path(key: str) -> Path:
    return cache_dir() / f"{key}.cubin"


def load(key: str) -> bytes | None:
    """The cached cubin for ``key``, or None if absent or unreadable.

    >>> load("0" * 64) is None
    True
    """
    try:
        data = _path(key).read_bytes()
    except OSError:
        return None
    return data if data.startswith(_ELF_MAGIC) else None


def store(key: str, cubin: bytes) -> Path | None:
    """Write ``cubin`` under ``key`` atomically; None if the folder is not writable.

    Writing to a temporary file and renaming it means a process reading the
    cache concurrently sees either nothing or the whole cubin. A read-only
    cache is not an error: compiling still works, it is only slower next time.

    >>> p = store("ab" * 32, b"\\x7fELF...")
    >>> load("ab" * 32)
    b'\\x7fELF...'
    >>> p.unlink()
    """
    target = _path(key)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".cubin")
        with os.fdopen(fd, "wb") as f:
            f.write(cubin)
        os.replace(tmp, target)
    except OSError:
        return None
    return target


def clear() -> int:
    """Delete every cached cubin; returns how many were removed.

    >>> _ = store("cd" * 32, b"\\x7fELF")
    >>> clear() >= 1
    True
    """
    removed = 0
    for path in cache_dir().glob("*.cubin"):
        path.unlink(missing_ok=True)
        removed += 1
    return removed
