"""Fixtures for the picture tests: the seed figures, and a skip for browser tests."""

from __future__ import annotations

import pytest
from viz_cdp import find_chromium

from cutemma.layout import Layout
from cutemma.mma import make_mma_atom

SM70_NT = "SM70_8x8x4_F32F16F16F32_NT"


def seed_figures() -> dict:
    """The objects behind the seed's print_latex images (004: HMMA NT atom and TiledMMAs)."""
    from cutemma.tiled import make_tiled_mma

    n_major = Layout((2, 2), (2, 1))
    return {
        "atom": make_mma_atom(SM70_NT),
        "2x2": make_tiled_mma(SM70_NT, n_major),
        "32x32x4": make_tiled_mma(SM70_NT, n_major, (32, 32, 4)),
        "32Mx32x4": make_tiled_mma(SM70_NT, n_major, (Layout((4, 4, 2), (1, 8, 4)), 32, 4)),
        "sm90_64x8": make_mma_atom("SM90_64x8x16_F16F16F16_SS"),
        "sm90_64x128": make_mma_atom("SM90_64x128x16_F16F16F16_SS"),
    }


@pytest.fixture(scope="session")
def seeds() -> dict:
    return seed_figures()


def pytest_collection_modifyitems(config, items):
    if find_chromium() is not None:
        return
    skip = pytest.mark.skip(reason="needs headless Chromium (apt-get install -y chromium)")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)
