"""The catalog: families of MMA operations, found by name.

An arch module adds a :class:`Family`: a generator from one description that
*claims* the names of its form (structure only: "a shape, four type codes with
f16/bf16 inputs, a major pair") and *builds* the Operation and Traits of a
claimed name, raising AtomError naming the rule a name breaks (wrong K for the
type, N not allowed, majors not supported, ...). Lookup parses the name, asks
the families of its architecture, and when none accepts it asks the others, so
that a name under a too-old architecture is told which one it needs.

>>> op = mma_op('SM80_16x8x16_F32BF16BF16F32_TN')
>>> (op.arch, op.family)
(80, 'sm80.f16')
>>> try:
...     mma_op('SM75_16x8x16_F32BF16BF16F32_TN')
... except AtomError as err:
...     print(str(err).split(': ', 1)[1])
arch too old: SM80_16x8x16_F32BF16BF16F32_TN first appears on sm80 (family sm80.f16)
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from cutemma.errors import AtomError
from cutemma.mma.atom import MmaAtom
from cutemma.mma.names import MmaName, parse_name, parse_shape
from cutemma.mma.operation import Operation
from cutemma.mma.traits import Traits
from cutemma.mma.types import CODES, split_type_codes


@dataclass(frozen=True)
class Family:
    """A generated family of operations, registered by an arch module.

    ``name`` is ``'sm<arch>.<short>'`` (e.g. ``'sm80.f16'``). ``claims(name)`` says
    whether an :class:`MmaName` has this family's form (it must not raise);
    ``build(name, params)`` returns ``(Operation, Traits)`` or raises AtomError
    naming the violated rule; ``members()`` yields every canonical name the
    family accepts without parameters (parametric families yield their defaults).

    >>> [f.name for f in families(61)]
    ['sm61.dp']
    """

    name: str
    arch: int
    description: str
    claims: Callable[[MmaName], bool]
    build: Callable[[MmaName, dict], tuple[Operation, Traits]]
    members: Callable[[], Iterable[str]]

    @property
    def short(self) -> str:
        """The family name without its ``sm<arch>.`` prefix.

        >>> families(61)[0].short
        'dp'
        """
        return self.name.split(".", 1)[-1]


_FAMILIES: dict[str, Family] = {}
_BUILT: dict[tuple, tuple[Operation, Traits]] = {}
_TRAITS: dict[Operation, Traits] = {}
_LOADED = False


def register_family(family: Family) -> Family:
    """Add a family to the catalog (called by arch modules at import).

    >>> register_family(families(61)[0]).arch
    61
    """
    old = _FAMILIES.get(family.name)
    if old is not None and old is not family:
        raise AtomError(f"family {family.name!r} is registered twice; family names must be unique")
    _FAMILIES[family.name] = family
    return family


def _load() -> None:
    """Import every module of cutemma.mma.arch once; each registers its families."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from cutemma.mma import arch

    for mod in sorted(m.name for m in pkgutil.iter_modules(arch.__path__)):
        importlib.import_module(f"cutemma.mma.arch.{mod}")


def families(arch: int | str | None = None) -> list[Family]:
    """Registered families, optionally of one architecture, ordered by arch and name.

    >>> [f.short for f in families('sm70')]
    ['quadpair']
    """
    _load()
    want = None if arch is None else _arch_number(arch)
    found = [f for f in _FAMILIES.values() if want is None or f.arch == want]
    return sorted(found, key=lambda f: (f.arch, f.name))


def _arch_number(arch: int | str) -> int:
    m = re.fullmatch(r"(?:sm_?)?(\d+)[a-z]?", str(arch).strip(), re.IGNORECASE)
    if not m:
        raise AtomError(f"architecture {arch!r}: write it as 80, 'sm80' or 'sm_80'")
    return int(m.group(1))


def _resolve(name: str | MmaName, params: dict) -> tuple[Operation, Traits]:
    _load()
    parsed = name if isinstance(name, MmaName) else parse_name(name)
    key = (parsed, tuple(sorted(params.items())))
    if key in _BUILT:
        return _BUILT[key]
    text = parsed.text
    mine = [f for f in families(parsed.arch) if f.claims(parsed)]
    if mine:
        try:
            built = mine[0].build(parsed, dict(params))
        except AtomError as err:
            hint = _elsewhere(parsed, params)
            raise AtomError(f"{err}; {hint}" if hint else str(err)) from None
    else:
        hint = _elsewhere(parsed, params) or _unknown_type(parsed) or _no_family(parsed)
        raise AtomError(f"{text}: {hint}")
    _BUILT[key] = built
    _TRAITS[built[0]] = built[1]
    return built


def _elsewhere(name: MmaName, params: dict) -> str | None:
    """Say which architecture has this instruction, if another one does."""
    for fam in families():
        alt = name.with_arch(fam.arch)
        if fam.arch == name.arch or not fam.claims(alt):
            continue
        try:
            op, _ = fam.build(alt, dict(params))
        except AtomError:
            continue
        if fam.arch > name.arch:
            return f"arch too old: {op.name} first appears on sm{fam.arch} (family {fam.name})"
        return f"CuTe names an instruction by its first architecture: write {op.name}"
    return None


def _unknown_type(name: MmaName) -> str | None:
    """Point at a token that looks like a run of type codes but is not one."""
    for tok in name.tokens:
        if parse_shape(tok) or not re.fullmatch(r"(?:[A-Z]+\d+)+", tok) or split_type_codes(tok):
            continue
        if tok in _KEYWORDS:
            continue
        return (
            f"unknown type code in {tok!r}: type codes are {', '.join(sorted(CODES))} "
            f"(written D,A,B,C left to right, e.g. F32BF16BF16F32)"
        )
    return None


# Tokens of CuTe names that look like type runs but are words.
_KEYWORDS = {"DP4A", "DP2A", "F8F6F4", "MXF8F6F4", "MXF4", "MXF4NVF4", "F16BF16", "TF32", "S8"}


def _no_family(name: MmaName) -> str:
    fams = families(name.arch)
    if not fams:
        archs = sorted({f.arch for f in families()})
        return f"no MMA families for sm{name.arch}; known architectures: {archs}"
    forms = "; ".join(f"{f.name}: {f.description}" for f in fams)
    return f"no sm{name.arch} family takes this name. sm{name.arch} has {forms}"


def mma_op(name: str | MmaName, **params) -> Operation:
    """The Operation of a CuTe operation name (parameters for parametric families).

    >>> mma_op('SM61_DP4A').ptx
    'dp4a.s32.s32'
    """
    return _resolve(name, params)[0]


def traits_of(op: Operation) -> Traits:
    """The Traits of an Operation built by this catalog.

    >>> traits_of(mma_op('SM61_DP4A')).shape_mnk
    (1, 1, 4)
    """
    if op not in _TRAITS:
        _resolve(op.name, dict(op.params))
    return _TRAITS[op]


def mma_ops(arch: int | str | None = None, family: str | None = None) -> list[Operation]:
    """Every operation in the catalog, optionally of one arch and/or family.

    ``family`` matches a full family name (``'sm80.int8'``) or its short part
    (``'int8'``).

    >>> len(mma_ops('sm70'))
    8
    """
    out = []
    for fam in families(arch):
        if family is not None and family not in (fam.name, fam.short):
            continue
        out.extend(mma_op(n) for n in fam.members())
    if family is not None and not out:
        known = sorted({f.short for f in families(arch)})
        raise AtomError(
            f"no family {family!r}" + (f" on {arch}" if arch else "") + f"; known: {known}"
        )
    return out


def make_mma_atom(op_or_name: Operation | str, **params) -> MmaAtom:
    """The MmaAtom (Operation + Traits) of an Operation or a name.

    >>> make_mma_atom('SM80_16x8x8_F16F16F16F16_TN').thr_id
    32:1
    """
    if isinstance(op_or_name, Operation):
        if params:
            raise AtomError(f"{op_or_name.name}: parameters go with a name, not an Operation")
        return MmaAtom(op_or_name, traits_of(op_or_name))
    op, traits = _resolve(op_or_name, params)
    return MmaAtom(op, traits)
