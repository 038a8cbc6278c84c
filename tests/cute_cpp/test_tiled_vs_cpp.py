"""TiledMMA against CuTe C++: every sm61-sm90 warp-level atom and a sample of GMMA atoms.

Each atom is tiled three ways (one atom; a 2x2 / 2x1 atom layout; an atom layout with a
scatter permutation of M and a value tile of N), and for each TiledMMA the suite compares,
with what C++'s ``make_tiled_mma`` gives: ``thr_layout_vmnk``, ``get_layoutA/B/C_TV`` (shape
and stride exactly), the tile size, and ``get_slice(t).partition_A/B/C`` of identity tensors
(their shape and every coordinate) for three threads. All C++ cases are compiled in a few
batched programs (cached by source hash: a second run compiles nothing).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from cute_cpp import harness
from cutemma.emit import to_cpp
from cutemma.emit.cpp_atoms import mma_op_cpp
from cutemma.emit.cpp_layouts import tiler_type
from cutemma.layout import Layout, size
from cutemma.layout.notation import parse_int_tuple, parse_layout
from cutemma.layout.offsets import offsets
from cutemma.mma import catalog
from cutemma.tensor import make_identity_tensor
from cutemma.tiled import make_tiled_mma
from cutemma.tiled.tiled_mma import tv_offsets

pytestmark = pytest.mark.skipif(
    harness.unavailable_reason() is not None, reason=str(harness.unavailable_reason())
)

# (name, a_major, b_major) of the GMMA sample: several N, SS and RS, both majors, all dtypes
GMMA_SAMPLE = (
    ("SM90_64x8x16_F16F16F16_SS", "K", "K"),
    ("SM90_64x64x16_F32F16F16_SS", "MN", "K"),
    ("SM90_64x128x16_F32BF16BF16_RS", "K", "MN"),
    ("SM90_64x256x16_F16F16F16_RS", "K", "K"),
    ("SM90_64x32x8_F32TF32TF32_SS_TN", None, None),
    ("SM90_64x96x32_F32E4M3E5M2_RS_TN", None, None),
    ("SM90_64x16x32_S32S8U8_SS_TN", None, None),
    ("SM90_64x192x32_F16E5M2E5M2_SS_TN", None, None),
)


def _headers_text() -> str:
    root = Path(harness.include_dirs()[0]) / "cute" / "atom"
    return "".join(p.read_text() for p in sorted(root.glob("mma_traits_sm[6-9]*.hpp")))


@cache
def cpp_warp_atoms() -> frozenset[str]:
    """Names CuTe 4.2 gives MMA_Traits (or an alias) for, sm61-sm90 warp level."""
    text = _headers_text()
    names = set(re.findall(r"MMA_Traits<\s*(SM[0-9]+_[A-Za-z0-9_]+)\s*>", text))
    names |= set(re.findall(r"using\s+(SM[0-9]+_[A-Za-z0-9_]+)\s*=", text))
    return frozenset(names)


def warp_atoms() -> list[str]:
    """Every sm61-sm90 warp-level atom of the catalog (GMMA excluded)."""
    out = []
    for arch in (61, 70, 75, 80, 89, 90):
        out += [op.name for op in catalog.mma_ops(arch) if "gmma" not in op.family]
    return out


def _cpp_layout(layout: Layout) -> str:
    return to_cpp(layout, type=True)


def _cpp_atom(name: str, a_major, b_major) -> str:
    """The operation's C++ value (to_cpp's spelling; make_tiled_mma takes an Op or an Atom)."""
    params = {} if a_major is None else {"a_major": a_major, "b_major": b_major}
    return mma_op_cpp(catalog.make_mma_atom(name, **params).op) + "{}"


def configs(shape_mnk) -> list[tuple[str, Layout, tuple]]:
    """Three tilings of an atom of ``shape_mnk``: one atom; 2x2 (2x1 for 64-row GMMA)
    n-major atoms; 2x1 atoms with M scattered by a transposition and N tiled twice over."""
    m, n, _ = shape_mnk
    big = m >= 64
    two = Layout((2, 1, 1), (1, 0, 0)) if big else Layout((2, 2, 1), (2, 1, 0))
    pm = 2 * m
    perm_m = Layout((2, pm // 2), (pm // 2, 1)) if pm >= 4 else Layout(pm)
    return [
        ("one", Layout((1, 1, 1), (0, 0, 0)), (None, None, None)),
        ("two", two, (None, None, None)),
        ("perm", Layout((2, 1, 1), (1, 0, 0)), (perm_m, 2 * n, None)),
    ]


# seed 004's TiledMMAs of SM70_8x8x4_F32F16F16F32_NT (its 2x2 n-major one is config "two")
SEED_ATOM = "SM70_8x8x4_F32F16F16F32_NT"
SEED_CONFIGS = [
    ("seed_tile884", Layout((1, 1, 1), (0, 0, 0)), (8, 8, 4)),
    ("seed_32x32x4", Layout((2, 2, 1), (2, 1, 0)), (32, 32, 4)),
    ("seed_permM", Layout((2, 2, 1), (2, 1, 0)), (Layout((4, 4, 2), (1, 8, 4)), 32, 4)),
]


def _threads(count: int) -> tuple[int, ...]:
    """Three thread indices of the TV layouts' range (0..31 for a lone SM70 atom, so 17 and
    31 are a quadpair thread and one the atom does not use)."""
    return tuple(sorted({0, min(count - 1, count // 2 + 1), count - 1}))


_TRAITS = ("Shape_MNK", "ThrID", "ALayout", "BLayout", "CLayout")


@cache
def cpp_traits() -> dict[str, tuple[str, ...]]:
    """C++'s (Shape_MNK, ThrID, ALayout, BLayout, CLayout) of every warp atom, as printed."""
    names = [n for n in warp_atoms() if n in cpp_warp_atoms()]
    src = {
        n: " ".join(f'CASE("{n}|{t}", typename MMA_Traits<{n}>::{t}{{}});' for t in _TRAITS)
        for n in names
    }
    got = harness.run_cases(src, per_program=len(src))
    return {n: tuple(_strip(got[f"{n}|{t}"]) for t in _TRAITS) for n in names}


# C++ traits that are not a correct layout of the instruction (docs: cutemma/mma/arch/sm80.py):
# name pattern -> (trait, C++'s text, the PTX ISA's layout cutemma uses)
CPP_TRAIT_DEFECTS = {
    # stride nested one level deeper than the shape: not a layout at all
    r"SM80_16x8x128_S32U1U1S32_TN_.*": (
        "ALayout",
        "((4,8),(32,2)):((512,1),((16,8)))",
        "((4,8),(32,2)):((512,1),(16,8))",
    ),
    # k = 4*thread_in_group + i instead of the ISA's 8*thread_in_group + i: B elements twice
    r"SM80_16x8x32_S32[SU]4[SU]4S32_TN.*": (
        "BLayout",
        "((4,8),(8)):((32,1),(8))",
        "((4,8),(8)):((64,1),(8))",
    ),
}


def _defect(name: str):
    return next((d for p, d in CPP_TRAIT_DEFECTS.items() if re.fullmatch(p, name)), None)


def _traits_text(name: str) -> tuple[str, ...]:
    atom = catalog.make_mma_atom(name)
    layouts = (atom.thr_id, atom.tv_layout_A, atom.tv_layout_B, atom.tv_layout_C)
    return (_fmt_crd(atom.shape_mnk), *map(str, layouts))


def representatives() -> dict[str, str]:
    """Warp atom -> the first atom with the same traits (its TiledMMAs are computed from the
    traits alone, so one TiledMMA check per distinct set of traits covers them all).

    Grouped by cutemma's traits, not C++'s: collecting this file compiles no C++ (a broken
    CXX or cache is then a failure of the tests that need C++, not of collection), and
    test_warp_atom_traits_match_cpp holds the two equal for every atom grouped here. Atoms
    whose C++ traits are defective are left out: C++ tiles the defect."""
    first: dict[tuple, str] = {}
    names = [n for n in warp_atoms() if n in cpp_warp_atoms() and not _defect(n)]
    return {n: first.setdefault(_traits_text(n), n) for n in names}


def all_cases() -> dict[str, tuple]:
    """key -> (atom name, a_major, b_major, config name, atom layout, permutations)."""
    out = {}
    reps = sorted(set(representatives().values()), key=warp_atoms().index)
    atoms = [(n, None, None) for n in reps] + list(GMMA_SAMPLE)
    for name, am, bm in atoms:
        params = {} if am is None else {"a_major": am, "b_major": bm}
        shape = catalog.make_mma_atom(name, **params).shape_mnk
        extra = SEED_CONFIGS if name == SEED_ATOM else []
        for cfg, layout, perms in configs(shape) + extra:
            key = f"{name}<{am},{bm}>/{cfg}" if am else f"{name}/{cfg}"
            out[key] = (name, am, bm, cfg, layout, perms)
    return out


def _cpp_case(key: str, case: tuple, threads: tuple[int, ...]) -> str:
    name, am, bm, _, layout, perms = case
    lines = [
        f"auto tm = make_tiled_mma({_cpp_atom(name, am, bm)}, {_cpp_layout(layout)}{{}}, "
        f"{tiler_type(perms)}{{}});",
        f'CASE("{key}|vmnk", tm.get_thr_layout_vmnk());',
        f'CASE("{key}|A", tm.get_layoutA_TV());',
        f'CASE("{key}|B", tm.get_layoutB_TV());',
        f'CASE("{key}|C", tm.get_layoutC_TV());',
        f'CASE("{key}|tile", tile_shape(tm));',
        "auto tA = make_identity_tensor(make_shape(tile_size<0>(tm) * Int<2>{}, tile_size<2>(tm)));",
        "auto tB = make_identity_tensor(make_shape(tile_size<1>(tm), tile_size<2>(tm) * Int<2>{}));",
        "auto tC = make_identity_tensor(make_shape(tile_size<0>(tm), tile_size<1>(tm) * Int<2>{}));",
    ]
    # one loop over run-time thread indices, so the partitions are instantiated once; each
    # prints as CuTe prints a coordinate tensor, "ArithTuple(..) o layout" (basis strides)
    lines.append(f"for (int t : {{{', '.join(map(str, threads))}}}) {{ auto s = tm.get_slice(t);")
    for w in "ABC":
        lines.append(
            f'  printf("{key}|p{w}%d\\t", t); print(s.partition_{w}(t{w})); printf("\\n");'
        )
    lines.append("}")
    return "\n".join(lines)


@cache
def _cpp_results_or_error():
    cases = all_cases()
    threads = {k: _threads(_tiled(c).thread_count) for k, c in cases.items()}
    src = {k: _cpp_case(k, c, threads[k]) for k, c in cases.items()}
    try:
        return (cases, harness.run_cases(src, per_program=16)), None
    except harness.CompileFailed as e:  # kept, so one failed build is not retried per test
        return None, e.errors


def cpp_prefetch() -> None:
    """The C++ this file's tests compile, for tests/cute_cpp/prefetch.py (same calls, cached)."""
    _cpp_results_or_error()


def cpp_results() -> tuple[dict[str, tuple], dict[str, str]]:
    res, err = _cpp_results_or_error()
    if err is not None:  # an empty message is still a failure
        pytest.fail(f"the C++ cases did not compile:\n{err}")
    return res


@cache
def _tiled(case: tuple):
    name, am, bm, _, layout, perms = case
    params = {} if am is None else {"a_major": am, "b_major": bm}
    return make_tiled_mma(name, layout, perms, **params)


def _fmt_crd(c) -> str:
    if isinstance(c, tuple):
        return "(" + ",".join(_fmt_crd(x) for x in c) + ")"
    return str(c)


def _partition_coords(tiled, thr: int, which: str) -> tuple:
    """(shape, every coordinate) of thread ``thr``'s partition of an identity tensor."""
    M, N, K = tiled.tile_size_mnk
    shape = {"A": (2 * M, K), "B": (N, 2 * K), "C": (M, 2 * N)}[which]
    t = getattr(tiled.get_slice(thr), f"partition_{which}")(make_identity_tensor(shape))
    return t.shape, [t(i) for i in range(t.size())]


def _cpp_coords(text: str) -> tuple:
    """The same from C++'s print of the partition (parsed as a BasisLayout)."""
    view = parse_layout(text)
    return view.shape, [view(i) for i in range(view.size())]


def _strip(text: str) -> str:
    return text.replace("_", "")


CASE_KEYS = sorted(all_cases()) if harness.unavailable_reason() is None else []


def _views(tiled) -> dict:
    return {
        "vmnk": tiled.thr_layout_vmnk,
        "A": tiled.tv_layout_A_tiled,
        "B": tiled.tv_layout_B_tiled,
        "C": tiled.tv_layout_C_tiled,
    }


def _table(layout) -> list[int]:
    return offsets(layout).tolist()


def _member_rows(tiled, layout) -> list[int]:
    """The TV layout's values on the rows of the TiledMMA's own threads."""
    table = tv_offsets(layout)
    return table[sorted(tiled._thr_coords)].tolist()


@cache
def _compare(key: str) -> tuple[list[str], list[str], list[str]]:
    """Differences (in value; in the rows of threads outside the TiledMMA only; only in how
    a same function is nested)."""
    cases, got = cpp_results()
    tiled = _tiled(cases[key])
    wrong, alias, nesting = [], [], []
    for view, mine in _views(tiled).items():
        want = parse_layout(got[f"{key}|{view}"])
        if mine != want:
            what = f"{view}: cutemma {mine}, C++ {want}"
            if _table(mine) == _table(want):
                nesting.append(what)
            elif view != "vmnk" and _member_rows(tiled, mine) == _member_rows(tiled, want):
                alias.append(what)
            else:
                wrong.append(what)
    if tiled.tile_size_mnk != parse_int_tuple(got[f"{key}|tile"]):
        wrong.append(f"tile: cutemma {tiled.tile_size_mnk}, C++ {got[f'{key}|tile']}")
    for thr in _threads(tiled.thread_count):
        for w in "ABC":
            text = got[f"{key}|p{w}{thr}"]
            (mshape, mcrd), (wshape, wcrd) = _partition_coords(tiled, thr, w), _cpp_coords(text)
            what = f"partition_{w} of thread {thr}: cutemma {mshape} {mcrd[:6]}..., C++ {text}"
            if mcrd != wcrd or size(Layout(mshape)) != size(Layout(wshape)):
                wrong.append(what)
            elif mshape != wshape:
                nesting.append(what)
    return wrong, alias, nesting


@pytest.mark.parametrize("key", CASE_KEYS)
def test_tiled_mma_computes_what_cpp_computes(key):
    # every view as a function: TV layouts and thr_layout_vmnk index by index, the tile size,
    # and each partition's coordinates in order
    wrong, alias, _ = _compare(key)
    assert not wrong, f"{key}:\n" + "\n".join(wrong)
    # a lone SM70 atom: threads 4-15, 20-31 are outside the atom; C++ gives their rows too
    assert not alias, f"{key}: rows of threads outside the TiledMMA differ:\n" + "\n".join(alias)


@pytest.mark.parametrize("key", CASE_KEYS)
def test_tiled_mma_prints_what_cpp_prints(key):
    # shapes and strides exactly, nesting included
    wrong, alias, nesting = _compare(key)
    assert not wrong, f"{key}:\n" + "\n".join(wrong)
    assert not (alias or nesting), f"{key} nested differently:\n" + "\n".join(alias + nesting)


@pytest.mark.parametrize(
    "name",
    [n for n in warp_atoms() if n in cpp_warp_atoms()]
    if harness.unavailable_reason() is None
    else [],
)
def test_warp_atom_traits_match_cpp(name):
    # what makes the representative's TiledMMA checks stand for this atom too
    atom = catalog.make_mma_atom(name)
    mine = (
        _fmt_crd(atom.shape_mnk),
        str(atom.thr_id),
        str(atom.tv_layout_A),
        str(atom.tv_layout_B),
        str(atom.tv_layout_C),
    )
    want = list(cpp_traits()[name])
    defect = _defect(name)
    if defect:
        trait, cpp_text, isa_text = defect
        i = _TRAITS.index(trait)
        assert want[i] == cpp_text, f"C++ changed {name} {trait}: now {want[i]}"
        want[i] = isa_text
    assert mine[0] == want[0]
    for m, w, what in zip(mine[1:], want[1:], _TRAITS[1:]):
        assert m == w and parse_layout(m) == parse_layout(w), f"{name} {what}: cutemma {m}, C++ {w}"


def test_every_warp_atom_is_covered_or_absent_from_cpp():
    # the catalog's sm61-sm90 warp atoms that CuTe 4.2 lacks (they are compared with the PTX
    # ISA instead): SM75_16x8x8_F16F16F16F16_TN is cuBLASDx's, not CuTe's
    missing = sorted(set(warp_atoms()) - cpp_warp_atoms())
    assert missing == ["SM75_16x8x8_F16F16F16F16_TN"] or missing == [], missing
