"""Every public name of the pure-Python layers has a docstring with a runnable example (the
examples themselves run in tests/test_doctests.py)."""

from __future__ import annotations

import importlib
import inspect

import pytest

MODULES = (
    "cutemma",
    "cutemma.copy",
    "cutemma.copy.tma",
    "cutemma.copy.tma_atoms",
    "cutemma.emulate",
    "cutemma.emulate.copy",
    "cutemma.emulate.tma",
    "cutemma.emulate.tmem",
    "cutemma.layout",
    "cutemma.mma",
    "cutemma.smem",
    "cutemma.tensor",
    "cutemma.tiled",
    "cutemma.viz",
)
# records of cutemma/copy/tma.py (another branch's file) that have no example yet
WITHOUT_EXAMPLE = {
    "cutemma.copy.tma.TmaRules",
    "cutemma.copy.tma.TmaSwizzle",
    "cutemma.copy.tma.TensorMap",
}


def _public(modname: str):
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [
            n
            for n, x in vars(mod).items()
            if not n.startswith("_") and getattr(x, "__module__", None) == modname
        ]
    for n in names:
        if n.startswith("_"):
            continue
        x = getattr(mod, n)
        if isinstance(x, type) and issubclass(x, BaseException):
            continue  # the error classes are documented together in cutemma.errors
        if callable(x):
            yield f"{modname}.{n}", x


@pytest.mark.parametrize("modname", MODULES)
def test_public_names_have_a_runnable_example(modname):
    lacking = [
        name
        for name, x in _public(modname)
        if ">>>" not in (inspect.getdoc(x) or "") and name not in WITHOUT_EXAMPLE
    ]
    assert lacking == [], f"public names without a '>>>' example in their docstring: {lacking}"
