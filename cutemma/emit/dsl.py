"""``to_cute_dsl``: a cutemma object as a CuTe DSL 4.8 expression.

The text is a Python expression valid inside a ``@cute.jit`` function after ``import
cutlass`` and ``import cutlass.cute as cute``; evaluated there it builds an object equal to
the cutemma one (tests/emit_dsl runs the DSL on what this emits and reads back what it
prints). Which DSL op builds which atom is the table in :mod:`cutemma.emit.dsl_ops`.

>>> from cutemma import Layout, make_tiled_mma
>>> to_cute_dsl(Layout((4, (2, 3)), (1, (8, 16))))
'cute.make_layout((4, (2, 3)), stride=(1, (8, 16)))'
>>> print(to_cute_dsl(make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2))))
cute.make_tiled_mma(cute.make_mma_atom(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))), cute.make_layout((2, 2, 1), stride=(1, 2, 0)))
"""

from __future__ import annotations

from cutemma.emit import dsl_ops as T
from cutemma.errors import EmitError

# The DSL's static ints are 32-bit (cute IntTuple attributes): a value past this cannot be
# written as a static DSL int.
_INT_LIMIT = 2**31


def to_cute_dsl(obj, *, mma=None) -> str:
    """The CuTe DSL expression that builds ``obj`` (a Layout, Swizzle, ComposedLayout, basis
    layout, tiler tuple, MmaAtom, TiledMma, CopyAtom or TiledCopy).

    With ``mma`` (a TiledMma), a TiledCopy made by ``make_tiled_copy_A/B/C(atom, mma)`` is
    written as that call; otherwise as ``cute.make_tiled_copy(atom, layout_tv, tiler)``.

    >>> from cutemma import Swizzle, ComposedLayout, Layout
    >>> to_cute_dsl(ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1))))
    'cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0, cute.make_layout((8, 64), stride=(64, 1)))'
    """
    try:
        return _to_cute_dsl(obj, mma)
    except RecursionError:
        raise EmitError(
            f"to_cute_dsl: the {type(obj).__name__} is nested too deeply to write (past "
            "Python's recursion limit); CuTe DSL tuples nest far less: flatten it"
        ) from None


def _to_cute_dsl(obj, mma) -> str:
    from cutemma.emit.cpp_layouts import _hint, _shown

    for kind, emit in _EMITTERS:
        if isinstance(obj, kind()):
            if mma is not None and emit is not _tiled_copy:
                raise EmitError("to_cute_dsl: mma= goes with a TiledCopy only")
            return emit(obj, mma) if emit is _tiled_copy else emit(obj)
    if isinstance(obj, str):
        raise EmitError(
            f"to_cute_dsl: got the text {obj[:60]!r}; give an object, e.g. "
            "to_cute_dsl(Layout.parse(text)) or to_cute_dsl(make_mma_atom(name))"
        )
    if isinstance(obj, bool) or not _is_int(obj) and not isinstance(obj, tuple | list):
        raise EmitError(
            f"to_cute_dsl: CuTe DSL has no static form for {_shown(obj)} "
            f"({type(obj).__name__}); {_hint(obj)}. Give a Layout, Swizzle, ComposedLayout, "
            "tiler, MmaAtom, TiledMma, CopyAtom or TiledCopy"
        )
    return _tiler(obj)


# ---------------------------------------------------------------- values and layouts
def _is_int(x) -> bool:
    from cutemma.layout.checks import as_int

    return not isinstance(x, bool) and as_int(x) is not None


def _int(x, what: str) -> int:
    from cutemma.layout.checks import as_int

    v = None if isinstance(x, bool) else as_int(x)
    from cutemma.emit.cpp_layouts import _shown, shown_int

    if v is None:
        raise EmitError(
            f"to_cute_dsl: {what} has {_shown(x)} ({type(x).__name__}); CuTe DSL static values "
            "are whole numbers (a dynamic value has no emitted form)"
        )
    if not -_INT_LIMIT <= v < _INT_LIMIT:
        raise EmitError(
            f"to_cute_dsl: {what} has {shown_int(v)}, outside CuTe DSL's 32-bit static ints "
            f"[-2^31, 2^31) (to_cpp refuses it too: CuTe's Int<n> is an int); use smaller "
            "extents or strides"
        )
    return v


def _tuple(t, what: str) -> str:
    if isinstance(t, tuple | list):
        items = [_tuple(x, what) for x in t]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return str(_int(t, what))


def _named(kind: str, x) -> str:
    """``kind x`` for a message, or ``a kind`` when ``x`` has an int too long to print."""
    try:
        return f"{kind} {x}"
    except ValueError:
        return f"a {kind}"


def _layout(L) -> str:
    what = _named("layout", L)
    from cutemma.layout import flatten

    if any(_is_int(e) and e < 1 for e in flatten(L.shape)):
        # cute.make_layout: "Expected size in shape to be strictly positive" (core.py)
        raise EmitError(
            f"to_cute_dsl: {L} has an empty mode; CuTe DSL shapes are strictly positive, so it "
            "has no DSL form (C++ CuTe accepts it)"
        )
    return f"cute.make_layout({_tuple(L.shape, what)}, stride={_tuple(L.stride, what)})"


def _basis_stride(d, what: str) -> str:
    from cutemma.layout.basis import ScaledBasis

    if isinstance(d, tuple):
        items = [_basis_stride(x, what) for x in d]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(d, ScaledBasis):
        # cute.ScaledBasis(value, [modes]) lists modes outermost first (core.py, E([0, 1]))
        return f"cute.ScaledBasis({_int(d.value, what)}, {list(d.modes)})"
    return str(_int(d, what))


def _basis_layout(L) -> str:
    what = _named("basis layout", L)
    if L.offset != 0:
        raise EmitError(
            f"to_cute_dsl: {L} starts at {L.offset}; CuTe DSL builds such a view as "
            "cute.make_identity_tensor(shape) sliced or offset, not as a layout expression: "
            "emit the layout without its start"
        )
    return f"cute.make_layout({_tuple(L.shape, what)}, stride={_basis_stride(L.stride, what)})"


def _swizzle(s) -> str:
    return f"cute.make_swizzle({s.bits}, {s.base}, {s.shift})"


def _function(x) -> str:
    from cutemma.layout import Layout
    from cutemma.layout.swizzle import ComposedLayout, Swizzle

    if isinstance(x, Swizzle):
        return _swizzle(x)
    if isinstance(x, ComposedLayout):
        return _composed(x)
    if isinstance(x, Layout):
        return _layout(x)
    raise EmitError(f"to_cute_dsl: {x!r} is not a Layout, Swizzle or ComposedLayout")


def _composed(c) -> str:
    # cute.make_composed_layout(inner, offset, outer) evaluates inner(offset + outer(x)): its
    # first argument is what cutemma calls outer (core.py, make_composed_layout)
    from cutemma.layout import Layout
    from cutemma.layout.swizzle import ComposedLayout

    off = _int(c.offset, _named("composed layout", c))
    inner = c.inner
    # the DSL's make_composed_layout takes an affine layout last ("expects the outer layout to
    # be an affine layout"; C++ takes any). Composition is associative, so A o a o (L o b o C)
    # with an affine L is written as the same function (A o a o L) o b o C.
    if isinstance(inner, ComposedLayout) and isinstance(inner.outer, Layout):
        left = ComposedLayout(c.outer, c.offset, inner.outer)
        return _composed(ComposedLayout(left, inner.offset, inner.inner))
    if not isinstance(inner, Layout):
        raise EmitError(
            f"to_cute_dsl: {_named('composed layout', c)} ends in "
            f"{_named(type(inner).__name__, inner)}, which CuTe DSL's make_composed_layout does "
            "not take (its last argument must be an affine Layout); to_cpp writes it"
        )
    return f"cute.make_composed_layout({_function(c.outer)}, {off}, {_function(c.inner)})"


def _tiler(t) -> str:
    """A tiler: an int, a Layout, or a tuple of them (None is ``None``: leave the mode)."""
    from cutemma.layout import Layout

    if isinstance(t, tuple | list):
        items = [_tiler(x) for x in t]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(t, Layout):
        return _layout(t)
    if t is None:
        return "None"
    return str(_int(t, "tiler"))


# ---------------------------------------------------------------- MMA atoms
def _dtype(t, what: str) -> str:
    name = getattr(t, "name", t)
    if name not in T.DTYPES:
        raise EmitError(
            f"to_cute_dsl: {what} has type {name!r}, which CuTe DSL has no numeric type for; "
            f"its types cover {', '.join(sorted(T.DTYPES))}"
        )
    return T.DTYPES[name]


def _major(atom, which: str) -> str:
    m = dict(atom.op.params).get(f"{which}_major", "K")
    return f"cute.nvgpu.OperandMajorMode.{'K' if m == 'K' else 'MN'}"


def _is_f8(t) -> bool:
    return t.name in ("e4m3", "e5m2")


_RULES = {
    "same_f8": lambda a: _is_f8(a.val_type_A) and a.val_type_A == a.val_type_B,
    "f4_f8": lambda a: (
        {a.val_type_A.name, a.val_type_B.name} in ({"e2m1", "e4m3"}, {"e2m1", "e5m2"})
    ),
    "vs32": lambda a: a.block_scale[0] == 32,
    "vs16": lambda a: a.block_scale[0] == 16 and a.block_scale[1].name == "ue4m3",
}


def _arg(kind: str, atom, spec) -> str:
    name = atom.name
    if kind == "ab":
        if atom.val_type_A != atom.val_type_B:
            raise EmitError(
                f"to_cute_dsl: {name} has A {atom.val_type_A.name} and B "
                f"{atom.val_type_B.name}; {spec.op} takes one A/B type, so CuTe DSL has no op "
                f"for this mixed-type atom; the nearest op it has is {spec.op} with A = B"
            )
        return _dtype(atom.val_type_A, name)
    if kind in ("a", "b"):
        return _dtype(getattr(atom, f"val_type_{kind.upper()}"), name)
    if kind == "acc":
        return _dtype(atom.val_type_C, name)
    if kind == "sf":
        return _dtype(atom.block_scale[1], name)
    if kind == "shape":
        return _tuple(tuple(atom.shape_mnk), name)
    if kind == "a_src_wg":
        src = "RMEM" if atom.op.a_source == "reg" else "SMEM"
        return f"cute.nvgpu.warpgroup.OperandSource.{src}"
    if kind == "a_src_tc":
        src = "TMEM" if atom.op.a_source == "tmem" else "SMEM"
        return f"cute.nvgpu.tcgen05.OperandSource.{src}"
    if kind in ("a_major", "b_major"):
        return _major(atom, kind[0])
    if kind == "cta":
        return f"cute.nvgpu.tcgen05.CtaGroup.{'TWO' if '2x1SM' in name else 'ONE'}"
    raise AssertionError(kind)  # a row of dsl_ops names an argument kind this file lacks


def mma_op_spec(atom) -> T.MmaOpSpec:
    """The DSL op row that builds ``atom``, or EmitError naming the nearest op the DSL has.

    >>> from cutemma import make_mma_atom
    >>> mma_op_spec(make_mma_atom("SM90_64x64x16_F32BF16BF16_SS")).op
    'cute.nvgpu.warpgroup.MmaF16BF16Op'
    """
    fam, name = atom.op.family, atom.name
    if fam in T.MMA_NO_OP:
        raise EmitError(
            f"to_cute_dsl: CuTe DSL 4.8 has no op for {name} (family {fam}); the nearest op it "
            f"has is {T.MMA_NO_OP[fam]}"
        )
    if "SPARSE" in name:
        near = T.SM100_SPARSE_NEAREST.get(fam, T.MMA_OPS[fam].op + " (dense)")
        raise EmitError(
            f"to_cute_dsl: CuTe DSL 4.8 has no op for the sparse atom {name} as cutemma models "
            f"it; the nearest op it has is {near} (it takes a metadata format of its own)"
        )
    params = dict(atom.op.params)
    if params.get("scale_a", 1) != 1 or params.get("scale_b", 1) != 1:
        raise EmitError(
            f"to_cute_dsl: {name} negates A or B (scale_a={params.get('scale_a')}, "
            f"scale_b={params.get('scale_b')}); the DSL's warpgroup ops have no scale argument, "
            "so only scale 1 has a DSL form (negate the operand instead)"
        )
    if "SATURATE" in name:
        raise EmitError(
            f"to_cute_dsl: {name} saturates; CuTe DSL 4.8's {fam} op has no saturate "
            "argument, so it has no op for this atom; the nearest is the wrapping "
            f"{T.MMA_OPS.get(fam, T.MmaOpSpec('its integer op', ())).op}"
        )
    if params.get("saturate"):
        raise EmitError(
            f"to_cute_dsl: {name} with saturate=True: tcgen05.MmaI8Op has no saturate "
            "argument; the nearest op is tcgen05.MmaI8Op (wrapping)"
        )
    if fam in T.MMA_OP_CHOICES:
        for spec in T.MMA_OP_CHOICES[fam]:
            if _RULES[spec.when](atom):
                return spec
        ops = " or ".join(s.op for s in T.MMA_OP_CHOICES[fam])
        raise EmitError(
            f"to_cute_dsl: CuTe DSL 4.8 has no op for {name}: its {fam} ops are {ops}, which "
            "do not take this type pairing / scale vector size; the nearest is "
            f"{T.MMA_OP_CHOICES[fam][0].op}"
        )
    if fam not in T.MMA_OPS:
        raise EmitError(
            f"to_cute_dsl: no CuTe DSL op is known for {name} (family {fam}); see "
            "cutemma/emit/dsl_ops.py for the ops the DSL has"
        )
    spec = T.MMA_OPS[fam]
    if spec.acc and atom.val_type_C.name not in spec.acc:
        raise EmitError(
            f"to_cute_dsl: {name} accumulates in {atom.val_type_C.name}; {spec.op} accumulates "
            f"only in {', '.join(spec.acc)}"
        )
    return spec


def _mma_op(atom) -> str:
    spec = mma_op_spec(atom)
    args = [_arg(k, atom, spec) for k in spec.args]
    return f"{spec.op}({', '.join(args)})"


def _mma_atom(atom) -> str:
    return f"cute.make_mma_atom({_mma_op(atom)})"


def dsl_arch(obj) -> str | None:
    """The ``CUTE_DSL_ARCH`` the DSL needs to build ``obj`` (None: any).

    CuTe DSL builds an architecture's atoms (wgmma: ``sm_90a``, tcgen05: ``sm_100a``) only
    when it compiles for that architecture, which it reads from the GPU; on a machine without
    that GPU, set ``CUTE_DSL_ARCH`` to this value before importing the DSL to trace what
    :func:`to_cute_dsl` wrote for ``obj``.

    >>> from cutemma import make_mma_atom
    >>> dsl_arch(make_mma_atom("SM90_64x8x16_F16F16F16_SS"))
    'sm_90a'
    """
    from cutemma.copy.atom import CopyAtom
    from cutemma.mma.atom import MmaAtom
    from cutemma.tiled import TiledCopy, TiledMma

    if isinstance(obj, TiledMma | TiledCopy):
        return dsl_arch(obj.atom)
    if isinstance(obj, MmaAtom):
        return mma_op_spec(obj).arch
    if isinstance(obj, CopyAtom):
        spec = T.COPY_OPS.get(obj.op.family)
        return spec.arch if spec else None
    return None


def _tiled_mma(tm) -> str:
    from cutemma.layout import Layout, size

    L = tm.atom_layout_mnk
    if len(L.shape if isinstance(L.shape, tuple) else (L.shape,)) < 3:
        shape = L.shape if isinstance(L.shape, tuple) else (L.shape,)
        stride = L.stride if isinstance(L.stride, tuple) else (L.stride,)
        pad = 3 - len(shape)
        L = Layout(shape + (1,) * pad, stride + (0,) * pad)
    text = f"cute.make_tiled_mma({_mma_atom(tm.atom)}, {_layout(L)}"
    perms = tm.permutation_mnk
    if any(p is not None for p in perms):
        # a mode left as None is the identity over the atoms' extent (CuTe's Underscore)
        full = tuple(
            p if p is not None else tm.atom.shape_mnk[i] * size(L[i]) for i, p in enumerate(perms)
        )
        text += f", {_tiler(full)}"
    return text + ")"


# ---------------------------------------------------------------- copy atoms
def _copy_op(atom) -> tuple[str, str]:
    """(op expression, extra keyword text) of a copy atom."""
    op, fam, name = atom.op, atom.op.family, atom.name
    if fam in T.COPY_NO_OP:
        raise EmitError(
            f"to_cute_dsl: CuTe DSL 4.8 has no copy op for {name} (family {fam}); the nearest "
            f"it has is {T.COPY_NO_OP[fam]}"
        )
    if fam in T.COPY_NOT_WIRED:
        raise EmitError(
            f"to_cute_dsl: cutemma does not emit {name} yet; in CuTe DSL write "
            f"{T.COPY_NOT_WIRED[fam]} by hand"
        )
    if "ZFILL" in name:
        raise EmitError(
            f"to_cute_dsl: CuTe DSL 4.8 has no zero-fill cp.async op for {name}; the nearest "
            "is cute.nvgpu.cpasync.CopyG2SOp with a predicated cute.copy (pred=...)"
        )
    if fam not in T.COPY_OPS:
        raise EmitError(f"to_cute_dsl: no CuTe DSL copy op is known for {name} (family {fam})")
    spec = T.COPY_OPS[fam]
    p = dict(op.params)
    fields = {
        "trans": p.get("trans"),
        "num": p.get("num"),
        "cache": T.CP_ASYNC_CACHE.get(p.get("cache", "ca")),
    }
    if fam.startswith("sm100.tmem"):
        stem = T.TMEM_SHAPES[p["shape"]]
        fields["ld"], fields["st"] = f"Ld{stem}Op", f"St{stem}Op"
        fields["rep"] = f"cute.nvgpu.tcgen05.Repetition.x{p['reps']}"
        pack = "PACK_16b_IN_32b" if p.get("pack16") else "NONE"
        unpack = "UNPACK_32b_IN_16b" if p.get("pack16") else "NONE"
        fields["pack"] = f"cute.nvgpu.tcgen05.Pack.{pack}"
        fields["unpack"] = f"cute.nvgpu.tcgen05.Unpack.{unpack}"
    if fam == "sm100.ldsm8" and p.get("src_bits") not in T.LDSM8:
        raise EmitError(
            f"to_cute_dsl: CuTe DSL 4.8 has no op for {name}; the nearest it has is "
            f"{T.LDSM8_T_NEAREST}"
        )
    if fam == "sm100.ldsm8":
        fields["ldsm8"] = T.LDSM8[p.get("src_bits")].format(num=p["num"])
    if fam == "sm100.utccp":
        fields["cp"] = T.UTCCP_SHAPES[p["shape"]]
        fields["cta"] = f"cute.nvgpu.tcgen05.CtaGroup.{'TWO' if p['ctas'] == 2 else 'ONE'}"
    extra = ""
    if spec.bits and spec.bits in p:
        extra = f", num_bits_per_copy={p[spec.bits]}"
    return spec.expr.format(**fields), extra


def _copy_atom(atom) -> str:
    op, extra = _copy_op(atom)
    return f"cute.make_copy_atom({op}, {_dtype(atom.val_type.name, atom.name)}{extra})"


def _tiled_copy(tc, mma=None) -> str:
    if mma is not None:
        from cutemma.tiled import TiledMma
        from cutemma.tiled.tiled_copy import make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C

        if not isinstance(mma, TiledMma):
            raise EmitError(f"to_cute_dsl: mma= must be a TiledMma, got {type(mma).__name__}")
        for which, make in (
            ("A", make_tiled_copy_A),
            ("B", make_tiled_copy_B),
            ("C", make_tiled_copy_C),
        ):
            other = make(tc.atom, mma)
            if (
                str(other.layout_tv_tiled) == str(tc.layout_tv_tiled)
                and other.tiler_mn == tc.tiler_mn
            ):
                return f"cute.make_tiled_copy_{which}({_copy_atom(tc.atom)}, {_tiled_mma(mma)})"
        raise EmitError(
            "to_cute_dsl: this TiledCopy is not make_tiled_copy_A/B/C of its atom and the given "
            "mma; emit it without mma= (as cute.make_tiled_copy)"
        )
    tiler = tuple(tc.tiler_mn)
    return (
        f"cute.make_tiled_copy({_copy_atom(tc.atom)}, {_layout(tc.layout_tv_tiled)}, "
        f"{_tiler(tiler)})"
    )


def _kinds():
    from cutemma.copy.atom import CopyAtom
    from cutemma.layout import Layout
    from cutemma.layout.basis import BasisLayout
    from cutemma.layout.swizzle import ComposedLayout, Swizzle
    from cutemma.mma.atom import MmaAtom
    from cutemma.tiled import TiledCopy, TiledMma

    return {
        "layout": Layout,
        "basis": BasisLayout,
        "swizzle": Swizzle,
        "composed": ComposedLayout,
        "mma": MmaAtom,
        "tiled_mma": TiledMma,
        "copy": CopyAtom,
        "tiled_copy": TiledCopy,
    }


def _kind(key: str):
    return lambda: _kinds()[key]


_EMITTERS = (
    (_kind("layout"), _layout),
    (_kind("basis"), _basis_layout),
    (_kind("swizzle"), _swizzle),
    (_kind("composed"), _composed),
    (_kind("mma"), _mma_atom),
    (_kind("tiled_mma"), _tiled_mma),
    (_kind("copy"), _copy_atom),
    (_kind("tiled_copy"), _tiled_copy),
)
