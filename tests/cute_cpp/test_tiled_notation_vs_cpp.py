"""Reading what CuTe prints for TiledMMA work (issue 11 item 15): identity-tensor layouts with
basis strides, partitions of identity tensors (``ArithTuple(..) o layout``), the empty layout,
and the GMMA atoms' ``Sw<..> o smem_ptr[Nb](unset) o layout`` (byte-address swizzle).

The C++ cases print a value and then every element it maps to; the parsed value must print
back the same (underscores aside) and compute the same elements.
"""

from __future__ import annotations

from functools import cache

import pytest

from cute_cpp import harness
from cutemma.errors import LayoutParseError
from cutemma.layout import ComposedLayout, Layout, Swizzle
from cutemma.layout.basis import BasisLayout, ScaledBasis, make_identity_layout
from cutemma.layout.notation import parse_layout

needs_cpp = pytest.mark.skipif(
    harness.unavailable_reason() is not None, reason=str(harness.unavailable_reason())
)

# key -> C++ expression of a tensor or layout over coordinates
CPP = {
    "id2": "make_identity_tensor(make_shape(Int<64>{},Int<64>{}))",
    "id3": "make_identity_tensor(make_shape(Int<4>{},Int<3>{},Int<2>{}))",
    "idnest": "make_identity_tensor(make_shape(Int<2>{},make_shape(Int<2>{},Int<3>{})))",
    "pA": "make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}).get_slice(5)"
    ".partition_A(make_identity_tensor(make_shape(Int<32>{},Int<32>{})))",
    "pC70": "make_tiled_mma(SM70_8x8x4_F32F16F16F32_NT{}).get_slice(17)"
    ".partition_C(make_identity_tensor(make_shape(Int<16>{},Int<8>{})))",
    "div": "zipped_divide(make_identity_tensor(make_shape(Int<8>{},Int<6>{})), "
    "make_shape(Int<4>{},Int<3>{}))",
}


def _case(key: str, expr: str) -> str:
    return (
        f"auto t = {expr};\n"
        f'CASE("{key}|t", t);\n'
        f'printf("{key}|e\\t"); for (int i = 0; i < size(t); ++i) {{ print(t(i)); printf(" "); }}'
        ' printf("\\n");'
    )


@cache
def cpp() -> dict[str, str]:
    return harness.run_cases({k: _case(k, e) for k, e in CPP.items()})


def _zero(s):
    return tuple(_zero(x) for x in s) if isinstance(s, tuple) else 0


def _fmt(c) -> str:
    return "(" + ",".join(_fmt(x) for x in c) + ")" if isinstance(c, tuple) else str(c)


@needs_cpp
@pytest.mark.parametrize("key", sorted(CPP))
def test_coordinate_tensors_parse_and_compute_as_cpp(key):
    text, elems = cpp()[f"{key}|t"], cpp()[f"{key}|e"].split()
    layout = parse_layout(text)
    assert str(layout) == text.replace("_", "")
    assert isinstance(layout, BasisLayout)
    assert [_fmt(layout(i)) for i in range(layout.size())] == [e.replace("_", "") for e in elems]


@needs_cpp
def test_identity_layout_prints_as_cpp():
    for key, shape in (("id2", (64, 64)), ("id3", (4, 3, 2)), ("idnest", (2, (2, 3)))):
        text = cpp()[f"{key}|t"].replace("_", "")
        zero = _fmt(tuple(_zero(s) for s in shape))  # the start coordinate, nested as the shape
        assert f"ArithTuple{zero} o {make_identity_layout(shape)}" == text


def test_empty_layout_round_trips():
    assert parse_layout("():()") == Layout(())
    assert str(parse_layout(str(Layout(())))) == "():()"


def test_gmma_atom_swizzle_is_converted_to_element_units():
    # the swizzle of smem_ptr[Nb] atoms acts on bytes; cutemma's on N-bit elements
    cases = {
        "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)": Swizzle(3, 3, 3),
        "Sw<3,4,3> o smem_ptr[8b](unset) o (_8,_64):(_64,_1)": Swizzle(3, 4, 3),
        "Sw<1,4,3> o smem_ptr[32b](unset) o (_8,_64):(_64,_1)": Swizzle(1, 2, 3),
        "Sw<2,5,2> o smem_ptr[32b](unset) o (_8,_64):(_64,_1)": Swizzle(2, 3, 2),
        "Sw<3,4,3> o smem_ptr[4b](unset) o (_8,_64):(_64,_1)": Swizzle(3, 5, 3),
        "Sw<3,4,3> o 0 o (_8,_64):(_64,_1)": Swizzle(3, 4, 3),  # no pointer: element units
    }
    for text, sw in cases.items():
        assert parse_layout(text) == ComposedLayout(sw, 0, Layout((8, 64), (64, 1))), text


def test_the_element_swizzle_permutes_bytes_as_the_byte_swizzle_does():
    # independent check of the rule: element e of 16 bits sits at bytes 2e, 2e+1
    byte_sw, elem = Swizzle(3, 4, 3), parse_layout("Sw<3,4,3> o smem_ptr[16b](unset) o 8192:1")
    assert all(2 * elem(e) == byte_sw(2 * e) for e in range(8192))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("Sw<3,4,3> o smem_ptr[6b](unset) o (8,64):(64,1)", "power-of-two"),
        ("Sw<3,1,3> o smem_ptr[64b](unset) o (8,64):(64,1)", "no element-unit form"),
        ("(4@0,4):(1,1)", "belong in the stride"),
        ("ArithTuple(1,0) o (4,2):(1,4)", "int strides"),
        ("(4,2):(1@0,3)", "basis"),
    ],
)
def test_bad_notation_names_the_problem(text, match):
    with pytest.raises(LayoutParseError, match=match):
        parse_layout(text)


def test_scaled_basis_prints_innermost_mode_first():
    assert str(ScaledBasis(2, (1, 0))) == "2@0@1"
    assert parse_layout("(2,3):(2@0@1,1@1@1)").stride == (
        ScaledBasis(2, (1, 0)),
        ScaledBasis(1, (1, 1)),
    )
