"""Names: every catalog name round-trips, CuTe's other spellings parse to the same
fields, and malformed or impossible names raise AtomError naming the broken rule."""

import pytest

from cutemma.errors import AtomError
from cutemma.mma import format_name, mma_op, mma_ops, parse_name


def test_every_catalog_name_round_trips():
    names = [op.name for arch in (61, 70, 75, 80, 89) for op in mma_ops(arch)]
    names += [op.name for fam in ("sm90.f64", "sm90.c64") for op in mma_ops(family=fam)]
    assert len(names) == len(set(names)) == 92
    for name in names:
        assert format_name(parse_name(name)) == name
        assert mma_op(name).name == name


@pytest.mark.parametrize(
    "text, arch, tokens, template",
    [
        ("SM80_16x8x16_F32BF16BF16F32_TN", 80, ("16x8x16", "F32BF16BF16F32", "TN"), ()),
        (
            "SM90_64x128x16_F32BF16BF16_SS<K,MN>",
            90,
            ("64x128x16", "F32BF16BF16", "SS"),
            ("K", "MN"),
        ),
        ("SM90_64x32x32_F32E4M3E4M3_SS_TN", 90, ("64x32x32", "F32E4M3E4M3", "SS", "TN"), ()),
        ("SM90_SPARSE_64x8x32_F16F16F16_SS", 90, ("SPARSE", "64x8x32", "F16F16F16", "SS"), ()),
        ("SM100_MMA_F16BF16_SS", 100, ("MMA", "F16BF16", "SS"), ()),
        ("SM61_DP4A", 61, ("DP4A",), ()),
    ],
)
def test_forms_parse_into_fields_and_back(text, arch, tokens, template):
    n = parse_name(text)
    assert (n.arch, n.tokens, n.template) == (arch, tokens, template)
    assert n.text == text


def test_cpp_namespace_spellings_fold_to_the_underscore_form():
    assert parse_name("SM90::GMMA::SPARSE::GMMA_64x8x32_F16F16F16_SS").text == (
        "SM90_SPARSE_64x8x32_F16F16F16_SS"
    )
    assert parse_name("SM90::GMMA::MMA_64x8x16_F32F16F16_RS").text == "SM90_64x8x16_F32F16F16_RS"
    assert parse_name("cute::SM80_8x8x4_F64F64F64F64_TN").text == "SM80_8x8x4_F64F64F64F64_TN"
    assert parse_name("SM90_64x128x16_F32BF16BF16_SS< K , MN >").template == ("K", "MN")


def test_shape_and_type_fields():
    n = parse_name("SM89_16x8x32_F32E4M3E5M2F32_TN")
    assert n.shape(0) == (16, 8, 32)
    assert [t.name for t in n.types(1)] == ["f32", "e4m3", "e5m2", "f32"]


@pytest.mark.parametrize(
    "text, rule",
    [
        ("sm80_16x8x8", "must start with SM<arch>"),
        ("SM80", "nothing follows"),
        ("SM80_16x8-8_F16", "bad part"),
        ("SM80_16x8x8_F16F16F16F16_TN<K", "template arguments"),
        ("80_16x8x8_F16F16F16F16_TN", "must start with SM<arch>"),
    ],
)
def test_malformed_names(text, rule):
    with pytest.raises(AtomError, match=rule):
        parse_name(text)


@pytest.mark.parametrize(
    "text, rule",
    [
        # wrong K for the type: f16 at m16n8 is k8/k16; s8 at m16n8 is k16/k32; b1 128/256
        ("SM80_16x8x32_F16F16F16F16_TN", r"wrong K for the type: f16 .* K in \[8, 16\]"),
        ("SM80_16x8x64_S32S8S8S32_TN", r"wrong K for the type: s8 .* K in \[16, 32\]"),
        ("SM80_16x8x64_S32U1U1S32_TN_XORPOPC", r"wrong K for the type: b1 .* \[128, 256\]"),
        ("SM89_16x8x16_F32E4M3E4M3F32_TN", r"wrong K for the type: e4m3"),
        # a shape the type class does not have at all
        ("SM80_32x8x16_F16F16F16F16_TN", "not an sm80 mma.sync shape"),
        # unknown type codes
        ("SM80_16x8x16_F32F17F16F32_TN", "unknown type code in 'F32F17F16F32'"),
        # arch too old for the type / the shape
        ("SM75_16x8x16_F32BF16BF16F32_TN", "arch too old: SM80_16x8x16_F32BF16BF16F32_TN"),
        ("SM75_16x8x16_F32F16F16F32_TN", "sm75 take K in \\[8\\].*arch too old: SM80_"),
        ("SM80_16x8x32_F32E4M3E4M3F32_TN", "arch too old: SM89_16x8x32_F32E4M3E4M3F32_TN"),
        ("SM80_16x8x16_F64F64F64F64_TN", "not an sm80 mma.sync shape for f64.*arch too old: SM90_"),
        # CuTe names by first architecture
        ("SM86_16x8x16_F32F16F16F32_TN", "write SM80_16x8x16_F32F16F16F32_TN"),
        # type combinations, majors and suffixes the ISA does not have
        ("SM80_16x8x16_F16BF16BF16F16_TN", "type combination F16BF16BF16F16"),
        ("SM80_16x8x16_F32F16F16F32_NT", "majors 'NT' is not supported; sm80.f16 supports TN"),
        ("SM70_8x8x4_F32F16F16F32_XY", "majors 'XY' is not a major pair"),
        ("SM80_16x8x16_F32F16F16F32_TN_SATURATE", "suffix 'SATURATE' is not allowed"),
        ("SM80_16x8x256_S32U1U1S32_TN", "suffix '' is not allowed.*_XORPOPC, _ANDPOPC"),
        ("SM99_16x8x16_F32F16F16F32_TN", "write SM80_16x8x16_F32F16F16F32_TN"),
        ("SM99_DP8A", "no MMA families for sm99"),
        ("SM80_DP4A", "write SM61_DP4A"),
        ("SM80_WHATEVER_TN", "no sm80 family takes this name"),
    ],
)
def test_impossible_names_name_the_rule(text, rule):
    with pytest.raises(AtomError, match=rule):
        mma_op(text)


def test_sync_ops_take_no_parameters():
    with pytest.raises(AtomError, match="take no parameters"):
        mma_op("SM80_16x8x16_F32F16F16F32_TN", a_major="K")
