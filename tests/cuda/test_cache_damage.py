"""A damaged disk-cache entry is rebuilt or refused, never served (issue 22, acceptance 2).

For the NVRTC cubin cache and the sm90 kernels' index: an entry truncated, bit-flipped,
appended to, with a wrong length in its header, a folder or a FIFO at its path, a full disk
while it is written, a read-only entry or folder. Each time the call returns the cubin NVRTC
makes (never the damaged bytes), damage is said once (CacheWarning), and no temporary file
is left in the cache folder. (The C++ witness's cache: tests/cute_cpp/test_cache_damage.py.)
"""

from __future__ import annotations

import errno
import os
import threading
import warnings
from pathlib import Path

import pytest
from cuda_skips import needs_nvrtc

from cutemma.cuda import cache as disk
from cutemma.cuda.compile import compile as _compile
from cutemma.errors import CacheWarning
from cutemma.kernels.sm90 import index as sm90_index


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1 :]


def _wrong_length(data: bytes) -> bytes:
    head, _, payload = data.partition(b"\n")
    digest, length = head.rsplit(b" ", 1)
    return digest + b" " + str(int(length) + 1).encode() + b"\n" + payload


# damage -> a function of the entry's bytes, or a thing put at the entry's path
DAMAGE = {
    "truncated": lambda b: b[: len(b) // 2],
    "truncated_in_header": lambda b: b[:10],
    "bit_flipped_in_code": lambda b: _flip(b, len(b) - 100),
    "bit_flipped_in_digest": lambda b: _flip(b, 20),
    "appended": lambda b: b + b"\0\0\0\0",
    "wrong_length": _wrong_length,
}


def _temp_files(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.startswith(".tmp") or ".tmp" in p.suffix]


def _source(tag: str) -> str:
    # a source of the test's own: the cache key differs per test (the in-process table of
    # cubins that could not be stored is keyed by it too)
    return f'// {tag}\nextern "C" __global__ void k(int* x) {{ x[threadIdx.x] = 7; }}'


@pytest.fixture
def fresh(private_cache, request):
    """(source, the cubin NVRTC makes of it, its entry's path), the entry written."""
    src = _source(request.node.name)
    first = _compile(src, "sm_80")
    assert not first.cache_hit
    return src, first.data, private_cache / f"{first.key}.cubin"


def _compile_warned(src: str):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        cubin = _compile(src, "sm_80")
    return cubin, [w for w in got if issubclass(w.category, CacheWarning)]


@needs_nvrtc
@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damaged_cubin_is_rebuilt_not_served(fresh, kind, private_cache):
    src, good, entry = fresh
    entry.write_bytes(DAMAGE[kind](entry.read_bytes()))
    cubin, warned = _compile_warned(src)
    assert not cubin.cache_hit and cubin.data == good
    assert len(warned) == 1 and str(entry) in str(warned[0].message)
    assert disk.load(cubin.key) == good  # rewritten whole
    again, warned = _compile_warned(src)
    assert again.cache_hit and again.data == good and not warned
    assert _temp_files(private_cache) == []


@needs_nvrtc
def test_entry_from_before_seals_is_a_silent_miss(fresh):
    src, good, entry = fresh
    entry.write_bytes(good)  # a bare cubin, as format 1 wrote it
    cubin, warned = _compile_warned(src)
    assert not cubin.cache_hit and cubin.data == good and not warned
    assert entry.read_bytes().startswith(b"cutemma-sealed ")


@needs_nvrtc
def test_sealed_entry_that_is_not_a_cubin_is_not_served(fresh):
    src, good, entry = fresh
    entry.write_bytes(disk.seal(b"not an ELF file"))
    cubin, warned = _compile_warned(src)
    assert cubin.data == good and len(warned) == 1


@needs_nvrtc
def test_folder_at_the_entry_is_refused_and_compiling_still_works(fresh, private_cache):
    src, good, entry = fresh
    entry.unlink()
    entry.mkdir()
    cubin, warned = _compile_warned(src)
    assert cubin.data == good and not cubin.cache_hit
    assert len(warned) == 1 and "not a regular file (a directory)" in str(warned[0].message)
    assert entry.is_dir() and _temp_files(private_cache) == []


@needs_nvrtc
def test_fifo_at_the_entry_does_not_hang(fresh, private_cache):
    src, good, entry = fresh
    entry.unlink()
    os.mkfifo(entry)
    got: list = []
    t = threading.Thread(target=lambda: got.append(_compile_warned(src)), daemon=True)
    t.start()
    t.join(120)  # a hang guard: an open() that blocks on the FIFO never returns
    assert not t.is_alive(), "compile() blocked on a FIFO in the cache"
    cubin, warned = got[0]
    assert cubin.data == good and len(warned) == 1
    assert "FIFO" in str(warned[0].message)
    assert entry.is_file() and disk.load(cubin.key) == good  # replaced by the rebuilt entry
    assert _temp_files(private_cache) == []


class _FullDisk:
    """os.fdopen's stand-in whose writes fail as on a full disk (the temp file exists)."""

    real = staticmethod(os.fdopen)

    def __init__(self, fd, mode="r", *a, **k):
        self.f = self.real(fd, mode, *a, **k)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()

    def write(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")


@needs_nvrtc
def test_full_disk_leaves_no_temp_file(private_cache, monkeypatch):
    src = _source("full disk")
    with monkeypatch.context() as m:
        m.setattr(disk.os, "fdopen", _FullDisk)
        for _ in range(2):  # each compile used to leave one .tmp-*.cubin behind
            cubin = _compile(src, "sm_80")
            assert cubin.data.startswith(b"\x7fELF")
    assert list(private_cache.iterdir()) == []  # nothing stored, nothing left


@needs_nvrtc
def test_failed_rename_leaves_no_temp_file(fresh, private_cache, monkeypatch):
    # a read-only folder as root sees no EACCES: the rename failing stands for it
    src, good, entry = fresh
    entry.write_bytes(DAMAGE["truncated"](entry.read_bytes()))

    def refuse(*a):
        raise PermissionError(errno.EACCES, "Permission denied")

    with monkeypatch.context() as m:
        m.setattr(disk.os, "replace", refuse)
        cubin, warned = _compile_warned(src)
    assert cubin.data == good and len(warned) == 1
    assert _temp_files(private_cache) == []


@needs_nvrtc
def test_read_only_entry_is_rebuilt(fresh, private_cache):
    src, good, entry = fresh
    entry.write_bytes(DAMAGE["bit_flipped_in_code"](entry.read_bytes()))
    entry.chmod(0o444)
    cubin, warned = _compile_warned(src)
    assert cubin.data == good and len(warned) == 1 and disk.load(cubin.key) == good


@needs_nvrtc
@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_compiles_without_serving_damage(fresh, private_cache):
    src, good, entry = fresh
    entry.write_bytes(DAMAGE["appended"](entry.read_bytes()))
    private_cache.chmod(0o555)
    try:
        cubin, warned = _compile_warned(src)
    finally:
        private_cache.chmod(0o755)
    assert cubin.data == good and len(warned) == 1 and _temp_files(private_cache) == []


def test_damage_is_said_once_per_entry(tmp_path):
    entry = tmp_path / "x.cubin"
    entry.write_bytes(disk.seal(b"\x7fELF1234")[:-2])
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert disk.load_sealed(entry) is None and disk.load_sealed(entry) is None
    assert len(got) == 1 and "is 6 bytes, its header says 8" in str(got[0].message)


@pytest.mark.parametrize("home", ["", "relative/path"])
def test_empty_home_is_not_slash_dot_cache(monkeypatch, home):
    monkeypatch.delenv("CUTEMMA_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", home)
    folder = disk.cache_dir()
    assert folder.is_absolute() and not str(folder).startswith("/.cache")
    assert folder.parent.parent == Path(disk.tempfile.gettempdir())


def test_relative_xdg_cache_home_is_ignored(monkeypatch, tmp_path):
    monkeypatch.delenv("CUTEMMA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "rel")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert disk.cache_dir() == tmp_path / ".cache" / "cutemma"


# --- the sm90 index ----------------------------------------------------------------------

_BOX = {"dtype": "bf16", "contiguous": "K", "box": [64, 128], "swizzle": "SW128",
        "copies": [[0, 0, 0]]}  # fmt: skip
RECORD = {"tma": {"A": _BOX, "B": _BOX}, "tma_D": _BOX, "tma_store": True, "shared_bytes": 99328}
CUBIN = b"\x7fELF" + bytes(range(256)) * 4


def _index(tmp_path) -> Path:
    path = tmp_path / "k.sm90"
    assert sm90_index.write(path, CUBIN, RECORD) == path
    assert sm90_index.read(path) == (CUBIN, RECORD)
    return path


def _read_warned(path):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        hit = sm90_index.read(path)
    return hit, [w for w in got if issubclass(w.category, CacheWarning)]


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damaged_index_entry_is_a_miss(tmp_path, kind):
    path = _index(tmp_path)
    path.write_bytes(DAMAGE[kind](path.read_bytes()))
    hit, warned = _read_warned(path)
    assert hit is None and len(warned) == 1


def _with(**changes) -> dict:
    rec = {**RECORD, "tma": dict(RECORD["tma"])}
    for key, value in changes.items():
        if key in ("A", "B"):
            rec["tma"][key] = value
        else:
            rec[key] = value
    return rec


BAD_RECORDS = {
    "shared_bytes too large": _with(shared_bytes=10**9),
    "shared_bytes zero": _with(shared_bytes=0),
    "shared_bytes negative": _with(shared_bytes=-4096),
    "shared_bytes a bool": _with(shared_bytes=True),
    "shared_bytes a float": _with(shared_bytes=99328.0),
    "shared_bytes a string": _with(shared_bytes="99328"),
    "no B box": {**RECORD, "tma": {"A": _BOX}},
    "box of 0": _with(A={**_BOX, "box": [0, 128]}),
    "box past 256": _with(A={**_BOX, "box": [64, 512]}),
    "unknown swizzle": _with(B={**_BOX, "swizzle": "SW999"}),
    "unknown dtype": _with(B={**_BOX, "dtype": "f7"}),
    "negative copy offset": _with(A={**_BOX, "copies": [[0, 0, -64]]}),
    "no copies": _with(A={**_BOX, "copies": []}),
    "tma_store without a D box": _with(tma_D=None),
    "missing shared_bytes": {k: v for k, v in RECORD.items() if k != "shared_bytes"},
    "not an object": [1, 2, 3],
}


@pytest.mark.parametrize("what", sorted(BAD_RECORDS))
def test_index_record_is_checked_not_trusted(tmp_path, what):
    # sealed correctly (the digest matches), but the record itself is not one to launch with
    path = tmp_path / "k.sm90"
    sm90_index.write(path, CUBIN, BAD_RECORDS[what])
    hit, warned = _read_warned(path)
    assert hit is None and len(warned) == 1
    assert sm90_index.record_refusal(BAD_RECORDS[what]) is not None


def test_index_folder_fifo_full_disk(tmp_path, monkeypatch):
    folder = tmp_path / "d.sm90"
    folder.mkdir()
    fifo = tmp_path / "f.sm90"
    os.mkfifo(fifo)
    for path in (folder, fifo):
        hit, warned = _read_warned(path)  # returns at once: never opened for a blocking read
        assert hit is None and len(warned) == 1
    assert sm90_index.write(folder, CUBIN, RECORD) is None  # a folder in the way: not stored
    with monkeypatch.context() as m:
        m.setattr(disk.os, "fdopen", _FullDisk)
        assert sm90_index.write(tmp_path / "full.sm90", CUBIN, RECORD) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.sm90", "f.sm90"]


def test_index_from_before_seals_is_a_silent_miss(tmp_path):
    path = tmp_path / "old.sm90"
    path.write_bytes(CUBIN + b"\n--cutemma-sm90--\n" + b'{"shared_bytes": 1}')
    hit, warned = _read_warned(path)
    assert hit is None and not warned


@needs_nvrtc
def test_compiled_sm90_rebuilds_a_damaged_index(private_cache):
    # one kind end to end (an sm90 compile costs ~2 s); every kind above, on the index alone
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.sm90.host import compiled_sm90, kernel_key

    args = (kernel_key(Sm90Config(), "bf16", "K", "K", "bf16", "bf16"), "sm_90a")
    compiled_sm90.cache_clear()
    kern, launch = compiled_sm90(*args)
    kern.image()  # the first load's build: compiled, the index entry written
    (index,) = private_cache.glob("*.sm90")
    index.write_bytes(DAMAGE["bit_flipped_in_code"](index.read_bytes()))
    compiled_sm90.cache_clear()  # a new process: only the disk remembers
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        again, launch_again = compiled_sm90(*args)
    compiled_sm90.cache_clear()
    assert [str(index) in str(w.message) for w in got] == [True]
    assert again.image() == kern.cubin and launch_again == launch  # rebuilt at its first load
    assert sm90_index.read(index) is not None  # rewritten whole


# --- the tuning cache ----------------------------------------------------------------------


def test_tuning_cache_fifo_does_not_hang_and_full_disk_is_named(private_cache, monkeypatch):
    from cutemma.errors import LaunchError
    from cutemma.kernels import tuned as tune
    from cutemma.kernels.sm80.plan import GemmConfig

    private_cache.mkdir(parents=True)
    os.mkfifo(tune.cache_path())
    tune.reload()
    got: list = []
    t = threading.Thread(target=lambda: got.append(tune.table()), daemon=True)
    t.start()
    t.join(60)  # a hang guard
    assert not t.is_alive() and got == [{}]
    tune.cache_path().unlink()
    cfg = GemmConfig()
    with monkeypatch.context() as m:
        m.setattr(disk.os, "fdopen", _FullDisk)
        with pytest.raises(LaunchError, match="cannot write the tuning cache"):
            tune.store("some GPU", 64, 64, 64, "bf16", "K", "N", cfg, {cfg.name: 1e-4})
    assert _temp_files(private_cache) == []
    tune.reload()
