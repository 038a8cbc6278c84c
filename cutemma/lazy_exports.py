"""A package's public names, each imported from its module the first time it is asked for.

A package ``__init__`` that imported every module it re-exports would make ``import cutemma``
load the whole library (numpy, the catalog, the kernel generator). Instead it names, for each
public name, the module that defines it, and hands that table to :func:`lazy_exports`, which
returns the package's ``__getattr__`` and ``__dir__`` (PEP 562)::

    _LAZY = {"CopyAtom": "atom", "make_copy_atom": "catalog"}  # name -> module, relative
    __getattr__, __dir__ = lazy_exports(__name__, _LAZY, submodules=("arch",))

The table is called ``_LAZY`` by convention: tests/test_import_graph.py reads it to know which
module ``from cutemma.copy import make_copy_atom`` really imports. Nothing here imports another
cutemma module, so every package may use it.

>>> get, names = lazy_exports("cutemma.layout", {"Layout": "layout"})
>>> get("Layout").__module__
'cutemma.layout.layout'
>>> "Layout" in names()
True
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping


def lazy_exports(
    package: str,
    names: Mapping[str, str],
    *,
    submodules: Iterable[str] = (),
    fallback: Callable[[str], object] | None = None,
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose public names load on first use.

    ``names`` maps each public name to the module, relative to ``package``, that defines it
    (``"sm80.config"``); ``submodules`` are submodules that become attributes when first asked
    for, as an eagerly imported package would have them; ``fallback(name)`` is asked for any
    other name and raises AttributeError when it has none. A loaded value is stored in the
    package's namespace, so each name is looked up once.

    >>> get, _ = lazy_exports("cutemma.copy", {}, submodules=("catalog",))
    >>> get("catalog").__name__
    'cutemma.copy.catalog'
    >>> get("nope")
    Traceback (most recent call last):
    ...
    AttributeError: module 'cutemma.copy' has no attribute 'nope' (dir(cutemma.copy) lists its names)
    """
    names = dict(names)
    submodules = tuple(submodules)

    def __getattr__(name: str) -> object:
        if name in names:
            value = getattr(importlib.import_module(f"{package}.{names[name]}"), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        elif fallback is not None:
            value = fallback(name)
        else:
            raise AttributeError(
                f"module {package!r} has no attribute {name!r} (dir({package}) lists its names)"
            )
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names) | set(submodules))

    return __getattr__, __dir__


__all__ = ["lazy_exports"]
