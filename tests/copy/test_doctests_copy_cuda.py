"""Docstring examples of the copy probes in cutemma.cuda (that layer's shared runner lists its
modules by name; these are run here)."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "name",
    [
        "cuda.probe_copy",
        "cuda.probe_copy_sm100",
        "cuda.probe_copy_tma",
        "cuda.verify_copy",
        "emulate.tma",
        "emulate.tmem",
        "emulate.copy",
    ],
)
def test_copy_cuda_doctests(name):
    module = importlib.import_module(f"cutemma.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
