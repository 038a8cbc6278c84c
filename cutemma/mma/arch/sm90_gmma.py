"""sm90 GMMA: warpgroup ``wgmma.mma_async`` atoms, dense and sparse, from one table.

Every family here is generated from one :class:`GmmaClass` row: the A types it
claims, K, the (D, A, B) type rows, the N the ISA allows, and which immediates
the instruction has. A name reads ``SM90_64xNxK_<DAB>_<SS|RS>[_TN][_SATURATE]``
(sparse: ``SM90_SPARSE_...``, or CuTe's ``SM90::GMMA::SPARSE::GMMA_...``);
majors come from ``<K,MN>`` template arguments or ``a_major=``/``b_major=``.
Classes: f16/bf16 (K=16), tf32 (8), e4m3/e5m2 (32), s8/u8 (32, with and without
``_SATURATE``), each also sparse; and b1 (K=256, ``_ANDPOPC``; CuTe has no such
atom, the ISA does; no sparse form).

Facts and where they come from:

* Shapes, types, N per type class, operand order, ``.satfinite``, which variants
  have imm-scale-a/b and imm-trans-a/b: PTX ISA 9.7.15.5.2 ``wgmma.mma_async``
  and 9.7.15.6.3 ``wgmma.mma_async.sp`` (K doubled, metadata ``sp-meta`` and
  selector ``sp-sel``). The integer N list in the ISA syntax block stops at 224;
  its shape table (and CuTe) go on to 240 and 256, which we follow.
* Layouts: seed 004 (C layout, the SS "every thread sees the tile" A layout) and
  cute/atom/mma_traits_sm90_gmma.hpp (CLayout_64xN, ALayout_64x8/16/32,
  ABLayout<M,K>); sparse RS A layouts as mma_traits_sm90_gmma_sparse.hpp.
* Registers: cute/arch/mma_sm90_gmma.hpp (DRegisters void, C float[N/2] for f32,
  uint32_t[N/4] for f16, uint32_t[N/2] for s32; a descriptor is uint64_t[1]).

A sparse atom's A is the logical (dense) 64xK tile, as in CuTe: emulation
multiplies it as given, after checking it has the 2:4 (tf32: 1:2) pattern the
instruction encodes; :mod:`cutemma.mma.sparse` packs it to what the instruction
reads (64x(K/2) values and each thread's ``sp-meta`` word) and holds the sparse
facts (chunk, kept, valid ``sp-sel``: 0 or 1, 8-bit types only 0).

>>> from cutemma.mma import make_mma_atom
>>> atom = make_mma_atom('SM90_64x128x16_F16F16F16_SS')
>>> str(atom.tv_layout_C)
'((4,8,4),(2,2,16)):((128,1,16),(64,8,512))'
>>> str(atom.tv_layout_A)
'(128,(64,16)):(0,(1,64))'
"""

from __future__ import annotations

from dataclasses import dataclass

from cutemma.errors import AtomError
from cutemma.hardware import WGMMA_N_MAX, WGMMA_N_STEP
from cutemma.layout import Layout
from cutemma.mma.arch import Family, register_family, registers
from cutemma.mma.names import MmaName, format_shape
from cutemma.mma.operation import Extra, Operation, RegArray
from cutemma.mma.sparse import format_of_type
from cutemma.mma.traits import Traits
from cutemma.mma.types import type_codes

WARPGROUP = Layout(128)
DESCRIPTOR = RegArray("uint64_t", 1)
MAJORS = ("K", "MN")
# CuTe's GMMA::ScaleIn spelling and the PTX immediate it stands for.
_SCALES = {"One": 1, "Neg": -1, "1": 1, "-1": -1}

# N allowed by wgmma (PTX ISA 9.7.15.5.2): every multiple of 8 up to 256, except
# for 8-bit integers: 8, 16, 24, 32, then multiples of 16 from 48 to 256.
N_ALL = tuple(range(WGMMA_N_STEP, WGMMA_N_MAX + 1, WGMMA_N_STEP))
N_INT = (8, 16, 24, 32, *range(48, WGMMA_N_MAX + 1, 16))
_F8 = ("e4m3", "e5m2")
_I8 = ("s8", "u8")


@dataclass(frozen=True)
class GmmaClass:
    """One wgmma type class: a row of the description table.

    ``types`` are (D, A, B) rows; ``k`` is the dense K (sparse doubles it);
    ``transpose``: imm-trans-a/b exist (MN-major operands allowed, f16/bf16
    only); ``scale_in``: imm-scale-a/b exist (floating point only);
    ``saturate``: a ``.satfinite`` variant exists (integers).
    """

    short: str
    inputs: tuple[str, ...]
    k: int
    types: tuple[tuple[str, str, str], ...]
    ns: tuple[int, ...]
    transpose: bool
    scale_in: bool
    saturate: bool
    popc: bool = False  # b1: the required _ANDPOPC suffix, PTX ".and.popc"
    sparse: bool = True  # wgmma.mma_async.sp exists for this class

    def n_rule(self) -> str:
        if self.ns == N_ALL:
            return "N must be a multiple of 8 in 8..256"
        return "N must be 8, 16, 24, 32 or a multiple of 16 in 48..256"


CLASSES = (
    GmmaClass(
        "f16",
        ("f16", "bf16"),
        16,
        (("f16", "f16", "f16"), ("f32", "f16", "f16"), ("f32", "bf16", "bf16")),
        N_ALL,
        transpose=True,
        scale_in=True,
        saturate=False,
    ),
    GmmaClass("tf32", ("tf32",), 8, (("f32", "tf32", "tf32"),), N_ALL, False, True, False),
    GmmaClass(
        "f8",
        _F8,
        32,
        tuple((d, a, b) for d in ("f16", "f32") for a in _F8 for b in _F8),
        N_ALL,
        False,
        True,
        False,
    ),
    GmmaClass(
        "int", _I8, 32, tuple(("s32", a, b) for a in _I8 for b in _I8), N_INT, False, False, True
    ),
    # Single bit: s32 += popc(a AND b), K=256, the integer N list; no .sp form (9.7.15.5.2).
    GmmaClass("b1", ("b1",), 256, (("s32", "b1", "b1"),), N_INT, False, False, False, True, False),
)


# --- layouts (cute/atom/mma_traits_sm90_gmma.hpp; seed 004) -------------------------


def _drop_unit(shape: tuple, stride: tuple):
    """Drop size-1 modes of a value mode, as CuTe prints its layouts."""
    kept = [(s, d) for s, d in zip(shape, stride) if s != 1]
    if len(kept) == 1:
        return kept[0]
    return tuple(s for s, _ in kept), tuple(d for _, d in kept)


def c_layout(n: int) -> Layout:
    """The 64xN accumulator: (T128, V N/2) -> m + 64 n.

    Each warp owns 16 rows; a quad of lanes shares a row of an 8x8 core matrix
    and each lane holds 2 adjacent columns; the 64x8 pattern repeats every 8
    columns (offset 512 = 8 * 64). Seed 004 builds it step by step.

    The value mode keeps its N/8 repeat even when it is 1, as CuTe's ``CLayout_64xN<8>``
    writes it (seed 004 prints the 64x8 one without it: the same function, but the nesting
    shows in every TiledMMA view).

    >>> str(c_layout(8))
    '((4,8,4),(2,2,1)):((128,1,16),(64,8,512))'
    """
    return Layout(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512)))


def rs_a_layout(k: int) -> Layout:
    """A from registers, 64xK: (T128, V K/2) -> m + 64 k.

    One formula for CuTe's ALayout_64x8 (tf32), _64x16 (16-bit, and sparse tf32),
    _64x32 (8-bit, and sparse 16-bit) and _64x64 (sparse 8-bit): a 32-bit register
    holds r = K/8 consecutive k; lane t of a quad starts at k = r t; the next
    register pair is row + 8, the next k + 4r; warp w owns rows 16w..16w+15.

    >>> str(rs_a_layout(8))
    '((4,8,4),(2,2)):((64,1,16),(8,256))'
    """
    r = k // 8
    vshape, vstride = _drop_unit((r, 2, 2), (64, 8, 256 * r))
    return Layout(((4, 8, 4), vshape), ((64 * r, 1, 16), vstride))


def smem_layout(rows: int, k: int) -> Layout:
    """An operand read through a descriptor: every thread sees the whole tile.

    >>> str(smem_layout(64, 16))
    '(128,(64,16)):(0,(1,64))'
    """
    return Layout((128, (rows, k)), (0, (1, rows)))


# --- names -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Parsed:
    sparse: bool
    shape: tuple[int, int, int]
    types: tuple
    source: str
    rest: tuple[str, ...]


def _split(name: MmaName) -> _Parsed | None:
    """The fields of a GMMA-shaped name, or None (structure only; never raises)."""
    sparse = bool(name.tokens) and name.tokens[0] == "SPARSE"
    off = int(sparse)
    if len(name.tokens) < off + 3:
        return None
    shape, types = name.shape(off), name.types(off + 1)
    source = name.tokens[off + 2]
    if shape is None or types is None or len(types) != 3 or source not in ("SS", "RS"):
        return None
    return _Parsed(sparse, shape, types, source, tuple(name.tokens[off + 3 :]))


def _template_args(name: MmaName) -> tuple[list[str], list[int]]:
    """Majors (K/MN) and scales (One/Neg) from ``<...>``, namespaces stripped."""
    majors, scales = [], []
    for arg in name.template:
        word = arg.rsplit("::", 1)[-1]
        if word in MAJORS:
            majors.append(word)
        elif word in _SCALES:
            scales.append(_SCALES[word])
        else:
            raise AtomError(
                f"{name.text}: template argument {arg!r} is neither a major (K, MN) "
                "nor a scale (One, Neg)"
            )
    return majors, scales


def _majors_of_token(token: str) -> tuple[str, str]:
    # BLAS letters: A 'T' (row-major) is K-major; B 'N' (column-major KxN) is K-major.
    return ("K" if token[0] == "T" else "MN", "K" if token[1] == "N" else "MN")


def _pick(text: str, what: str, found: list, default):
    """One value for a setting given in several places; they must agree."""
    values = {v for v in found if v is not None}
    if len(values) > 1:
        raise AtomError(f"{text}: {what} is given twice with different values {sorted(values)}")
    return values.pop() if values else default


# --- the family ------------------------------------------------------------------------


def _k(cls: GmmaClass, sparse: bool) -> int:
    return cls.k * (2 if sparse else 1)


def _kind(sparse: bool) -> str:
    return "sparse GMMA" if sparse else "GMMA"


def gmma_family(cls: GmmaClass, sparse: bool) -> Family:
    """Generate and register the (dense or sparse) GMMA family of one type class.

    >>> gmma_family.__name__
    'gmma_family'
    """
    short = f"gmma_sparse_{cls.short}" if sparse else f"gmma_{cls.short}"
    k = _k(cls, sparse)
    describe = (
        f"wgmma.mma_async{'.sp' if sparse else ''} {'/'.join(cls.inputs)} inputs: "
        f"64xNx{k}, N in {cls.ns[0]}..{cls.ns[-1]}; types "
        f"{', '.join(type_codes(t) for t in cls.types)}; SS and RS"
    )

    def claims(name: MmaName) -> bool:
        p = _split(name)
        return p is not None and p.sparse == sparse and p.types[1].name in cls.inputs

    def build(name: MmaName, params: dict) -> tuple[Operation, Traits]:
        return _build(cls, sparse, short, name, params)

    def members():
        for row in cls.types:
            for n in cls.ns:
                for source in ("SS", "RS"):
                    for sat in (False, True) if cls.saturate else (False,):
                        yield _canonical(cls, sparse, (64, n, k), row, source, sat, ("K", "K"))

    return register_family(Family(f"sm90.{short}", 90, describe, claims, build, members))


def _canonical(cls, sparse, shape, row, source, sat, majors) -> str:
    tokens = (("SPARSE",) if sparse else ()) + (format_shape(shape), type_codes(row), source)
    if not cls.transpose:
        tokens += ("TN",)
    if sat:
        tokens += ("SATURATE",)
    if cls.popc:
        tokens += ("ANDPOPC",)
    template = majors if cls.transpose and majors != ("K", "K") else ()
    return MmaName(90, tokens, template).text


def _check_shape(cls: GmmaClass, sparse: bool, text: str, shape, a_name: str) -> None:
    m, n, k = shape
    want_k = _k(cls, sparse)
    if m != 64:
        raise AtomError(
            f"{text}: M must be 64 for every {_kind(sparse)} (wgmma is m64nNkK); got {m}"
        )
    if k != want_k:
        raise AtomError(
            f"{text}: wrong K for the type: {a_name} {_kind(sparse)} takes K={want_k}; got {k}"
        )
    if n not in cls.ns:
        raise AtomError(f"{text}: {cls.n_rule()} for {a_name} {_kind(sparse)}; got {n}")


def _check_types(cls: GmmaClass, sparse: bool, text: str, ts) -> None:
    if tuple(t.name for t in ts) not in cls.types:
        allowed = ", ".join(type_codes(t) for t in cls.types)
        raise AtomError(
            f"{text}: type combination {type_codes(ts)} (D,A,B) is not offered for "
            f"{ts[1].name} {_kind(sparse)}; allowed: {allowed}"
        )


def _settings(cls: GmmaClass, sparse: bool, text: str, name: MmaName, p: _Parsed, params: dict):
    """Majors, scales, sparsity selector and saturation from the name and params."""
    allowed = {"a_major", "b_major"} | ({"scale_a", "scale_b"} if cls.scale_in else set())
    allowed |= {"sp_sel"} if sparse else set()
    extra = sorted(set(params) - allowed)
    if extra:
        raise AtomError(f"{text}: unknown parameter(s) {extra}; this GMMA takes {sorted(allowed)}")
    rest = list(p.rest)
    if cls.popc:
        if not rest or rest[-1] != "ANDPOPC":
            raise AtomError(f"{text}: b1 GMMA is AND + popc: end the name with _ANDPOPC")
        rest.pop()
    sat = bool(rest) and rest[-1] == "SATURATE"
    if sat:
        rest.pop()
        if not cls.saturate:
            raise AtomError(f"{text}: _SATURATE (.satfinite) exists only for s8/u8 GMMA")
    token = rest.pop(0) if rest and rest[0] in ("TN", "NT", "NN", "TT") else None
    if rest:
        raise AtomError(
            f"{text}: unexpected suffix {'_'.join(rest)!r}; after SS/RS come an optional "
            "major pair (TN), for s8/u8 SATURATE, for b1 ANDPOPC"
        )
    t_majors, t_scales = _template_args(name)
    from_token = _majors_of_token(token) if token else (None, None)
    from_template = tuple(t_majors) if len(t_majors) == 2 else (None, None)
    if t_majors and len(t_majors) != 2:
        raise AtomError(f"{text}: give both majors in the template, e.g. <K,MN>")
    a_major = _pick(text, "a_major", [from_token[0], from_template[0], params.get("a_major")], "K")
    b_major = _pick(text, "b_major", [from_token[1], from_template[1], params.get("b_major")], "K")
    for which, major in (("a_major", a_major), ("b_major", b_major)):
        if major not in MAJORS:
            raise AtomError(f"{text}: {which}={major!r}; a GMMA major is 'K' or 'MN'")
    if not cls.transpose and (a_major, b_major) != ("K", "K"):
        raise AtomError(
            f"{text}: MN-major operands need imm-trans-a/b, which only f16/bf16 GMMA have; "
            f"{'/'.join(cls.inputs)} GMMA reads A and B K-major (write _TN)"
        )
    if p.source == "RS" and a_major != "K":
        raise AtomError(f"{text}: RS reads A from registers, which must be K-major; got a_major=MN")
    scales = t_scales + [None] * (2 - len(t_scales))
    scale_a = _pick(text, "scale_a", [scales[0], params.get("scale_a")], 1)
    scale_b = _pick(text, "scale_b", [scales[1], params.get("scale_b")], 1)
    if t_scales and not cls.scale_in:
        raise AtomError(f"{text}: integer GMMA has no imm-scale-a/b")
    for which, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if s not in (1, -1):
            raise AtomError(f"{text}: {which}={s!r}; imm-scale-a/b are 1 or -1 (negate)")
    sp_sel = params.get("sp_sel", 0)
    selectors = format_of_type(p.types[1].name).selectors if sparse else (0,)
    if sp_sel not in selectors:  # PTX ISA 9.7.15.6.3, table of valid sp-meta / sp-sel
        raise AtomError(
            f"{text}: sp_sel={sp_sel!r}; the sparsity selector of {p.types[1].name} sparse "
            f"GMMA is {' or '.join(map(str, selectors))}"
        )
    return a_major, b_major, scale_a, scale_b, sp_sel, sat


def _build(cls: GmmaClass, sparse: bool, short: str, name: MmaName, params: dict):
    p = _split(name)
    text = name.text
    _check_shape(cls, sparse, text, p.shape, p.types[1].name)
    _check_types(cls, sparse, text, p.types)
    a_major, b_major, scale_a, scale_b, sp_sel, sat = _settings(cls, sparse, text, name, p, params)
    _, n, k = p.shape
    d, a, b = p.types
    rs = p.source == "RS"
    la = rs_a_layout(k) if rs else smem_layout(64, k)
    traits = Traits(d, a, b, d, p.shape, WARPGROUP, la, smem_layout(n, k), c_layout(n))
    a_values = 64 * k // 128 // (2 if sparse else 1)  # sparse A stores half of K
    kept = {"a_major": a_major, "b_major": b_major}
    if cls.scale_in:
        kept.update(scale_a=scale_a, scale_b=scale_b)
    if sparse:
        kept["sp_sel"] = sp_sel
    op = Operation(
        name=_canonical(
            cls, sparse, p.shape, (d.name, a.name, b.name), p.source, sat, (a_major, b_major)
        ),
        arch=90,
        family=f"sm90.{short}",
        ptx=_ptx(sparse, p.shape, p.types, sat) + (".and.popc" if cls.popc else ""),
        d=None,
        a=registers(a, a_values) if rs else DESCRIPTOR,
        b=DESCRIPTOR,
        c=registers(d, n // 2),
        operands=("C", "A", "B"),
        a_source="reg" if rs else "smem",
        b_source="smem",
        extras=_extras(cls, sparse, rs, a_major, b_major, scale_a, scale_b, sp_sel),
        modifiers=_modifiers(sat, scale_a, scale_b) + (("and.popc",) if cls.popc else ()),
        params=tuple(sorted(kept.items())),
        note="D is C (read-write accumulator registers); wgmma.fence / commit_group / "
        "wait_group must surround it",
    )
    return op, traits


def _ptx(sparse: bool, shape, ts, sat: bool) -> str:
    """``wgmma.mma_async[.sp].sync.aligned.m64nNkK.dtype.atype.btype[.satfinite]``.

    The ISA syntax line puts ``.satfinite`` after the shape, its examples (and
    CuTe, which ptxas accepts) after the types; we follow the examples.
    """
    m, n, k = shape
    sp = ".sp" if sparse else ""
    tail = ".satfinite" if sat else ""
    return f"wgmma.mma_async{sp}.sync.aligned.m{m}n{n}k{k}{''.join(t.ptx for t in ts)}{tail}"


def _extras(cls, sparse, rs, a_major, b_major, scale_a, scale_b, sp_sel) -> tuple[Extra, ...]:
    """Operands after d, a, b in PTX order: [sp-meta, sp-sel,] scale-d, imm-scale-a/b, imm-trans."""
    out = []
    if sparse:
        out += [Extra("sp_meta", "reg", "uint32_t"), Extra("sp_sel", "imm", "int32_t", sp_sel)]
    out.append(Extra("scale_D", "pred", "int32_t"))
    if cls.scale_in:
        out += [
            Extra("scale_A", "imm", "int32_t", scale_a),
            Extra("scale_B", "imm", "int32_t", scale_b),
        ]
    if cls.transpose:
        if not rs:
            out.append(Extra("tnsp_A", "imm", "int32_t", int(a_major == "MN")))
        out.append(Extra("tnsp_B", "imm", "int32_t", int(b_major == "MN")))
    return tuple(out)


def _modifiers(sat: bool, scale_a: int, scale_b: int) -> tuple[str, ...]:
    mods = ("satfinite",) if sat else ()
    return mods + (("neg.a",) if scale_a == -1 else ()) + (("neg.b",) if scale_b == -1 else ())


FAMILIES = {
    (c.short, sparse): gmma_family(c, sparse)
    for c in CLASSES
    for sparse in ((False, True) if c.sparse else (False,))
}
