"""The on-disk cubin cache: one file per (source, options, NVRTC version).

A second process that compiles the same kernel reads the cubin back instead of
running NVRTC again. The folder is ``$CUTEMMA_CACHE_DIR`` when set, otherwise
``$XDG_CACHE_HOME/cutemma`` or ``~/.cache/cutemma`` (a per-user temporary folder when
neither names an absolute path, e.g. ``HOME=""``).

Every entry is sealed: a header line with the payload's SHA-256 and length precedes it, and
a read checks both, so a truncated, appended or bit-flipped entry is rebuilt (with one
:class:`~cutemma.errors.CacheWarning`), never served. Reads open without blocking and take
only regular files (a FIFO or a folder at an entry's path is a miss, not a hang). An entry
without a header (written before seals) is an ordinary miss, and is replaced when rebuilt.

>>> key = cache_key("__global__ void k() {}", ("--gpu-architecture=sm_80",), (13, 0))
>>> len(key), key == cache_key("__global__ void k() {}", ("--gpu-architecture=sm_80",), (13, 0))
(64, True)
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import threading
import warnings
from pathlib import Path

from cutemma.errors import CacheWarning, CompileError

CACHE_ENV = "CUTEMMA_CACHE_DIR"

# Bump when the meaning of a cached file changes, so old entries are never misread.
_FORMAT = 1  # the key's format; the file's seal has its own (see seal)

# Every cubin is an ELF file; anything else in the cache is damage, not a hit.
_ELF_MAGIC = b"\x7fELF"

# A sealed entry: b"cutemma-sealed <sha256 hex> <length>\n" + payload.
_SEAL = b"cutemma-sealed "
_HEADER_MAX = len(_SEAL) + 64 + 1 + 20 + 1


def cache_root() -> Path:
    """The user's cache folder (XDG): ``$XDG_CACHE_HOME``, else ``$HOME/.cache``.

    Only absolute paths count (the XDG rule); with neither (``HOME=""`` would otherwise
    mean ``/.cache``) it is a per-user folder in the system's temporary directory.

    >>> import os
    >>> cache_root().is_absolute()
    True
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg)
    home = os.environ.get("HOME", "")
    if os.path.isabs(home) and home.rstrip("/"):
        return Path(home) / ".cache"
    return Path(tempfile.gettempdir()) / f"cutemma-cache-{os.getuid()}"


def cache_dir() -> Path:
    """The folder cubins are cached in (created on first store, not here).

    >>> import os
    >>> os.environ.get("CUTEMMA_CACHE_DIR", str(cache_dir())) == str(cache_dir())
    True
    """
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        try:
            return Path(explicit).expanduser()
        except RuntimeError:  # '~user/...' of a user with no home here
            raise CompileError(
                f"{CACHE_ENV}={explicit!r}: its '~' names no home directory on this machine; "
                "give an absolute path (or unset it for the default cache)"
            ) from None
    return cache_root() / "cutemma"


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


def seal(payload: bytes) -> bytes:
    """``payload`` behind a header line holding its SHA-256 and length.

    >>> unseal(seal(b"abc")) == b"abc", unseal(seal(b"abc")[:-1])
    (True, 'is 2 bytes, its header says 3')
    """
    digest = hashlib.sha256(payload).hexdigest().encode()
    return _SEAL + digest + b" " + str(len(payload)).encode() + b"\n" + payload


def unseal(blob: bytes) -> bytes | str | None:
    """The payload of a sealed entry; None for an entry without a seal (an old one: a miss);
    otherwise a sentence saying what is damaged.

    >>> unseal(b"\\x7fELF...") is None
    True
    """
    if not blob.startswith(_SEAL):
        # a header cut short is damage; anything else is an entry from before seals
        return "ends inside its header" if blob and _SEAL.startswith(blob) else None
    end = blob.find(b"\n", 0, _HEADER_MAX)
    fields = blob[len(_SEAL) : end].split(b" ") if end > 0 else []
    if len(fields) != 2 or len(fields[0]) != 64 or not fields[1].isdigit():
        return "has a damaged header"
    payload, length = blob[end + 1 :], int(fields[1])
    if len(payload) != length:
        return f"is {len(payload)} bytes, its header says {length}"
    if hashlib.sha256(payload).hexdigest().encode() != fields[0]:
        return "does not match its digest (its bytes changed after it was written)"
    return payload


_WARNED: set[str] = set()
_WARNED_LOCK = threading.Lock()


def warn_damaged(path: Path | str, why: str) -> None:
    """Say once per path and process that a cache entry is damaged and being rebuilt."""
    with _WARNED_LOCK:
        if str(path) in _WARNED:
            return
        _WARNED.add(str(path))
    warnings.warn(f"cutemma cache: {path} {why}; rebuilding it", CacheWarning, stacklevel=3)


def read_regular(path: Path | str) -> bytes | str | None:
    """The bytes of the regular file at ``path``; None when there is none or it cannot be
    opened; a sentence when something else is there (a folder, a FIFO, a device: never
    opened for a blocking read).

    >>> read_regular("/no/such/file") is None, read_regular("/")
    (True, 'is not a regular file (a directory)')
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:  # absent, no permission, a file where a folder should be: a miss
        return None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO, socket or device"
            return f"is not a regular file ({kind})"
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    finally:
        os.close(fd)


def load_sealed(path: Path | str) -> bytes | None:
    """The payload of the sealed entry at ``path``, or None (absent, old, or damaged: then
    one :class:`~cutemma.errors.CacheWarning` says so).

    >>> load_sealed("/no/such/entry") is None
    True
    """
    data = read_regular(path)
    if isinstance(data, bytes):
        data = unseal(data)
    if isinstance(data, str):
        warn_damaged(path, data)
        return None
    return data


def write_atomic(path: Path, data: bytes) -> Path | None:
    """Write ``data`` to ``path`` through a temporary file and a rename; None when it cannot
    be written (read-only folder, full disk, a folder in the way), leaving no temporary file.

    Readers see the old file or the whole new one, never half of it.

    >>> import tempfile
    >>> p = write_atomic(Path(tempfile.mkdtemp()) / "x", b"1")
    >>> p.read_bytes(), [q.name for q in p.parent.iterdir()]
    (b'1', ['x'])
    """
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        tmp = None
        return path
    except OSError:
        return None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


# A kernel entry: a cubin, this line, then the JSON record its launch needs (kept by name
# beside the source-keyed cubins, so a new process loads a known kernel without its source)
_RECORD_LINE = b"\n--cutemma-sm90--\n"


def load_entry(path: Path | str) -> tuple[bytes, str | None] | None:
    """(cubin, JSON record text or None when it has none) of the sealed kernel entry at
    ``path``, or None: absent, from before seals, or damaged (one CacheWarning). The caller
    checks the record (:func:`cutemma.kernels.sm90.index.read`).

    >>> import tempfile
    >>> p = store_entry(Path(tempfile.mkdtemp()) / "k.sm90", b"cubin", '{"a": 1}')
    >>> load_entry(p)
    (b'cubin', '{"a": 1}')
    """
    data = load_sealed(path)
    if data is None:
        return None
    cubin, line, record = data.partition(_RECORD_LINE)
    return cubin, record.decode(errors="replace") if line else None


def store_entry(path: Path, cubin: bytes, record: str) -> Path | None:
    """Store ``cubin`` and its JSON ``record`` text at ``path``, sealed, atomically
    (:func:`write_atomic`); None if it cannot be written. Example: :func:`load_entry`."""
    return write_atomic(path, seal(cubin + _RECORD_LINE + record.encode()))


def _path(key: str) -> Path:
    return cache_dir() / f"{key}.cubin"


def load(key: str) -> bytes | None:
    """The cached cubin for ``key``, or None if absent, unreadable or damaged (see
    :func:`load_sealed`).

    >>> load("0" * 64) is None
    True
    """
    data = load_sealed(_path(key))
    if data is not None and not data.startswith(_ELF_MAGIC):
        warn_damaged(_path(key), "is sealed but not a cubin")
        return None
    return data


def store(key: str, cubin: bytes) -> Path | None:
    """Write ``cubin`` under ``key``, sealed, atomically (:func:`write_atomic`); None if
    it cannot be written. A read-only or full cache is not an error: compiling still works,
    it is only slower next time.

    >>> p = store("ab" * 32, b"\\x7fELF...")
    >>> load("ab" * 32)
    b'\\x7fELF...'
    >>> p.unlink()
    """
    return write_atomic(_path(key), seal(cubin))


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
