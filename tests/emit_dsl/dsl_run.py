"""Run CuTe DSL on many cases in few subprocesses and read back what it prints.

The DSL evaluates layouts only while tracing a ``@cute.jit`` function defined in a source file,
so each batch is written as one .py module: one jit function holding every case of one
``CUTE_DSL_ARCH``, each case in its own ``try`` (a DSL refusal is an outcome, not a crash), each
printed field on its own marked line. Results are cached by the hash of the module source and
the DSL version under ``$XDG_CACHE_HOME/cutemma/dsl`` (a second run starts no DSL at all).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from cute_cpp import harness

CHUNK = 1500  # cases per jit function: tracing is ~5 ms a case, the process start ~2 s
TIMEOUT_S = 300
_MARK = "@@dsl:"


@dataclass(frozen=True)
class DslCase:
    """``expr`` built in the DSL; ``fields`` are expressions over ``x`` whose str is read back."""

    key: str
    expr: str
    fields: tuple[str, ...] = ("x",)
    arch: str | None = None
    batch: str = ""  # cases likely to crash the DSL go in a batch of their own (a cheap restart)


def dsl_version() -> str | None:
    try:
        return metadata.version("nvidia-cutlass-dsl")
    except metadata.PackageNotFoundError:
        return None


def unavailable_reason() -> str | None:
    """Why the DSL witness cannot run here, or None."""
    if dsl_version() is None:
        return (
            "CuTe DSL is not installed (pip install 'nvidia-cutlass-dsl[cu13]==4.8.*', Linux "
            "x86_64/aarch64 only)"
        )
    if not sys.platform.startswith("linux"):
        return "CuTe DSL wheels exist for Linux only"
    return None


def _cache_dir() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    d = root / "cutemma" / "dsl"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _source(cases: list[DslCase]) -> str:
    lines = [
        "import cutlass",
        "import cutlass.cute as cute",
        "",
        "",
        "def _out(key, field, value):",
        f"    print({_MARK!r} + 'V', key, field, str(value).replace('\\n', '\\\\n'), sep='\\t')",
        "",
        "",
        "def _err(key, e):",
        "    msg = ' '.join(str(e).split())[:300]",
        f"    print({_MARK!r} + 'E', key, type(e).__name__, msg, sep='\\t')",
        "",
        "",
        "@cute.jit",
        "def run():",
    ]
    for c in cases:
        lines.append("    try:")
        lines.append(f"        x = {c.expr}")
        for f in c.fields:
            lines.append(f"        _out({c.key!r}, {f!r}, {f})")
        lines.append("    except Exception as e:")
        lines.append(f"        _err({c.key!r}, e)")
    lines += ["    return", "", "", "run()", ""]
    return "\n".join(lines)


def _parse(stdout: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for line in stdout.splitlines():
        if not line.startswith(_MARK):
            continue
        parts = line[len(_MARK) :].split("\t")
        tag, key = parts[0], parts[1]
        if tag == "V":
            out.setdefault(key, {})[parts[2]] = parts[3].replace("\\n", "\n")
        else:
            out[key] = {"error": f"{parts[2]}: {parts[3] if len(parts) > 3 else ''}"}
    return out


def _subprocess(cases: list[DslCase], arch: str | None) -> tuple[dict[str, dict], str, int]:
    env = dict(os.environ)
    if arch:
        env["CUTE_DSL_ARCH"] = arch
    with tempfile.TemporaryDirectory(prefix="cutemma_dsl_") as tmp:
        path = Path(tmp) / "dsl_cases.py"
        path.write_text(_source(cases))
        proc = subprocess.run(
            [sys.executable, str(path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=TIMEOUT_S,
            cwd=tmp,
        )
    return _parse(proc.stdout), proc.stderr, proc.returncode


def _run_batch(cases: list[DslCase], arch: str | None) -> dict[str, dict]:
    digest = hashlib.sha256(f"{dsl_version()}\n{arch}\n{_source(cases)}".encode()).hexdigest()
    cached = _cache_dir() / f"{digest[:24]}.json"
    if cached.exists():
        return json.loads(cached.read_text())
    # one runner per batch: a test waits for the prefetch process running it (conftest.py),
    # then reads the cache it wrote
    with harness.file_lock(cached.with_suffix(".lock")):
        if cached.exists():
            return json.loads(cached.read_text())
        return _run_and_save(cases, arch, cached)


def _run_and_save(cases: list[DslCase], arch: str | None, cached: Path) -> dict[str, dict]:
    got: dict[str, dict] = {}
    todo = list(cases)
    while todo:
        part, stderr, rc = _subprocess(todo, arch)
        got.update(part)
        done = [c for c in todo if c.key in part]
        if len(done) == len(todo):
            break
        # cases run in order: the first without output killed the process (the DSL's native
        # code dies on some inputs, e.g. SIGFPE); note it and go on with the rest
        first = next(i for i, c in enumerate(todo) if c.key not in part)
        if rc == 0 or first == 0 and not part and "Traceback" in stderr and rc == 1:
            raise RuntimeError(
                f"CuTe DSL run of {len(todo)} cases ({arch}) gave nothing for "
                f"{todo[first].key}; rc={rc}\n{stderr[-3000:]}"
            )
        got[todo[first].key] = {"error": f"crash: the DSL process died (rc={rc})"}
        todo = todo[first + 1 :]
    tmp_path = cached.with_suffix(f".{os.getpid()}.tmp")
    tmp_path.write_text(json.dumps(got))
    tmp_path.replace(cached)
    return got


def run(cases: list[DslCase]) -> dict[str, dict]:
    """Every case's printed fields (``{field: text}``) or ``{"error": "Type: message"}``."""
    by_arch: dict[tuple, list[DslCase]] = {}
    for c in cases:
        by_arch.setdefault((c.arch, c.batch), []).append(c)
    out: dict[str, dict] = {}
    for (arch, _), group in by_arch.items():
        for i in range(0, len(group), CHUNK):
            out.update(_run_batch(group[i : i + CHUNK], arch))
    return out
