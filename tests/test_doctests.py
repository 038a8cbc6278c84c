"""Every docstring example in the pure-Python layers runs and gives what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import cutemma

# layers whose examples need nothing beyond numpy; cuda/kernels examples need a GPU stack
_SKIP = ("cutemma.cuda", "cutemma.kernels", "cutemma.__main__")


def _modules():
    for info in pkgutil.walk_packages(cutemma.__path__, "cutemma."):
        if not info.name.startswith(_SKIP):
            yield info.name


@pytest.mark.parametrize("name", sorted(_modules()))
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
