"""Every CUDA test gets its own empty cubin cache."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every test gets an empty cubin cache, so hits and misses are its own."""
    folder = tmp_path / "cutemma-cache"
    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(folder))
    return folder
