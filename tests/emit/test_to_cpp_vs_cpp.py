"""``to_cpp`` against CuTe C++: every emitted expression is compiled by g++ and printed by CuTe.

What CuTe prints of the object the expression builds is compared with cutemma's object:
- layouts (seeded random plain, swizzled, nested composed, with offsets): the text and every
  value ``L(i)`` (tests/cute_cpp/batch.py: many cases per program, cached per case);
- basis-stride layouts: the text and every coordinate;
- GMMA/UMMA shared-memory atoms and ``tile_to_shape`` of them, emitted by CuTe's names: the
  inner layout's text and where each element lands through a swizzled ``smem_ptr`` tensor;
- every MMA atom of the catalog that CuTe 4.2 declares: Shape_MNK, ThrID and the A/B/C TV
  layouts; every copy atom: ThrID and the src/dst/ref TV layouts;
- the TiledMMAs of tests/cute_cpp/test_tiled_vs_cpp.py and the TiledCopies of
  tests/copy/test_tiled_copy_vs_cpp.py: thr_layout_vmnk, the TV layouts and tiles;
- GMMA/UMMA descriptors: the 64-bit value.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from cute_cpp import batch, cases, harness
from cute_cpp.compare import normalise

from cutemma.copy import copy_ops, make_copy_atom
from cutemma.emit import to_cpp
from cutemma.emit.cpp import HEADERS
from cutemma.emit.cpp_atoms import NOT_IN_CUTE
from cutemma.errors import EmitError
from cutemma.layout import ComposedLayout, Layout, Swizzle, tile_to_shape
from cutemma.layout.basis import BasisLayout, ScaledBasis
from cutemma.layout.notation import parse_layout
from cutemma.mma import catalog
from cutemma.smem import gmma_layout_atom, make_gmma_desc, make_umma_desc, umma_layout_atom

# the TiledCopy cases and copy atoms' natural dtypes of tests/copy (a folder, not a package)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "copy"))
REASON = harness.unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")
EXTRA = tuple(h for h in HEADERS if h != "cute/tensor.hpp")  # the harness's prelude has it
SEED = 20261126


# ---------------------------------------------------------------- random layouts


def random_layouts(n: int = 1200) -> dict[str, object]:
    """Seeded: plain layouts, swizzled ones, composed with a layout inside, with offsets."""
    rng = random.Random(SEED)
    out: dict[str, object] = {}
    while len(out) < n:
        x = rng.random()
        if x < 0.5:
            obj = cases.rand_layout(rng, max_leaves=5, negative=0.05)
        elif x < 0.8:
            obj = cases.rand_swizzled(rng)
        elif x < 0.9:
            c = cases.rand_swizzled(rng)
            obj = ComposedLayout(c, 0, cases.rand_tile(rng, c.size(), kind="perm"))
        else:
            sw = cases.rand_swizzle(rng)
            obj = ComposedLayout(sw, rng.randrange(0, 64), Layout(sw.size() // 2, 1))
        out.setdefault(to_cpp(obj), obj)
    return {f"L{i:04d}": obj for i, obj in enumerate(out.values())}


@cache
def _layout_verdicts():
    objs = random_layouts()
    return objs, batch.verdicts({k: to_cpp(o) for k, o in objs.items()}, per_program=300)


def test_random_layouts_round_trip():
    objs, got = _layout_verdicts()
    kinds = Counter(type(o).__name__ for o in objs.values())
    assert len(objs) >= 1000 and kinds["ComposedLayout"] >= 300, kinds
    bad = []
    for key, obj in objs.items():
        v = got[key]
        values = tuple(obj(i) for i in range(obj.size()))
        if v.refused or normalise(v.text) != str(obj) or (v.values or ()) != values:
            bad.append(f"{obj}: C++ {v.refused or normalise(v.text)} {v.values and v.values[:8]}")
    assert not bad, f"{len(bad)} of {len(objs)} differ:\n" + "\n".join(bad[:20])


# ---------------------------------------------------------------- harness programs


def _print_values(key: str, n: int, expr: str) -> str:
    """C++ that prints ``expr`` for i < n, space-separated, as one CASE line."""
    return (
        f'printf("%s\\t", "{key}"); for (int i = 0; i < {n}; ++i) {{ print({expr}); '
        'printf(" "); } printf("\\n");'
    )


def _basis_cases() -> dict[str, tuple[BasisLayout, str]]:
    rng = random.Random(SEED + 1)
    out = {}
    for i in range(40):
        plain = cases.rand_layout(rng, max_leaves=3, max_size=32)
        flat = [x for x in _leaves(plain.shape)]
        modes = [rng.randrange(0, 3) for _ in flat]
        deep = rng.random() < 0.3
        strides = iter(
            0
            if rng.random() < 0.1
            else ScaledBasis(rng.choice((1, 2, 3)), (m, 0) if deep else (m,))
            for m in modes
        )
        stride = _rebuild(plain.shape, strides)
        obj = BasisLayout(plain.shape, stride)
        key = f"basis{i:02d}"
        out[key] = (
            obj,
            f'auto L = {to_cpp(obj)}; CASE("{key}", L); ' + _print_values(key, obj.size(), "L(i)"),
        )
    return out


def _leaves(t):
    return [y for x in t for y in _leaves(x)] if isinstance(t, tuple) else [t]


def _rebuild(shape, it):
    return tuple(_rebuild(s, it) for s in shape) if isinstance(shape, tuple) else next(it)


SMEM_DTYPES = {"f16": "half_t", "bf16": "bfloat16_t", "tf32": "tfloat32_t", "e4m3": "float_e4m3_t"}


def smem_layouts() -> dict[str, tuple[ComposedLayout, str]]:
    """Every GMMA/UMMA atom for four dtypes, tiled to shapes (and row-major order, and 3-D)."""
    from cutemma.smem.swizzle_atoms import SWIZZLE_MODES

    out = {}
    for mode in SWIZZLE_MODES:
        for major in mode.majors:
            for dt in SMEM_DTYPES:
                atom = umma_layout_atom(major, mode.name, dt)
                m, k = atom.shape
                variants = {
                    "atom": atom,
                    "tile": tile_to_shape(atom, (m * 2, k * 4)),
                    "rows": tile_to_shape(atom, (m * 2, k * 2), (1, 0)),
                    "stages": tile_to_shape(atom, (m, k * 2, 3)),
                }
                for v, obj in variants.items():
                    out[f"smem/{mode.name}/{major}/{dt}/{v}"] = (obj, dt)
    return out


def _smem_case(key: str, obj: ComposedLayout, dt: str) -> str:
    t = SMEM_DTYPES[dt]
    return (
        f'auto L = {to_cpp(obj, dtype=dt)}; CASE("{key}", L); '
        f"{t}* base = reinterpret_cast<{t}*>(uintptr_t(1) << 20); "
        "auto T = make_tensor(make_smem_ptr(base), L); "
        + _print_values(key, obj.size(), "int(&T(i) - base)")
    )


def _mma_atoms() -> dict[str, object]:
    """Every catalog MMA atom C++ declares (defaults), GMMA also MN-major and negated, tcgen05
    at a few sizes. Atoms C++ lacks raise EmitError (checked in test_atoms_cpp_lacks)."""
    atoms = {}
    for op in catalog.mma_ops():
        try:
            atom = catalog.make_mma_atom(op.name)
            to_cpp(atom)
        except EmitError:
            continue
        atoms[op.name] = atom
    extra = [
        ("SM90_64x64x16_F32BF16BF16_SS", dict(a_major="MN", b_major="MN")),
        ("SM90_64x128x16_F16F16F16_RS", dict(b_major="MN")),
        ("SM90_64x32x16_F32F16F16_SS", dict(scale_a=-1)),
        ("SM90_64x24x32_F32E4M3E5M2_SS_TN", dict(scale_b=-1)),
        ("SM90_SPARSE_64x16x32_F32BF16BF16_SS", dict(a_major="MN", sp_sel=1)),
    ]
    for fam in ("F16BF16", "TF32", "S8", "F8F6F4"):
        for variant in ("SS", "TS", "2x1SM_SS", "SS_SPARSE"):
            two = "2x1SM" in variant
            for m, n in ((256, 64), (128, 128)) if two else ((64, 32), (128, 256)):
                extra.append((f"SM100_MMA_{fam}_{variant}", dict(m=m, n=n)))
    extra.append(("SM100_MMA_F16BF16_SS", dict(a_type="bf16", b_type="bf16", a_major="MN")))
    for name in ("MXF8F6F4_SS", "MXF4_SS", "MXF4NVF4_SS_SPARSE", "MXF8F6F4_2x1SM_SS_SPARSE"):
        m = 256 if "2x1SM" in name else 128
        extra.append((f"SM100_MMA_{name}", dict(m=m, n=128)))
    for name, kw in extra:
        atom = catalog.make_mma_atom(name, **kw)
        atoms[f"{name}{sorted(kw.items())}"] = atom
    return atoms


MMA_FIELDS = ("Shape_MNK", "ThrID", "LayoutA_TV", "LayoutB_TV", "LayoutC_TV")


def _mma_case(key: str, atom) -> str:
    return f"using A = decltype({to_cpp(atom)}); " + " ".join(
        f'CASE("{key}", typename A::{f}{{}});' for f in MMA_FIELDS
    )


def _copy_dtype(name: str) -> str:
    from test_copy_traits_vs_cpp import _MINE_T, _dtype

    return _MINE_T[_dtype(name)]


def _copy_case(key: str, atom) -> str:
    fields = ("Traits::ThrID", "ValLayoutSrc", "ValLayoutDst", "ValLayoutRef")
    return f"using A = decltype({to_cpp(atom)}); " + " ".join(
        f'CASE("{key}", typename A::{f}{{}});' for f in fields
    )


def _tiled_mmas() -> dict[str, object]:
    from cute_cpp.test_tiled_vs_cpp import _tiled, all_cases

    return {f"tm/{k}": _tiled(c) for k, c in all_cases().items()}


def _tiled_mma_case(key: str, t) -> str:
    return (
        f"auto tm = {to_cpp(t)}; static_assert(is_same_v<decltype(tm), {to_cpp(t, type=True)}>); "
        f'CASE("{key}", tm.get_thr_layout_vmnk()); CASE("{key}", tm.get_layoutA_TV()); '
        f'CASE("{key}", tm.get_layoutB_TV()); CASE("{key}", tm.get_layoutC_TV()); '
        f'CASE("{key}", tile_shape(tm));'
    )


def _tiled_copies() -> dict[str, object]:
    from test_tiled_copy_vs_cpp import MMA_CASES, TV_CASES, _mine_mma, _mine_tv

    from cutemma.tiled import make_tiled_copy_D, make_tiled_copy_S
    from cutemma.tiled.tiled_copy import make_cotiled_copy, make_tmem_copy

    out = {}
    for case in MMA_CASES:
        tc = _mine_mma(case)[1]
        out[f"tc/{case[0]}"] = tc
        u16 = make_copy_atom("UniversalCopy<uint16_t>", case[6])
        out[f"tc/{case[0]}/S"] = make_tiled_copy_S(u16, tc)
        out[f"tc/{case[0]}/D"] = make_tiled_copy_D(u16, tc)
    for case in TV_CASES:
        out[f"tc/{case[0]}"] = _mine_tv(case)
    # built from their parts: emitted through make_tiled_copy_impl
    out["tc/cotiled"] = make_cotiled_copy(
        make_copy_atom("UniversalCopy<uint32_t>", "f32"),
        Layout((32, 2), (2, 1)),
        Layout((8, 8), (8, 1)),
    )
    out["tc/tmem"] = make_tmem_copy(
        make_copy_atom("SM100_TMEM_LOAD_32dp32b8x", "f32"), Layout((128, 64), (65536, 1))
    )
    return out


def _tiled_copy_case(key: str, tc) -> str:
    return (
        f"auto tc = {to_cpp(tc)}; "
        f'CASE("{key}", typename decltype(tc)::TiledLayout_TV{{}}); '
        f'CASE("{key}", typename decltype(tc)::Tiler_MN{{}}); '
        f'CASE("{key}", tc.get_layoutS_TV()); CASE("{key}", tc.get_layoutD_TV());'
    )


def descriptors() -> dict[str, object]:
    out = {}
    for major in ("K", "MN"):
        for sw in ("INTER", "SW32", "SW64", "SW128"):
            for dt in ("bf16", "tf32"):
                atom = gmma_layout_atom(major, sw, dt)
                m, k = atom.shape
                big = tile_to_shape(atom, (m * 2, k) if major == "K" else (m, k * 2))
                out[f"desc/gmma/{major}/{sw}/{dt}"] = make_gmma_desc(big, major, dt, 1024)
                out[f"desc/umma/{major}/{sw}/{dt}"] = make_umma_desc(big, major, dt, 2048)
    return out


def _desc_case(key: str, d) -> str:
    # the 64-bit value (CuTe's print of a descriptor spans lines; its fields are of the value)
    return (
        f'auto d = {to_cpp(d)}; printf("%s\\t%llx\\n", "{key}", (unsigned long long)uint64_t(d));'
    )


@cache
def objects() -> dict[str, tuple[object, str]]:
    """key -> (cutemma object, C++ statements printing what CuTe builds from its to_cpp)."""
    out = {}
    for key, (obj, code) in _basis_cases().items():
        out[key] = (obj, code)
    for key, (obj, dt) in smem_layouts().items():
        out[key] = (obj, _smem_case(key, obj, dt))
    for key, atom in _mma_atoms().items():
        out[f"mma/{key}"] = (atom, _mma_case(f"mma/{key}", atom))
    for op in copy_ops():
        if op.name in NOT_IN_CUTE:  # test_atoms_cpp_lacks
            continue
        atom = make_copy_atom(op.name, _copy_dtype(op.name))
        out[f"copy/{op.name}"] = (atom, _copy_case(f"copy/{op.name}", atom))
    for key, t in _tiled_mmas().items():
        out[key] = (t, _tiled_mma_case(key, t))
    for key, tc in _tiled_copies().items():
        out[key] = (tc, _tiled_copy_case(key, tc))
    for key, d in descriptors().items():
        out[key] = (d, _desc_case(key, d))
    return out


@cache
def _cpp_or_error():
    src = {k: code for k, (_, code) in objects().items()}
    try:
        return harness.run_cases(src, headers=EXTRA, per_program=250), None
    except harness.CompileFailed as e:  # kept, so one failed build is not retried per test
        return None, e.errors


def cpp_prefetch() -> None:
    """The C++ this file's tests compile, for tests/cute_cpp/prefetch.py (same calls, cached)."""
    _layout_verdicts()
    _cpp_or_error()


def cpp() -> dict[str, str]:
    got, err = _cpp_or_error()
    if err is not None:  # an empty message is still a failure
        pytest.fail(f"the emitted C++ did not compile:\n{err}")
    return got


def _lines(key: str) -> list[str]:
    return [normalise(x) for x in cpp()[key].split("\n")]


def _keys(prefix: str) -> list[str]:
    return sorted(k for k in objects() if k.startswith(prefix)) if REASON is None else []


def _same(mine, text: str) -> bool:
    return str(mine) == text and (not hasattr(mine, "shape") or parse_layout(text) == mine)


@pytest.mark.parametrize("key", _keys("basis"))
def test_basis_layouts(key):
    obj, _ = objects()[key]
    text, values = _lines(key)
    assert text == str(obj)
    # C++ prints a coordinate on one mode as a scaled basis (2@1), on several as a tuple
    mine = [_components(obj(i)) for i in range(obj.size())]
    assert [_components(_parse_crd(v)) for v in values.split()] == mine


def _parse_crd(text: str):
    """C++'s print of a coordinate: ints, ``(a,b)`` tuples and ``v@i@j`` scaled bases (as
    {path outermost first: v}; innermost mode printed first)."""

    def item(i):
        if text[i] == "(":
            out, i = [], i + 1
            while text[i] != ")":
                x, i = item(i)
                out.append(x)
                i += text[i] == ","
            return tuple(out), i + 1
        j = i
        while j < len(text) and text[j] not in ",)":
            j += 1
        v, *modes = text[i:j].split("@")
        return ({tuple(int(m) for m in reversed(modes)): int(v)} if modes else int(v)), j

    return item(0)[0]


def _components(c, path=()) -> dict:
    """A coordinate as {path: nonzero value}."""
    if isinstance(c, dict):
        return {path + k: v for k, v in c.items() if v}
    if isinstance(c, tuple):
        out = {}
        for i, x in enumerate(c):
            out.update(_components(x, (*path, i)))
        return out
    return {path: c} if c else {}


def _crd(c) -> str:
    return "(" + ",".join(_crd(x) for x in c) + ")" if isinstance(c, tuple) else str(c)


@pytest.mark.parametrize("key", _keys("smem/"))
def test_smem_layouts_by_cute_name(key):
    obj, _ = objects()[key]
    text, values = cpp()[key].split("\n")
    # CuTe prints "Sw<B,M,S> o smem_ptr[16b](unset) o inner": the swizzle on bytes, moved onto
    # the pointer by make_tensor; the inner layout is cutemma's
    assert normalise(text).rsplit(" o ", 1)[1] == str(obj.inner)
    assert values.split() == [str(obj(i)) for i in range(obj.size())]


def _families(prefix: str) -> list[str]:
    """The atom families of the ``prefix`` objects (one test per family, not per atom)."""
    if REASON is not None:
        return []
    return sorted({_family(objects()[k][0]) for k in _keys(prefix)})


def _family(atom) -> str:
    return atom.op.family


def _mma_differences(key: str) -> list[str]:
    from cute_cpp.test_tiled_vs_cpp import _defect

    atom, _ = objects()[key]
    mine = [_crd(atom.shape_mnk), atom.thr_id, atom.tv_layout_A, atom.tv_layout_B, atom.tv_layout_C]
    got = _lines(key)
    defect = _defect(atom.name)
    if defect:  # C++'s trait is not the instruction's layout (test_tiled_vs_cpp.py)
        trait, cpp_text, isa_text = defect
        i = {"ALayout": 2, "BLayout": 3}[trait]
        if got[i] != cpp_text:
            return [f"{key}: C++ changed its defective {trait}: now {got[i]}"]
        got[i] = isa_text
    if got[0] != mine[0]:
        return [f"{key} Shape_MNK: cutemma {mine[0]}, C++ {got[0]}"]
    return [
        f"{key} {what}: cutemma {m}, C++ {g}"
        for m, g, what in zip(mine[1:], got[1:], MMA_FIELDS[1:])
        if not _same(m, g)
    ]


@pytest.mark.parametrize("family", _families("mma/"))
def test_mma_atoms(family):
    # Shape_MNK, ThrID and the A/B/C TV layouts of every atom of the family, as CuTe prints them
    keys = [k for k in _keys("mma/") if _family(objects()[k][0]) == family]
    bad = [d for k in keys for d in _mma_differences(k)]
    assert not bad, f"{len(bad)} of {len(keys)} differ:\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("family", _families("copy/"))
def test_copy_atoms(family):
    # ThrID and the src/dst/ref TV layouts (in elements) of every atom of the family
    keys = [k for k in _keys("copy/") if _family(objects()[k][0]) == family]
    bad = []
    for key in keys:
        atom, _ = objects()[key]
        mine = [atom.traits.thr_id, atom.layout_src_tv, atom.layout_dst_tv, atom.layout_ref_tv]
        if [str(m) for m in mine] != _lines(key):
            bad.append(f"{key}: cutemma {[str(m) for m in mine]}, C++ {_lines(key)}")
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("key", _keys("tm/"))
def test_tiled_mmas(key):
    t, _ = objects()[key]
    vmnk, a, b, c, tile = _lines(key)
    mine = [t.thr_layout_vmnk, t.tv_layout_A_tiled, t.tv_layout_B_tiled, t.tv_layout_C_tiled]
    for m, g in zip(mine, (vmnk, a, b, c)):
        assert _same(m, g), f"{key}: cutemma {m}, C++ {g}"
    assert tile == _crd(t.tile_size_mnk)


@pytest.mark.parametrize("key", _keys("tc/"))
def test_tiled_copies(key):
    tc, _ = objects()[key]
    tv, tiler, s, d = _lines(key)
    mine = [tc.layout_tv_tiled, tc.layout_src_tv_tiled, tc.layout_dst_tv_tiled]
    for m, g in zip(mine, (tv, s, d)):
        assert _same(m, g), f"{key}: cutemma {m}, C++ {g}"
    assert tiler == _crd(tuple(str(x) for x in tc.tiler_mn)).replace("'", "")


@pytest.mark.parametrize("key", _keys("desc/"))
def test_descriptors(key):
    d, _ = objects()[key]
    assert int(cpp()[key], 16) == d.raw


def test_coverage():
    # every family of the catalog is represented (or is one C++ lacks), and the counts the
    # issue reports: atoms by family, TiledMMAs, TiledCopies, random layouts
    atoms = [o for k, (o, _) in objects().items() if k.startswith("mma/")]
    fams = Counter(a.op.family for a in atoms)
    lacking = {f.name for f in catalog.families()} - set(fams)
    print(f"round-tripped: {sum(fams.values())} MMA atoms", dict(sorted(fams.items())))
    print(
        f"{len(_keys('copy/'))} copy atoms, {len(_keys('tm/'))} TiledMMAs, "
        f"{len(_keys('tc/'))} TiledCopies, {len(random_layouts())} random layouts"
    )
    assert lacking == {"sm90.gmma_b1"}, lacking
    assert len(_keys("copy/")) == len([op for op in copy_ops() if op.name not in NOT_IN_CUTE])
    assert len(_keys("tm/")) >= 60 and len(_keys("tc/")) >= 50


def test_atoms_cpp_lacks():
    # the catalog's atoms CuTe 4.2 does not declare raise EmitError naming why
    for name in ("SM75_16x8x8_F16F16F16F16_TN", "SM90_64x8x256_S32U1U1_SS_TN_ANDPOPC"):
        with pytest.raises(EmitError, match="no CuTe C\\+\\+ form"):
            to_cpp(catalog.make_mma_atom(name))
    with pytest.raises(EmitError, match="no CuTe C\\+\\+ form: CuTe declares tcgen05.ld.red"):
        to_cpp(make_copy_atom("SM100_TMEM_LOAD_STAT_32dp32b32x", "f32"))


def test_expressions_are_their_types():
    # to_cpp(x, type=True) names the type of to_cpp(x)'s value (one program)
    objs = {
        "layout": Layout((4, (2, 3)), (1, (8, 4))),
        "swizzle": Swizzle(3, 4, 3),
        "composed": ComposedLayout(Swizzle(2, 1, 3), 4, Layout((8, 4), (4, 1))),
        "tiler": (8, None, Layout(4, 2)),
        # nested tilers and a swizzle in one (the expression form always emitted them; the
        # type form refused them until the bad-input review of issue 33)
        "tiler_nested": (4, (2, 8)),
        "tiler_nested_underscore": (4, (2, None)),
        "tiler_swizzle": (Swizzle(1, 1, 2), 8),
        "atom": catalog.make_mma_atom("SM90_64x64x16_F32BF16BF16_SS"),
        "copy": make_copy_atom("SM75_U32x4_LDSM_N", "f16"),
        "smem": gmma_layout_atom("K", "SW128", "bf16"),
    }
    body = " ".join(
        f'static_assert(is_same_v<decltype({to_cpp(o)}), {to_cpp(o, type=True)}>, "{k}");'
        for k, o in objs.items()
    )
    assert harness.compiles(body, EXTRA)
