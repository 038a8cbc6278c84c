"""bench/provenance.py: the digest a result file records names the tree it ran on."""

import doctest
import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
spec = importlib.util.spec_from_file_location("provenance", ROOT / "bench" / "provenance.py")
provenance = importlib.util.module_from_spec(spec)
spec.loader.exec_module(provenance)


def test_examples():
    assert doctest.testmod(provenance).failed == 0


def test_a_commit_and_its_checkout_have_one_digest():
    """The digest taken from git's objects equals the one taken from the files on disk
    exactly when the package has no uncommitted change (as in CI's fresh clone)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("no git checkout")
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", provenance.PACKAGE],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    same = provenance.commit_digest("HEAD", ROOT) == provenance.tree_digest(ROOT)
    assert same == (not dirty)


def test_cached_bytecode_does_not_change_the_digest(tmp_path):
    pkg = tmp_path / provenance.PACKAGE
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    before = provenance.tree_digest(tmp_path)
    (pkg / "__pycache__" / "a.cpython-312.pyc").write_bytes(b"\0")
    (pkg / "b.pyc").write_bytes(b"\0")
    assert provenance.tree_digest(tmp_path) == before
    (pkg / "a.py").write_text("x = 2\n")
    assert provenance.tree_digest(tmp_path) != before
