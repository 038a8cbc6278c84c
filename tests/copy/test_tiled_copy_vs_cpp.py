"""TiledCopy constructions equal CuTe C++'s: layouts, tilers and what each thread's partitions hold.

For each construction (from a TiledMMA with LDSM/STSM/UniversalCopy atoms, from thread and
value layouts with cp.async, and make_tiled_copy_S/D of those), C++ prints TiledLayout_TV,
Tiler_MN, get_layoutS_TV, get_layoutD_TV, and, for a sample of threads, the layout and the
coordinates of ``partition_S`` / ``partition_D`` of an identity tensor two tiles by two tiles,
and ``retile_D`` of the MMA's register fragment; cutemma must print the same.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from cpp_copy import assert_same_layout as _assert_same_layout
from cpp_copy import cute_text, run

from cutemma.copy import make_copy_atom
from cutemma.layout import Layout
from cutemma.tensor import Tensor, make_identity_tensor
from cutemma.tiled import (
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_copy_D,
    make_tiled_copy_S,
    make_tiled_mma,
)

_CPP_T = {"f16": "half_t", "f32": "float", "bf16": "bfloat16_t", "tf32": "tfloat32_t"}

# (key, mma name, atom layout, permutation (C++ Tile<...> text or None, cutemma tuple),
#  which operand, copy atom, value type)
MMA_CASES = [
    ("A_ldsm4", "SM80_16x8x16_F16F16F16F16_TN", (1, 1), None, "A", "SM75_U32x4_LDSM_N", "f16"),
    ("A_ldsm4_2x2", "SM80_16x8x16_F16F16F16F16_TN", (2, 2), None, "A", "SM75_U32x4_LDSM_N", "f16"),
    ("A_ldsm2_2x2", "SM80_16x8x16_F32F16F16F32_TN", (2, 2), None, "A", "SM75_U32x2_LDSM_N", "f16"),
    ("A_ldsmT_2x2", "SM80_16x8x16_F32F16F16F32_TN", (2, 2), None, "A", "SM75_U16x8_LDSM_T", "f16"),
    ("B_ldsm2", "SM80_16x8x16_F16F16F16F16_TN", (1, 1), None, "B", "SM75_U32x2_LDSM_N", "f16"),
    (
        "B_ldsm2_2x2",
        "SM80_16x8x16_F32BF16BF16F32_TN",
        (2, 2),
        None,
        "B",
        "SM75_U32x2_LDSM_N",
        "bf16",
    ),
    ("B_ldsmT_4x1", "SM80_16x8x16_F32F16F16F32_TN", (4, 1), None, "B", "SM75_U16x4_LDSM_T", "f16"),
    (
        "B_ldsm4_perm",
        "SM80_16x8x16_F32F16F16F32_TN",
        (2, 2),
        ("Tile<_32,_32,_16>", (32, 32, 16)),
        "B",
        "SM75_U32x4_LDSM_N",
        "f16",
    ),
    (
        "A_ldsm4_perm",
        "SM80_16x8x16_F32F16F16F32_TN",
        (2, 2),
        ("Tile<_32,_32,_16>", (32, 32, 16)),
        "A",
        "SM75_U32x4_LDSM_N",
        "f16",
    ),
    (
        "C_stsm4_perm",
        "SM80_16x8x16_F16F16F16F16_TN",
        (2, 2),
        ("Tile<_32,_32,_16>", (32, 32, 16)),
        "C",
        "SM90_U32x4_STSM_N",
        "f16",
    ),
    ("C_stsm2", "SM80_16x8x16_F16F16F16F16_TN", (1, 1), None, "C", "SM90_U32x2_STSM_N", "f16"),
    ("C_stsmT", "SM80_16x8x16_F16F16F16F16_TN", (2, 1), None, "C", "SM90_U16x4_STSM_T", "f16"),
    (
        "C_u32_f16",
        "SM80_16x8x16_F16F16F16F16_TN",
        (2, 2),
        None,
        "C",
        "UniversalCopy<uint32_t>",
        "f16",
    ),
    (
        "C_u16_f16",
        "SM80_16x8x16_F16F16F16F16_TN",
        (1, 2),
        None,
        "C",
        "UniversalCopy<uint16_t>",
        "f16",
    ),
    (
        "C_u64_f32",
        "SM80_16x8x8_F32TF32TF32F32_TN",
        (2, 2),
        None,
        "C",
        "UniversalCopy<uint64_t>",
        "f32",
    ),
    (
        "A_u32_tf32",
        "SM80_16x8x8_F32TF32TF32F32_TN",
        (2, 1),
        None,
        "A",
        "UniversalCopy<uint32_t>",
        "tf32",
    ),
]

# (key, copy atom, value type, thread layout, value layout) for make_tiled_copy
TV_CASES = [
    ("cpa_k", "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f16", ((16, 8), (8, 1)), ((1, 8), (1, 1))),
    ("cpa_m", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "f16", ((16, 8), (1, 16)), ((8, 1), (1, 1))),
    ("cpa_f32", "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f32", ((32, 4), (4, 1)), ((1, 4), (1, 1))),
    ("cpa_64", "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>", "bf16", ((8, 16), (16, 1)), ((1, 4), (1, 1))),
    (
        "cpa_32x2",
        "SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint32_t>",
        "f16",
        ((32, 4), (4, 1)),
        ((1, 4), (1, 2)),
    ),
    (
        "cpa_z",
        "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>",
        "f16",
        ((8, 32), (32, 1)),
        ((1, 8), (1, 1)),
    ),
    ("u128_2v", "UniversalCopy<uint128_t>", "f16", ((4, 8), (1, 4)), ((8, 2), (1, 8))),
]

THREADS = (0, 1, 5, 17, 31, 63, 100, 127)


def _lay_cpp(shape_stride) -> str:
    (s, d) = shape_stride
    return f"make_layout(make_shape({','.join(f'Int<{x}>{{}}' for x in s)}), make_stride({','.join(f'Int<{x}>{{}}' for x in d)}))"


def _cpp_body(key: str, make: str, tile: tuple, extra: str = "") -> str:
    m, n = tile
    thr = " ".join(
        f"if ({t} < size(tc)) {{ auto th = tc.get_slice({t}); "
        f'CASE("{key}", th.partition_S(T).layout()); show("{key}", th.partition_S(I)); '
        f'CASE("{key}", th.partition_D(T).layout()); show("{key}", th.partition_D(I)); }}'
        for t in THREADS
    )
    return (
        'auto show = [](const char* k, auto const& p) { printf("%s\\t", k); '
        'for (int i = 0; i < size(p); ++i) { print(p(i)); printf(" "); } printf("\\n"); }; '
        f"{make} "
        f'CASE("{key}", typename decltype(tc)::TiledLayout_TV{{}}); '
        f'CASE("{key}", typename decltype(tc)::Tiler_MN{{}}); '
        f'CASE("{key}", tc.get_layoutS_TV()); CASE("{key}", tc.get_layoutD_TV()); '
        f"auto I = make_identity_tensor(make_shape(Int<{2 * m}>{{}}, Int<{2 * n}>{{}})); "
        f"auto T = make_tensor((float*)nullptr, make_shape(Int<{2 * m}>{{}}, Int<{2 * n}>{{}})); "
        f"{thr} {extra}"
    )


def _mma_cpp(case) -> str:
    key, mma, atom_layout, perm, which, cop, vt = case
    lay = f"Layout<Shape<{','.join(f'_{x}' for x in atom_layout)}>>{{}}"
    mma_expr = f"make_tiled_mma({mma}{{}}, {lay}" + (f", {perm[0]}{{}})" if perm else ")")
    make = (
        f"auto mma = {mma_expr}; "
        f"auto tc = make_tiled_copy_{which}(Copy_Atom<{cop}, {_CPP_T[vt]}>{{}}, mma);"
    )
    sizes = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}[which]
    # retile_D of the MMA fragment this copy feeds (or, for C, reads)
    extra = (
        f"auto thr_mma = mma.get_slice(0); auto frag = thr_mma.partition_fragment_{which}("
        f"make_tensor((float*)nullptr, make_shape(tile_size<{sizes[0]}>(mma)*_2{{}}, "
        f"tile_size<{sizes[1]}>(mma)*_2{{}}))); "
        f'CASE("{key}/frag", frag.layout()); '
        f'CASE("{key}/frag", tc.get_slice(0).retile_D(frag).layout());'
    )
    return make, extra


def _tv_cpp(case) -> str:
    key, cop, vt, thr, val = case
    return (
        f"auto tc = make_tiled_copy(Copy_Atom<{cop}, {_CPP_T[vt]}>{{}}, {_lay_cpp(thr)}, "
        f"{_lay_cpp(val)});"
    )


def _mine_mma(case):
    key, mma, atom_layout, perm, which, cop, vt = case
    tm = make_tiled_mma(mma, atom_layout, perm[1] if perm else None)
    fn = {"A": make_tiled_copy_A, "B": make_tiled_copy_B, "C": make_tiled_copy_C}[which]
    return tm, fn(make_copy_atom(cop, vt), tm)


def _mine_tv(case):
    key, cop, vt, thr, val = case
    return make_tiled_copy(make_copy_atom(cop, vt), Layout(*thr), Layout(*val))


@cache
def _cpp() -> dict[str, str]:
    cases = {}
    for case in MMA_CASES:
        make, extra = _mma_cpp(case)
        tile = _mine_mma(case)[1].tiler_mn
        cases[case[0]] = _cpp_body(case[0], make, tile, extra)
        # make_tiled_copy_S/D of that TiledCopy, with UniversalCopy of the same width
        key = case[0] + "/SD"
        make_sd = (
            make
            + f" auto tcS = make_tiled_copy_S(Copy_Atom<UniversalCopy<uint16_t>, {_CPP_T[case[6]]}>{{}}, tc);"
            + f" auto tcD = make_tiled_copy_D(Copy_Atom<UniversalCopy<uint16_t>, {_CPP_T[case[6]]}>{{}}, tc);"
        )
        cases[key] = (
            f"{make_sd} "
            f'CASE("{key}", typename decltype(tcS)::TiledLayout_TV{{}}); '
            f'CASE("{key}", typename decltype(tcD)::TiledLayout_TV{{}});'
        )
    for case in TV_CASES:
        tc = _mine_tv(case)
        cases[case[0]] = _cpp_body(case[0], _tv_cpp(case), tc.tiler_mn)
    return run(cases, per_program=28)  # two programs: the two cores compile in parallel


def cpp_prefetch() -> None:
    """The C++ this file's tests compile, for tests/cute_cpp/prefetch.py (same calls, cached)."""
    _cpp()


def _assert_lines(mine: list[str], cpp: list[str]) -> None:
    assert len(mine) == len(cpp)
    for m, c in zip(mine, cpp):
        if ":" in m:  # a layout line; coordinate lines hold no colon
            _assert_same_layout(m, c)
        else:
            assert m == c


def _fmt(c) -> str:
    return "(" + ",".join(str(x) for x in c) + ")" if isinstance(c, tuple) else str(c)


def _mine_lines(tc) -> list[str]:
    m, n = tc.tiler_mn
    ident = make_identity_tensor((2 * m, 2 * n))
    plain = Tensor(np.zeros(4 * m * n), Layout((2 * m, 2 * n)))
    lines = [
        str(tc.layout_tv_tiled),
        "(" + ",".join(str(x) for x in tc.tiler_mn) + ")",
        str(tc.layout_src_tv_tiled),
        str(tc.layout_dst_tv_tiled),
    ]
    for t in THREADS:
        if t >= tc.size:
            continue
        thr = tc.get_slice(t)
        for part in (thr.partition_S, thr.partition_D):
            lines.append(str(part(plain).layout))
            lines.append(" ".join(_fmt(x) for x in part(ident).tolist()) + " ")
    return lines


@pytest.mark.parametrize("case", MMA_CASES, ids=[c[0] for c in MMA_CASES])
def test_tiled_copy_from_mma_equals_cute(case):
    tm, tc = _mine_mma(case)
    got = _cpp()[case[0]].split("\n")
    _assert_lines(_mine_lines(tc), [cute_text(g) for g in got])


@pytest.mark.parametrize("case", MMA_CASES, ids=[c[0] for c in MMA_CASES])
def test_retile_of_mma_fragment_equals_cute(case):
    tm, tc = _mine_mma(case)
    frag_text, retiled = _cpp()[case[0] + "/frag"].split("\n")
    frag = Layout.parse(cute_text(frag_text))
    out = tc.get_slice(0).retile_D(Tensor(np.zeros(frag.cosize()), frag)).layout
    _assert_same_layout(str(out), cute_text(retiled))


@pytest.mark.parametrize("case", MMA_CASES, ids=[c[0] for c in MMA_CASES])
def test_tiled_copy_S_D_equal_cute(case):
    _, tc = _mine_mma(case)
    u16 = make_copy_atom("UniversalCopy<uint16_t>", case[6])
    got = _cpp()[case[0] + "/SD"].split("\n")
    mine = [make_tiled_copy_S(u16, tc).layout_tv_tiled, make_tiled_copy_D(u16, tc).layout_tv_tiled]
    assert [str(x) for x in mine] == [cute_text(g) for g in got]


@pytest.mark.parametrize("case", TV_CASES, ids=[c[0] for c in TV_CASES])
def test_tiled_copy_from_thr_val_equals_cute(case):
    tc = _mine_tv(case)
    got = _cpp()[case[0]].split("\n")
    _assert_lines(_mine_lines(tc), [cute_text(g) for g in got])
