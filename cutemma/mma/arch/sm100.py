"""sm100 UMMA: ``tcgen05.mma`` families, and the FFMA2 atoms.

One :class:`UmmaKind` row per ``.kind`` (PTX ISA 9.7.16.10 ``tcgen05.mma``):
tf32, f16 (f16/bf16 inputs), i8 (s8/u8), f8f6f4, and the block-scaled mxf8f6f4,
mxf4 and mxf4nvf4. Each kind gives one family with CuTe's struct names,
``SM100_MMA_<KIND>[_2x1SM]_<SS|TS>[_SPARSE]``; types, M, N and majors are
parameters (``a_type=``, ``b_type=``, ``c_type=``, ``m=``, ``n=``, ``a_major=``,
``b_major=``; block-scaled also ``sf_type=``, ``vs=``; i8 ``saturate=``) or CuTe's
template arguments in CuTe's order ``<a, b, c, [sf,] M, N, a_major, b_major>``.

K is 256 bits of A (512 for sparse): tf32 8, f16/bf16 16, 8-bit and the padded
f8f6f4 types 32; mxf4/mxf4nvf4 pack e2m1 and take K=64.

Traits follow cute/atom/mma_traits_sm100.hpp: one "thread" per CTA. 1-SM
(cta_group::1): ThrID ``1``, A ``(1,(M,K)):(0,(1,M))``, B ``(1,(N,K)):(0,(1,N))``,
C ``(1,(M,N)):(0,(1,M))``. 2-SM (cta_group::2): ThrID ``2``, each CTA holds half of
M of A and C and half of N of B, e.g. A ``(2,(M/2,K)):(M/2,(1,M))``.

C (the accumulator) lives in tensor memory, and A does too in the TS forms: the
ISA documents tensor-memory data-path layouts, not per-thread register fragments,
so these layouts say only which CTA holds which element. A and B of SS are read
through shared-memory descriptors. The allowed M and N are the PTX ISA's
(9.7.16.2.1 "Matrix Shape", Table 39): cta_group::1 M 64 or 128, N a multiple of
8 in 8..256; cta_group::2 M 128 or 256, N a multiple of 16 in 16..256. Block-scaled
kinds take M=128 on one SM (CuTe's SM100_MMA_MXF8F6F4_SS asserts it). CuTe's TS
structs assert more than the ISA table says (M=128 TS: N a multiple of 16; 2-SM
TS: of 32); we follow the ISA and note it here.

>>> from cutemma.mma import make_mma_atom
>>> atom = make_mma_atom('SM100_MMA_F16BF16_SS', a_type='bf16', b_type='bf16',
...                      c_type='f32', m=128, n=256, a_major='K', b_major='K')
>>> atom.shape_mnk, str(atom.tv_layout_C)
((128, 256, 16), '(1,(128,256)):(0,(1,128))')
"""

from __future__ import annotations

from dataclasses import dataclass

from cutemma.errors import AtomError
from cutemma.layout import Layout
from cutemma.mma.arch import Family, register_family
from cutemma.mma.names import MmaName
from cutemma.mma.operation import Extra, Operation, RegArray
from cutemma.mma.traits import Traits
from cutemma.mma.types import numeric_type

DESCRIPTOR = RegArray("uint64_t", 1)
TMEM_ADDRESS = RegArray("uint32_t", 1)
MAJORS = ("K", "MN")
_F8F6F4 = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")


@dataclass(frozen=True)
class UmmaKind:
    """One ``.kind`` of tcgen05.mma: a row of the description table.

    ``pairs`` are the allowed (A, B) types, ``accums`` the C types (per A type
    where they differ, as {A: (C, ...)}); ``k`` is the dense K; ``scales`` the
    allowed (scale type, vector size) pairs of block-scaled kinds.
    """

    token: str
    ptx: str
    pairs: tuple[tuple[str, str], ...]
    accums: dict
    k: int
    scales: tuple[tuple[str, int], ...] = ()
    saturate: bool = False

    @property
    def short(self) -> str:
        return self.token.lower()


def _pairs(types: tuple[str, ...], same: bool = False) -> tuple[tuple[str, str], ...]:
    return tuple((a, b) for a in types for b in types if a == b or not same)


KINDS = (
    UmmaKind("TF32", "tf32", (("tf32", "tf32"),), {"tf32": ("f32",)}, 8),
    UmmaKind(
        "F16BF16",
        "f16",
        _pairs(("f16", "bf16"), same=True),
        {"f16": ("f32", "f16"), "bf16": ("f32",)},
        16,
    ),
    UmmaKind("S8", "i8", _pairs(("s8", "u8")), {"s8": ("s32",), "u8": ("s32",)}, 32, saturate=True),
    UmmaKind("F8F6F4", "f8f6f4", _pairs(_F8F6F4), dict.fromkeys(_F8F6F4, ("f32", "f16")), 32),
    UmmaKind(
        "MXF8F6F4",
        "mxf8f6f4",
        _pairs(_F8F6F4),
        dict.fromkeys(_F8F6F4, ("f32",)),
        32,
        (("ue8m0", 32),),
    ),
    UmmaKind("MXF4", "mxf4", (("e2m1", "e2m1"),), {"e2m1": ("f32",)}, 64, (("ue8m0", 32),)),
    UmmaKind(
        "MXF4NVF4",
        "mxf4nvf4",
        (("e2m1", "e2m1"),),
        {"e2m1": ("f32",)},
        64,
        (("ue8m0", 32), ("ue8m0", 16), ("ue4m3", 16)),
    ),
)
# scale_vec::NX: how many scale factors per row of A for one instruction's K.
_SCALE_VEC = {(32, 32): "1X", (64, 32): "2X", (64, 16): "4X"}


@dataclass(frozen=True)
class _Form:
    two_sm: bool
    source: str
    sparse: bool


def _form(kind: UmmaKind, name: MmaName) -> _Form | None:
    """Structure of ``SM100_MMA_<KIND>[_2x1SM]_<SS|TS>[_SPARSE]`` (never raises)."""
    t = list(name.tokens)
    if len(t) < 3 or t[0] != "MMA" or t[1] != kind.token:
        return None
    rest = t[2:]
    two_sm = bool(rest) and rest[0] == "2x1SM"
    rest = rest[1:] if two_sm else rest
    sparse = bool(rest) and rest[-1] == "SPARSE"
    rest = rest[:-1] if sparse else rest
    if rest not in (["SS"], ["TS"]):
        return None
    return _Form(two_sm, rest[0], sparse)


# --- parameters --------------------------------------------------------------------------


def _keys(kind: UmmaKind) -> tuple[str, ...]:
    """CuTe's template order, which is also the order positional <...> arguments take."""
    sf = ("sf_type",) if kind.scales else ()
    return ("a_type", "b_type", "c_type", *sf, "m", "n", "a_major", "b_major")


def _defaults(kind: UmmaKind, form: _Form) -> dict:
    a, b = kind.pairs[0]
    out = {"a_type": a, "b_type": b, "c_type": kind.accums[a][0], "a_major": "K", "b_major": "K"}
    out.update(m=256 if form.two_sm else 128, n=256)
    if kind.scales:
        out.update(sf_type=kind.scales[0][0], vs=kind.scales[0][1])
    if kind.saturate:
        out["saturate"] = False
    return out


def _settings(kind: UmmaKind, form: _Form, name: MmaName, params: dict) -> dict:
    text = name.text
    keys = _keys(kind)
    allowed = (
        set(keys) | ({"vs"} if kind.scales else set()) | ({"saturate"} if kind.saturate else set())
    )
    extra = sorted(set(params) - allowed)
    if extra:
        raise AtomError(
            f"{text}: unknown parameter(s) {extra}; {kind.token} takes {sorted(allowed)}"
        )
    out = _defaults(kind, form)
    if len(name.template) > len(keys):
        raise AtomError(f"{text}: at most {len(keys)} template arguments: {', '.join(keys)}")
    for key, arg in zip(keys, name.template):
        word = arg.rsplit("::", 1)[-1]
        if key in params and str(params[key]) != word:
            raise AtomError(f"{text}: {key} is given twice: <{arg}> and {key}={params[key]!r}")
        out[key] = int(word) if key in ("m", "n") else word
    out.update(params)
    for key in ("a_type", "b_type", "c_type", "sf_type"):
        if key in out:
            out[key] = numeric_type(out[key]).name
    return out


def _check(kind: UmmaKind, form: _Form, text: str, s: dict) -> None:
    a, b, c = s["a_type"], s["b_type"], s["c_type"]
    if (a, b) not in kind.pairs:
        allowed = ", ".join(f"{x}x{y}" for x, y in kind.pairs)
        raise AtomError(
            f"{text}: A x B = {a}x{b} is not a kind::{kind.ptx} pair; allowed: {allowed}"
        )
    if c not in kind.accums[a]:
        raise AtomError(
            f"{text}: accumulator {c} is not allowed for kind::{kind.ptx} with {a} inputs; "
            f"allowed: {', '.join(kind.accums[a])}"
        )
    if kind.scales and (s["sf_type"], s["vs"]) not in kind.scales:
        allowed = ", ".join(f"{t} with vs={v}" for t, v in kind.scales)
        raise AtomError(
            f"{text}: scale factors {s['sf_type']} with vs={s['vs']} are not allowed for "
            f"kind::{kind.ptx}; allowed: {allowed}"
        )
    for which in ("a_major", "b_major"):
        if s[which] not in MAJORS:
            raise AtomError(f"{text}: {which}={s[which]!r}; a UMMA major is 'K' or 'MN'")
    if form.source == "TS" and s["a_major"] != "K":
        raise AtomError(f"{text}: TS reads A from tensor memory, which must be K-major; got MN")
    if s.get("saturate") not in (None, False, True):
        raise AtomError(f"{text}: saturate={s['saturate']!r}; write True or False")
    _check_mn(kind, form, text, s["m"], s["n"])


def _mn_rule(kind: UmmaKind, form: _Form) -> tuple[tuple[int, ...], int]:
    """(allowed M, N step) for this form; N runs from the step to 256 (ISA Table 39)."""
    if form.two_sm:
        return (128, 256), 16
    return ((128,) if kind.scales else (64, 128)), 8


def _check_mn(kind: UmmaKind, form: _Form, text: str, m, n) -> None:
    ms, step = _mn_rule(kind, form)
    group = f"cta_group::{2 if form.two_sm else 1} {form.source}"
    if m not in ms:
        raise AtomError(f"{text}: M must be one of {ms} for {group} kind::{kind.ptx}; got m={m}")
    if not (isinstance(n, int) and n % step == 0 and step <= n <= 256):
        raise AtomError(
            f"{text}: N must be a multiple of {step} in {step}..256 for {group} with M={m}; got n={n}"
        )


# --- building ----------------------------------------------------------------------------


def _layouts(two_sm: bool, m: int, n: int, k: int) -> tuple[Layout, Layout, Layout, Layout]:
    """ThrID and A, B, C (cute/atom/mma_traits_sm100.hpp)."""
    if not two_sm:
        return (
            Layout(1),
            Layout((1, (m, k)), (0, (1, m))),
            Layout((1, (n, k)), (0, (1, n))),
            Layout((1, (m, n)), (0, (1, m))),
        )
    return (
        Layout(2),
        Layout((2, (m // 2, k)), (m // 2, (1, m))),
        Layout((2, (n // 2, k)), (n // 2, (1, n))),
        Layout((2, (m // 2, n)), (m // 2, (1, m))),
    )


def _k(kind: UmmaKind, sparse: bool) -> int:
    return kind.k * (2 if sparse else 1)


def _build(kind: UmmaKind, name: MmaName, params: dict) -> tuple[Operation, Traits]:
    form = _form(kind, name)
    text = name.text
    s = _settings(kind, form, name, params)
    _check(kind, form, text, s)
    m, n, k = s["m"], s["n"], _k(kind, form.sparse)
    a, b, c = (numeric_type(s[x]) for x in ("a_type", "b_type", "c_type"))
    thr, la, lb, lc = _layouts(form.two_sm, m, n, k)
    traits = Traits(c, a, b, c, (m, n, k), thr, la, lb, lc)
    sat = bool(s.get("saturate"))
    op = Operation(
        name=MmaName(100, name.tokens).text,
        arch=100,
        family=f"sm100.{kind.short}",
        ptx=_ptx(kind, form, s),
        d=None,
        a=TMEM_ADDRESS if form.source == "TS" else DESCRIPTOR,
        b=DESCRIPTOR,
        c=TMEM_ADDRESS,
        operands=("C", "A", "B"),
        a_source="tmem" if form.source == "TS" else "smem",
        b_source="smem",
        extras=_extras(kind, form),
        modifiers=("satfinite",) if sat else (),
        params=tuple(sorted(s.items())),
        note="C (and A for TS) in tensor memory: layouts say which CTA holds which element; "
        "one thread issues the instruction for its CTA"
        + ("; block scale factors: emulate_tiles(scale_A=, scale_B=)" if kind.scales else ""),
    )
    return op, traits


def _ptx(kind: UmmaKind, form: _Form, s: dict) -> str:
    """``tcgen05.mma[.sp].cta_group::N.kind::K[.block_scale.scale_vec::NX]``.

    Types, M, N and majors travel in the instruction descriptor, not the mnemonic.
    """
    sp = ".sp" if form.sparse else ""
    group = 2 if form.two_sm else 1
    scale = ""
    if kind.scales:
        scale = f".block_scale.scale_vec::{_SCALE_VEC[(kind.k, s['vs'])]}"
    return f"tcgen05.mma{sp}.cta_group::{group}.kind::{kind.ptx}{scale}"


def _extras(kind: UmmaKind, form: _Form) -> tuple[Extra, ...]:
    """After [d-tmem], a, b-desc: [sp-meta], idesc, then scales or lane mask, enable-input-d."""
    out = [Extra("sp_meta_tmem", "reg", "uint32_t")] if form.sparse else []
    out.append(Extra("idesc", "reg", "uint32_t"))
    if kind.scales:
        out += [Extra("scale_A_tmem", "reg", "uint32_t"), Extra("scale_B_tmem", "reg", "uint32_t")]
    else:
        lanes = 8 if form.two_sm else 4
        out.append(Extra("disable_output_lane", "reg", f"uint32_t[{lanes}]"))
    out.append(Extra("enable_input_d", "pred", "int32_t"))
    return tuple(out)


def _members(kind: UmmaKind):
    for two_sm in (False, True):
        for source in ("SS", "TS"):
            for sparse in (False, True):
                tokens = ("MMA", kind.token) + (("2x1SM",) if two_sm else ()) + (source,)
                yield MmaName(100, tokens + (("SPARSE",) if sparse else ())).text


def umma_family(kind: UmmaKind) -> Family:
    """Generate and register the tcgen05.mma family of one kind.

    >>> umma_family.__name__
    'umma_family'
    """
    pairs = ", ".join(sorted({x for p in kind.pairs for x in p}))
    describe = (
        f"tcgen05.mma kind::{kind.ptx} ({pairs}): SM100_MMA_{kind.token}[_2x1SM]_SS|TS[_SPARSE] "
        f"with a_type, b_type, c_type, m, n, a_major, b_major parameters"
    )
    return register_family(
        Family(
            f"sm100.{kind.short}",
            100,
            describe,
            lambda name: _form(kind, name) is not None,
            lambda name, params: _build(kind, name, params),
            lambda: _members(kind),
        )
    )


FAMILIES = {kind.token: umma_family(kind) for kind in KINDS}


# --- FFMA2: fma.rn.f32x2, one thread, two lanes of a pair -----------------------------------


def _ffma2_claims(name: MmaName) -> bool:
    ts = name.types(1)
    return len(name.tokens) == 2 and name.shape(0) is not None and ts is not None and len(ts) == 4


def _ffma2_build(name: MmaName, params: dict) -> tuple[Operation, Traits]:
    text = name.text
    shape, ts = name.shape(0), name.types(1)
    if shape not in ((2, 1, 1), (1, 2, 1)):
        raise AtomError(f"{text}: FFMA2 shapes are 2x1x1 and 1x2x1 (fma.rn.f32x2); got {shape}")
    if any(t.name != "f32" for t in ts):
        raise AtomError(f"{text}: FFMA2 is F32F32F32F32 (fma.rn.f32x2 on f32 pairs)")
    if params:
        raise AtomError(f"{text}: FFMA2 takes no parameters; got {sorted(params)}")
    m, n, _ = shape
    pair = Layout((1, 2), (0, 1))
    one = Layout((1, 1), (0, 0))
    f32 = ts[0]
    a, b = (pair, one) if m == 2 else (one, pair)
    traits = Traits(f32, f32, f32, f32, shape, Layout(1), a, b, pair)
    op = Operation(
        name=text,
        arch=100,
        family="sm100.ffma2",
        ptx="fma.rn.f32x2",
        d=RegArray("float", 2),
        a=RegArray("float", m),
        b=RegArray("float", n),
        c=RegArray("float", 2),
        note="the single operand is used for both lanes of the f32x2 pair",
    )
    return op, traits


FFMA2 = register_family(
    Family(
        "sm100.ffma2",
        100,
        "fma.rn.f32x2 as a one-thread MMA: SM100_2x1x1_F32F32F32F32, SM100_1x2x1_F32F32F32F32",
        _ffma2_claims,
        _ffma2_build,
        lambda: ("SM100_2x1x1_F32F32F32F32", "SM100_1x2x1_F32F32F32F32"),
    )
)
