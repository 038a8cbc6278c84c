"""Registries of generated instruction families, filled by the modules of one arch package.

The MMA catalog (:mod:`cutemma.mma.catalog`) and the copy catalog (:mod:`cutemma.copy.catalog`)
work the same way: each module of an arch package (``cutemma.mma.arch``,
``cutemma.copy.arch``) registers :class:`Family` objects, each a generator from one
description that *claims* the names of its form and *builds* their Operation and Traits.
The arch package owns its :class:`FamilyRegistry` and imports its own modules on first use;
a catalog only looks names up in it, so the imports run catalog -> arch -> registry.

>>> reg = FamilyRegistry('demo', 'cutemma.mma.arch', AtomError)
>>> fam = reg.register(Family('sm1.demo', 1, 'a demo', lambda n: False, None, lambda: []))
>>> fam.short, [f.name for f in reg.families(1)]
('demo', ['sm1.demo'])
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from cutemma.errors import AtomError, CutemmaError  # noqa: F401  (AtomError: the doctest)
from cutemma.mma.names import MmaName


def arch_number(arch: int | str, error: type[CutemmaError] = AtomError) -> int:
    """An architecture written as ``80``, ``'sm80'``, ``'sm_80'`` or ``'sm90a'``, as a number.

    >>> arch_number('sm_90a'), arch_number(80)
    (90, 80)
    """
    if isinstance(arch, bool) or not isinstance(arch, int | str):
        raise error(f"architecture {arch!r}: write it as 80, 'sm80' or 'sm_80'")
    m = re.fullmatch(r"(?:sm_?)?([0-9]+)[a-z]?", str(arch).strip(), re.IGNORECASE)
    if not m:
        raise error(f"architecture {arch!r}: write it as 80, 'sm80' or 'sm_80'")
    return int(m.group(1))


@dataclass(frozen=True)
class Family:
    """A generated family of operations, registered by an arch module.

    ``name`` is ``'sm<arch>.<short>'`` (e.g. ``'sm80.f16'``); arch 0 is architecture-neutral.
    ``claims(name)`` says whether an :class:`MmaName` has this family's form (it must not
    raise); ``build(name, ...)`` returns ``(Operation, Traits)`` or raises the catalog's
    error naming the violated rule (MMA families take ``(name, params)``, copy families
    ``(name)``); ``members()`` yields every canonical name the family accepts without
    parameters (parametric families yield their defaults).

    >>> from cutemma.mma import families
    >>> [f.name for f in families(61)]
    ['sm61.dp']
    """

    name: str
    arch: int
    description: str
    claims: Callable[[MmaName], bool]
    build: Callable[..., tuple]
    members: Callable[[], Iterable[str]]

    @property
    def short(self) -> str:
        """The family name without its ``sm<arch>.`` prefix.

        >>> from cutemma.mma import families
        >>> families(61)[0].short
        'dp'
        """
        return self.name.split(".", 1)[-1]


class FamilyRegistry:
    """The families of one arch package (``package``), loaded on first use.

    ``kind`` names the families in messages (``'MMA'``, ``'copy'``); ``error`` is the
    CutemmaError subclass raised for a bad registration.

    >>> from cutemma.copy.arch import FAMILIES
    >>> [f.name for f in FAMILIES.families(80)]
    ['sm80.cp_async']
    """

    def __init__(self, kind: str, package: str, error: type[CutemmaError]) -> None:
        self.kind = kind
        self.package = package
        self.error = error
        self._families: dict[str, Family] = {}
        self._loaded = False
        # Threads making their first atoms at once must all wait for the whole load: the
        # flag is set only after every arch module is imported (double-checked below). An
        # RLock, because an arch module may itself look families up while it is imported.
        self._lock = threading.RLock()
        self._loading = False

    def register(self, family: Family) -> Family:
        """Add a family (called by the arch modules at import); a name is registered once.

        >>> from cutemma.mma.arch import FAMILIES
        >>> fam = FAMILIES.families(61)[0]
        >>> FAMILIES.register(fam) is fam
        True
        """
        if not isinstance(family, Family):
            raise self.error(f"register: expected a Family, got {family!r}")
        old = self._families.get(family.name)
        if old is not None and old is not family:
            raise self.error(
                f"{self.kind} family {family.name!r} is registered twice; "
                "family names must be unique"
            )
        self._families[family.name] = family
        return family

    def families(self, arch: int | None = None) -> list[Family]:
        """Registered families, optionally of one architecture, ordered by arch and name.

        >>> from cutemma.mma.arch import FAMILIES
        >>> [f.short for f in FAMILIES.families(70)]
        ['quadpair']
        """
        self._load()
        found = [f for f in list(self._families.values()) if arch is None or f.arch == arch]
        return sorted(found, key=lambda f: (f.arch, f.name))

    def _load(self) -> None:
        """Import every module of the arch package once; each registers its families.

        Marked loaded only when every import finished, so a second thread never sees a half
        filled registry; a re-entrant call from the loading thread (an arch module asking at
        import) sees what is registered so far, as a single thread always did.
        """
        if self._loaded:
            return
        with self._lock:
            if self._loaded or self._loading:
                return
            self._loading = True
            try:
                pkg = importlib.import_module(self.package)
                for mod in sorted(m.name for m in pkgutil.iter_modules(pkg.__path__)):
                    importlib.import_module(f"{self.package}.{mod}")
                self._loaded = True
            finally:
                self._loading = False

    def elsewhere(self, name: MmaName, build: Callable[[Family, MmaName], object]) -> str | None:
        """Say which other architecture has this instruction, if one does.

        ``build(family, name)`` builds ``name`` in ``family`` and returns its Operation, or
        raises ``self.error``. CuTe names an instruction by its first architecture, so a name
        under a newer one is told to use the older, and one under an older is told it is new.

        >>> from cutemma.copy.arch import FAMILIES
        >>> from cutemma.mma.names import parse_name
        >>> FAMILIES.elsewhere(parse_name('SM80_U32x4_LDSM_N'), lambda f, n: f.build(n)[0])
        'CuTe names an instruction by its first architecture: write SM75_U32x4_LDSM_N'
        """
        if name.arch == 0:
            return None
        for fam in self.families():
            if fam.arch in (0, name.arch):
                continue
            alt = name.with_arch(fam.arch)
            if not fam.claims(alt):
                continue
            try:
                op = build(fam, alt)
            except self.error:
                continue
            if fam.arch > name.arch:
                return f"arch too old: {op.name} first appears on sm{fam.arch} (family {fam.name})"
            return f"CuTe names an instruction by its first architecture: write {op.name}"
        return None
