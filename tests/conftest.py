"""Shared test setup: GPU tests skip without a GPU, LaTeX tests without pdflatex; the
witnesses' caches are filled in a second process meanwhile (tests/cute_cpp/prefetch.py)."""

import os
import shutil
import signal
import subprocess
import sys

import pytest


def _have_gpu() -> bool:
    try:
        from cuda.bindings import driver  # type: ignore

        (err,) = driver.cuInit(0)[:1]
        if int(err) != 0:
            return False
        err, n = driver.cuDeviceGetCount()
        return int(err) == 0 and n > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    gpu = _have_gpu()
    latex = shutil.which("pdflatex") is not None
    for item in items:
        if "gpu" in item.keywords and not gpu:
            item.add_marker(pytest.mark.skip(reason="needs an NVIDIA GPU (none found)"))
        if "latex" in item.keywords and not latex:
            item.add_marker(pytest.mark.skip(reason="needs pdflatex (texlive not installed)"))
    if os.environ.get("CUTEMMA_PREFETCH") != "0":
        _compiling_files_last(items)


def _compiling_files_last(items) -> None:
    """Run the files that compile much (those defining ``cpp_prefetch``) after all the others,
    each file's tests in their order: meanwhile the prefetch process compiles what they need on
    the other core, so a cold run's compiles overlap the pure-Python tests instead of stalling
    them (tests never depend on the order of files)."""
    last = [item for item in items if hasattr(getattr(item, "module", None), "cpp_prefetch")]
    if last and len(last) < len(items):
        ids = {id(item) for item in last}
        items[:] = [item for item in items if id(item) not in ids] + last


_prefetch: dict = {}


def pytest_collection_finish(session):
    """Start the prefetch process on the selected test files that define ``cpp_prefetch``, in
    the order they run (a cold run's compiles then overlap the pure-Python tests)."""
    if session.config.option.collectonly or os.environ.get("CUTEMMA_PREFETCH") == "0":
        return
    files: list[str] = []
    for item in session.items:
        module = getattr(item, "module", None)
        if hasattr(module, "cpp_prefetch") and str(item.path) not in files:
            files.append(str(item.path))
    if not files:
        return
    from cute_cpp import harness

    try:
        log = open(harness.cache_dir() / "prefetch.log", "w")  # noqa: SIM115 - closed at the end
    except OSError:  # no writable cache: the tests compile as they go
        return
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    _prefetch["log"] = log
    _prefetch["proc"] = subprocess.Popen(
        [sys.executable, "-m", "cute_cpp.prefetch", *files],
        cwd=os.path.dirname(__file__),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,  # its own process group: ended with its compilers below
    )


def pytest_unconfigure(config):
    proc = _prefetch.pop("proc", None)
    if proc is not None and proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        proc.wait()
    if "log" in _prefetch:
        _prefetch.pop("log").close()
