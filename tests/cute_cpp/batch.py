"""Thousands of C++ cases, a few programs: batching, finding what C++ refuses, caching.

Each case is a C++ expression; a batch program prints, for each, CuTe's ``print`` of its value
and, for a layout, ``L(i)`` for every ``i < size(L)``. Each case is one function
``case_<n>()``. When g++ refuses the program (a CuTe ``static_assert``, a substitution
failure), the locations in its errors (``case.cpp:LINE``, ``In function 'void case_N()'``)
name the failing cases: they are recorded as *refused*, with their first error, and the rest is
compiled again. When no location maps to a case, the batch is halved until each refusal is
isolated. A case that crashes at run time is recorded as refused too, and the program runs
again from the next case (``argv[1]``), so nothing is recompiled.

Verdicts are cached per case, by a hash of its expression, the prelude, the flags, the compiler
and the headers, in one JSON file beside the harness's binaries: a second run compiles nothing,
and adding cases compiles only the new ones. ``predicted_refused`` (any guess, e.g. "cutemma
raises") only groups likely refusals into their own programs: a program whose cases all fail
needs one failed compile, and one with none needs one compile, where a mix needs both.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import re
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from cute_cpp import harness
from cutemma.cuda.cache import load_sealed, seal, warn_damaged, write_atomic

# show(key, x) prints "<key>\t<cute::print of x>\t<x(0),x(1),...>" (values for layouts only);
# fflush so that the lines before a crash are kept.
HELPER = r"""
template <class X>
void show(const char* key, X const& x) {
  printf("%s\t", key);
  print(x);
  printf("\t");
  if constexpr (is_layout<X>::value || is_composed_layout<X>::value) {
    for (int i = 0; i < int(size(x)); ++i) printf("%d,", int(x(i)));
  }
  printf("\n");
  fflush(stdout);
}
"""

# The algebra needs only these headers (0.9 s to parse, against 1.5 s for cute/tensor.hpp).
LAYOUT_PRELUDE = """\
#include <cstdio>
#include <cstdlib>
#include <cute/layout.hpp>
#include <cute/swizzle_layout.hpp>
#include <cute/layout_composed.hpp>
using namespace cute;
"""

# -O1 compiles CuTe's static layouts twice as fast as -O0 (far fewer functions emitted);
# -g0 and no unwind tables save a little more.
FLAGS = ("-std=c++17", "-O1", "-w", "-fno-exceptions", "-g0", "-fno-asynchronous-unwind-tables")
VERSION = "3"
RUN_TIMEOUT_S = 60


@dataclass(frozen=True)
class Verdict:
    """What C++ did with one case: ``text``/``values`` when it printed, else ``refused``."""

    text: str | None = None
    values: tuple[int, ...] | None = None
    refused: str | None = None

    def to_json(self) -> list:
        return [self.text, None if self.values is None else list(self.values), self.refused]

    @classmethod
    def from_json(cls, j: list) -> Verdict:
        return cls(j[0], None if j[1] is None else tuple(j[1]), j[2])


def _digest(*parts: str) -> str:
    ids = (VERSION, *FLAGS, harness._compiler_id(), *harness.headers_id())
    return hashlib.sha256("\0".join((*ids, *parts)).encode()).hexdigest()[:24]


def _flags() -> list[str]:
    """FLAGS plus the harness's GCC-only speed-ups (the same program, compiled faster)."""
    speedups = harness.compile_flags()[len(harness.CXX_FLAGS) :]
    return [*FLAGS, *speedups]


def _includes() -> list[str]:
    return [f"-I{d}" for d in harness.include_dirs()]


_pch_lock = threading.Lock()


@cache
def _pch(prelude: str) -> Path:
    """The prelude and helper as a header, precompiled once (saves ~1 s per compile)."""
    with _pch_lock:
        # the PCH by path too: it is rebuilt per venv (seconds), the case verdicts are not
        folder = harness.cache_dir() / f"pch_{_digest(prelude, HELPER, *harness.include_dirs())}"
        header = folder / "cute_cases_prelude.h"
        gch = folder / (header.name + ".gch")
        if not gch.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            header.write_text("#pragma once\n" + prelude + HELPER)
            tmp = folder / f"tmp.{os.getpid()}.gch"
            cmd = [harness.compiler(), *_flags(), *_includes(), "-x", "c++-header", str(header)]
            try:
                res = subprocess.run([*cmd, "-o", str(tmp)], capture_output=True, text=True)
                if res.returncode:
                    raise harness.CompileFailed(
                        header.read_text(), res.stderr, harness.compiler(), res.returncode
                    )
                tmp.replace(gch)
            finally:  # a failed compile or rename leaves no half-written PCH behind
                tmp.unlink(missing_ok=True)
        return header


def _source(cases: list[tuple[str, str]], prelude: str) -> tuple[str, list[tuple[int, int]]]:
    """The program for ``[(key, expr)]`` and each case's (first, last) line."""
    parts = [f'#include "{_pch(prelude).name}"\n']
    spans, line = [], 2
    for n, (key, expr) in enumerate(cases):
        text = f'static void case_{n}() {{\n  show("{key}", {expr});\n}}\n'
        spans.append((line, line + 2))  # the three lines of case_n
        line += 3
        parts.append(text)
    calls = "".join(f"  if (start <= {n}) case_{n}();\n" for n in range(len(cases)))
    parts.append(
        "int main(int argc, char** argv) {\n  int start = argc > 1 ? atoi(argv[1]) : 0;\n"
        f"{calls}  return 0;\n}}\n"
    )
    return "".join(parts), spans


def _gcc(src: str, prelude: str, exe: Path) -> str | None:
    """Compile ``src`` to ``exe``; g++'s stderr if it refuses."""
    folder = _pch(prelude).parent
    path = exe.with_suffix(".cpp")
    path.write_text(src)
    res = subprocess.run(
        [harness.compiler(), *_flags(), f"-I{folder}", *_includes(), str(path), "-o", str(exe)],
        capture_output=True,
        text=True,
        check=False,
    )
    if not res.returncode:
        return None
    return res.stderr or f"{harness.compiler()} exited {res.returncode} with no output"


_LOC = re.compile(r"case\.cpp:(\d+)")
_FN = re.compile(r"void case_(\d+)\(\)")


def _errors_by_case(stderr: str, spans: list[tuple[int, int]]) -> dict[int, str]:
    """Each failing case and its first error: g++ names the case's lines (``case.cpp:LINE``,
    ``In function 'void case_N()'``) before the error its instantiation hit."""
    starts = [lo for lo, _ in spans]
    found: dict[int, str] = {}
    current = None
    for line in stderr.splitlines():
        for m in _FN.findall(line):
            if int(m) < len(spans):
                current = int(m)
                found.setdefault(current, "")
        for m in _LOC.findall(line):
            n = bisect.bisect_right(starts, int(m)) - 1
            if n >= 0 and int(m) <= spans[n][1]:
                current = n
                found.setdefault(n, "")
        if "error:" in line and current is not None and not found[current]:
            found[current] = re.sub(r"^.*?error: ", "", line)[:300]
    return found


def _run(cases: list[tuple[str, str]], prelude: str, out: dict[str, Verdict]) -> None:
    """Compile and run ``cases``, dropping refusals; fill ``out`` with every verdict."""
    pending = list(cases)
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "case"
        while pending:
            src, spans = _source(pending, prelude)
            err = _gcc(src, prelude, exe)
            if err is None:
                _execute(exe, pending, out)
                return
            bad = _errors_by_case(err, spans)
            if not bad:
                if len(pending) == 1:
                    bad = {0: err.strip()[-300:]}
                else:  # no location maps to a case: halve and retry each half
                    half = len(pending) // 2
                    _run(pending[:half], prelude, out)
                    _run(pending[half:], prelude, out)
                    return
            for n, why in bad.items():
                out[pending[n][0]] = Verdict(refused=f"does not compile: {why or 'error'}")
            pending = [c for n, c in enumerate(pending) if n not in bad]


def _execute(exe: Path, cases: list[tuple[str, str]], out: dict[str, Verdict]) -> None:
    start = 0
    while start < len(cases):
        try:
            res = subprocess.run(
                [str(exe), str(start)], capture_output=True, text=True, timeout=RUN_TIMEOUT_S
            )
            stdout, rc, err = res.stdout, res.returncode, res.stderr
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, err = -1, "timed out"
        done = set()
        for line in stdout.splitlines():
            key, _, rest = line.partition("\t")
            text, _, vals = rest.partition("\t")
            values = tuple(int(v) for v in vals.split(",") if v) if vals else None
            out[key] = Verdict(text=text, values=values)
            done.add(key)
        if rc == 0:
            return
        # the first case that did not print crashed: record it, go on after it
        idx = next((n for n in range(start, len(cases)) if cases[n][0] not in done), None)
        if idx is None:
            return
        out[cases[idx][0]] = Verdict(refused=f"crashes at run time: {err.strip()[-200:]}")
        start = idx + 1


def _save(path: Path, known: dict) -> None:
    """Merge with what another process may have written meanwhile; replace atomically, sealed
    (a digest and length: a verdict file changed on disk is recomputed, never trusted)."""
    known.update({k: v for k, v in _load(path).items() if k not in known})
    write_atomic(path, seal(json.dumps(known).encode()))


def _load(path: Path) -> dict:
    """The saved verdicts; {} when absent, from before seals, or damaged (then a warning)."""
    data = load_sealed(path)
    try:
        known = json.loads(data) if data is not None else {}
    except ValueError:
        known = None
    if not isinstance(known, dict):
        warn_damaged(path, "is sealed but not a JSON object")
        return {}
    return known


def _case_hash(expr: str) -> str:
    return hashlib.sha256(expr.encode()).hexdigest()[:20]


def _compile(
    todo: list[tuple[str, str]],
    known: dict[str, list],
    hashes: dict[str, str],
    path: Path,
    per_program: int,
    prelude: str,
    predicted_refused: set[str] | None,
) -> None:
    """Compile and run ``todo``, adding each verdict to ``known`` and saving it to ``path``."""
    guess = predicted_refused or set()
    likely_bad = [c for c in todo if c[0] in guess]
    likely_ok = [c for c in todo if c[0] not in guess]
    # Likely refusals go in smaller programs: g++ reports a failed template instantiation
    # once, for the first case that needs it, so cases sharing one take a round each.
    # A third of per_program: for 300 likely refusals, 17 compiles in 17.7 s against
    # 41 compiles in 23.4 s at an eighth (a failed compile costs ~0.5 s however small).
    small = max(1, per_program // 3)
    chunks = [likely_ok[i : i + per_program] for i in range(0, len(likely_ok), per_program)]
    chunks += [likely_bad[i : i + small] for i in range(0, len(likely_bad), small)]
    lock = threading.Lock()

    def one(chunk):
        new: dict[str, Verdict] = {}
        _run(chunk, prelude, new)
        with lock:  # save as each program finishes: an interrupted run keeps its work
            for key, _ in chunk:
                verdict = new.get(key, Verdict(refused="printed nothing"))
                known[hashes[key]] = verdict.to_json()
            _save(path, known)

    workers = max(1, min(len(chunks), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(one, chunks))


def verdicts(
    cases: dict[str, str],
    per_program: int = 100,
    prelude: str = LAYOUT_PRELUDE,
    predicted_refused: set[str] | None = None,
) -> dict[str, Verdict]:
    """C++'s verdict on each case of ``{key: C++ expression}`` (compiling only uncached ones).

    Uncached cases are grouped into programs of ``per_program`` (likely refusals apart),
    built in parallel, one per CPU.
    """
    path = harness.cache_dir() / f"verdicts_{_digest(prelude, HELPER)}.json"
    hashes = {key: _case_hash(expr) for key, expr in cases.items()}
    known: dict[str, list] = _load(path)
    if not all(h in known for h in hashes.values()):
        # another process (tests/cute_cpp/prefetch.py) may be compiling these very cases:
        # wait for it, then compile only what is still missing
        with harness.file_lock(path.with_suffix(".lock")):
            known = _load(path)
            todo = sorted((k, e) for k, e in cases.items() if hashes[k] not in known)
            if todo:
                _compile(todo, known, hashes, path, per_program, prelude, predicted_refused)
    return {key: Verdict.from_json(known[hashes[key]]) for key in cases}
