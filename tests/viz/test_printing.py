"""print() of atoms, TiledMMAs, ThrMMAs, tensors and layouts reads as CuTe's C++ prints it.

The expected text is what CuTe prints for the same object (through tests/cute_cpp/harness.py),
with the underscores of static ints removed. cutemma's headers add what C++ leaves out (the
operation's name, thread count and tile); they are checked on their own.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import cutemma as cm
from cutemma.tensor import format_tensor, print_tensor

harness = pytest.importorskip("cute_cpp.harness")

SEP = "=====CASE====="


def _cpp(cases: dict[str, str]) -> dict[str, str]:
    """Run C++ statements that print, one block per key; returns what each printed."""
    reason = harness.unavailable_reason()
    if reason:
        pytest.skip(reason)
    keys = list(cases)
    body = "\n".join(f'{{ {cases[k]} }} printf("\\n{SEP}\\n");' for k in keys)
    blocks = harness.run(body).split(f"\n{SEP}\n")
    return {k: _no_static(b).rstrip("\n") for k, b in zip(keys, blocks)}


def _no_static(text: str) -> str:
    # CuTe marks static ints with '_' (_16); cutemma's ints are all plain
    return re.sub(r"_(\d)", r"\1", text)


def _cute_headers(text: str) -> str:
    # C++ prints the bare words; cutemma adds the name / threads / tile after them
    return re.sub(r"^(MMA_Atom|TiledMMA|ThrMMA)\b.*$", r"\1", text, flags=re.M)


ATOMS = {
    "sm80_tn": ("SM80_16x8x16_F32F16F16F32_TN", {}, "SM80_16x8x16_F32F16F16F32_TN"),
    "sm70_nt": ("SM70_8x8x4_F32F16F16F32_NT", {}, "SM70_8x8x4_F32F16F16F32_NT"),
    "sm70_f16_tn": ("SM70_8x8x4_F16F16F16F16_TN", {}, "SM70_8x8x4_F16F16F16F16_TN"),
    "sm80_s8": ("SM80_16x8x32_S32S8S8S32_TN", {}, "SM80_16x8x32_S32S8S8S32_TN"),
    "sm90_ss": (
        "SM90_64x128x16_F32BF16BF16_SS",
        {"a_major": "K", "b_major": "MN"},
        "SM90_64x128x16_F32BF16BF16_SS<GMMA::Major::K, GMMA::Major::MN>",
    ),
    "sm90_rs": (
        "SM90_64x64x16_F16F16F16_RS",
        {"a_major": "K", "b_major": "K"},
        "SM90_64x64x16_F16F16F16_RS<GMMA::Major::K, GMMA::Major::K>",
    ),
}

NT = "SM70_8x8x4_F32F16F16F32_NT"
TILED = {
    # the seed's TiledMMAs (seeds/000: 2x2 n-major atoms; 32x32x4 tile; permuted M)
    "nt_2x2": (
        (NT, cm.Layout((2, 2), (2, 1))),
        "make_tiled_mma(SM70_8x8x4_F32F16F16F32_NT{}, Layout<Shape<_2,_2>, Stride<_2,_1>>{})",
    ),
    "nt_2x2_32x32x4": (
        (NT, cm.Layout((2, 2), (2, 1)), (32, 32, 4)),
        "make_tiled_mma(SM70_8x8x4_F32F16F16F32_NT{}, Layout<Shape<_2,_2>, Stride<_2,_1>>{},"
        " Tile<_32,_32,_4>{})",
    ),
    "nt_permuted": (
        (NT, cm.Layout((2, 2), (2, 1)), (cm.Layout((4, 4, 2), (1, 8, 4)), 32, 4)),
        "make_tiled_mma(SM70_8x8x4_F32F16F16F32_NT{}, Layout<Shape<_2,_2>, Stride<_2,_1>>{},"
        " Tile<Layout<Shape<_4,_4,_2>, Stride<_1,_8,_4>>, _32, _4>{})",
    ),
    "sm80_2x2": (
        ("SM80_16x8x16_F32F16F16F32_TN", (2, 2)),
        "make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2>>{})",
    ),
}


@pytest.fixture(scope="module")
def cpp():
    cases = {f"atom/{k}": f"print(MMA_Atom<{c}>{{}});" for k, (_, _, c) in ATOMS.items()}
    cases |= {f"tiled/{k}": f"print({c});" for k, (_, c) in TILED.items()}
    sm80 = TILED["sm80_2x2"][1]
    nt = TILED["nt_2x2"][1]
    perm = TILED["nt_permuted"][1]
    for thr in (5, 37, 100):
        cases[f"thr/sm80/{thr}"] = f"print(({sm80}).get_slice({thr}));"
    cases["thr/nt/16"] = f"print(({nt}).get_slice(16));"
    ident = "make_identity_tensor(make_shape(_{}{{}}, _{}{{}}))"
    cases["part/sm80_C5"] = (
        f"print_tensor(({sm80}).get_slice(5).partition_C({ident.format(64, 64)}));"
    )
    cases["part/sm80_A37"] = (
        f"print_tensor(({sm80}).get_slice(37).partition_A({ident.format(64, 32)}));"
    )
    cases["part/sm80_B100"] = (
        f"print_tensor(({sm80}).get_slice(100).partition_B({ident.format(32, 32)}));"
    )
    cases["part/nt_perm_A0"] = (
        f"print_tensor(({perm}).get_slice(0).partition_A({ident.format(32, 4)}));"
    )
    cases["ident/4x3"] = f"print_tensor({ident.format(4, 3)});"
    cases["ident/nested"] = "print_tensor(make_identity_tensor(make_shape(make_shape(2,2),4)));"
    cases["num/f32_rank3"] = (
        "static float b[24]; for (int i = 0; i < 24; ++i) b[i] = i * 0.5f;"
        "print_tensor(make_tensor(&b[0], make_layout(make_shape(_2{},_3{},_4{}))));"
    )
    cases["num/f64_rank4"] = (
        "static double b[16]; for (int i = 0; i < 16; ++i) b[i] = i * 0.25 - 1;"
        "print_tensor(make_tensor(&b[0], make_layout(make_shape(_2{},_2{},_2{},_2{}))));"
    )
    cases["num/i32_nested"] = (
        "static int b[8]; for (int i = 0; i < 8; ++i) b[i] = 3 * i - 7;"
        "print_tensor(make_tensor(&b[0], make_layout(make_shape(make_shape(_2{},_2{}),_2{}))));"
    )
    cases["num/i32_rank1"] = (
        "static int b[5]; for (int i = 0; i < 5; ++i) b[i] = 100 * i;"
        "print_tensor(make_tensor(&b[0], make_layout(_5{})));"
    )
    cases["num/half_rank2"] = (
        "static half_t b[6]; for (int i = 0; i < 6; ++i) b[i] = half_t(i * 1.5f);"
        "print_tensor(make_tensor(&b[0], make_layout(make_shape(_2{},_3{}), LayoutRight{})));"
    )
    return _cpp(cases)


@pytest.mark.parametrize("key", sorted(ATOMS))
def test_print_atom_is_cutes(cpp, key):
    name, params, _ = ATOMS[key]
    atom = cm.make_mma_atom(name, **params)
    text = str(atom)
    assert _cute_headers(text) == cpp[f"atom/{key}"]
    assert text.splitlines()[0] == f"MMA_Atom {atom.name}"
    assert repr(atom) == text  # the REPL shows the same


@pytest.mark.parametrize("key", sorted(TILED))
def test_print_tiled_mma_is_cutes(cpp, key):
    tiled = cm.make_tiled_mma(*TILED[key][0])
    assert _cute_headers(str(tiled)) == cpp[f"tiled/{key}"]


def test_tiled_header_names_threads_and_tile():
    # 4 quadpairs of 8 threads; Tile<_32,_32,_4> (seeds/000)
    tiled = cm.make_tiled_mma(*TILED["nt_2x2_32x32x4"][0])
    assert str(tiled).splitlines()[0] == "TiledMMA 32 threads, Tile_MNK (32,32,4)"
    # 2x2 atoms of 16x8x16, 32 threads each
    tiled = cm.make_tiled_mma(*TILED["sm80_2x2"][0])
    assert str(tiled).splitlines()[0] == "TiledMMA 128 threads, Tile_MNK (32,16,16)"


@pytest.mark.parametrize("thr", [5, 37, 100])
def test_print_thr_mma_is_cutes(cpp, thr):
    thr_mma = cm.make_tiled_mma(*TILED["sm80_2x2"][0]).get_slice(thr)
    text = str(thr_mma)
    assert _cute_headers(text) == cpp[f"thr/sm80/{thr}"]
    assert text.splitlines()[0] == f"ThrMMA thread {thr}"


def test_print_thr_mma_of_a_quadpair(cpp):
    thr_mma = cm.make_tiled_mma(*TILED["nt_2x2"][0]).get_slice(16)
    assert _cute_headers(str(thr_mma)) == cpp["thr/nt/16"]


PARTS = {
    "sm80_C5": ("sm80_2x2", 5, "C", (64, 64)),
    "sm80_A37": ("sm80_2x2", 37, "A", (64, 32)),
    "sm80_B100": ("sm80_2x2", 100, "B", (32, 32)),
    "nt_perm_A0": ("nt_permuted", 0, "A", (32, 4)),
}


@pytest.mark.parametrize("key", sorted(PARTS))
def test_partitioned_identity_prints_its_coordinates(cpp, key, capsys):
    tiled_key, thr, which, shape = PARTS[key]
    thr_mma = cm.make_tiled_mma(*TILED[tiled_key][0]).get_slice(thr)
    part = getattr(thr_mma, f"partition_{which}")(cm.make_identity_tensor(shape))
    assert format_tensor(part) == cpp[f"part/{key}"]
    assert str(part) == cpp[f"part/{key}"]  # print(part) shows the coordinates too
    print_tensor(part)
    assert capsys.readouterr().out.rstrip("\n") == cpp[f"part/{key}"]


def test_identity_tensors_print_as_cute(cpp):
    assert str(cm.make_identity_tensor((4, 3))) == cpp["ident/4x3"]
    assert str(cm.make_identity_tensor(((2, 2), 4))) == cpp["ident/nested"]


def _body(text: str) -> list[str]:
    return text.splitlines()[1:]


def _layout_of(header: str) -> str:
    # C++ prints the address, cutemma the element offset: compare what follows " o "
    return header.split(" o ", 1)[1]


NUMERIC = {
    "f32_rank3": (np.arange(24, dtype=np.float32) * 0.5, cm.Layout((2, 3, 4))),
    "f64_rank4": (np.arange(16) * 0.25 - 1, cm.Layout((2, 2, 2, 2))),
    "i32_nested": (np.arange(8, dtype=np.int32) * 3 - 7, cm.Layout(((2, 2), 2))),
    "i32_rank1": (np.arange(5, dtype=np.int32) * 100, cm.Layout(5)),
    "half_rank2": (np.arange(6, dtype=np.float16) * 1.5, cm.Layout((2, 3), (3, 1))),
}


@pytest.mark.parametrize("key", sorted(NUMERIC))
def test_numeric_tensors_print_as_cute(cpp, key):
    data, layout = NUMERIC[key]
    ours = format_tensor(cm.make_tensor(data, layout))
    theirs = cpp[f"num/{key}"]
    assert _body(ours) == _body(theirs)
    assert _layout_of(ours.splitlines()[0]) == _layout_of(theirs.splitlines()[0])
    bits = data.dtype.itemsize * 8
    assert ours.startswith(f"ptr[{bits}b](data+0) o ")


def test_big_tensor_str_is_summarised():
    t = cm.make_identity_tensor((256, 256))
    text = str(t)
    assert text.splitlines()[0] == "ArithTuple(0,0) o (256,256):(1@0,1@1):"
    assert "65536 elements" in text and len(text) < 200
    assert format_tensor(t).count("\n") == 256  # print_tensor prints every row


def test_layout_repr_is_cute_notation():
    L = cm.Layout(((4, 8), (2, 2)), ((32, 1), (16, 8)))
    assert repr(L) == "((4,8),(2,2)):((32,1),(16,8))" == str(L)
    assert cm.Layout.parse(repr(L)) == L
    sw = cm.composition(cm.Swizzle(3, 4, 3), cm.Layout((8, 64), (64, 1)))
    assert repr(sw) == "Sw<3,4,3> o 0 o (8,64):(64,1)"
    assert repr(cm.Swizzle(2, 3, 3)) == "Sw<2,3,3>"
    assert repr([cm.Layout(4), cm.Layout(2, 8)]) == "[4:1, 2:8]"


# docs/descriptors.md "Swizzle units": CuTe prints byte swizzles next to a smem_ptr[Nb] and
# element-unit ones when made position independent; cutemma's atoms are the element form.
SMEM_ATOMS = [
    ("K", "SW128", "f16", "half_t"),
    ("K", "SW64", "tf32", "tfloat32_t"),
    ("K", "INTER", "bf16", "bfloat16_t"),
    ("K", "SW32", "u8", "uint8_t"),
    ("MN", "SW64", "f32", "float"),
    ("MN", "SW128", "bf16", "bfloat16_t"),
    ("MN", "SW32", "e4m3", "float_e4m3_t"),
]
_SMEM_PTR = re.compile(r"^Sw<(\d+),(\d+),(\d+)> o smem_ptr\[(\d+)b\]\(unset\) o (.*)$")


@pytest.fixture(scope="module")
def cpp_smem_atoms():
    cases = {}
    for major, sw, _, ctype in SMEM_ATOMS:
        atom = f"GMMA::Layout_{major}_{sw}_Atom<{ctype}>{{}}"
        cases[f"{major}/{sw}/{ctype}/bytes"] = f"print({atom});"
        cases[f"{major}/{sw}/{ctype}/elements"] = (
            f"print(as_position_independent_swizzle_layout({atom}));"
        )
    reason = harness.unavailable_reason()
    if reason:
        pytest.skip(reason)
    keys = list(cases)
    body = "\n".join(f'{{ {cases[k]} }} printf("\\n{SEP}\\n");' for k in keys)
    out = harness.run(body, headers=("cute/atom/mma_traits_sm90_gmma.hpp",))
    return {k: _no_static(b).strip() for k, b in zip(keys, out.split(f"\n{SEP}\n"))}


@pytest.mark.parametrize("major,sw,dtype,ctype", SMEM_ATOMS)
def test_swizzle_atoms_are_cutes_element_form(cpp_smem_atoms, major, sw, dtype, ctype):
    ours = cm.gmma_layout_atom(major, sw, dtype)
    key = f"{major}/{sw}/{ctype}"
    # CuTe's position-independent form is the element form, offset printed as _0 (CuTe drops
    # a swizzle of 0 bits, the identity, altogether)
    want = cpp_smem_atoms[f"{key}/elements"]
    assert (str(ours) if ours.outer.bits else str(ours.inner)) == want
    # and the byte form maps onto it by the rule the docs give: M - log2(bits / 8)
    b, m, s, bits, inner = _SMEM_PTR.match(cpp_smem_atoms[f"{key}/bytes"]).groups()
    b, m, s, bits = int(b), int(m), int(s), int(bits)
    shift = (bits // 8).bit_length() - 1 if bits >= 8 else -((8 // bits).bit_length() - 1)
    assert (ours.outer.bits, ours.outer.base, ours.outer.shift) == (b, m - shift, s)
    assert str(ours.inner) == inner


GMMA_RAWS = [0x4000004000010040, 0x8000004000200000, 0xC000000000000001, 0x0000002000080010,
             0x40000040000100A0 | (3 << 49)]  # fmt: skip


def test_print_gmma_descriptor_is_cutes():
    reason = harness.unavailable_reason()
    if reason:
        pytest.skip(reason)
    body = "\n".join(
        f'print(GmmaDescriptor(uint64_t({raw:#x}ull))); printf("{SEP}\\n");' for raw in GMMA_RAWS
    )
    out = harness.run(body, headers=("cute/arch/mma_sm90_desc.hpp",)).split(f"{SEP}\n")
    for raw, text in zip(GMMA_RAWS, out):
        assert str(cm.decode_gmma_desc(raw)) == text.rstrip("\n")
