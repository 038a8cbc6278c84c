"""One module per architecture; each registers its families in :data:`FAMILIES`.

Every module in this package is imported on the first lookup (the registry loads
them), so a new architecture (or the GMMA families in ``sm90_gmma``) only adds a
module; the catalog (:mod:`cutemma.mma.catalog`) looks names up here and this
package never imports it. This file holds the registry and what the warp-level
modules share: the thread-value layouts of
``mma.sync`` (named once, like CuTe's ``SM80_16x8_Row``) and :func:`sync_family`,
which generates a family of ``SM<arch>_<M>x<N>x<K>_<DABC>_<majors>[_<suffix>]``
operations from one :class:`SyncSpec`.

>>> str(SM80_16x8_Row)
'((4,8),(2,2)):((32,1),(16,8))'
>>> str(sync_layouts((16, 8, 16), 16)[0])
'((4,8),(2,2,2)):((32,1),(16,8,128))'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cutemma.errors import AtomError
from cutemma.layout import Layout
from cutemma.mma.names import MmaName, format_shape
from cutemma.mma.operation import Operation, RegArray
from cutemma.mma.registry import Family, FamilyRegistry
from cutemma.mma.traits import Traits, tv_table
from cutemma.mma.types import NumericType, numeric_type, type_codes

# Every MMA family of every architecture, filled by this package's modules.
FAMILIES = FamilyRegistry("MMA", __name__, AtomError)


def register_family(family: Family) -> Family:
    """Add a family to the catalog (called by arch modules at import).

    >>> register_family(FAMILIES.families(61)[0]).arch
    61
    """
    return FAMILIES.register(family)


WARP = Layout(32)


def _tv(thr_shape, thr_stride, vals: list[tuple[int, int]]) -> Layout:
    """A (T, V) layout in CuTe's printed form: size-1 value modes dropped, a lone mode unwrapped."""
    vals = [(s, d) for s, d in vals if s != 1]
    if not vals:
        vshape, vstride = 1, 0
    elif len(vals) == 1:
        vshape, vstride = vals[0]
    else:
        vshape, vstride = tuple(s for s, _ in vals), tuple(d for _, d in vals)
    return Layout((thr_shape, vshape), (thr_stride, vstride))


def sync_layouts(shape_mnk: tuple[int, int, int], bits: int) -> tuple[Layout, Layout, Layout]:
    """A, B, C thread-value layouts of a warp-wide ``mma.sync`` m16n8kK / m8n8kK.

    The PTX ISA fragments ("Matrix Fragments for mma.m16n8k*"): lane = 4*group + t;
    a 32-bit register holds r = 32/bits consecutive k (one f64 per register);
    A's row is group (+8 for the second register pair), its k is t*r + j (+4r per
    further register pair); B's column is group, its k likewise; C's row is
    group (+8), its column 2t + j. Offsets are m + k*M, n + k*N, m + n*M.

    >>> [str(x) for x in sync_layouts((8, 8, 4), 64)]
    ['((4,8),1):((8,1),0)', '((4,8),1):((8,1),0)', '((4,8),2):((16,1),8)']
    """
    m, n, k = shape_mnk
    r = max(1, 32 // bits)
    chunks = k // (4 * r)
    a = _tv((4, 8), (r * m, 1), [(r, m), (m // 8, 8), (chunks, 4 * r * m)])
    b = _tv((4, 8), (r * n, 1), [(r, n), (chunks, 4 * r * n)])
    c = _tv((4, 8), (2 * m, 1), [(2, m), (m // 8, 8)])
    return a, b, c


# CuTe's named warp-level layouts (cute/atom/mma_traits_sm80.hpp), from the one rule above.
SM80_16x8_Row = sync_layouts((16, 8, 8), 16)[2]
SM80_8x8_Row = sync_layouts((8, 8, 4), 64)[2]
SM80_8x4 = sync_layouts((8, 8, 4), 64)[0]
SM80_8x16_Row = sync_layouts((8, 8, 16), 8)[0]


def registers(t: NumericType, values: int) -> RegArray:
    """The register array holding ``values`` elements of type ``t`` (CuTe's XRegisters).

    f32/f64/complex travel one per register; s32 one per uint32_t; narrower types
    are packed into uint32_t.

    >>> str(registers(numeric_type('f16'), 8)), str(registers(numeric_type('s4'), 32))
    ('uint32_t[4]', 'uint32_t[4]')
    """
    own = {"f32": "float", "f64": "double", "c64": "complex<double>", "gc64": "GaussComplex"}
    if t.name in own:
        return RegArray(own[t.name], values)
    return RegArray("uint32_t", max(1, values * t.bits // 32))


MAJORS = ("TN", "NT", "NN", "TT")
_PTX_MAJOR = {"T": "row", "N": "col"}


@dataclass(frozen=True)
class SyncSpec:
    """One description of a warp-level family.

    ``inputs``: the A types the family claims (its type class); ``shapes`` and
    ``types`` (D,A,B,C name tuples) combine freely; ``majors`` and ``suffixes``
    (tuples of trailing name tokens) list what the ISA offers; ``modifiers`` maps
    a suffix to the PTX qualifiers it adds. ``layouts(shape, types, majors)``
    returns (thr_id, A, B, C); ``complex_of`` marks C64 families built from four
    real MMAs of that PTX type.
    """

    arch: int
    short: str
    inputs: tuple[str, ...]
    shapes: tuple[tuple[int, int, int], ...]
    types: tuple[tuple[str, str, str, str], ...]
    majors: tuple[str, ...] = ("TN",)
    suffixes: tuple[tuple[str, ...], ...] = ((),)
    modifiers: tuple[tuple[tuple[str, ...], str], ...] = ()
    layouts: Callable | None = None
    note: str = ""

    @property
    def name(self) -> str:
        return f"sm{self.arch}.{self.short}"


def sync_family(spec: SyncSpec) -> Family:
    """Generate and register the Family described by ``spec``.

    >>> sync_family.__name__
    'sync_family'
    """
    types = {tuple(numeric_type(x) for x in row) for row in spec.types}
    describe = (
        f"mma.sync {'/'.join(spec.inputs)} inputs: "
        f"shapes {', '.join(map(format_shape, spec.shapes))}; "
        f"types {', '.join(type_codes(t) for t in spec.types)}; majors {'/'.join(spec.majors)}"
    )

    def claims(name: MmaName) -> bool:
        ts = name.types(1)
        return (
            len(name.tokens) >= 3
            and name.shape(0) is not None
            and ts is not None
            and len(ts) == 4
            and ts[1].name in spec.inputs
            and not name.template
        )

    def build(name: MmaName, params: dict) -> tuple[Operation, Traits]:
        return _build_sync(spec, types, name, params)

    def members():
        for shape in spec.shapes:
            for row in spec.types:
                for majors in spec.majors:
                    for suffix in spec.suffixes:
                        tokens = (format_shape(shape), type_codes(row), majors, *suffix)
                        yield MmaName(spec.arch, tokens).text

    return register_family(Family(spec.name, spec.arch, describe, claims, build, members))


def _build_sync(
    spec: SyncSpec, types: set, name: MmaName, params: dict
) -> tuple[Operation, Traits]:
    text = name.text
    shape, ts = name.shape(0), name.types(1)
    majors, suffix = name.tokens[2], tuple(name.tokens[3:])
    a_name = ts[1].name
    if shape not in spec.shapes:
        same_mn = sorted(s[2] for s in spec.shapes if s[:2] == shape[:2])
        rule = (
            f"wrong K for the type: {a_name} inputs at m{shape[0]}n{shape[1]} "
            f"on sm{spec.arch} take K in {same_mn}"
            if same_mn
            else f"shape {format_shape(shape)} is not an sm{spec.arch} mma.sync shape "
            f"for {a_name} inputs"
        )
        raise AtomError(
            f"{text}: {rule}; allowed shapes: {', '.join(map(format_shape, spec.shapes))}"
        )
    if ts not in types:
        raise AtomError(
            f"{text}: type combination {type_codes(ts)} (D,A,B,C) is not offered "
            f"for {a_name} inputs on "
            f"sm{spec.arch}; allowed: {', '.join(type_codes(t) for t in spec.types)}"
        )
    if majors not in spec.majors:
        what = (
            "is not a major pair (TN, NT, NN, TT)" if majors not in MAJORS else "is not supported"
        )
        raise AtomError(
            f"{text}: majors {majors!r} {what}; {spec.name} supports {', '.join(spec.majors)} "
            "(T: A row-major / K-major; second letter N: B K-major)"
        )
    if suffix not in spec.suffixes:
        allowed = ", ".join("_" + "_".join(s) if s else "(none)" for s in spec.suffixes)
        raise AtomError(
            f"{text}: suffix {'_'.join(suffix)!r} is not allowed for {spec.name}; "
            f"allowed: {allowed}"
        )
    if params:
        raise AtomError(f"{text}: mma.sync operations take no parameters; got {sorted(params)}")
    d, a, b, c = ts
    bits = 64 if a.kind == "complex" else a.bits  # complex atoms reuse the f64 layouts
    thr, la, lb, lc = (
        spec.layouts(shape, ts, majors) if spec.layouts else (WARP, *sync_layouts(shape, bits))
    )
    mods = tuple(m for s, m in spec.modifiers if s == suffix)
    traits = Traits(d, a, b, c, shape, thr, la, lb, lc)
    op = Operation(
        name=text,
        arch=spec.arch,
        family=spec.name,
        ptx=_sync_ptx(shape, ts, majors, mods),
        d=registers(d, _values(lc)),
        a=registers(a, _values(la)),
        b=registers(b, _values(lb)),
        c=registers(c, _values(lc)),
        modifiers=mods + _complex_modifier(d),
        note=spec.note,
    )
    return op, traits


def _complex_modifier(d: NumericType) -> tuple[str, ...]:
    return {"complex": ("complex",), "gauss": ("gauss",)}.get(d.kind, ())


def _values(layout: Layout) -> int:
    return tv_table(layout).shape[1]


def _sync_ptx(shape, ts, majors: str, mods: tuple[str, ...]) -> str:
    """PTX text, e.g. ``mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32``.

    Order of qualifiers per the PTX ISA "mma" syntax: shape, .row/.col of A and B,
    optional .satfinite, D/A/B/C types, then the b1 operation (.xor.popc / .and.popc).
    """
    m, n, k = shape
    ptx_types = "".join(t.ptx for t in ts)
    sat = ".satfinite" if "satfinite" in mods else ""
    bitop = "".join("." + x for x in mods if x.endswith("popc"))
    lay = f".{_PTX_MAJOR[majors[0]]}.{_PTX_MAJOR[majors[1]]}"
    return f"mma.sync.aligned.m{m}n{n}k{k}{lay}{sat}{ptx_types}{bitop}"


INT_SUFFIXES = ((), ("SATURATE",))
INT_MODIFIERS = ((("SATURATE",), "satfinite"),)


def int_types(*names: str) -> tuple[tuple[str, str, str, str], ...]:
    """Every (s32, A, B, s32) combination of the given input types, CuTe's order.

    >>> int_types('s8', 'u8')[1]
    ('s32', 's8', 'u8', 's32')
    """
    return tuple(("s32", x, y, "s32") for x in names for y in names)


def check_arch(arch: int, needed: int, what: str) -> None:
    """Raise AtomError when ``arch`` is older than ``needed`` for ``what``.

    >>> check_arch(90, 80, 'bf16')
    """
    if arch < needed:
        raise AtomError(f"arch too old: {what} needs sm{needed}; got sm{arch}")
