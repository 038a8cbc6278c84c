"""Numeric types of the tensor-core instructions, with their host arithmetic.

A :class:`NumericType` knows its short name (``'f16'``), bit width, PTX spelling
(``'.f16'``), C++ spelling (``'half_t'``), the code CuTe operation names use
(``'F16'``) and how to round host data to it. ``numeric_type`` accepts a type or
any of those spellings, so every API that takes a type takes ``'bf16'`` too.

>>> t = numeric_type('bf16')
>>> (t.bits, t.ptx, t.cpp, t.code)
(16, '.bf16', 'bfloat16_t', 'BF16')
>>> float(t.quantize(1.00390625))
1.0
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from cutemma.errors import AtomError

KINDS = ("float", "int", "bits", "complex", "gauss")

# CuTe's GaussComplex (cute/arch/mma_sm80.hpp): three f64 partial sums t0, t1, t2 of the
# 3-multiplication complex product; value = (t0 - t1) + (t2 - t0 - t1) i.
GAUSS = np.dtype([("t0", np.float64), ("t1", np.float64), ("t2", np.float64)])


@dataclass(frozen=True)
class NumericType:
    """One element format: spellings, width and host rounding.

    ``host`` is the numpy dtype host fragments are stored in; ``compute`` the
    dtype in which its values are exact (float64, int64 or complex128).

    >>> numeric_type('s4').min, numeric_type('s4').max
    (-8, 7)
    """

    name: str
    bits: int
    ptx: str
    cpp: str
    kind: str
    code: str
    host: np.dtype = field(repr=False, compare=False)
    signed: bool = True

    @property
    def compute(self) -> np.dtype:
        """The numpy dtype in which every value of this type is exact.

        >>> numeric_type('e4m3').compute
        dtype('float64')
        """
        if self.kind == "gauss":
            return GAUSS
        return np.dtype({"float": np.float64, "complex": np.complex128}.get(self.kind, np.int64))

    @property
    def min(self) -> int | float:
        """Smallest value (integers: two's complement range; floats: -max or 0 if unsigned).

        >>> numeric_type('u8').min
        0
        """
        if self.kind in ("int", "bits"):
            return -(1 << (self.bits - 1)) if self.signed else 0
        return -self.max if self.signed else 0.0

    @property
    def max(self) -> int | float:
        """Largest finite value.

        >>> numeric_type('e2m1').max
        6.0
        """
        if self.kind in ("int", "bits"):
            return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1
        if self.name == "tf32":
            return float(np.finfo(np.float32).max)
        if self.kind in ("complex", "gauss"):
            return float(np.finfo(np.float64).max)
        return float(ml_dtypes.finfo(self.host).max)

    def quantize(self, x) -> np.ndarray:
        """Round ``x`` to this format the way the hardware reads it; values in ``compute``.

        Floats round to nearest even (ml_dtypes); values past the range become NaN
        (or inf where the format has it), like a conversion without ``.satfinite``.
        tf32 is fp32 with the low 13 mantissa bits dropped (truncated), because the
        tensor core ignores them (PTX ISA, "Alternate floating-point data formats").
        Integers round to nearest even and wrap to the width, as storing the low
        bits in a register does; b1 keeps the lowest bit.

        >>> numeric_type('tf32').quantize(1 + 2**-11 + 2**-20).item() == 1 + 2**-11
        False
        >>> numeric_type('tf32').quantize(1 + 2**-10 + 2**-20).item() == 1 + 2**-10
        True
        >>> numeric_type('s8').quantize([127.0, 128.0, -2.5]).tolist()
        [127, -128, -2]
        """
        a = np.asarray(x)
        if self.kind == "complex":
            return a.astype(np.complex128)
        if self.kind == "gauss":
            return to_gauss(a)
        if self.kind == "float":
            return _quantize_float(self, a)
        ints = np.rint(a).astype(np.int64) if a.dtype.kind in "fc" else a.astype(np.int64)
        ints = ints & ((1 << self.bits) - 1)
        if self.signed and self.kind == "int":
            ints = np.where(ints > self.max, ints - (1 << self.bits), ints)
        return ints

    def to_host(self, x) -> np.ndarray:
        """Quantize ``x`` and store it in the host dtype (ml_dtypes types for small floats).

        >>> numeric_type('e5m2').to_host([1.1]).dtype.name
        'float8_e5m2'
        """
        return self.quantize(x).astype(self.host)

    def __str__(self) -> str:
        return self.name


def _quantize_float(t: NumericType, a: np.ndarray) -> np.ndarray:
    """Round to a float format and return float64 values (helper of ``quantize``)."""
    a = a.astype(np.float64)
    if t.name == "tf32":
        bits = a.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
        return bits.view(np.float32).astype(np.float64)
    if not t.signed:
        # ue8m0 / ue4m3 have no sign bit; negative inputs are not representable.
        a = np.where(a < 0, np.nan, a)
    with np.errstate(over="ignore", invalid="ignore"):
        return a.astype(t.host).astype(np.float64)


def to_gauss(x) -> np.ndarray:
    """Complex values (or GaussComplex records) as GaussComplex records.

    A complex z is stored as t0 = re, t1 = 0, t2 = re + im, so that t0 - t1 = re and
    t2 - t0 - t1 = im.

    >>> g = to_gauss(np.array([1 + 2j]))
    >>> g['t0'].item(), g['t1'].item(), g['t2'].item()
    (1.0, 0.0, 3.0)
    """
    a = np.asarray(x)
    if a.dtype == GAUSS:
        return a
    z = a.astype(np.complex128)
    out = np.zeros(z.shape, dtype=GAUSS)
    out["t0"], out["t2"] = z.real, z.real + z.imag
    return out


def from_gauss(g) -> np.ndarray:
    """GaussComplex records to complex values.

    >>> from_gauss(to_gauss(np.array([3 - 1j]))).tolist()
    [(3-1j)]
    """
    g = np.asarray(g)
    return (g["t0"] - g["t1"]) + 1j * (g["t2"] - g["t0"] - g["t1"])


def _t(name, bits, cpp, kind, code, host, signed=True) -> NumericType:
    return NumericType(name, bits, "." + name, cpp, kind, code, np.dtype(host), signed)


# One row per format; the PTX spelling is "." + name (PTX ISA, "Fundamental Types"
# and "Alternate floating-point data formats"). C++ names are CUTLASS's.
_TYPES = [
    _t("f64", 64, "double", "float", "F64", np.float64),
    _t("f32", 32, "float", "float", "F32", np.float32),
    _t("tf32", 32, "tfloat32_t", "float", "TF32", np.float32),
    _t("f16", 16, "half_t", "float", "F16", np.float16),
    _t("bf16", 16, "bfloat16_t", "float", "BF16", ml_dtypes.bfloat16),
    _t("e4m3", 8, "float_e4m3_t", "float", "E4M3", ml_dtypes.float8_e4m3fn),
    _t("e5m2", 8, "float_e5m2_t", "float", "E5M2", ml_dtypes.float8_e5m2),
    _t("e3m2", 6, "float_e3m2_t", "float", "E3M2", ml_dtypes.float6_e3m2fn),
    _t("e2m3", 6, "float_e2m3_t", "float", "E2M3", ml_dtypes.float6_e2m3fn),
    _t("e2m1", 4, "float_e2m1_t", "float", "E2M1", ml_dtypes.float4_e2m1fn),
    _t("ue8m0", 8, "float_ue8m0_t", "float", "UE8M0", ml_dtypes.float8_e8m0fnu, signed=False),
    # ue4m3 shares e4m3's exponent and mantissa, without the sign bit.
    _t("ue4m3", 8, "float_ue4m3_t", "float", "UE4M3", ml_dtypes.float8_e4m3fn, signed=False),
    _t("s32", 32, "int32_t", "int", "S32", np.int32),
    _t("s16", 16, "int16_t", "int", "S16", np.int16),
    _t("s8", 8, "int8_t", "int", "S8", np.int8),
    _t("u8", 8, "uint8_t", "int", "U8", np.uint8, signed=False),
    _t("s4", 4, "int4b_t", "int", "S4", np.int8),
    _t("u4", 4, "uint4b_t", "int", "U4", np.uint8, signed=False),
    # CuTe spells the single-bit type U1 in names (S32U1U1S32); PTX calls it .b1.
    _t("b1", 1, "uint1b_t", "bits", "U1", np.uint8, signed=False),
    NumericType("c64", 128, ".f64", "complex<double>", "complex", "C64", np.dtype(np.complex128)),
    NumericType("gc64", 192, ".f64", "GaussComplex", "gauss", "GC64", GAUSS),
]

TYPES: dict[str, NumericType] = {t.name: t for t in _TYPES}
_BY_SPELLING: dict[str, NumericType] = {}
for _ty in _TYPES:
    for _s in (_ty.name, _ty.code.lower(), _ty.cpp.lower(), _ty.ptx):
        _BY_SPELLING.setdefault(_s, _ty)
_BY_SPELLING.update({"half": TYPES["f16"], "float": TYPES["f32"], "double": TYPES["f64"]})
# numpy / ml_dtypes / torch names of the same formats ('float16', np.float16, torch.bfloat16)
_BY_SPELLING.update({
    "float64": TYPES["f64"], "float32": TYPES["f32"], "float16": TYPES["f16"],
    "bfloat16": TYPES["bf16"], "float8_e4m3fn": TYPES["e4m3"], "float8_e5m2": TYPES["e5m2"],
    "float6_e3m2fn": TYPES["e3m2"], "float6_e2m3fn": TYPES["e2m3"], "float4_e2m1fn": TYPES["e2m1"],
    "float8_e8m0fnu": TYPES["ue8m0"], "int32": TYPES["s32"], "int16": TYPES["s16"],
    "int8": TYPES["s8"], "uint8": TYPES["u8"], "int4": TYPES["s4"], "uint4": TYPES["u4"],
})  # fmt: skip
CODES: dict[str, NumericType] = {t.code: t for t in _TYPES}


def numeric_type(x: NumericType | str) -> NumericType:
    """Return the NumericType for a type object or any spelling of it.

    Accepts the short name (``'f16'``), the name code (``'F16'``), the PTX
    spelling (``'.f16'``), the C++ spelling (``'half_t'``), in any case, and numpy, ml_dtypes
    and torch dtypes or their names (``np.float16``, ``'float16'``, ``torch.bfloat16``).

    >>> numeric_type('half_t') is numeric_type('.f16') is numeric_type('F16')
    True
    >>> numeric_type(np.float16) is numeric_type('float16') is numeric_type('HALF_T')
    True
    """
    if isinstance(x, NumericType):
        return x
    if not isinstance(x, str) and x is not None and not isinstance(x, bool | int | float):
        x = _dtype_name(x)
    if isinstance(x, str) and x.lower().removeprefix("torch.") in _BY_SPELLING:
        return _BY_SPELLING[x.lower().removeprefix("torch.")]
    raise AtomError(f"unknown numeric type {x!r}; known types: {', '.join(TYPES)}")


def _dtype_name(x) -> object:
    """The name of a numpy / ml_dtypes dtype or scalar type, or of a torch dtype; else ``x``."""
    if type(x).__module__.startswith("torch"):
        return str(x)  # 'torch.float16'
    try:
        return np.dtype(x).name
    except TypeError:
        return x


def split_type_codes(text: str) -> tuple[NumericType, ...] | None:
    """Split a run of CuTe type codes (``'F32BF16BF16F32'``) into types, or None.

    Longest code first at every position, so ``'UE8M0'`` is not read as ``U``....

    >>> [t.name for t in split_type_codes('S32U1U1S32')]
    ['s32', 'b1', 'b1', 's32']
    >>> split_type_codes('F8F6F4') is None
    True
    """
    out, i = [], 0
    codes = sorted(CODES, key=len, reverse=True)
    while i < len(text):
        code = next((c for c in codes if text.startswith(c, i)), None)
        if code is None:
            return None
        out.append(CODES[code])
        i += len(code)
    return tuple(out) if out else None


def type_codes(types) -> str:
    """Join types into CuTe's name spelling.

    >>> type_codes(['f32', 'bf16', 'bf16', 'f32'])
    'F32BF16BF16F32'
    """
    return "".join(numeric_type(t).code for t in types)
