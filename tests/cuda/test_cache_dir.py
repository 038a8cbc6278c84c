"""CUTEMMA_CACHE_DIR with a '~user' that has no home is refused by name (issue 34: compile,
explain and tune raised "RuntimeError: Could not determine home directory")."""

from __future__ import annotations

import pytest

from cutemma.cuda.cache import cache_dir
from cutemma.errors import CompileError


def test_a_tilde_user_without_a_home_is_named(monkeypatch):
    monkeypatch.setenv("CUTEMMA_CACHE_DIR", "~nouser_cutemma_xyz/cache")
    with pytest.raises(CompileError, match="CUTEMMA_CACHE_DIR='~nouser_cutemma_xyz/cache'"):
        cache_dir()


def test_a_plain_path_is_kept(monkeypatch, tmp_path):
    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
