"""Which source tree a result file was measured on: a digest of the package's files.

A result's ``commit`` comes from ``git rev-parse`` where the benchmark ran, and the device
machine's copy of the checkout can carry a stale ``.git`` (it reported 21a7fef for a
whole session of later trees, notes/kernels-journal.md, session 10). The digest is taken from the
files themselves, so it names the tree that ran wherever it runs. Here it can be computed
for any commit, which shows which commit a result file's digest belongs to:

    python bench/provenance.py            # the working tree's digest
    python bench/provenance.py 7826ad5    # a commit's (from git's objects)

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> (root / "cutemma").mkdir(); _ = (root / "cutemma" / "a.py").write_text("x = 1\\n")
>>> tree_digest(root) == digest_of({"cutemma/a.py": b"x = 1\\n"})
True
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

PACKAGE = "cutemma"
SKIP_PARTS = ("__pycache__",)  # what Python writes beside the sources (git ignores it)
SKIP_SUFFIXES = (".pyc",)


def digest_of(files: dict[str, bytes]) -> str:
    """sha256 over (path, content) pairs in path order; 16 hex digits.

    >>> digest_of({"b": b"2", "a": b"1"}) == digest_of({"a": b"1", "b": b"2"})
    True
    >>> digest_of({"a": b"1"}) != digest_of({"a": b"2"})
    True
    """
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.encode() + b"\0" + files[path] + b"\0")
    return h.hexdigest()[:16]


def tree_digest(root: str | Path = ".") -> str:
    """The digest of the package's files as they are on disk under ``root``."""
    root = Path(root)
    files = {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in (root / PACKAGE).rglob("*")
        if p.is_file() and not set(p.parts) & set(SKIP_PARTS) and p.suffix not in SKIP_SUFFIXES
    }
    return digest_of(files)


def commit_digest(rev: str, root: str | Path = ".") -> str:
    """The digest of the package's files as commit ``rev`` holds them (git's objects)."""

    def git(*args: str) -> bytes:
        return subprocess.run(("git", *args), cwd=root, check=True, capture_output=True).stdout

    names = git("ls-tree", "-r", "--name-only", rev, PACKAGE + "/").decode().splitlines()
    return digest_of({n: git("show", f"{rev}:{n}") for n in names})


if __name__ == "__main__":
    try:
        print(commit_digest(sys.argv[1]) if len(sys.argv) > 1 else tree_digest())
    except subprocess.CalledProcessError as exc:
        sys.exit(
            f"provenance: git could not read {sys.argv[1]!r} here ({exc.stderr.decode().strip()})"
        )
