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

import re
import threading

from cutemma.errors import AtomError
from cutemma.mma.arch import FAMILIES, register_family  # noqa: F401  (re-exported)
from cutemma.mma.atom import MmaAtom
from cutemma.mma.names import MmaName, format_name, parse_name, parse_shape
from cutemma.mma.operation import Operation
from cutemma.mma.registry import Family, arch_number
from cutemma.mma.traits import Traits
from cutemma.mma.types import CODES, split_type_codes


def families(arch: int | str | None = None) -> list[Family]:
    """Registered families, optionally of one architecture, ordered by arch and name.

    >>> [f.short for f in families('sm70')]
    ['quadpair']
    """
    found = _families(arch)
    if arch is not None and not found:
        known = ", ".join(f"sm{a}" for a in sorted({f.arch for f in _families(None)}))
        raise AtomError(f"no MMA families for sm{arch_number(arch)}; the catalog has {known}")
    return found


def _families(arch: int | str | None) -> list[Family]:
    """families() without the check: an empty list for an architecture with none."""
    return FAMILIES.families(None if arch is None else arch_number(arch))


_BUILT: dict[tuple, tuple[Operation, Traits]] = {}
_TRAITS: dict[Operation, Traits] = {}


def _resolve(name: str | MmaName, params: dict) -> tuple[Operation, Traits]:
    parsed = name if isinstance(name, MmaName) else parse_name(name)
    params = _checked_params(parsed, params)
    key = (parsed, tuple(sorted(params.items())))
    if key in _BUILT:
        return _BUILT[key]
    text = parsed.text
    mine = [f for f in _families(parsed.arch) if f.claims(parsed)]
    if mine:
        try:
            built = mine[0].build(parsed, dict(params))
        except AtomError as err:
            hint = _elsewhere(parsed, params)
            raise AtomError(
                (f"{err}; {hint}" if hint else str(err)) + _did_you_mean(text)
            ) from None
        except (TypeError, ValueError) as err:  # a parameter of the wrong type
            raise AtomError(
                f"{text}: parameters {params} are not valid ({err}); parameters are whole "
                "numbers or names, e.g. m=128, n=256, a_major='K'"
            ) from None
    else:
        hint = _elsewhere(parsed, params)
        if hint is None:
            hint = (_unknown_type(parsed) or _no_family(parsed)) + _did_you_mean(text)
        raise AtomError(f"{text}: {hint}")
    built = _BUILT.setdefault(key, built)  # a racing thread's build may have landed first
    _TRAITS.setdefault(built[0], built[1])
    return built


def _checked_params(name: MmaName, params: dict) -> dict:
    """Parameters are whole numbers (numpy ints too) or names; anything else is refused here,
    naming the parameter, rather than deep inside a family's layout code."""
    from cutemma.layout.checks import as_int

    out = {}
    for key, value in params.items():
        if isinstance(value, str | bool) or value is None:  # flags such as saturate=True
            out[key] = value
        elif as_int(value) is not None:
            out[key] = as_int(value)
        else:
            raise AtomError(
                f"{format_name(name)}: parameter {key}={value!r} must be a whole number or a "
                "name, e.g. m=128, n=256, a_major='K', saturate=True"
            )
    return out


def _elsewhere(name: MmaName, params: dict) -> str | None:
    """Say which architecture has this instruction, if another one does."""
    return FAMILIES.elsewhere(name, lambda fam, alt: fam.build(alt, dict(params))[0])


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
    fams = _families(name.arch)
    if not fams:
        archs = ", ".join(f"sm{a}" for a in sorted({f.arch for f in _families(None)}))
        return f"no MMA families for sm{name.arch}; the catalog has {archs}"
    names = ", ".join(f.short for f in fams)
    return (
        f"no sm{name.arch} family takes this name (families: {names}; "
        f"`cutemma list --arch sm{name.arch}` lists their operations)"
    )


# every catalog name, built on first use; published whole (never appended to in place) so a
# thread racing the first build sees either nothing or the full list
_NAMES: frozenset[str] | None = None
_NAMES_LOCK = threading.Lock()


def _names() -> frozenset[str]:
    global _NAMES
    if _NAMES is None:
        with _NAMES_LOCK:
            if _NAMES is None:
                _NAMES = frozenset(n for f in _families(None) for n in f.members())
    return _NAMES


def _did_you_mean(text: str) -> str:
    """'; did you mean X, Y or Z?' with the catalog names closest to ``text`` (difflib), or ''
    when ``text`` is itself a catalog name or nothing is close."""
    import difflib

    names = _names()
    if text in names:
        return ""
    close = difflib.get_close_matches(text, sorted(names), n=3, cutoff=0.6)
    if not close:
        return ""
    return (
        "; did you mean "
        + (", ".join(close[:-1]) + " or " if len(close) > 1 else "")
        + close[-1]
        + "?"
    )


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
    if not isinstance(op, Operation):
        raise AtomError(f"traits_of: expected an Operation (e.g. mma_op(name)), got {op!r}")
    hit = _TRAITS.get(op)  # (a racing thread may have built op but not yet filed its traits)
    return hit if hit is not None else _resolve(op.name, dict(op.params))[1]


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
