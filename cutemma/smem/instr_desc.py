"""The tcgen05 (sm100) 32-bit instruction descriptor: two bitfield tables, encode, decode.

PTX ISA 9.7.16.4.2 "Instruction descriptor", Table 42 (``.kind::tf32/f16/f8f6f4/i8``) and the
block-scaled table (``.kind::mxf8f6f4/mxf4/mxf4nvf4``); field positions agree with
cute/arch/mma_sm100_desc.hpp (InstrDescriptor, InstrDescriptorBlockScaled).

>>> d = make_instr_desc("f16", "bf16", "bf16", "f32", M=128, N=256)
>>> hex(d.raw), d.fields["n_dim"], d.fields["m_dim"]
('0x8400490', 32, 8)
>>> decode_instr_desc(d.raw, "f16") == d
True
"""

from __future__ import annotations

from dataclasses import dataclass

from cutemma.display import RichDisplay
from cutemma.errors import DescriptorError
from cutemma.smem.bitfield import Field, check_raw, check_table, field_lines, pack, unpack
from cutemma.smem.swizzle_atoms import check_major

# Table 42: .kind::tf32, .kind::f16, .kind::f8f6f4, .kind::i8
INSTR_DESC_FIELDS: tuple[Field, ...] = (
    Field("sparse_id2", 0, 2, "sparsity selector, if sparse"),
    Field("sparse", 2, 1, "0 dense, 1 sparse"),
    Field("saturate", 3, 1, "saturate (kind::i8 only)"),
    Field("d_format", 4, 2, "D type"),
    Field("a_format", 7, 3, "A type"),
    Field("b_format", 10, 3, "B type"),
    Field("negate_a", 13, 1, "negate A"),
    Field("negate_b", 14, 1, "negate B"),
    Field("a_major", 15, 1, "transpose A: 0 K-major, 1 MN-major"),
    Field("b_major", 16, 1, "transpose B: 0 K-major, 1 MN-major"),
    Field("n_dim", 17, 6, "N >> 3"),
    Field("m_dim", 24, 5, "M >> 4"),
    Field("max_shift", 30, 2, "B-reuse max shift in .ws: 0 none, 1 8, 2 16, 3 32"),
)
# Block-scaled table: .kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4
INSTR_DESC_BLOCK_SCALED_FIELDS: tuple[Field, ...] = (
    Field("sparse_id2", 0, 2, "sparsity selector, if sparse"),
    Field("sparse", 2, 1, "0 dense, 1 sparse"),
    Field("b_sf_id", 4, 2, "scale factor B ID"),
    Field("a_format", 7, 3, "A type"),
    Field("b_format", 10, 3, "B type"),
    Field("negate_a", 13, 1, "negate A"),
    Field("negate_b", 14, 1, "negate B"),
    Field("a_major", 15, 1, "transpose A: 0 K-major, 1 MN-major"),
    Field("b_major", 16, 1, "transpose B: 0 K-major, 1 MN-major"),
    Field("n_dim", 17, 6, "N >> 3"),
    Field("scale_format", 23, 1, "scale type: 0 ue4m3, 1 ue8m0"),
    Field("m_dim", 24, 5, "M >> 4"),
    Field("a_sf_id", 29, 2, "scale factor A ID"),
    Field("k_size", 31, 1, "mxf4nvf4 K: 0 K=64 (dense), 1 K=96"),
)
for _t in (INSTR_DESC_FIELDS, INSTR_DESC_BLOCK_SCALED_FIELDS):
    check_table(_t, 32)

_F8F6F4 = {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5}


@dataclass(frozen=True)
class Kind:
    """What one ``.kind`` allows: A/B and D format codes, scale codes, which table it uses,
    and the A/B types that may be MN-major (transposed).

    >>> KINDS["f16"].ab, KINDS["mxf4"].table is INSTR_DESC_BLOCK_SCALED_FIELDS
    ({'f16': 0, 'bf16': 1}, True)
    """

    name: str
    ab: dict[str, int]
    d: dict[str, int]
    scale: dict[str, int] | None = None  # block-scaled kinds only
    mn_major_ok: tuple[str, ...] = ()
    negate_ok: bool = True
    saturate_ok: bool = False

    @property
    def table(self) -> tuple[Field, ...]:
        """The bitfield table this kind's descriptors use.

        >>> len(KINDS["i8"].table)
        13
        """
        return INSTR_DESC_FIELDS if self.scale is None else INSTR_DESC_BLOCK_SCALED_FIELDS


# Codes: Table 42 and the block-scaled table (PTX ISA 9.7.16.4.2). MN-major ("transpose") is
# valid only for E4M3, E5M2, 8-bit ints, F16, BF16, TF32 (cute/arch/mma_sm100_desc.hpp).
KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("tf32", {"tf32": 2}, {"f32": 1}, mn_major_ok=("tf32",)),
        Kind("f16", {"f16": 0, "bf16": 1}, {"f16": 0, "f32": 1}, mn_major_ok=("f16", "bf16")),
        Kind("f8f6f4", _F8F6F4, {"f16": 0, "f32": 1}, mn_major_ok=("e4m3", "e5m2")),
        Kind("i8", {"u8": 0, "s8": 1}, {"s32": 2}, mn_major_ok=("u8", "s8"),
             negate_ok=False, saturate_ok=True),
        Kind("mxf8f6f4", _F8F6F4, {"f32": 1}, {"ue8m0": 1}, mn_major_ok=("e4m3", "e5m2")),
        Kind("mxf4", {"e2m1": 1}, {"f32": 1}, {"ue8m0": 1}),
        Kind("mxf4nvf4", {"e2m1": 1}, {"f32": 1}, {"ue4m3": 0, "ue8m0": 1}),
    )
}  # fmt: skip
_ALIASES = {"fp16": "f16", "half": "f16", "float": "f32", "fp32": "f32", "int8": "s8",
            "uint8": "u8", "int32": "s32", "float_e4m3_t": "e4m3", "float_e5m2_t": "e5m2"}  # fmt: skip


def _kind(kind: str) -> Kind:
    k = str(kind).removeprefix(".").removeprefix("kind::")
    if k not in KINDS:
        raise DescriptorError(f"unknown tcgen05 kind {kind!r}; kinds are {', '.join(KINDS)}")
    return KINDS[k]


def _type_name(t) -> str:
    name = getattr(t, "name", t)
    name = str(name).lower().removeprefix(".")
    return _ALIASES.get(name, name)


def _code(kind: Kind, table: dict[str, int], t, role: str) -> int:
    name = _type_name(t)
    if name not in table:
        raise DescriptorError(
            f"kind::{kind.name}: {role} type {t!r} is not allowed; use one of {', '.join(table)}"
        )
    return table[name]


@dataclass(frozen=True)
class InstrDescriptor(RichDisplay):
    """A tcgen05 instruction descriptor: its kind and field values (as stored).

    >>> InstrDescriptor("tf32", {"d_format": 1, "a_format": 2, "b_format": 2,
    ...                 "n_dim": 8, "m_dim": 4}).raw == 0x4100910
    True
    """

    kind: str
    fields: dict[str, int]

    def __post_init__(self):
        pack(_kind(self.kind).table, self.fields, what=f"kind::{self.kind} instruction descriptor")

    def __hash__(self) -> int:
        return hash((self.kind, self.raw))

    @property
    def raw(self) -> int:
        """The 32-bit value the instruction takes.

        >>> hex(make_instr_desc("i8", "s8", "s8", "s32", 64, 8).raw)
        '0x40204a0'
        """
        return pack(_kind(self.kind).table, self.fields, f"kind::{self.kind} descriptor")

    @property
    def M(self) -> int:
        """M, from ``m_dim << 4``.

        >>> decode_instr_desc(8 << 24 | 2 << 17, "tf32").M
        128
        """
        return self.fields.get("m_dim", 0) << 4

    @property
    def N(self) -> int:
        """N, from ``n_dim << 3``.

        >>> decode_instr_desc(8 << 24 | 2 << 17, "tf32").N
        16
        """
        return self.fields.get("n_dim", 0) << 3

    def describe(self) -> str:
        """Every field in words, with the type names its codes stand for.

        >>> print(make_instr_desc("tf32", "tf32", "tf32", "f32", 64, 8).describe().splitlines()[-1])
          M = 64, N = 8, A K-major, B K-major
        """
        k = _kind(self.kind)
        full = unpack(k.table, self.raw)
        names = {"a_format": k.ab, "b_format": k.ab, "d_format": k.d, "scale_format": k.scale}
        out = [f"tcgen05 instruction descriptor (kind::{k.name}) {self.raw:#010x}"]
        out += field_lines(k.table, full)
        for f, table in names.items():
            if f in full and table:
                hits = [n for n, c in table.items() if c == full[f]]
                out.append(f"  {f}: {'/'.join(hits) or 'not valid for this kind'}")
        major = {0: "K", 1: "MN"}
        out.append(f"  M = {self.M}, N = {self.N}, A {major[full['a_major']]}-major, "
                   f"B {major[full['b_major']]}-major")  # fmt: skip
        return "\n".join(out)


def make_instr_desc(
    kind: str,
    a_type,
    b_type,
    d_type,
    M: int,
    N: int,
    a_major: str = "K",
    b_major: str = "K",
    *,
    negate_a: bool = False,
    negate_b: bool = False,
    saturate: bool = False,
    sparse: bool = False,
    sparse_id2: int = 0,
    max_shift: int = 0,
    scale_type=None,
    a_sf_id: int = 0,
    b_sf_id: int = 0,
    k_size: int = 0,
) -> InstrDescriptor:
    """Encode a tcgen05 instruction descriptor; ``scale_type`` etc. for block-scaled kinds.

    >>> make_instr_desc("mxf4nvf4", "e2m1", "e2m1", "f32", 128, 128, scale_type="ue4m3").raw == 0x8200480
    True
    """
    from cutemma.layout.checks import as_int

    k = _kind(kind)
    if as_int(M) is None or as_int(N) is None:
        raise DescriptorError(f"M = {M!r}, N = {N!r}: M and N must be whole numbers (ints)")
    M, N = as_int(M), as_int(N)
    if M % 16 or not 16 <= M <= 256 or N % 8 or not 8 <= N <= 256:
        raise DescriptorError(
            f"M = {M}, N = {N}: M must be a multiple of 16 in [16, 256] and N a multiple of 8 "
            "in [8, 256] (the descriptor stores M >> 4 and N >> 3)"
        )
    majors = {"a_major": check_major(a_major), "b_major": check_major(b_major)}
    for (field_name, major), t in zip(majors.items(), (a_type, b_type)):
        if major == "MN" and _type_name(t) not in k.mn_major_ok:
            ok = ", ".join(k.mn_major_ok) or "no type"
            raise DescriptorError(
                f"kind::{k.name}: {field_name[0].upper()} of type {t!r} cannot be MN-major "
                f"(transposed); MN-major is allowed for {ok}"
            )
    if (negate_a or negate_b) and not k.negate_ok:
        raise DescriptorError(f"kind::{k.name} cannot negate A or B")
    if saturate and not k.saturate_ok:
        raise DescriptorError(f"kind::{k.name} has no saturate; only kind::i8 does")
    # kind::f16 accumulates bf16 only in f32; kind::f8f6f4 takes an f16 D for any inputs.
    if k.name == "f16" and _type_name(d_type) == "f16" and _type_name(a_type) != "f16":
        raise DescriptorError(f"kind::{k.name}: an f16 D needs f16 A and B, got A {a_type!r}")
    fields = {
        "sparse_id2": sparse_id2, "sparse": int(sparse),
        "a_format": _code(k, k.ab, a_type, "A"), "b_format": _code(k, k.ab, b_type, "B"),
        "negate_a": int(negate_a), "negate_b": int(negate_b),
        "a_major": int(majors["a_major"] == "MN"), "b_major": int(majors["b_major"] == "MN"),
        "n_dim": N >> 3, "m_dim": M >> 4,
    }  # fmt: skip
    _code(k, k.d, d_type, "D")
    if k.scale is None:
        fields.update(saturate=int(saturate), max_shift=max_shift,
                      d_format=_code(k, k.d, d_type, "D"))  # fmt: skip
    else:
        if scale_type is None:
            raise DescriptorError(f"kind::{k.name} needs scale_type, one of {', '.join(k.scale)}")
        fields.update(scale_format=_code(k, k.scale, scale_type, "scale"), a_sf_id=a_sf_id,
                      b_sf_id=b_sf_id, k_size=k_size)  # fmt: skip
    return InstrDescriptor(k.name, fields)


def decode_instr_desc(raw: int, kind: str) -> InstrDescriptor:
    """The fields of a raw 32-bit instruction descriptor of ``kind`` (the kind is not in the
    bits: it is the instruction's ``.kind`` qualifier).

    >>> decode_instr_desc(0x8400490, "f16").N
    256
    """
    from cutemma.layout.checks import as_int

    k = _kind(kind)
    raw = raw if as_int(raw) is None else as_int(raw)  # numpy ints are ints
    check_raw(k.table, raw, 32, f"kind::{k.name} instruction descriptor")
    desc = InstrDescriptor(k.name, unpack(k.table, raw))
    if desc.M == 0 or desc.N == 0:  # m_dim = M >> 4, n_dim = N >> 3: 0 is no shape at all
        raise DescriptorError(
            f"kind::{k.name} instruction descriptor {raw:#x} has M = {desc.M}, N = {desc.N}: its "
            "m_dim (bits 24-28, M >> 4) and n_dim (bits 17-22, N >> 3) fields must be nonzero "
            "(PTX ISA tcgen05 instruction descriptor); is this the raw descriptor?"
        )
    return desc
