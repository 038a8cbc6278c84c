"""The C++ witness's cache never runs a damaged binary nor trusts damaged verdicts (issue 22).

A cached test binary truncated (it used to fail every rerun with "Exec format error" or a
signal 11), bit-flipped, appended to, its seal's length wrong, a folder or FIFO at its path,
a full disk or a failed rename while it is installed, a read-only binary: each is rebuilt
(said once, CacheWarning) and runs, and no temporary file is left in the cache.
"""

from __future__ import annotations

import errno
import os
import subprocess
import threading
import warnings
from pathlib import Path

import pytest

from cute_cpp import batch, harness
from cutemma.cuda.cache import seal
from cutemma.errors import CacheWarning

REASON = harness.unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "cutemma" / "cute_cpp"


def _source(tag: str) -> str:
    return f'#include <cstdio>\n// {tag}\nint main() {{ std::puts("witness ok"); return 0; }}\n'


def _run(exe: Path) -> str:
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=60).stdout


def _build_warned(src: str) -> tuple[Path, list]:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        exe = harness.build(src)
    return exe, [w for w in got if issubclass(w.category, CacheWarning)]


def _temp_files(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp") or ".tmp-" in p.name]


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


DAMAGE = {
    "truncated": lambda b: b[: len(b) // 3],
    "bit_flipped": lambda b: _flip(b, len(b) // 2),
    "appended": lambda b: b + b"\0" * 16,
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damaged_binary_is_rebuilt(cache, kind, request):
    src = _source(request.node.name)
    exe = harness.build(src)
    good = exe.read_bytes()
    exe.write_bytes(DAMAGE[kind](good))
    again, warned = _build_warned(src)
    assert again == exe and _run(again) == "witness ok\n"
    assert again.read_bytes() == good or harness.verified(again) is None
    assert len(warned) == 1 and str(exe) in str(warned[0].message)
    assert _temp_files(cache) == []


def test_seal_with_a_wrong_length_is_rebuilt(cache):
    src = _source("wrong length")
    exe = harness.build(src)
    seal_path = exe.with_suffix(".sha256")
    digest, length = seal_path.read_text().split()
    seal_path.write_text(f"{digest} {int(length) + 1}\n")
    again, warned = _build_warned(src)
    assert _run(again) == "witness ok\n" and len(warned) == 1
    assert harness.verified(again) is None


def test_binary_from_before_seals_is_a_silent_miss(cache):
    src = _source("no seal")
    exe = harness.build(src)
    exe.with_suffix(".sha256").unlink()
    again, warned = _build_warned(src)
    assert again == exe and not warned and harness.verified(exe) is None


def test_folder_at_the_binary_path_builds_elsewhere(cache):
    src = _source("folder")
    exe = harness.exe_path(src)
    exe.mkdir(parents=True)
    built, warned = _build_warned(src)
    assert built != exe and _run(built) == "witness ok\n"
    assert len(warned) == 1 and "not a regular file" in str(warned[0].message)
    assert _temp_files(cache) == []


def test_fifo_at_the_binary_path_does_not_hang(cache):
    src = _source("fifo")
    exe = harness.exe_path(src)
    exe.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(exe)
    got: list = []
    t = threading.Thread(target=lambda: got.append(_build_warned(src)), daemon=True)
    t.start()
    t.join(120)  # a hang guard
    assert not t.is_alive(), "build() blocked on a FIFO in the cache"
    built, warned = got[0]
    assert _run(built) == "witness ok\n" and len(warned) == 1
    assert harness.verified(exe) is None  # the FIFO was replaced by the binary


def test_full_disk_while_installing_leaves_no_temp_file(cache, monkeypatch):
    src = _source("full disk")
    real = Path.write_bytes

    def full(self, data):
        if self.suffix == ".tmp":
            with open(self, "wb") as f:  # created, then the disk is full
                f.write(data[:10])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, data)

    with monkeypatch.context() as m:
        m.setattr(Path, "write_bytes", full)
        built = harness.build(src)
    assert _run(built) == "witness ok\n"
    assert _temp_files(cache) == [] and not harness.exe_path(src).exists()


def test_failed_rename_leaves_no_temp_file(cache, monkeypatch):
    src = _source("read-only")

    def refuse(self, target):
        raise PermissionError(errno.EACCES, "Permission denied")

    with monkeypatch.context() as m:
        m.setattr(Path, "replace", refuse)
        built = harness.build(src)
    assert _run(built) == "witness ok\n" and _temp_files(cache) == []


def test_read_only_damaged_binary_is_rebuilt(cache):
    src = _source("read-only binary")
    exe = harness.build(src)
    exe.write_bytes(DAMAGE["truncated"](exe.read_bytes()))
    exe.chmod(0o555)
    again, warned = _build_warned(src)
    assert _run(again) == "witness ok\n" and len(warned) == 1


@pytest.mark.parametrize("kind", ["truncated", "bit_flipped", "appended"])
def test_damaged_verdicts_are_recomputed_not_trusted(tmp_path, kind):
    path = tmp_path / "verdicts.json"
    batch._save(path, {"case": [None, "(4,2):(1,4)", [0, 1]]})
    assert batch._load(path) == {"case": [None, "(4,2):(1,4)", [0, 1]]}
    path.write_bytes(DAMAGE[kind](path.read_bytes()))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert batch._load(path) == {}
    assert len(got) == 1


def test_verdicts_from_before_seals_are_a_miss(tmp_path):
    path = tmp_path / "verdicts.json"
    path.write_text('{"case": [null, "4:1", null]}')
    assert batch._load(path) == {}
    path.write_bytes(seal(b"[1, 2]"))  # sealed, but not an object of verdicts
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert batch._load(path) == {}
    assert len(got) == 1
