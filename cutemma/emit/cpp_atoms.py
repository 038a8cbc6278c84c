"""MMA and copy atoms, TiledMMA, TiledCopy and shared-memory descriptors as CuTe C++.

The C++ name of an operation is read from cutemma's own name and parameters, one rule per
family (a table below): warp-level atoms keep their name (``SM80_16x8x16_F32BF16BF16F32_TN``),
GMMA atoms live in ``SM90::GMMA`` with majors and scales as template arguments
(cute/arch/mma_sm90_gmma.hpp), tcgen05 atoms take their types, M, N and majors
(cute/arch/mma_sm100_umma.hpp), sm120 atoms their types (cute/arch/mma_sm120.hpp).

>>> from cutemma.mma import make_mma_atom
>>> to_cpp_object(make_mma_atom("SM90_64x128x16_F32BF16BF16_SS", a_major="MN"))
'MMA_Atom<SM90::GMMA::MMA_64x128x16_F32BF16BF16_SS<GMMA::Major::MN,GMMA::Major::K>>{}'
"""

from __future__ import annotations

from cutemma.emit.cpp_layouts import int_type, layout_to_cpp, tiler_type, unsupported
from cutemma.errors import EmitError
from cutemma.layout.layout import Layout

# Atoms of the catalog that CuTe 4.2's headers do not declare (they are checked against the
# PTX ISA instead): name or family -> why.
NOT_IN_CUTE = {
    "SM75_16x8x8_F16F16F16F16_TN": "it is cuBLASDx's atom, not CuTe's",
    "sm90.gmma_b1": "CuTe 4.2 declares no single-bit (b1) wgmma",
    **dict.fromkeys(
        ("SM100_TMEM_LOAD_STAT_32dp32b32x", "SM100_TMEM_LOAD_STAT_32dp32b128x"),
        "CuTe declares tcgen05.ld.red only after 4.2 (CUTLASS main; the PyPI headers are 4.2)",
    ),
}


# ---------------------------------------------------------------- MMA operations


def _major(ns: str, m: str) -> str:
    return f"{ns}::Major::{m}"


def _scale(ns: str, s: int) -> str:
    return f"{ns}::ScaleIn::{'One' if s == 1 else 'Neg'}"


def _gmma_op(op) -> str:
    """``SM90::GMMA::MMA_64x128x16_F32BF16BF16_SS<...>`` (sparse: ``SPARSE::GMMA_...``)."""
    p = dict(op.params)
    tokens = op.name.split("<")[0].split("_")[1:]
    sparse = tokens[0] == "SPARSE"
    head = "SM90::GMMA::SPARSE::GMMA_" if sparse else "SM90::GMMA::MMA_"
    base = head + "_".join(tokens[1:] if sparse else tokens)
    args = []
    if not base.endswith(("_TN", "_TN_SATURATE")):  # 16-bit inputs: the majors come first
        args += [_major("GMMA", p["a_major"]), _major("GMMA", p["b_major"])]
    scales = [p.get("scale_a", 1), p.get("scale_b", 1)]
    has_scales = "scale_a" in p
    sel = p.get("sp_sel", 0)
    if has_scales and (scales != [1, 1] or sel != 0):
        args += [_scale("GMMA", s) for s in scales]
    if sparse and sel != 0:
        args.append(f"GMMA::SparseSel::{'One' if sel else 'Zero'}")
    if args or has_scales or sparse:  # a template (defaults only: <>)
        return f"{base}<{','.join(args)}>"
    return base


_UMMA_SF = ("MXF8F6F4", "MXF4", "MXF4NVF4")
# The tcgen05 variants CuTe 4.2 declares per kind (cute/arch/mma_sm100_umma.hpp); the PTX ISA
# has more (TS with sparsity, block-scaled TS), which the catalog keeps and C++ cannot name.
_DENSE_KINDS = {"SS", "TS", "SS_SPARSE", "2x1SM_SS", "2x1SM_TS", "2x1SM_SS_SPARSE"}
UMMA_IN_CUTE = {
    "TF32": _DENSE_KINDS,
    "F16BF16": _DENSE_KINDS,
    "S8": _DENSE_KINDS,
    "F8F6F4": _DENSE_KINDS,
    "MXF8F6F4": {"SS", "SS_SPARSE", "2x1SM_SS", "2x1SM_SS_SPARSE"},
    "MXF4": {"SS", "2x1SM_SS"},
    "MXF4NVF4": {"SS_SPARSE", "2x1SM_SS_SPARSE"},
}


def _umma_op(op) -> str:
    """``SM100_MMA_F16BF16_SS<half_t,half_t,float,128,256,UMMA::Major::K,UMMA::Major::K>``."""
    from cutemma.mma.types import numeric_type

    p = dict(op.params)
    base = op.name.split("<")[0]
    kind, variant = base.split("_")[2], base.split("_", 3)[3]
    if variant not in UMMA_IN_CUTE.get(kind, ()):
        have = ", ".join(f"SM100_MMA_{kind}_{v}" for v in sorted(UMMA_IN_CUTE.get(kind, ())))
        raise EmitError(
            f"{base} has no CuTe C++ form: CuTe 4.2 declares no such tcgen05 struct "
            f"(for {kind} it has {have or 'none'})"
        )
    args = [numeric_type(p[k]).cpp for k in ("a_type", "b_type", "c_type")]
    if kind in _UMMA_SF:
        args.append(numeric_type(p["sf_type"]).cpp)
    args += [str(p["m"]), str(p["n"])]
    if kind in ("MXF4", "MXF4NVF4"):
        args.append(str(p["vs"]))
    args += [_major("UMMA", p["a_major"]), _major("UMMA", p["b_major"])]
    if p.get("saturate"):  # after the negations where the op has them (the TS ones)
        negs = [_scale("UMMA", 1)] * 2 if "_TS" in op.name else []
        args += [*negs, "UMMA::Saturate::True"]
    extra = set(p) - {"a_type", "b_type", "c_type", "sf_type", "m", "n", "vs", "saturate"}
    extra -= {"a_major", "b_major"}
    if extra:
        raise EmitError(
            f"{op.name}: the parameters {sorted(extra)} have no C++ template spelling here; "
            "emit the atom with the default negation and saturation"
        )
    if base in _RUNTIME_TYPED:  # a plain struct: the types go to MMA_Traits
        return _runtime_typed(base, args)
    return f"{base}<{','.join(args)}>"


# tcgen05 ops whose struct takes no template arguments (the f8f6f4 types are chosen at run
# time); their atoms are MMA_Traits<Op, a, b, c, C<M>, C<N>, majors, negations>
_RUNTIME_TYPED = ("SM100_MMA_F8F6F4_SS", "SM100_MMA_F8F6F4_2x1SM_SS")


def _runtime_typed(base: str, args: list[str]) -> str:
    a, b, c, m, n, am, bm = args[:7]
    if len(args) != 7:
        raise EmitError(f"{base}: C++ spells no saturation or extra parameter for this op")
    major = "integral_constant<UMMA::Major, {}>".format
    one = "integral_constant<UMMA::ScaleIn, UMMA::ScaleIn::One>"
    return (
        f"MMA_Traits<{base}, {a}, {b}, {c}, C<{m}>, C<{n}>, {major(am)}, {major(bm)}, {one}, {one}>"
    )


def _sm120_op(op) -> str:
    """``SM120_16x8x32_TN<float_e4m3_t,float_e4m3_t,float>`` and the block-scaled
    ``SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<a,b,c,sf,VS>``."""
    from cutemma.mma.names import parse_name

    name = parse_name(op.name)
    shape, types = name.tokens[0], name.types(1)
    d, a, b, c = types[:4]
    args = [a.cpp, b.cpp, c.cpp]
    if len(types) == 5:
        vs = name.tokens[-1].removeprefix("VS")
        return f"SM120::BLOCKSCALED::SM120_{shape}_TN_VS<{','.join(args)},{types[4].cpp},{vs}>"
    if d != c:
        raise EmitError(f"{op.name}: C++'s SM120_{shape}_TN has D of C's type ({c.cpp})")
    return f"SM120_{shape}_TN<{','.join(args)}>"


def mma_op_cpp(op) -> str:
    """The C++ operation type of a catalog Operation (raises EmitError where CuTe has none).

    >>> from cutemma.mma import mma_op
    >>> mma_op_cpp(mma_op("SM90_64x16x32_S32S8U8_SS_TN"))
    'SM90::GMMA::MMA_64x16x32_S32S8U8_SS_TN'
    """
    base = op.name.split("<")[0]
    why = NOT_IN_CUTE.get(base) or NOT_IN_CUTE.get(op.family)
    if why:
        raise EmitError(f"{op.name} has no CuTe C++ form: {why}")
    if op.family.startswith("sm90.gmma"):
        return _gmma_op(op)
    if op.family.startswith("sm100.") and base.startswith("SM100_MMA_"):
        return _umma_op(op)
    if op.family.startswith("sm120."):
        return _sm120_op(op)
    return base


# ---------------------------------------------------------------- copy operations


def copy_op_cpp(name: str) -> str:
    """The C++ ``Copy_Traits`` arguments of a copy catalog name.

    UTCCP lives in a namespace without a using; TMA and bulk copies carry their bit count as
    ``Int<N>`` (TMA traits also take an auxiliary-parameter type, any type for the layouts).

    >>> copy_op_cpp("SM90_TMA_LOAD<16384>")
    'SM90_TMA_LOAD, Int<16384>, int'
    """
    if name.startswith("SM100_UTCCP_"):
        return "SM100::TMEM::UTCCP::" + name
    if name.startswith(("SM90_TMA_", "SM90_BULK_COPY_")) and "<" in name:
        base, bits = name[:-1].split("<")
        aux = ", int" if name.startswith("SM90_TMA_") else ""
        return f"{base}, Int<{bits}>{aux}"
    return name


def _copy_atom_type(atom) -> str:
    why = NOT_IN_CUTE.get(atom.name)
    if why:
        raise EmitError(f"{atom.name} has no CuTe C++ form: {why}")
    op = copy_op_cpp(atom.name)
    if "," in op or "::" in op:  # traits with arguments: name the traits
        op = f"Copy_Traits<{op}>"
    return f"Copy_Atom<{op}, {atom.val_type.cpp}>"


# ---------------------------------------------------------------- tiled objects


def _perm_type(p) -> str:
    if p is None:
        return "Underscore"
    if isinstance(p, Layout) and p.shape == p.size() and p.stride == 1:
        return int_type(p.size())  # an int tile: make_tiled_mma stores it as n:1
    return layout_to_cpp(p, type=True)


def _tiled_mma_parts(t) -> tuple[str, str, str | None]:
    atom = f"MMA_Atom<{mma_op_cpp(t.atom.op)}>"
    layout = layout_to_cpp(t.atom_layout_mnk, type=True)
    perms = None
    if any(p is not None for p in t.permutation_mnk):
        perms = "Tile<" + ",".join(_perm_type(p) for p in t.permutation_mnk) + ">"
    return atom, layout, perms


def _tiled_mma_expr(t) -> str:
    atom, layout, perms = _tiled_mma_parts(t)
    tail = f", {perms}{{}}" if perms else ""
    return f"make_tiled_mma({atom}{{}}, {layout}{{}}{tail})"


def _tiled_mma_type(t) -> str:
    atom, layout, perms = _tiled_mma_parts(t)
    return f"TiledMMA<{atom},{layout},{perms or 'Tile<Underscore,Underscore,Underscore>'}>"


def _tiled_copy_expr(tc) -> str:
    atom = _copy_atom_type(tc.atom) + "{}"
    origin = getattr(tc, "origin", None)
    if origin is not None:
        fn, *args = origin
        if fn in ("make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy_C"):
            return f"{fn}({atom}, {_tiled_mma_expr(args[0])})"
        if fn in ("make_tiled_copy_S", "make_tiled_copy_D"):
            return f"{fn}({atom}, {_tiled_copy_expr(args[0])})"
        if fn == "make_tiled_copy":
            thr, val = args
            return f"make_tiled_copy({atom}, {layout_to_cpp(thr)}, {layout_to_cpp(val)})"
    return f"make_tiled_copy_impl({atom}, {layout_to_cpp(tc.layout_tv_tiled)}, {tiler_type(tc.tiler_mn)}{{}})"


def _desc_expr(d) -> str:
    ns = "GmmaDescriptor" if d.ARCH == "sm90" else "UMMA::SmemDescriptor"
    return f"{ns}{{uint64_t({d.raw:#x}ull)}}"


def to_cpp_object(obj, *, type: bool = False) -> str:  # noqa: A002
    """``to_cpp`` for atoms, tiled objects and descriptors (see :func:`cutemma.emit.to_cpp`).

    >>> from cutemma.copy import make_copy_atom
    >>> to_cpp_object(make_copy_atom("SM75_U32x4_LDSM_N", "f16"))
    'Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}'
    """
    from cutemma.copy.atom import CopyAtom
    from cutemma.mma.atom import MmaAtom
    from cutemma.smem.descriptor import SmemDescriptor
    from cutemma.tiled.tiled_copy import TiledCopy
    from cutemma.tiled.tiled_mma import TiledMma

    if isinstance(obj, MmaAtom):
        t = f"MMA_Atom<{mma_op_cpp(obj.op)}>"
        return t if type else t + "{}"
    if isinstance(obj, CopyAtom):
        t = _copy_atom_type(obj)
        return t if type else t + "{}"
    if isinstance(obj, TiledMma):
        return _tiled_mma_type(obj) if type else _tiled_mma_expr(obj)
    if isinstance(obj, TiledCopy):
        expr = _tiled_copy_expr(obj)
        return f"decltype({expr})" if type else expr
    if isinstance(obj, SmemDescriptor):
        expr = _desc_expr(obj)
        return expr.split("{")[0] if type else expr
    raise unsupported(obj)


__all__ = ["copy_op_cpp", "mma_op_cpp", "to_cpp_object"]
