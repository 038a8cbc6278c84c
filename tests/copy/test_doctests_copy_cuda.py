"""Docstring examples of the copy probes in cutemma.cuda (that layer's shared runner lists its
modules by name; these are run here)."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["probe_copy", "probe_copy_sm100", "verify_copy"])
def test_copy_cuda_doctests(name):
    module = importlib.import_module(f"cutemma.cuda.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
