"""Fill the witnesses' caches in a second process while pytest runs the tests.

A cold run compiles minutes of C++ (g++ against CuTe's headers) and CUDA (NVRTC); done when a
test first needs it, each compile leaves the other core idle while pure-Python tests run
before and after. So tests/conftest.py starts ``python -m cute_cpp.prefetch FILE...`` once
collection is done, with the selected test files that define ``cpp_prefetch()``, in the
order pytest will run them. This process imports each file as pytest would and calls its
``cpp_prefetch()``: the compile-only part of that file's tests (the very calls its tests
make), whose results land in the on-disk caches (harness binaries, batch verdicts, NVRTC
cubins). A test then finds its binary built, or waits for the one being built (the
harness's ``file_lock``), or builds it itself when this process has not got there yet.

Nothing here decides a test's outcome: every answer a test compares with is still computed
by g++ / NVRTC in this run (or found in a cache the run filled); an error here is written
to stderr (the log beside the cache) and the tests meet it again themselves.
Set ``CUTEMMA_PREFETCH=0`` to turn it off.
"""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from contextlib import AbstractContextManager
from pathlib import Path

from cute_cpp import harness


def one_at_a_time(name: str, wait: bool = True) -> AbstractContextManager[bool]:
    """A lock named ``name`` shared by pytest and this process, for work whose own cache has no
    lock (an NVRTC sweep): a test waits for the prefetch doing it (then finds it cached);
    the prefetch passes ``wait=False`` and skips work a test has already started (False)."""
    return harness.file_lock(harness.cache_dir() / f"{name}.lock", wait)


def _import(path: Path):
    """Import a test file as pytest's default ("prepend") import mode does: its package root's
    parent (or its own folder, outside a package) first on sys.path."""
    base, parts = path.parent, [path.stem]
    while (base / "__init__.py").is_file():
        parts.insert(0, base.name)
        base = base.parent
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))
    return importlib.import_module(".".join(parts))


def main(argv: list[str]) -> int:
    for arg in argv:
        t0 = time.perf_counter()
        try:
            fn = getattr(_import(Path(arg)), "cpp_prefetch", None)
            if fn is not None:
                fn()
            print(f"{time.perf_counter() - t0:6.1f} s  {arg}", file=sys.stderr, flush=True)
        except BaseException:  # noqa: BLE001 - the file's tests meet it again and report it
            print(f"{time.perf_counter() - t0:6.1f} s  {arg} FAILED:", file=sys.stderr)
            traceback.print_exc()
            sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
