"""sm120: warp-level ``mma.sync`` with ``.kind::f8f6f4`` and the block-scaled kinds.

Three families, generated from one :class:`Kind` row each (PTX ISA 9.7.14.5.14
``mma`` syntax, "Alternate floating point type" and "... with block scaling"):

* ``sm120.f8f6f4``: m16n8k32, A and B any of e4m3, e5m2, e3m2, e2m3, e2m1,
  D = C in f32 or f16. Every input sits in an 8-bit container (CuTe's ValTypeA is
  uint8_t), so the layouts are the 8-bit m16n8k32 ones of sm80/sm89.
* ``sm120.mxf8f6f4``: the same with ``.block_scale.scale_vec::1X``, f32, ue8m0
  scale factors for every 32 elements of K.
* ``sm120.mxf4``: m16n8k64, e2m1 packed 8 per register, f32; ``kind::mxf4``
  (ue8m0 per 32, scale_vec::2X) and ``kind::mxf4nvf4`` (per 16, scale_vec::4X,
  ue8m0 or ue4m3).

Names: ``SM120_16x8x32_F32E2M1E4M3F32_TN`` (types written D,A,B,C as everywhere in
cutemma), block-scaled with the scale type appended and the vector size:
``SM120_16x8x32_F32E4M3E4M3F32UE8M0_TN_VS32``. CuTe's spellings are read too:
``SM120_16x8x32_TN<float_e2m1_t,float_e2m1_t,float>`` (or ``a_type=`` ...) and
``SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue4m3_t,16>``.

The block scale factors are extra operands (``Extra`` entries) of the instruction; the
emulation applies them when given as tiles (``MmaAtom.emulate_tiles(..., scale_A=, scale_B=)``,
one factor per ``vs`` K elements) and takes them as 1 otherwise.

>>> from cutemma.mma import mma_op
>>> mma_op('SM120_16x8x32_F32E2M1E3M2F32_TN').ptx
'mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from cutemma.errors import AtomError
from cutemma.mma.arch import WARP, Family, register_family, registers, sync_layouts
from cutemma.mma.names import MmaName, format_shape
from cutemma.mma.operation import Extra, Operation, RegArray
from cutemma.mma.traits import Traits, tv_table
from cutemma.mma.types import numeric_type, type_codes

F8F6F4 = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")
_VS = {"1X": 32, "2X": 32, "4X": 16}  # scale_vec::NX -> elements of K per scale factor


class Scale(NamedTuple):
    """One way a family scales: PTX kind, scale type, K per factor, scale_vec, PTX ISA.

    ``ptx_isa`` is the PTX ISA version that introduced the combination where it is
    newer than the rest of the family (``.kind::mxf4nvf4.scale_vec::4X`` with
    ``.ue8m0`` came in PTX ISA 9.1, CUDA 13.1; the release notes of PTX ISA 9.1).
    """

    ptx_kind: str
    sf: str | None
    vs: int | None
    vec: str | None
    ptx_isa: tuple[int, int] | None = None


@dataclass(frozen=True)
class Kind:
    """One family: the PTX kinds it emits, K, inputs, accumulators, scale options.

    ``scales`` rows are :class:`Scale`; an unscaled family has one row with no scale type.
    """

    short: str
    k: int
    inputs: tuple[str, ...]
    accums: tuple[str, ...]
    scales: tuple[Scale, ...]

    @property
    def scaled(self) -> bool:
        return self.scales[0][1] is not None


KINDS = (
    Kind("f8f6f4", 32, F8F6F4, ("f32", "f16"), (Scale("f8f6f4", None, None, None),)),
    Kind("mxf8f6f4", 32, F8F6F4, ("f32",), (Scale("mxf8f6f4", "ue8m0", 32, "1X"),)),
    Kind(
        "mxf4",
        64,
        ("e2m1",),
        ("f32",),
        (
            Scale("mxf4", "ue8m0", 32, "2X"),
            Scale("mxf4nvf4", "ue8m0", 16, "4X", ptx_isa=(9, 1)),
            Scale("mxf4nvf4", "ue4m3", 16, "4X"),
        ),
    ),
)


@dataclass(frozen=True)
class _Fields:
    shape: tuple[int, int, int]
    types: tuple  # D, A, B, C
    sf: object  # NumericType or None
    vs: int | None


# --- reading the three spellings ---------------------------------------------------------


def _shape_of(name: MmaName) -> tuple[int, int, int] | None:
    for i in range(len(name.tokens)):
        if name.shape(i) is not None:
            return name.shape(i)
    return None


def _form(name: MmaName) -> str | None:
    """'codes' | 'cute' | 'blockscaled' | None (structure only, never raises)."""
    t = name.tokens
    if len(t) >= 3 and name.shape(0) and name.types(1) and len(name.types(1)) in (4, 5):
        return "codes" if t[2] == "TN" else None
    if len(t) == 2 and name.shape(0) and t[1] == "TN":
        return "cute"
    if len(t) == 4 and t[0] == "BLOCKSCALED" and name.shape(1) and t[2:] == ("TN", "VS"):
        return "blockscaled"
    return None


def _claims(kind: Kind, name: MmaName) -> bool:
    form = _form(name)
    if form is None:
        return False
    shape = _shape_of(name)
    scaled = form == "blockscaled" or (form == "codes" and len(name.types(1)) == 5)
    if not kind.scaled:
        return not scaled and (form == "cute" or name.types(1)[1].name in F8F6F4)
    return scaled and (shape[2] == 64) == (kind.k == 64)


def _read(kind: Kind, name: MmaName, params: dict) -> _Fields:
    """Shape, types, scale type and vector size from any accepted spelling."""
    form, text = _form(name), name.text
    shape = _shape_of(name)
    keys = ("a_type", "b_type", "c_type") + (("sf_type", "vs") if kind.scaled else ())
    extra = sorted(set(params) - set(keys))
    if extra:
        raise AtomError(f"{text}: unknown parameter(s) {extra}; this family takes {list(keys)}")
    if form == "codes":
        if params:
            raise AtomError(
                f"{text}: the types are in the name; parameters {sorted(params)} not taken"
            )
        ts = name.types(1)
        vs = _vs_token(text, name.tokens[3:], kind)
        return _Fields(shape, ts[:4], ts[4] if len(ts) == 5 else None, vs)
    args = list(name.template)
    if args and params:
        raise AtomError(f"{text}: give the types either as <...> or as parameters, not both")
    values = args or [params.get(k) for k in keys]
    if len(values) != len(keys) or any(v is None for v in values):
        raise AtomError(f"{text}: CuTe's form needs {', '.join(keys)} (as <...> or parameters)")
    a, b, c = (numeric_type(str(v).rsplit("::", 1)[-1]) for v in values[:3])
    sf = numeric_type(str(values[3]).rsplit("::", 1)[-1]) if kind.scaled else None
    vs = int(values[4]) if kind.scaled else None
    return _Fields(shape, (c, a, b, c), sf, vs)


def _vs_token(text: str, rest: tuple[str, ...], kind: Kind) -> int | None:
    if not rest:
        return kind.scales[0][2]
    if len(rest) == 1 and rest[0].startswith("VS") and rest[0][2:].isdigit() and kind.scaled:
        return int(rest[0][2:])
    raise AtomError(
        f"{text}: unexpected suffix {'_'.join(rest)!r}; after TN only block-scaled names take VS16/VS32"
    )


# --- building ------------------------------------------------------------------------------


def _check(kind: Kind, text: str, f: _Fields) -> Scale:
    """Validate against the ISA; return the scale row the name selects."""
    d, a, b, c = (t.name for t in f.types)
    m, n, k = f.shape
    if (m, n) != (16, 8) or k != kind.k:
        raise AtomError(
            f"{text}: shape {format_shape(f.shape)} is not allowed for kind::{kind.short}; "
            f"it is 16x8x{kind.k}"
        )
    for which, t in (("A", a), ("B", b)):
        if t not in kind.inputs:
            raise AtomError(
                f"{text}: {which} type {t} is not allowed for kind::{kind.short}; "
                f"allowed: {', '.join(kind.inputs)}"
            )
    if d != c or d not in kind.accums:
        raise AtomError(
            f"{text}: accumulator D={d}, C={c}; kind::{kind.short} takes D = C in "
            f"{', '.join(kind.accums)}"
        )
    sf = f.sf.name if f.sf is not None else None
    for row in kind.scales:
        if (row.sf, row.vs) == (sf, f.vs):
            return row
    allowed = ", ".join(f"{row.sf} with VS{row.vs}" for row in kind.scales)
    raise AtomError(
        f"{text}: scale factors {sf} with vector size {f.vs} are not allowed for "
        f"kind::{kind.short}; allowed: {allowed}"
    )


def _canonical(f: _Fields) -> str:
    types = f.types + ((f.sf,) if f.sf is not None else ())
    tokens = (format_shape(f.shape), type_codes(types), "TN")
    return MmaName(120, tokens + ((f"VS{f.vs}",) if f.sf is not None else ())).text


def _input_registers(t, values: int, k: int) -> RegArray:
    # kind::f8f6f4 (K=32) pads every 4/6-bit input to an 8-bit container; at
    # K=64 e2m1 is packed 8 per register (PTX ISA 9.7.14.5.10 / 9.7.14.5.11).
    return registers(numeric_type("e4m3") if k == 32 else t, values)


def _build(kind: Kind, name: MmaName, params: dict) -> tuple[Operation, Traits]:
    text = name.text
    f = _read(kind, name, params)
    scale = _check(kind, text, f)
    d, a, b, c = f.types
    la, lb, lc = sync_layouts(f.shape, 8 if kind.k == 32 else 4)
    traits = Traits(d, a, b, c, f.shape, WARP, la, lb, lc)
    extras = ()
    if f.sf is not None:
        extras = tuple(
            e
            for x in ("A", "B")
            for e in (
                Extra(f"scale_{x}_data", "reg", "uint32_t"),
                Extra(f"byte_id_{x}", "imm", "uint16_t", 0),
                Extra(f"thread_id_{x}", "imm", "uint16_t", 0),
            )
        )
    values = {x: tv_table(lay).shape[1] for x, lay in zip("ABC", (la, lb, lc))}
    op = Operation(
        name=_canonical(f),
        arch=120,
        family=f"sm120.{kind.short}",
        ptx=_ptx(f, scale.ptx_kind, scale.vec),
        d=registers(d, values["C"]),
        a=_input_registers(a, values["A"], kind.k),
        b=_input_registers(b, values["B"], kind.k),
        c=registers(c, values["C"]),
        extras=extras,
        ptx_isa=scale.ptx_isa,
        note="block scale factors are extra operands; emulate_tiles takes them as scale_A/scale_B tiles"
        if f.sf is not None
        else "",
    )
    return op, traits


def _ptx(f: _Fields, ptx_kind: str, vec: str | None) -> str:
    """``mma.sync.aligned.m16n8kK.row.col.kind::X[.block_scale.scale_vec::NX].d.a.b.c[.sf]``."""
    m, n, k = f.shape
    scale = f".block_scale.scale_vec::{vec}" if vec else ""
    tail = f.sf.ptx if f.sf is not None else ""
    types = "".join(t.ptx for t in f.types)
    return f"mma.sync.aligned.m{m}n{n}k{k}.row.col.kind::{ptx_kind}{scale}{types}{tail}"


def _members(kind: Kind):
    for acc in kind.accums:
        for a in kind.inputs:
            for b in kind.inputs:
                for row in kind.scales:
                    types = tuple(numeric_type(x) for x in (acc, a, b, acc))
                    sft = numeric_type(row.sf) if row.sf else None
                    yield _canonical(_Fields((16, 8, kind.k), types, sft, row.vs))


def sm120_family(kind: Kind) -> Family:
    """Generate and register one sm120 family.

    >>> sm120_family.__name__
    'sm120_family'
    """
    scales = (
        "; scales " + ", ".join(f"{row.sf}/VS{row.vs}" for row in kind.scales)
        if kind.scaled
        else ""
    )
    describe = (
        f"mma.sync kind::{kind.short} 16x8x{kind.k}: A, B in {'/'.join(kind.inputs)}, "
        f"D = C in {'/'.join(kind.accums)}{scales}"
    )
    return register_family(
        Family(
            f"sm120.{kind.short}",
            120,
            describe,
            lambda name: _claims(kind, name),
            lambda name, params: _build(kind, name, params),
            lambda: _members(kind),
        )
    )


FAMILIES = {kind.short: sm120_family(kind) for kind in KINDS}
