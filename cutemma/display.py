"""How objects of the lower layers draw themselves in Jupyter, without importing the pictures.

A class of a lower layer (Layout, Tensor, MmaAtom, TiledMma, the descriptors) inherits
:class:`RichDisplay`; the picture layer (:mod:`cutemma.viz.jupyter`) registers, per class, a
function returning one rich rendering. ``import cutemma`` stays light: the package names the
module that registers them (:func:`renderers_from`), and it is imported the first time an
object asks for its picture. IPython asks ``_repr_mimebundle_`` and stores exactly
what it returns: ``text/plain`` (the object's CuTe-style ``repr``) plus at most one rich
format, so a notebook keeps one picture per output. Nothing here imports another cutemma
module, so every layer may import it.

>>> class Box(RichDisplay):
...     def __repr__(self):
...         return "Box"
>>> Box()._repr_mimebundle_()
{'text/plain': 'Box'}
>>> register(Box, lambda obj: {"image/svg+xml": "<svg/>"})
>>> sorted(Box()._repr_mimebundle_())
['image/svg+xml', 'text/plain']
>>> register(Box, lambda obj: 1 / 0)  # a renderer that fails leaves the text
>>> Box()._repr_mimebundle_()
{'text/plain': 'Box'}
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

Renderer = Callable[[object], dict]
_RENDERERS: dict[type, Renderer] = {}
_PENDING: list[str] = []  # modules that register renderers when imported, not imported yet


def renderers_from(module: str) -> None:
    """Import ``module``, which registers renderers, when an object first asks for one.

    The layer that draws sits above every class that is drawn, so it is named from above
    (``cutemma/__init__.py`` names ``cutemma.viz``); this module imports nothing of cutemma's.

    >>> renderers_from("cutemma.viz")  # what cutemma/__init__.py does
    >>> renderer(int) is None  # the first ask imports it, and it registers cutemma's classes
    True
    >>> import sys; "cutemma.viz" in sys.modules
    True
    """
    if module not in _PENDING:
        _PENDING.append(module)


def register(cls: type, render: Renderer) -> None:
    """Make instances of ``cls`` (and its subclasses) draw with ``render(obj) -> {mime: data}``.

    ``render`` returns one rich rendering (e.g. ``{"image/svg+xml": ...}``) or ``{}`` when
    the object is too large to draw; ``text/plain`` is added by :class:`RichDisplay`.

    >>> class Dot(RichDisplay):
    ...     pass
    >>> register(Dot, lambda obj: {"text/html": "<b>.</b>"})
    >>> renderer(Dot) is not None
    True
    """
    _RENDERERS[cls] = render


def renderer(cls: type) -> Renderer | None:
    """The renderer registered for ``cls`` or its nearest base class, else None.

    >>> renderer(int) is None
    True
    """
    while _PENDING:  # ``import cutemma`` is lazy: the renderings register on first use
        importlib.import_module(_PENDING.pop(0))
    for k in cls.__mro__:
        if k in _RENDERERS:
            return _RENDERERS[k]
    return None


def _keep(mime: str, include: Iterable[str] | None, exclude: Iterable[str] | None) -> bool:
    if include is not None and mime not in include:
        return False
    return exclude is None or mime not in exclude


class RichDisplay:
    """Mixin giving ``_repr_mimebundle_``: text/plain plus the registered rich rendering.

    Classes using it define no other ``_repr_*_`` method: IPython would store those outputs
    as well, and a notebook would keep two pictures of every object.

    >>> RichDisplay()._repr_mimebundle_(include=["text/html"])
    {}
    """

    __slots__ = ()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        bundle = {"text/plain": repr(self)}
        render = renderer(type(self))
        if render is not None:
            try:
                bundle.update(render(self))
            except Exception:  # a picture that cannot be drawn must not hide the text
                pass
        return {k: v for k, v in bundle.items() if _keep(k, include, exclude)}


__all__ = ["RichDisplay", "register", "renderer", "renderers_from"]
