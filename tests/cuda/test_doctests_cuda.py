"""The docstring examples of cutemma.cuda (the shared doctest test skips this layer,
because its examples need NVRTC and cuobjdump from the cuda extra)."""

from __future__ import annotations

import doctest
import importlib

import pytest
from cuda_skips import needs_cuobjdump, needs_nvrtc

MODULES = [
    "cache",
    "compile",
    "sass",
    "source",
    "launch",
    "tile_values",
    "batch_compile",
    "verify",
    "probe_gmma",
    "probe_umma",
    "report",
    "__init__",
]
# codegen and probe: their examples run in tests/cuda/test_probe_compile.py


@needs_nvrtc
@needs_cuobjdump
@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    # import_module, not attribute access: cutemma.cuda.compile is also a function.
    module = importlib.import_module(
        "cutemma.cuda" if name == "__init__" else f"cutemma.cuda.{name}"
    )
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"no examples found in {module.__name__}"
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {module.__name__}"
