"""``to_cpp`` in device code: every kind of object it writes, inside a ``__global__`` kernel,
compiled by NVRTC (from pip, no GPU) for sm_90a, each checked by ``static_assert`` against the
numbers cutemma computes for it.

tests/emit/test_to_cpp_vs_cpp.py runs what ``to_cpp`` writes as host code (g++); a kernel is
compiled by NVRTC, whose front end and CUDA headers are not g++'s (CUTLASS 4.2 does not compile
under NVRTC with CCCL 13.2 or later, which the host build accepts). Here the same kinds of
objects -- layouts (plain, hierarchical, negative strides), swizzles, composed layouts,
basis-stride layouts, tilers, ints, GMMA/UMMA shared-memory atoms by CuTe's names, MMA atoms of
every family CuTe declares (wgmma and tcgen05 included), copy atoms of every family, TiledMMAs,
TiledCopies, GMMA/UMMA descriptors, and what ``cutemma emit cpp`` prints -- are written into
a kernel, and for each, the values CuTe computes at compile time (``L(i)`` at sampled i of
every layout, TV layout and thread layout; sizes, shapes, Shape_MNK, tile sizes) must equal
cutemma's. NVRTC evaluates them; a difference is a failed ``static_assert`` naming the object.

Two translation units of about 20 s of NVRTC each, compiled at once through cutemma's NVRTC
disk cache (the header packages' versions are in the source, so in the cache key); a small
third one with deliberately wrong expectations must fail, naming exactly those (the asserts
are live, not vacuous).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest
from cute_cpp import cases, harness

from cutemma.copy import copy_ops, make_copy_atom
from cutemma.cuda.compile import compile as nvrtc_compile
from cutemma.cuda.compile import unavailable_reason as nvrtc_unavailable
from cutemma.emit import to_cpp
from cutemma.emit.cpp import HEADERS
from cutemma.emit.cpp_layouts import tuple_type
from cutemma.errors import CompileError, EmitError
from cutemma.layout import ComposedLayout, Layout, Swizzle, tile_to_shape
from cutemma.layout.basis import BasisLayout, ScaledBasis
from cutemma.layout.notation import parse_layout
from cutemma.mma import catalog
from cutemma.smem import gmma_layout_atom, make_gmma_desc, make_umma_desc, umma_layout_atom

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "copy"))

ARCH = "sm_90a"
SEED = 20270315
SAMPLES = 48  # indices checked per layout (all of them when it is no larger)
# the wgmma N of cute/arch/mma_sm90_gmma.hpp; the _ext headers hold the others (their 18 s
# of NVRTC time per translation unit is left to the host build, tests/emit/test_to_cpp_vs_cpp.py)
_BASE_N = (8, 16, 32, 64, 96, 128, 192, 256)


def unavailable_reason() -> str | None:
    """None when NVRTC and CuTe's headers are both here, else the sentence a skip shows."""
    why = nvrtc_unavailable()
    if why:
        return why
    try:
        harness.include_dirs()
    except harness.CppUnavailable as e:
        return str(e)
    return None


REASON = unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def options() -> tuple[str, ...]:
    """NVRTC's options for CuTe: its headers and CUDA's (the CUDA include folder holds
    ``cccl/``, which CUTLASS includes as ``<cccl/cuda/std/...>`` under CUDA 13, and CCCL its own
    headers as ``<cuda/std/...>``), and ``-default-device``: CUTLASS has constexpr functions
    without ``__host__ __device__``, which NVRTC otherwise refuses as host code."""
    return ("-default-device", "-w", *(f"-I{d}" for d in harness.include_dirs()))


# ---------------------------------------------------------------- the checks, as C++

HELPERS = r"""
// cutemma's checks: the index (into `at`) of the first value of F{} that differs, or -1
template <class F, size_t N>
constexpr int cutemma_first_wrong(int const (&at)[N], long long const (&want)[N]) {
  F f{};
  for (size_t i = 0; i < N; ++i) if ((long long)(f(at[i])) != want[i]) return int(i);
  return -1;
}
// a coordinate (int, ScaledBasis or nested ArithmeticTuple), flattened, equals `want`
template <class X, size_t K>
constexpr bool cutemma_coord_is(X const& x, long long const (&want)[K]) {
  auto f = flatten(x);
  bool ok = size_t(rank(f)) == K;
  size_t j = 0;
  for_each(f, [&](auto v) { ok = ok && j < K && (long long)(v) == want[j]; ++j; });
  return ok;
}
// a basis-stride layout's coordinates, added to `zero` (its codomain's nesting) as CuTe's
// coordinate tensors do
template <class L, class Z, size_t N, size_t K>
constexpr int cutemma_first_wrong_coord(Z zero, int const (&at)[N], long long const (&want)[N][K]) {
  auto t = make_tensor(make_inttuple_iter(zero), L{});
  for (size_t i = 0; i < N; ++i) if (!cutemma_coord_is(t(at[i]), want[i])) return int(i);
  return -1;
}
"""


def _sample(n: int, key: str) -> list[int]:
    if n <= SAMPLES:
        return list(range(n))
    rng = random.Random(f"{SEED}/{key}")  # a str seed: the same sample in every process
    return sorted({0, n - 1, *rng.sample(range(n), SAMPLES - 2)})


def _ints(xs) -> str:
    return "{" + ",".join(str(int(x)) for x in xs) + "}"


def check_values(key: str, typ: str, obj, *, shape: bool = True) -> str:
    """Asserts that ``typ{}`` (a static CuTe layout, swizzle or composed layout) maps sampled
    indices as cutemma's ``obj`` does, has its size and (a Layout) its shape."""
    size = obj.size() if not isinstance(obj, Swizzle) else 1 << (obj.bits + obj.base + obj.shift)
    at = _sample(size, key)
    lines = [
        f"constexpr int at[] = {_ints(at)};",
        f"constexpr long long want[] = {_ints(obj(i) for i in at)};",
        f'static_assert(cutemma_first_wrong<{typ}>(at, want) < 0, "{key}: values");',
    ]
    if not isinstance(obj, Swizzle):
        lines.append(f'static_assert(int(size({typ}{{}})) == {size}, "{key}: size");')
    if shape and isinstance(obj, Layout):
        want = tuple_type(obj.shape, "Shape")
        lines.append(
            f"static_assert(is_same_v<remove_cvref_t<decltype(shape({typ}{{}}))>, {want}>, "
            f'"{key}: shape");'
        )
    return "{ " + " ".join(lines) + " }"


def _components(c, path=()) -> list[tuple[tuple, int]]:
    if isinstance(c, tuple):
        return [x for i, e in enumerate(c) for x in _components(e, (*path, i))]
    return [(path, int(c))]


def _zero(c) -> str:
    return "make_coord(" + ", ".join(_zero(e) for e in c) + ")" if isinstance(c, tuple) else "0"


def check_coords(key: str, typ: str, obj: BasisLayout) -> str:
    """Asserts that the basis-stride layout ``typ`` gives cutemma's coordinate at sampled i."""
    at = _sample(obj.size(), key)
    zero = obj(0)
    want = [[v for _, v in _components(obj(i))] for i in at]
    rows = ",".join(_ints(w) for w in want)
    return (
        f"{{ constexpr int at[] = {_ints(at)}; "
        f"constexpr long long want[][{len(want[0])}] = {{{rows}}}; "
        f"static_assert(cutemma_first_wrong_coord<{typ}>({_zero(zero)}, at, want) < 0, "
        f'"{key}: coordinates"); }}'
    )


def _int_is(key: str, expr: str, n: int) -> str:
    return f'static_assert(int({expr}) == {n}, "{key}");'


# ---------------------------------------------------------------- the objects, by kind


def algebra_objects() -> dict[str, object]:
    """Plain, hierarchical and negative-stride layouts, swizzles, composed layouts (with a
    layout inside, with offsets), tilers and ints: seeded, a few of each."""
    rng = random.Random(SEED)
    out: dict[str, object] = {
        "layout/col": Layout((4, 2)),
        "layout/row": Layout((4, 2), (2, 1)),
        "layout/nested": Layout(((2, 2), (4, 2)), ((1, 8), (2, 16))),
        "layout/neg": Layout((4, (2, 3)), (-1, (8, -4))),
        "layout/scalar": Layout(7, 3),
        "swizzle/343": Swizzle(3, 4, 3),
        "swizzle/203": Swizzle(2, 0, 3),
        "swizzle/122": Swizzle(1, 2, 2),
        "composed/sw": ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1))),
        "composed/offset": ComposedLayout(Swizzle(2, 1, 3), 4, Layout((8, 4), (4, 1))),
        "composed/layout": ComposedLayout(Layout((4, 8), (8, 1)), 3, Layout(32, 1)),
        "tiler/int_none_layout": (8, None, Layout(4, 2)),
        "tiler/layouts": (Layout((2, 4), (1, 8)), Layout(4, 1)),
        "int/5": 5,
        "int/neg": -3,
    }
    for i in range(4):
        out[f"layout/rand{i}"] = cases.rand_layout(rng, max_leaves=5, negative=0.05)
    for i in range(2):
        out[f"composed/rand{i}"] = cases.rand_swizzled(rng)
    c = cases.rand_swizzled(rng)
    out["composed/nested"] = ComposedLayout(c, 0, cases.rand_tile(rng, c.size(), kind="perm"))
    return out


def basis_objects() -> dict[str, BasisLayout]:
    """Seeded basis-stride layouts: strides on one or two codomain modes, some nested."""
    rng = random.Random(SEED + 1)
    out = {}
    for i in range(4):
        shape = cases.rand_layout(rng, max_leaves=3, max_size=32).shape
        flat = _leaves(shape)
        deep = i % 2 == 1
        strides = iter(
            ScaledBasis(rng.choice((1, 2, 3)), (m, 0) if deep and m == 1 else (m,))
            for m in (rng.randrange(0, 3) for _ in flat)
        )
        out[f"basis/{i}"] = BasisLayout(shape, _rebuild(shape, strides))
    return out


def _leaves(t):
    return [y for x in t for y in _leaves(x)] if isinstance(t, tuple) else [t]


def _rebuild(shape, it):
    return tuple(_rebuild(s, it) for s in shape) if isinstance(shape, tuple) else next(it)


def smem_objects() -> dict[str, tuple[ComposedLayout, str]]:
    """Every GMMA/UMMA swizzle atom by CuTe's name (bf16), and tile_to_shape of some: both
    orders of the repeats, with stages, for 8-, 16- and 32-bit elements."""
    from cutemma.smem.swizzle_atoms import SWIZZLE_MODES

    out = {}
    for mode in SWIZZLE_MODES:
        for major in mode.majors:
            atom = umma_layout_atom(major, mode.name, "bf16")
            out[f"smem/{mode.name}/{major}/bf16/atom"] = (atom, "bf16")
    for dt, major, how in (("f16", "K", "tile"), ("f16", "MN", "rows"), ("tf32", "K", "stages")):
        atom = gmma_layout_atom(major, "SW128", dt)
        m, k = atom.shape
        tiled = {
            "tile": lambda a=atom, m=m, k=k: tile_to_shape(a, (m * 2, k * 4)),
            "rows": lambda a=atom, m=m, k=k: tile_to_shape(a, (m * 2, k * 2), (1, 0)),
            "stages": lambda a=atom, m=m, k=k: tile_to_shape(a, (m, k * 2, 3)),
        }[how]()
        out[f"smem/SW128/{major}/{dt}/{how}"] = (tiled, dt)
    atom = gmma_layout_atom("MN", "SW64", "e4m3")
    out["smem/SW64/MN/e4m3/tile"] = (tile_to_shape(atom, (atom.shape[0] * 2, 64)), "e4m3")
    return out


def _first_in_cpp(ops):
    for op in ops:
        try:
            atom = catalog.make_mma_atom(op.name)
            to_cpp(atom)
        except EmitError:
            continue
        # a wgmma N of mma_sm90_gmma.hpp (the others are in the _ext headers)
        n = re.search(r"_64x(\d+)x", op.name)
        if n is None or int(n.group(1)) in _BASE_N:
            return atom
    return None


def mma_atoms() -> dict[str, object]:
    """The first atom CuTe declares of every catalog family, and the template arguments C++
    spells: MN majors, negations, the sparse selector, tcgen05 M/N/types and variants."""
    atoms = {}
    by_family: dict[str, list] = {}
    for op in catalog.mma_ops():
        by_family.setdefault(op.family, []).append(op)
    for fam in catalog.families():
        atom = _first_in_cpp(by_family.get(fam.name, ()))
        if atom is not None:
            atoms[f"mma/{atom.name}"] = atom
    extra = [
        ("SM90_64x256x16_F32BF16BF16_SS", dict(a_major="MN", b_major="MN")),
        ("SM90_64x128x16_F16F16F16_RS", dict(b_major="MN")),
        ("SM90_64x32x16_F32F16F16_SS", dict(scale_a=-1)),
        ("SM90_64x32x32_F32E4M3E5M2_SS_TN", dict(scale_b=-1)),
        ("SM90_SPARSE_64x16x32_F32BF16BF16_SS", dict(a_major="MN", sp_sel=1)),
        ("SM100_MMA_F16BF16_SS", dict(a_type="bf16", b_type="bf16", a_major="MN")),
        ("SM100_MMA_F16BF16_2x1SM_SS", dict(m=256, n=64)),
        ("SM100_MMA_TF32_TS", dict(m=128, n=256)),
        ("SM100_MMA_S8_SS_SPARSE", dict(m=64, n=32)),
        ("SM100_MMA_F8F6F4_SS", dict(m=128, n=128)),
    ]
    for name, kw in extra:
        atoms[f"mma/{name}{sorted(kw.items())}"] = catalog.make_mma_atom(name, **kw)
    return atoms


def _mma_checks(key: str, atom) -> list[str]:
    from cute_cpp.test_tiled_vs_cpp import _defect

    want = {
        "ThrID": atom.thr_id,
        "LayoutA_TV": atom.tv_layout_A,
        "LayoutB_TV": atom.tv_layout_B,
        "LayoutC_TV": atom.tv_layout_C,
    }
    defect = _defect(atom.name)
    if defect:  # CuTe's trait is not the instruction's layout (tests/cute_cpp/defects.py)
        trait, cpp_text, _ = defect
        want[{"ALayout": "LayoutA_TV", "BLayout": "LayoutB_TV"}[trait]] = parse_layout(cpp_text)
    out = [
        _int_is(f"{key}: Shape_MNK {i}", f"size<{i}>(typename A::Shape_MNK{{}})", n)
        for i, n in enumerate(atom.shape_mnk)
    ]
    out += [check_values(f"{key}: {f}", f"typename A::{f}", v) for f, v in want.items()]
    return [f"using A = decltype({to_cpp(atom)});", *out]


def copy_atoms() -> dict[str, object]:
    """The first atom CuTe declares of every copy family, in its natural type."""
    from test_copy_traits_vs_cpp import _MINE_T, _dtype

    from cutemma.emit.cpp_atoms import NOT_IN_CUTE

    by_family: dict[str, list] = {}
    for op in copy_ops():
        if op.name not in NOT_IN_CUTE:
            by_family.setdefault(op.family, []).append(op.name)
    out = {}
    for names in by_family.values():
        out[f"copy/{names[0]}"] = make_copy_atom(names[0], _MINE_T[_dtype(names[0])])
    return out


def _copy_checks(key: str, atom) -> list[str]:
    want = {
        "Traits::ThrID": atom.traits.thr_id,
        "ValLayoutSrc": atom.layout_src_tv,
        "ValLayoutDst": atom.layout_dst_tv,
        "ValLayoutRef": atom.layout_ref_tv,
    }
    return [f"using A = decltype({to_cpp(atom)});"] + [
        check_values(f"{key}: {f}", f"typename A::{f}", v) for f, v in want.items()
    ]


def tiled_mmas() -> dict[str, object]:
    """mma.sync over 2x2 warps with a permutation, wgmma over two warpgroups, one tcgen05."""
    from cutemma.tiled import make_tiled_mma

    return {
        "tm/sm80_perm": make_tiled_mma(
            "SM80_16x8x16_F32BF16BF16F32_TN", (2, 2), (32, Layout((8, 4), (1, 8)), 16)
        ),
        "tm/gmma": make_tiled_mma("SM90_64x64x16_F32BF16BF16_SS", (2, 1, 1)),
        "tm/umma": make_tiled_mma(catalog.make_mma_atom("SM100_MMA_F16BF16_SS", m=128, n=64)),
    }


def _tiled_mma_checks(key: str, t) -> list[str]:
    want = {
        "get_thr_layout_vmnk": t.thr_layout_vmnk,
        "get_layoutA_TV": t.tv_layout_A_tiled,
        "get_layoutB_TV": t.tv_layout_B_tiled,
        "get_layoutC_TV": t.tv_layout_C_tiled,
    }
    out = [
        f"auto tm = {to_cpp(t)};",
        f'static_assert(is_same_v<decltype(tm), {to_cpp(t, type=True)}>, "{key}: type");',
    ]
    out += [
        _int_is(f"{key}: tile {i}", f"tile_size<{i}>(tm)", n) for i, n in enumerate(t.tile_size_mnk)
    ]
    out += [check_values(f"{key}: {f}", f"decltype(tm.{f}())", v) for f, v in want.items()]
    return out


def tiled_copies() -> dict[str, object]:
    """One of each construction: from a TiledMMA (ldmatrix for A), make_tiled_copy_S of that,
    from thread and value layouts (cp.async), cotiled, and over tensor memory (tcgen05.ld)."""
    from cutemma.tiled import make_tiled_copy, make_tiled_copy_A, make_tiled_copy_S, make_tiled_mma
    from cutemma.tiled.tiled_copy import make_cotiled_copy, make_tmem_copy

    tm = make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", (2, 2))
    a = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), tm)
    cp = make_copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "f16")
    return {
        "tc/ldsm_A": a,
        "tc/ldsm_A/S": make_tiled_copy_S(make_copy_atom("UniversalCopy<uint16_t>", "f16"), a),
        "tc/cp_async": make_tiled_copy(cp, Layout((16, 8), (1, 16)), Layout((8, 1))),
        "tc/cotiled": make_cotiled_copy(
            make_copy_atom("UniversalCopy<uint32_t>", "f32"),
            Layout((32, 2), (2, 1)),
            Layout((8, 8), (8, 1)),
        ),
        "tc/tmem": make_tmem_copy(
            make_copy_atom("SM100_TMEM_LOAD_32dp32b8x", "f32"), Layout((128, 64), (65536, 1))
        ),
    }


def _tiled_copy_checks(key: str, tc) -> list[str]:
    want = {
        "typename decltype(tc)::TiledLayout_TV": tc.layout_tv_tiled,
        "decltype(tc.get_layoutS_TV())": tc.layout_src_tv_tiled,
        "decltype(tc.get_layoutD_TV())": tc.layout_dst_tv_tiled,
    }
    out = [f"auto tc = {to_cpp(tc)};"]
    for i, t in enumerate(tc.tiler_mn):
        n = t.size() if isinstance(t, Layout | ComposedLayout) else int(t)
        tiler = "typename decltype(tc)::Tiler_MN"
        out.append(_int_is(f"{key}: Tiler_MN {i}", f"size(get<{i}>({tiler}{{}}))", n))
    out += [check_values(f"{key}: {f}", f, v) for f, v in want.items()]
    return out


def descriptors() -> dict[str, object]:
    out = {}
    for major in ("K", "MN"):
        for sw in ("INTER", "SW128"):
            atom = gmma_layout_atom(major, sw, "bf16")
            m, k = atom.shape
            big = tile_to_shape(atom, (m * 2, k) if major == "K" else (m, k * 2))
            out[f"desc/gmma/{major}/{sw}"] = make_gmma_desc(big, major, "bf16", 1024)
            out[f"desc/umma/{major}/{sw}"] = make_umma_desc(big, major, "bf16", 2048)
    return out


CLI = {
    "cli/layout": ["(4,(2,3)):(1,(8,4))"],
    "cli/swizzle": ["Sw<3,4,3>"],
    "cli/composed": ["Sw<3,3,3> o 0 o (8,64):(64,1)"],
    "cli/mma": ["SM90_64x64x16_F32BF16BF16_SS", "-p", "b_major=MN"],
    "cli/tiled_mma": [
        "SM80_16x8x16_F32BF16BF16F32_TN",
        "--atom-layout",
        "2,2",
        "--tile",
        "32,32,16",
    ],
    "cli/copy": ["SM75_U32x4_LDSM_N", "-p", "dtype=f16"],
    "cli/tiled_copy": ["UniversalCopy<uint32_t>", "-p", "thr=(32,4):(4,1)", "-p", "val=(1,2)"],
    "cli/desc": [
        "desc",
        "-p",
        "major=K",
        "-p",
        "swizzle=128",
        "-p",
        "dtype=bf16",
        "-p",
        "tile=64x64",
    ],
}


def cli_objects() -> dict[str, tuple[object, str]]:
    """What ``cutemma emit cpp ARGS`` prints, with the object it was built from."""
    from cutemma.cli import main
    from cutemma.cli.emit_cmd import _object

    out = {}
    for key, args in CLI.items():
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(["emit", "cpp", *args]) == 0
        ns = argparse.Namespace(
            object=args[0],
            param=_opts(args, "-p"),
            atom_layout=_opt(args, "--atom-layout"),
            tile=_opt(args, "--tile"),
        )
        out[key] = (_object(ns), buf.getvalue().strip())
    return out


def _opts(args: list[str], flag: str) -> list[str] | None:
    got = [args[i + 1] for i, a in enumerate(args) if a == flag]
    return got or None


def _opt(args: list[str], flag: str) -> str | None:
    got = _opts(args, flag)
    return got[0] if got else None


# ---------------------------------------------------------------- the kernel


def _object_checks(key: str, obj, expr: str | None = None, dtype: str | None = None) -> list[str]:
    """The statements that build ``obj`` from ``expr`` (default: its to_cpp) and check it."""
    from cutemma.copy.atom import CopyAtom
    from cutemma.mma.atom import MmaAtom
    from cutemma.smem.descriptor import SmemDescriptor
    from cutemma.tiled.tiled_copy import TiledCopy
    from cutemma.tiled.tiled_mma import TiledMma

    if expr is not None and not isinstance(obj, Layout | Swizzle | ComposedLayout):
        assert expr == to_cpp(obj), (key, expr)  # the CLI writes what to_cpp writes
    if isinstance(obj, MmaAtom):
        return _mma_checks(key, obj)
    if isinstance(obj, CopyAtom):
        return _copy_checks(key, obj)
    if isinstance(obj, TiledMma):
        return _tiled_mma_checks(key, obj)
    if isinstance(obj, TiledCopy):
        return _tiled_copy_checks(key, obj)
    if isinstance(obj, SmemDescriptor):
        # the value CuTe's descriptor union holds, read back through its conversion
        e = to_cpp(obj)
        return [f'static_assert(uint64_t({e}) == {obj.raw:#x}ull, "{key}: value");']
    expr = expr or to_cpp(obj, dtype=dtype)
    out = [f"auto x = {expr};", "using X = decltype(x);"]
    if isinstance(obj, BasisLayout):
        return [*out, check_coords(key, "X", obj)]
    if isinstance(obj, ComposedLayout) and dtype is not None:
        # CuTe's shared-memory atoms swizzle bytes behind an smem_ptr flag; CuTe's own
        # conversion gives the same placement in elements, which is cutemma's layout
        out.append("using P = decltype(as_position_independent_swizzle_layout(x));")
        return [*out, check_values(key, "P", obj)]
    if isinstance(obj, Layout | Swizzle | ComposedLayout):
        return [*out, check_values(key, "X", obj)]
    if isinstance(obj, tuple):
        return [*out, *_tiler_checks(key, obj)]
    return [*out, f'static_assert(X::value == {int(obj)}, "{key}: value");']


def _tiler_checks(key: str, tiler: tuple) -> list[str]:
    out = []
    for i, t in enumerate(tiler):
        if t is None:
            out.append(
                f'static_assert(is_same_v<remove_cvref_t<decltype(get<{i}>(x))>, Underscore>, "{key}: {i}");'
            )
        elif isinstance(t, Layout):
            out.append(check_values(f"{key}: {i}", f"remove_cvref_t<decltype(get<{i}>(x))>", t))
        else:
            out.append(_int_is(f"{key}: {i}", f"decltype(get<{i}>(x))::value", t))
    return out


@cache
def blocks() -> dict[str, str]:
    """key -> one ``{ ... }`` block of the kernel body (an object, built and checked)."""
    items: list[tuple[str, object, str | None, str | None]] = []
    items += [(k, o, None, None) for k, o in algebra_objects().items()]
    items += [(k, o, None, None) for k, o in basis_objects().items()]
    items += [(k, o, None, dt) for k, (o, dt) in smem_objects().items()]
    for group in (mma_atoms, copy_atoms, tiled_mmas, tiled_copies, descriptors):
        items += [(k, o, None, None) for k, o in group().items()]
    items += [(k, o, text, None) for k, (o, text) in cli_objects().items()]
    return {
        k: "  {\n    " + "\n    ".join(_object_checks(k, o, e, dt)) + "\n  }\n"
        for k, o, e, dt in items
    }


# Two translation units of about equal NVRTC time, compiled at once (NVRTC runs without the GIL)
UNITS = {
    "algebra": ("layout", "swizzle", "composed", "tiler", "int", "basis", "smem", "desc", "tc"),
    "atoms": ("mma", "copy", "tm", "cli"),
}


def units() -> dict[str, str]:
    """unit name -> its translation unit."""
    b = blocks()
    return {
        name: source({k: v for k, v in b.items() if k.split("/")[0] in kinds})
        for name, kinds in UNITS.items()
    }


def headers() -> str:
    """cutemma's prelude less the wgmma ``_ext`` headers (see _BASE_N)."""
    return (
        "".join(f"#include <{h}>\n" for h in HEADERS if "_ext" not in h) + "using namespace cute;\n"
    )


def source(body: dict[str, str], head: str | None = None) -> str:
    """A translation unit: the headers, the checks' helpers, one kernel of ``body``'s blocks."""
    ids = " ".join(harness.headers_id())  # in the source, so the NVRTC cache key has them
    kernel = "".join(body.values())
    return (
        f"// CuTe headers: {ids}\n{head or headers()}{HELPERS}\n"
        f'extern "C" __global__ void cutemma_emitted(int* out) {{\n{kernel}  out[0] = 1;\n}}\n'
    )


def compile_units() -> dict[str, object]:
    """unit name -> its Cubin, or the CompileError NVRTC raised."""

    def one(src: str):
        try:
            return nvrtc_compile(src, ARCH, options())
        except CompileError as e:
            return e

    srcs = units()
    with ThreadPoolExecutor(len(srcs)) as pool:
        return dict(zip(srcs, pool.map(one, srcs.values())))


def cpp_prefetch() -> None:
    """The compiles this file's test makes, for tests/cute_cpp/prefetch.py (disk-cached)."""
    compile_units()


# ---------------------------------------------------------------- the tests


def test_every_kind_compiles_in_a_kernel_with_cutemmas_values():
    got = blocks()
    kinds = {k.split("/")[0] for k in got}
    assert kinds >= {"layout", "swizzle", "composed", "tiler", "int", "basis", "smem", "mma"}
    assert kinds >= {"copy", "tm", "tc", "desc", "cli"}
    fams = {a.op.family for k, a in mma_atoms().items()}
    assert fams == {f.name for f in catalog.families()} - {"sm90.gmma_b1"}, fams
    assert {k.split("/")[0] for k in got} == {k for kinds in UNITS.values() for k in kinds}
    for name, cubin in compile_units().items():
        if isinstance(cubin, CompileError):
            failed = sorted(set(re.findall(r'static assertion failed with "([^"]*)"', str(cubin))))
            pytest.fail(
                f"{name}: {len(failed)} checks differ: {failed[:30]} (headers: "
                f"{' '.join(harness.headers_id())}; CUTLASS 4.2 needs nvidia-cuda-cccl<13.2 "
                f"under NVRTC)\n{str(cubin)[:4000]}"
            )
        assert cubin.data[:4] == b"\x7fELF"


def test_wrong_values_fail_the_compile():
    # deliberately wrong expectations, one of each kind of check, must each fail by name
    # (cute/tensor.hpp is enough for these; a small TU, ~5 s)
    wrong_layout = Layout((4, 2), (2, 1))
    body = {
        "good": "  {\n    "
        + "\n    ".join(_object_checks("good", Layout((4, 2), (1, 4))))
        + "\n  }\n",
        "values": _corrupt(
            _object_checks("bad values", wrong_layout), "want[] = {", "want[] = {1+"
        ),
        "size": _corrupt(_object_checks("bad size", wrong_layout), "== 8,", "== 9,"),
        "shape": _corrupt(
            _object_checks("bad shape", wrong_layout),
            "Shape<Int<4>,Int<2>>",
            "Shape<Int<2>,Int<4>>",
        ),
        "coords": _corrupt(
            _object_checks(
                "bad coords", BasisLayout((2, 2), (ScaledBasis(1, (0,)), ScaledBasis(1, (1,))))
            ),
            "{1,1}}",
            "{1,0}}",
        ),
        "int": _corrupt(_object_checks("bad int", 5), "== 5,", "== 6,"),
        "tiler": _corrupt(_object_checks("bad tiler", (8, None)), "== 8,", "== 9,"),
    }
    headers = "#include <cute/tensor.hpp>\nusing namespace cute;\n"
    with pytest.raises(CompileError) as e:
        nvrtc_compile(source(body, headers), ARCH, options(), cache=False)
    failed = set(re.findall(r'static assertion failed with "([^"]*)"', str(e.value)))
    assert failed == {
        "bad values: values",
        "bad size: size",
        "bad shape: shape",
        "bad coords: coordinates",
        "bad int: value",
        "bad tiler: 0",
    }, str(e.value)[:3000]


def _corrupt(lines: list[str], old: str, new: str) -> str:
    """The block of ``lines`` with the last ``old`` (in its checks, not the object) made ``new``."""
    text = "  {\n    " + "\n    ".join(lines) + "\n  }\n"
    head, found, tail = text.rpartition(old)
    assert found, (old, text)
    return head + new + tail


PAGE = Path(__file__).resolve().parents[2] / "docs" / "to-your-kernel.md"


def _nvrtc_section() -> str:
    text = PAGE.read_text()
    start = text.index("### In a kernel, compiled by NVRTC")
    return text[start : text.index("\n## ", start)]


def test_the_docs_say_what_this_test_needs():
    # the page's versions, include folders and options are the ones this file compiles with
    section = _nvrtc_section()
    pyproject = (PAGE.parents[1] / "pyproject.toml").read_text()
    pins = re.findall(r'^\s*"(nvidia-cuda-cccl[^"]*|nvidia-cutlass==[^"]*)",', pyproject, re.M)
    assert len(pins) == 2 and all(f"`{p}`" in section for p in pins), pins
    assert "-default-device" in section and "-default-device" in options()
    for d in harness.include_dirs():  # <site>/cutlass_library/..., <site>/nvidia/cu13/...
        tail = d.split("site-packages/")[-1]
        assert f"<site-packages>/{tail}`" in section, tail


def test_the_docs_nvrtc_example_compiles():
    # the page's example, run as written (in its namespace: sA from the page's earlier blocks)
    from test_docs_page import page_objects

    code = re.search(r"```py\n(.*?)```", _nvrtc_section(), re.S).group(1)
    import cutemma as cm

    ns = {"cm": cm, "sA": page_objects()["sA"]}
    exec(compile(code, str(PAGE), "exec"), ns)  # noqa: S102 - the page's own example
    assert ns["cubin"].data[:4] == b"\x7fELF"
