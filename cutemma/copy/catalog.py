"""The copy catalog: families of copy operations, found by name.

Like the MMA catalog (:mod:`cutemma.mma.catalog`), through the same registry
(:mod:`cutemma.mma.registry`): an arch module under ``cutemma/copy/arch/`` registers
families (:class:`CopyFamily`), each a generator from one description that *claims* the
names of its form and *builds* their Operation and Traits.
Names are CuTe's struct names, with template arguments where CuTe has them:
``SM75_U32x4_LDSM_N``, ``SM80_CP_ASYNC_CACHEALWAYS<uint128_t>``, ``UniversalCopy<uint64_t>``,
``SM100_TMEM_LOAD_16dp256b4x_16b``.

>>> str(copy_traits('SM90_U32x2_STSM_N').dst_layout)
'((16,2),128):((128,0),1)'
>>> try:
...     copy_op('SM80_U32x4_LDSM_N')
... except CopyError as err:
...     print(err)
SM80_U32x4_LDSM_N: CuTe names an instruction by its first architecture: write SM75_U32x4_LDSM_N
"""

from __future__ import annotations

import re

from cutemma.copy.arch import FAMILIES, CopyFamily, register_copy_family  # noqa: F401  (re-exported)
from cutemma.copy.atom import CopyAtom, value_type
from cutemma.copy.operation import CopyOperation
from cutemma.copy.traits import CopyTraits
from cutemma.errors import AtomError, CopyError
from cutemma.mma.names import MmaName, parse_name
from cutemma.mma.registry import arch_number

# Names without an SM<arch> prefix: CuTe's architecture-neutral copies (cute/arch/copy.hpp).
_NEUTRAL = re.compile(
    r"(UniversalCopy|AutoVectorizingCopyWithAssumedAlignment|AutoVectorizingCopy|DefaultCopy)"
    r"\s*(<.*>)?$"
)


def copy_families(arch: int | str | None = None) -> list[CopyFamily]:
    """Registered copy families, optionally of one architecture (0: architecture-neutral).

    >>> [f.name for f in copy_families('sm80')]
    ['sm80.cp_async']
    """
    if arch is None:
        return FAMILIES.families()
    found = FAMILIES.families(arch_number(arch, CopyError))
    if not found:
        archs = sorted({f.arch for f in FAMILIES.families()})
        raise CopyError(
            f"no copy families for sm{arch_number(arch, CopyError)}; copy atoms exist for "
            f"archs {archs} (0: the architecture-neutral UniversalCopy and friends)"
        )
    return found


_BUILT: dict[MmaName, tuple[CopyOperation, CopyTraits]] = {}


def parse_copy_name(text: str) -> MmaName:
    """Split a copy operation name; architecture-neutral copies get arch 0.

    >>> parse_copy_name('UniversalCopy<uint32_t>')
    MmaName(arch=0, tokens=('UniversalCopy',), template=('uint32_t',))
    >>> parse_copy_name('cute::SM75_U16x8_LDSM_T').tokens
    ('U16x8', 'LDSM', 'T')
    """
    if not isinstance(text, str):
        raise CopyError(f"a copy operation name is a string like 'SM75_U32x4_LDSM_N'; got {text!r}")
    body = text.strip().removeprefix("cute::")
    m = _NEUTRAL.match(body)
    if m:
        args = m.group(2)
        template = tuple(a.strip() for a in args[1:-1].split(",") if a.strip()) if args else ()
        return MmaName(0, (m.group(1),), template)
    try:
        return parse_name(body)
    except AtomError as err:
        raise CopyError(
            f"{err}; copy names look like SM75_U32x4_LDSM_N, SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, "
            "UniversalCopy<uint32_t>, SM100_TMEM_LOAD_32dp32b8x"
        ) from None


def _resolve(name) -> tuple[CopyOperation, CopyTraits]:
    try:
        return _resolve_exact(name)
    except CopyError:
        # another spelling of a catalog name: 'sm75_u32x4_ldsm_n', 'universalcopy<uint32_t>'
        canonical = _by_lower().get(_folded(name)) if isinstance(name, str) else None
        if canonical is None or canonical == name:
            raise
        return _resolve_exact(canonical)


def _folded(name: str) -> str:
    return name.strip().removeprefix("cute::").replace(" ", "").lower()


_LOWER: dict[str, str] = {}


def _by_lower() -> dict[str, str]:
    """Every catalog name by its lower-case spelling (built on the first miss)."""
    if not _LOWER:
        _LOWER.update({_folded(n): n for f in FAMILIES.families() for n in f.members()})
    return _LOWER


def _resolve_exact(name) -> tuple[CopyOperation, CopyTraits]:
    parsed = name if isinstance(name, MmaName) else parse_copy_name(name)
    if parsed in _BUILT:
        return _BUILT[parsed]
    text = _text(parsed)
    mine = [f for f in FAMILIES.families(parsed.arch) if f.claims(parsed)]
    if not mine:
        hint = _elsewhere(parsed) or _no_family(parsed)
        raise CopyError(f"{text}: {hint}")
    return _BUILT.setdefault(parsed, mine[0].build(parsed))  # one object even when threads race


def _text(name: MmaName) -> str:
    if name.arch == 0:
        t = name.tokens[0]
        return t + (f"<{','.join(name.template)}>" if name.template else "")
    return name.text


def _elsewhere(name: MmaName) -> str | None:
    return FAMILIES.elsewhere(name, lambda fam, alt: fam.build(alt)[0])


def _no_family(name: MmaName) -> str:
    fams = FAMILIES.families(name.arch)
    if not fams:
        archs = sorted({f.arch for f in copy_families()})
        return f"no copy families for sm{name.arch}; copy atoms exist for archs {archs}"
    forms = "; ".join(f"{f.name}: {f.description}" for f in fams)
    return f"no copy family takes this name. sm{name.arch} has {forms}"


def copy_op(name: str) -> CopyOperation:
    """The CopyOperation of a CuTe copy name.

    >>> copy_op('SM90_U16x8_STSM_T').ptx
    'stmatrix.sync.aligned.m8n8.x4.trans.shared.b16'
    """
    return _resolve(name)[0]


def copy_traits(name: str | CopyOperation) -> CopyTraits:
    """The CopyTraits (ThrID, Src/Dst/Ref bit layouts) of a copy name, as CuTe's Copy_Traits.

    >>> str(copy_traits('UniversalCopy<uint64_t>').src_layout)
    '(1,64):(0,1)'
    """
    return _resolve(name.name if isinstance(name, CopyOperation) else name)[1]


def copy_ops(arch: int | str | None = None, family: str | None = None) -> list[CopyOperation]:
    """Every copy operation in the catalog, optionally of one arch and/or family.

    ``family`` matches the full name (``'sm75.ldsm'``) or its short part (``'ldsm'``).

    >>> len(copy_ops(75, 'ldsm'))
    6
    """
    out = []
    for fam in copy_families(arch):
        if family is not None and family not in (fam.name, fam.short):
            continue
        out.extend(copy_op(n) for n in fam.members())
    if family is not None and not out:
        known = sorted({f.name for f in copy_families(arch)})
        raise CopyError(f"no copy family {family!r}; known: {known}")
    return out


def make_copy_atom(op_or_name: str | CopyOperation, dtype=None) -> CopyAtom:
    """The CopyAtom of an operation for one value type (CuTe's ``Copy_Atom<Op, T>``).

    >>> str(make_copy_atom('SM75_U32x4_LDSM_N', 'f16').layout_dst_tv)
    '(32,(2,4)):(2,(1,64))'
    """
    op = op_or_name if isinstance(op_or_name, CopyOperation) else copy_op(op_or_name)
    if dtype is None:  # CuTe's Copy_Atom<Op, T> has no default T either
        raise CopyError(
            f"make_copy_atom({op.name!r}): give the value type it moves, e.g. "
            f"make_copy_atom({op.name!r}, 'f16')"
        )
    return CopyAtom(op, copy_traits(op), value_type(dtype))


def is_copy_name(text: str) -> bool:
    """Whether ``text`` names a copy operation of this catalog (never raises).

    >>> is_copy_name('SM75_U32x4_LDSM_N'), is_copy_name('SM80_16x8x16_F32F16F16F32_TN')
    (True, False)
    """
    try:
        _resolve(text)
    except CopyError:
        return False
    return True
