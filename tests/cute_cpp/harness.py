"""CuTe C++ as a witness: compile small host programs against the pip wheel's headers.

CuTe is header-only and runs as host code. Its headers ship in the ``nvidia-cutlass`` wheel
(``cutlass_library/source/include``); plain ``g++ -std=c++17`` also needs the CUDA headers of
the pip packages ``nvidia-cuda-runtime`` (cuda_runtime_api.h), ``nvidia-cuda-crt``
(crt/host_defines.h) and ``nvidia-cuda-cccl`` (cuda/std). Nothing of CuTe is copied here:
tests write C++ *calls* of CuTe's public functions, this module compiles and runs them and
hands back what CuTe printed.

Programs are batched (many cases per translation unit) and their binaries cached by a hash
of the source and the compiler, so a second run of the suite compiles nothing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

CXX_FLAGS = ("-std=c++17", "-O0", "-w", "-fno-exceptions")
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
    cxx = os.environ.get("CXX") or shutil.which("g++")
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
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    path = Path(base) / "cutemma" / "cute_cpp"
    path.mkdir(parents=True, exist_ok=True)
    return path


@cache
def _compiler_id() -> str:
    out = subprocess.run([compiler(), "--version"], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()[0] if out.stdout else compiler()


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


def build(source: str) -> Path:
    """Compile ``source`` (cached by its hash, the flags, the compiler and the headers)."""
    key = hashlib.sha256(
        "\0".join((source, *CXX_FLAGS, _compiler_id(), *headers_id())).encode()
    ).hexdigest()[:24]
    exe = cache_dir() / f"case_{key}"
    if exe.is_file():
        return exe
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "case.cpp"
        src.write_text(source)
        out = Path(tmp) / "case"
        flags = [f"-I{d}" for d in include_dirs()]
        res = subprocess.run(
            [compiler(), *CXX_FLAGS, *flags, str(src), "-o", str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
        if res.returncode:
            raise CompileFailed(source, res.stderr)
        tmp_exe = exe.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(out, tmp_exe)
        tmp_exe.chmod(0o755)
        tmp_exe.replace(exe)
    return exe


class CompileFailed(Exception):
    """g++ refused a program; ``.errors`` holds the first error lines."""

    def __init__(self, source: str, stderr: str):
        lines = [ln for ln in stderr.splitlines() if "error" in ln]
        self.errors = "\n".join(lines[:8]) or stderr[-2000:]
        super().__init__(self.errors)
        self.source = source


def run(body: str, headers: tuple[str, ...] = ()) -> str:
    """Compile (cached) and run one program; its standard output."""
    exe = build(program(body, headers))
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
    with ThreadPoolExecutor(max_workers=max(1, min(len(bodies), os.cpu_count() or 1))) as pool:
        outputs = list(pool.map(lambda b: run(b, headers), bodies))
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
