"""Numeric types: spellings and host rounding, against values worked out by hand
from the formats' definitions (IEEE binary16, bfloat16, OCP FP8/FP6/FP4, PTX tf32)."""

import numpy as np
import pytest

from cutemma.errors import AtomError
from cutemma.mma.types import TYPES, numeric_type, split_type_codes, type_codes

ALL = [
    "f64", "f32", "tf32", "f16", "bf16", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1",
    "ue8m0", "ue4m3", "s32", "s8", "u8", "s4", "u4", "b1",
]  # fmt: skip


@pytest.mark.parametrize("name", ALL)
def test_every_issue_type_exists_with_consistent_spellings(name):
    t = numeric_type(name)
    assert t.name == name and t.ptx == "." + name
    assert numeric_type(t.ptx) is t and numeric_type(t.cpp) is t and numeric_type(t) is t
    assert split_type_codes(t.code) == (t,)


@pytest.mark.parametrize(
    "name, bits, cpp",
    [("f16", 16, "half_t"), ("bf16", 16, "bfloat16_t"), ("tf32", 32, "tfloat32_t"),
     ("e4m3", 8, "float_e4m3_t"), ("e2m1", 4, "float_e2m1_t"), ("s4", 4, "int4b_t"),
     ("b1", 1, "uint1b_t"), ("s32", 32, "int32_t")],
)  # fmt: skip
def test_widths_and_cpp_names(name, bits, cpp):
    assert (numeric_type(name).bits, numeric_type(name).cpp) == (bits, cpp)


def test_unknown_type_names_the_known_ones():
    with pytest.raises(AtomError, match="unknown numeric type 'f17'.*bf16"):
        numeric_type("f17")


def q(name, x):
    return numeric_type(name).quantize(np.asarray(x, dtype=float)).tolist()


def test_f16_rounds_to_nearest_even():
    ulp = 2.0**-10  # binary16 spacing in [1, 2)
    assert q("f16", [1 + ulp / 2, 1 + 1.5 * ulp, 1 + 0.6 * ulp]) == [1.0, 1 + 2 * ulp, 1 + ulp]
    assert q("f16", [65504.0, 70000.0]) == [65504.0, float("inf")]


def test_bf16_rounds_to_nearest_even():
    ulp = 2.0**-7
    assert q("bf16", [1 + ulp / 2, 1 + 1.5 * ulp]) == [1.0, 1 + 2 * ulp]


def test_tf32_drops_low_13_bits_instead_of_rounding():
    ulp = 2.0**-10  # tf32 keeps 10 mantissa bits
    assert q("tf32", [1 + ulp + 0.99 * ulp, -(1 + 0.99 * ulp)]) == [1 + ulp, -1.0]


def test_fp8_fp6_fp4_grids():
    # e4m3 (bias 7, 3 mantissa bits): spacing 1/32 in [0.25, 0.5), max 448
    assert q("e4m3", [0.3, 448.0, -1.0625]) == [0.3125, 448.0, -1.0]
    # e5m2: 2 mantissa bits, spacing 0.25 in [1, 2)
    assert q("e5m2", [1.1, 1.2]) == [1.0, 1.25]
    # e2m1 values: 0, .5, 1, 1.5, 2, 3, 4, 6
    assert q("e2m1", [0.7, 2.6, 5.5, -1.3]) == [0.5, 3.0, 6.0, -1.5]
    # e2m3: 3 mantissa bits, max 7.5; e3m2: max 28
    assert q("e2m3", [7.5, 1.0625]) == [7.5, 1.0]
    assert q("e3m2", [28.0, 1.1]) == [28.0, 1.0]
    # ue8m0: powers of two only
    assert q("ue8m0", [4.0, 0.25]) == [4.0, 0.25]
    assert numeric_type("e4m3").max == 448.0 and numeric_type("e2m1").max == 6.0


def test_integers_round_then_wrap_and_b1_keeps_one_bit():
    assert q("s8", [127, 128, -129, 2.5, 3.5]) == [127, -128, 127, 2, 4]
    assert q("u4", [15, 16, -1]) == [15, 0, 15]
    assert q("s4", [7, 8, -8, -9]) == [7, -8, -8, 7]
    assert q("b1", [0, 1, 2, 3]) == [0, 1, 0, 1]
    assert (numeric_type("s4").min, numeric_type("u8").max) == (-8, 255)


def test_to_host_uses_ml_dtypes_storage():
    assert numeric_type("bf16").to_host([1.0]).dtype.name == "bfloat16"
    assert numeric_type("e4m3").to_host([1.0]).dtype.name == "float8_e4m3fn"
    assert numeric_type("s8").to_host([-3]).dtype == np.int8


def test_type_code_runs():
    assert [t.name for t in split_type_codes("F32E4M3E5M2F32")] == ["f32", "e4m3", "e5m2", "f32"]
    assert split_type_codes("F32F17") is None
    assert type_codes(["s32", "u4", "s4", "s32"]) == "S32U4S4S32"
    assert len(TYPES) >= len(ALL)
