"""CuTe C++ as a witness: compile small host programs against the pip wheel's headers.

CuTe is header-only and runs as host code. Its headers ship in the ``nvidia-cutlass`` wheel
(``cutlass_library/source/include``); plain ``g++ -std=c++17`` also needs the CUDA headers of
the pip packages ``nvidia-cuda-runtime`` (cuda_runtime_api.h), ``nvidia-cuda-crt``
(crt/host_defines.h) and ``nvidia-cuda-cccl`` (cuda/std). Nothing of CuTe is copied here:
tests write C++ *calls* of CuTe's public functions, this module compiles and runs them and
hands back what CuTe printed.

Programs are batched (many cases per translation unit) and their binaries cached by a hash
of the source and the compiler, so a second run of the suite compiles nothing. A cold run
compiles faster three ways: -O1 (CuTe's static layouts emit far fewer functions than at -O0),
GCC's garbage collector held back (``GCC_SPEEDUPS``), and the prelude's headers precompiled
once per header set (``_pch``) as soon as a second program needs them. A binary being built
is locked (``flock``), so a second thread or process that needs it waits instead of compiling
it again (see tests/cute_cpp/prefetch.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from cutemma.cuda.cache import cache_root, read_regular, warn_damaged, write_atomic

# -O1 compiles the TiledMMA cases twice as fast as -O0 (measured: 7.8 s against 15 s for 16 of
# them): at -O0 every instantiated CuTe function is emitted, at -O1 most are inlined away.
CXX_FLAGS = ("-std=c++17", "-O1", "-w", "-fno-exceptions")
# GCC only (clang has no such params): collect garbage rarely (~10% of a compile's time
# otherwise; costs ~15% more peak memory, ~1.3 GB for the largest programs).
GCC_SPEEDUPS = ("--param", "ggc-min-expand=400", "--param", "ggc-min-heapsize=524288")
PRELUDE = """\
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/copy_atom.hpp>
using namespace cute;
// One case's output: a line "<key>\\t<text>". CuTe prints with cute::print.
#define CASE(key, ...) do { printf("%s\\t", key); print(__VA_ARGS__); printf("\\n"); } while (0)
"""


class CppUnavailable(Exception):
    """g++ or the CuTe/CUDA header packages are missing; the message says how to install."""


def _site_dirs() -> list[Path]:
    dirs = [Path(p) for p in sys.path if p and Path(p).is_dir()]
    dirs.append(Path(sysconfig.get_paths()["purelib"]))
    return dirs


@cache
def include_dirs() -> tuple[str, ...]:
    """The -I folders: CuTe's headers, the CUDA headers and CCCL, all from pip packages."""
    for site in _site_dirs():
        cute = site / "cutlass_library" / "source" / "include"
        cuda = site / "nvidia" / "cu13" / "include"
        if (cute / "cute" / "layout.hpp").is_file() and (cuda / "cuda_runtime_api.h").is_file():
            cccl = cuda / "cccl"
            if not (cccl / "cuda" / "std").is_dir():
                break
            if not (cuda / "crt" / "host_defines.h").is_file():
                break
            return (str(cute), str(cuda), str(cccl))
    raise CppUnavailable(
        "CuTe's C++ headers or the CUDA headers were not found: pip install nvidia-cutlass "
        "nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl (the 'test' extra installs them)"
    )


@cache
def compiler() -> str:
    """The C++ compiler: ``$CXX`` (a path or a name on PATH), else g++; CppUnavailable (a
    skip, with this reason) when there is none to run."""
    given = os.environ.get("CXX")
    if given:
        found = shutil.which(given)
        if not found:
            raise CppUnavailable(
                f"CXX={given} is not an executable compiler (not found, or not executable); "
                "set CXX to a C++ compiler such as g++, or unset it to use g++ from PATH"
            )
        return found
    cxx = shutil.which("g++")
    if not cxx:
        raise CppUnavailable("no C++ compiler: install g++ (apt-get install g++) or set CXX")
    return cxx


def unavailable_reason() -> str | None:
    """None when C++ cases can run here, else the sentence a skip shows."""
    try:
        include_dirs()
        compiler()
    except CppUnavailable as e:
        return str(e)
    return None


def cache_dir() -> Path:
    """``<user cache>/cutemma/cute_cpp`` (cutemma's own rule: never ``/.cache`` for an empty
    HOME); a folder of this process's own when that one cannot be written, so an unwritable
    cache costs compile time, not every C++ test."""
    path = cache_root() / "cutemma" / "cute_cpp"
    try:
        path.mkdir(parents=True, exist_ok=True)
        if os.access(path, os.W_OK | os.X_OK):
            return path
    except OSError:
        pass
    return _private_cache()


@cache
def _private_cache() -> Path:
    return Path(tempfile.mkdtemp(prefix="cutemma-cute_cpp-"))


@cache
def _compiler_id() -> str:
    out = subprocess.run([compiler(), "--version"], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()[0] if out.stdout else compiler()


@cache
def compile_flags() -> tuple[str, ...]:
    """CXX_FLAGS plus, for GCC, GCC_SPEEDUPS (speed only: the program is the same)."""
    is_gcc = "clang" not in _compiler_id().lower() and "clang" not in Path(compiler()).name
    return (*CXX_FLAGS, *GCC_SPEEDUPS) if is_gcc else CXX_FLAGS


@contextmanager
def file_lock(path: Path, wait: bool = True):
    """An exclusive lock on ``path`` (created if missing) held for the block: one builder of a
    binary at a time, across threads and processes; released if the holder dies. Yields
    True; with ``wait=False``, False at once (and no lock) when another holds it."""
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@cache
def headers_id() -> tuple[str, ...]:
    """What the headers are, for cache keys: the pip distributions' versions, not their paths
    (CI makes a fresh venv in a new temporary folder each run; the headers are the same)."""
    from importlib import metadata

    ids = []
    for dist in ("nvidia-cutlass", "nvidia-cuda-runtime", "nvidia-cuda-crt", "nvidia-cuda-cccl"):
        try:
            ids.append(f"{dist}=={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            return include_dirs()  # found some other way: the paths are all we know
    return tuple(ids)


def program(body: str, headers: tuple[str, ...] = ()) -> str:
    """A whole translation unit: the prelude, extra ``#include``s, ``main`` around ``body``."""
    includes = "".join(f"#include <{h}>\n" for h in headers)
    return f"{PRELUDE}{includes}int main() {{\n{body}\n  return 0;\n}}\n"


def _key(*parts: str) -> str:
    ids = (*compile_flags(), _compiler_id(), *headers_id())
    return hashlib.sha256("\0".join((*parts, *ids)).encode()).hexdigest()[:24]


def exe_path(source: str) -> Path:
    """Where ``build(source)`` puts (or has put) its binary."""
    return cache_dir() / f"case_{_key(source)}"


def _prelude_part(source: str) -> str | None:
    """The prelude and the extra ``#include`` lines that ``program`` put first, if it did."""
    if not source.startswith(PRELUDE):
        return None
    end = len(PRELUDE)
    while source.startswith("#include <", end):
        end = source.index("\n", end) + 1
    return source[:end]


_pch_lock = threading.Lock()
_pch_wanted: Counter = Counter()  # header part -> programs this process has asked for with it
PCH_FROM = 3


def _pch(head: str, programs: int = 1) -> Path | None:
    """``head`` as a header whose precompiled .gch sits beside it, or None (no PCH).

    ``programs``: how many programs the caller is about to compile with ``head`` (counted in
    only once). A PCH of CuTe's headers costs ~2.5 s more than parsing them once (3.9 s to
    write 180 MB) and saves ~1.2 s per program, so it is built once PCH_FROM programs of
    this process have asked for the same headers (and used whenever found built). None when
    it cannot be built: the program then compiles without it, as before.
    """
    # the PCH by include path too: it is rebuilt per venv (seconds), the binaries are not
    folder = cache_dir() / f"hpch_{_key(head, *include_dirs())}"
    header = folder / "prelude.h"
    gch = folder / "prelude.h.gch"
    with _pch_lock:
        _pch_wanted[head] += programs
        if not gch.is_file() and _pch_wanted[head] < PCH_FROM:
            return None
    folder.mkdir(parents=True, exist_ok=True)
    with file_lock(folder / "lock"):
        if not gch.is_file():
            header.write_text(head)
            tmp = folder / f"tmp.{os.getpid()}.{threading.get_ident()}.gch"
            flags = [f"-I{d}" for d in include_dirs()]
            cmd = [compiler(), *compile_flags(), *flags, "-x", "c++-header", str(header)]
            res = subprocess.run([*cmd, "-o", str(tmp)], capture_output=True, check=False)
            if res.returncode:
                tmp.unlink(missing_ok=True)
                return None
            tmp.replace(gch)
    return header


def build(source: str) -> Path:
    """Compile ``source`` (cached by its hash, the flags, the compiler and the headers).

    A program made by ``program`` is compiled with its headers precompiled (``-include`` of
    the PCH's header; g++ reads the header's text instead when the PCH does not fit, so the
    program is the same either way). Two callers building one source: the second waits.
    """
    return _build(source, 1)


def _seal_path(exe: Path) -> Path:
    return exe.with_suffix(".sha256")


def _digest_line(data: bytes) -> bytes:
    return f"{hashlib.sha256(data).hexdigest()} {len(data)}\n".encode()


def verified(exe: Path) -> str | None:
    """None when ``exe`` is the binary its seal (``<exe>.sha256``: digest and length, written
    after the binary) describes; else why not ('absent' for no binary or no seal, e.g. one
    cached before seals). A truncated or changed binary is rebuilt, never run."""
    data, seal = read_regular(exe), read_regular(_seal_path(exe))
    for what in (data, seal):
        if isinstance(what, str):  # a folder, a FIFO ...: damage, never opened to block
            return what
    if data is None or seal is None:
        return "absent"
    return None if seal == _digest_line(data) else "does not match its digest and length"


def _build(source: str, programs: int) -> Path:
    """``build``; ``programs`` as for ``_pch`` (0: already counted by the caller)."""
    exe = exe_path(source)
    if verified(exe) is None:
        return exe
    with file_lock(exe.with_suffix(".lock")):
        why = verified(exe)
        if why is None:  # built meanwhile by the lock's previous holder
            return exe
        if why != "absent":
            warn_damaged(exe, why)
        head = _prelude_part(source)
        pch = _pch(head, programs) if head else None
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "case.cpp"
            src.write_text(source)
            out = Path(tmp) / "case"
            flags = [f"-I{d}" for d in include_dirs()]
            if pch is not None:
                flags += ["-include", str(pch)]
            res = subprocess.run(
                [compiler(), *compile_flags(), *flags, str(src), "-o", str(out)],
                capture_output=True,
                text=True,
                check=False,
            )
            if res.returncode:
                raise CompileFailed(source, res.stderr, compiler(), res.returncode)
            return _install(out, exe)


def _install(built: Path, exe: Path) -> Path:
    """Move a built binary into the cache, then write its seal; where it ends up. No temporary
    file is left behind when a write fails (read-only, full, a folder in the way): the binary
    then goes to this process's own folder (the cache entry is rebuilt next time)."""
    data = built.read_bytes()
    tmp_exe = exe.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        tmp_exe.write_bytes(data)
        tmp_exe.chmod(0o755)
        tmp_exe.replace(exe)
    except OSError:
        exe = _private_cache() / exe.name
        shutil.copyfile(built, exe)
        exe.chmod(0o755)
    finally:
        tmp_exe.unlink(missing_ok=True)
    write_atomic(_seal_path(exe), _digest_line(data))
    return exe


class CompileFailed(Exception):
    """The compiler refused a program; ``.errors`` names the compiler and its exit status,
    then holds the first error lines (never empty: a compiler that fails without a word,
    such as CXX=/bin/false, is still a failure to report)."""

    def __init__(self, source: str, stderr: str, cxx: str = "the compiler", status: int = 1):
        lines = [ln for ln in stderr.splitlines() if "error" in ln]
        detail = "\n".join(lines[:8]) or stderr[-2000:].strip()
        self.errors = f"{cxx} exited {status}" + (f":\n{detail}" if detail else " with no output")
        super().__init__(self.errors)
        self.source = source


def run(body: str, headers: tuple[str, ...] = ()) -> str:
    """Compile (cached) and run one program; its standard output."""
    return _run(body, headers, 1)


def _run(body: str, headers: tuple[str, ...], programs: int) -> str:
    exe = _build(program(body, headers), programs)
    res = subprocess.run([str(exe)], capture_output=True, text=True, check=False, timeout=120)
    if res.returncode:
        raise RuntimeError(f"C++ case program exited {res.returncode}: {res.stderr[-1000:]}")
    return res.stdout


def run_cases(
    cases: dict[str, str], headers: tuple[str, ...] = (), per_program: int = 200
) -> dict[str, str]:
    """Run many cases: ``{key: C++ statements that print via CASE(key, ...)}``.

    Cases are split into programs of ``per_program`` and compiled two at a time; returns
    ``{key: printed text}`` (the text after the tab, one line per CASE call, joined by
    newlines when a case prints several).
    """
    items = sorted(cases.items())
    chunks = [items[i : i + per_program] for i in range(0, len(items), per_program)]
    bodies = ["\n".join(f"  {{ {code} }}" for _, code in chunk) for chunk in chunks]
    # all the programs count towards building the headers' PCH at once (see _pch)
    uncached = [b for b in bodies if verified(exe_path(program(b, headers)))]
    if uncached:
        with _pch_lock:
            _pch_wanted[_prelude_part(program("", headers))] += len(uncached)
    with ThreadPoolExecutor(max_workers=max(1, min(len(bodies), os.cpu_count() or 1))) as pool:
        outputs = list(pool.map(lambda b: _run(b, headers, 0), bodies))
    got: dict[str, list[str]] = {}
    for out in outputs:
        for line in out.splitlines():
            key, _, text = line.partition("\t")
            got.setdefault(key, []).append(text)
    return {k: "\n".join(v) for k, v in got.items()}


def compiles(body: str, headers: tuple[str, ...] = ()) -> bool:
    """Whether CuTe accepts ``body`` (a static_assert makes it False)."""
    try:
        build(program(body, headers))
    except CompileFailed:
        return False
    return True
