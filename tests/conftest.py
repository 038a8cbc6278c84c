"""Shared test setup: GPU tests skip without a GPU, LaTeX tests without pdflatex."""

import shutil

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
