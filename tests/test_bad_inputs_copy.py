"""Every bad input to the copy layer (and the names exported after the first table) gets a
named cutemma error: the rows of bad_inputs_copy_table.py, run as tests/test_bad_inputs.py runs
its own, and a check that no public callable of these modules is left without a row.
"""

from __future__ import annotations

import contextlib
import importlib
import io

import pytest
from bad_inputs_copy_table import COPY_API, EXEMPT, namespace
from bad_inputs_table import API, PUBLIC_NAMES

from cutemma.errors import CutemmaError

# the modules whose public callables must all have rows (the base table covers the rest)
MODULES = (
    "cutemma",
    "cutemma.copy",
    "cutemma.copy.tma",
    "cutemma.copy.tma_atoms",
    "cutemma.emulate.copy",
    "cutemma.emulate.tma",
    "cutemma.emulate.tmem",
    "cutemma.tiled",
    "cutemma.tiled.tiled_copy",
    "cutemma.tiled.copy_analysis",
    "cutemma.layout.basis",
)


@pytest.fixture(scope="module")
def names() -> dict:
    return namespace()


def _public_callables(modname: str) -> list[str]:
    mod = importlib.import_module(modname)
    listed = getattr(mod, "__all__", None)
    if listed is None:  # a module without __all__: what it defines itself
        listed = [
            n
            for n, x in vars(mod).items()
            if not n.startswith("_") and getattr(x, "__module__", None) == modname
        ]
    return [
        n
        for n in listed
        if callable(getattr(mod, n))
        and not (isinstance(getattr(mod, n), type) and issubclass(getattr(mod, n), BaseException))
    ]


def test_every_public_callable_of_the_copy_layer_has_rows():
    calls = " ".join(call for call, _, _ in API + COPY_API)
    missing = [
        f"{m}.{n}"
        for m in MODULES
        for n in _public_callables(m)
        if f"{n}(" not in calls and f"{m}.{n}" not in EXEMPT and f"{m}.{n}" not in PUBLIC_NAMES
    ]
    assert missing == [], f"public names without a row in tests/bad_inputs_copy_table.py: {missing}"


@pytest.mark.parametrize(("call", "error", "fragment"), COPY_API, ids=[r[0][:70] for r in COPY_API])
def test_copy_bad_input_raises_a_named_error(names, call, error, fragment):
    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(CutemmaError) as info:
        eval(call, dict(names))  # noqa: S307 - the table's own text
    assert isinstance(info.value, error), f"{type(info.value).__name__}: {info.value}"
    assert fragment.lower() in str(info.value).lower(), str(info.value)
