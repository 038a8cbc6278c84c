"""Probe kernels for sm90 GMMA atoms: one ``wgmma.mma_async`` on a whole 64xNxK tile.

The kernel follows the probe contract of :mod:`cutemma.cuda.probe`
(``NAME(const A_T* A, const B_T* B, const C_T* C, D_T* D)``, tiles at ``m + k*M``,
``n + k*N``, ``m + n*M``) with one warpgroup (128 threads):

1. A (SS) and B are copied from global memory into shared memory in the canonical
   layout ``tile_to_shape(gmma_layout_atom(major, swizzle, type), (MN, K))`` of the op's
   majors, with the widest swizzle the tile allows; the descriptors come from
   ``make_gmma_desc`` of that same layout, the kernel adds the buffer's address to the
   start field (PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format": bits 0-13 hold
   ``(addr & 0x3FFFF) >> 4``).
2. RS: A is packed into the op's registers through ``tv_layout_A``.
3. C is loaded into the accumulator registers through ``tv_layout_C``; then
   ``wgmma.fence``, the instruction, ``wgmma.commit_group``, ``wgmma.wait_group 0``
   (PTX ISA 9.7.15.6 "Asynchronous wgmma Proxy Operations" and 9.7.15.7: the fence
   orders register accesses before the async MMA; shared-memory writes need
   ``fence.proxy.async`` to be seen by it), and D is stored through ``tv_layout_C``.

Indices. Every offset in the source is a Layout rendered as C: a mode's flattened
(shape, stride) pairs become ``(x / d % s) * stride`` terms (CuTe's static layouts
compile to exactly this), a Swizzle becomes ``o ^ ((o & yyy) >> shift)`` with its own
constants, and per-value offsets of a TV layout are evaluated in Python and written as
literals. Tables would not do here: 2148 probes in one program would carry megabytes
of offsets (and overflow the 64 KiB of ``__constant__`` memory). :func:`layout_expr`
is checked against the Layout for every coordinate in the tests.

The wgmma statement comes from :func:`cutemma.cuda.codegen.mma_asm`, i.e. from the
Operation's catalog description (``ptx``, ``operands``, register arrays, ``extras``:
scale-d predicate, imm-scale-a/b, imm-trans-a/b, sparsity metadata and selector).

Compile time (2268 probes in the CPU test): fragment accesses go through volatile views and
the copy loops stay rolled, which cut NVRTC's time per probe roughly in half (NVVM spends it
on optimising hundreds of unrolled memory accesses a run-once probe does not need).

Checked on an H100 (2026-11-22): all 1152 dense probes (every N, type, SS/RS, the
K-major catalog atoms and MN-major f16/bf16 forms) gave D equal to ``emulate_tiles``
within the verify tolerance (integers and b1 exact).

Sparse GMMA (``wgmma.mma_async.sp``, PTX ISA 9.7.15.6) probes take the instruction's own
operands, computed on the host by :mod:`cutemma.mma.sparse` from the dense 2:4 A:
``NAME(A, B, C, D, E)`` where A is the packed 64 x K/2 tile (``m + k*64``; SS: copied to
shared memory in the canonical layout of that half of K, RS: loaded through the packed
register layout :func:`cutemma.mma.sparse.compressed_tv_layout` of ``tv_layout_A``) and E
holds 128 ``uint32_t`` ``sp-meta`` words, thread t's at ``E[t]``.

>>> from cutemma.mma import mma_op
>>> p = make_probe(mma_op('SM90_64x8x16_F32F16F16_SS'))
>>> p.arch, p.sass_kinds, p.threads, p.runnable_on
('sm_90a', ('HGMMA',), 128, ('sm_90a',))
"""

from __future__ import annotations

from dataclasses import dataclass

from cutemma.cuda.codegen import element_container, mma_asm, tile_params
from cutemma.cuda.probe_kernel import Probe
from cutemma.cuda.source import Param, block, comment, kernel
from cutemma.errors import CompileError
from cutemma.layout import ComposedLayout, Layout, Swizzle, flatten, tile_to_shape
from cutemma.mma.catalog import traits_of
from cutemma.mma.operation import Operation
from cutemma.mma.sparse import compressed_tv_layout, sparse_format
from cutemma.mma.types import NumericType
from cutemma.smem import gmma_layout_atom, make_gmma_desc

THREADS = 128  # one warpgroup
ARCH = "sm_90a"  # wgmma needs the arch-specific target (plain sm_90 is refused by ptxas)
SWIZZLES = ("SW128", "SW64", "SW32", "INTER")  # widest first
# SASS kind per A type class, as cuobjdump prints the sm_90a tensor-core instructions.
SASS_KIND = {"float": "HGMMA", "int": "IGMMA", "bits": "BGMMA"}


# --- element containers of the probe contract -------------------------------------------


def _bits_of(t: NumericType, expr: str) -> str:
    """``expr`` (an element in its container) as uint32_t bits in the low ``t.bits``."""
    if element_container(t) == "float":
        return f"__float_as_uint({expr})"
    if t.bits == 1:
        return f"((uint32_t){expr} & 1u)"
    return f"(uint32_t){expr}"


# --- layouts as C ------------------------------------------------------------------------


def _pairs(shape, stride) -> list[tuple[int, int]]:
    return [(s, d) for s, d in zip(flatten(shape), flatten(stride))]


def layout_expr(shape, stride, var: str) -> str:
    """A layout mode (nested shape and stride) at the 1-D coordinate ``var``, as C.

    Each flattened pair (s, d) after a running divisor q adds ``(var / q % s) * d``;
    size-1 and stride-0 pairs vanish. The result equals ``Layout(shape, stride)(x)``.

    >>> layout_expr((4, 8, 4), (128, 1, 16), "t")
    '(t % 4 * 128 + t / 4 % 8 + t / 32 * 16)'
    >>> layout_expr(8, 0, "t")
    '0'
    """
    terms, q = [], 1
    pairs = _pairs(shape, stride)
    total = 1
    for s, _ in pairs:
        total *= s
    for s, d in pairs:
        if s != 1 and d != 0:
            x = var if q == 1 else f"{var} / {q}"
            if q * s < total:
                x = f"{x} % {s}"
            terms.append(x if d == 1 else f"{x} * {d}")
        q *= s
    return f"({' + '.join(terms)})" if terms else "0"


def swizzle_expr(sw: Swizzle | None, expr: str) -> str:
    """``sw`` applied to the C expression ``expr`` (CuTe's Swizzle<B,M,S>: the bits of
    ``yyy_mask`` shifted by S are XORed into the offset).

    >>> swizzle_expr(Swizzle(3, 3, 3), "o")
    '(o ^ ((o & 448) >> 3))'
    >>> swizzle_expr(Swizzle(0, 4, 3), "o")
    'o'
    """
    if sw is None or sw.bits == 0:
        return expr
    op = ">>" if sw.shift >= 0 else "<<"
    return f"({expr} ^ (({expr} & {sw.yyy_mask}) {op} {abs(sw.shift)}))"


# --- shared-memory operands --------------------------------------------------------------


@dataclass(frozen=True)
class SmemOperand:
    """One operand in shared memory: its tile (rows x cols in smem elements), layout,
    descriptor and how global elements map onto it.

    ``pack`` > 1 (b1, packed e2m1): one smem byte holds ``pack`` consecutive K elements of
    ``bits`` each, element k in bits ``(k % pack) * bits`` up (little-endian).
    """

    name: str  # 'A' or 'B'
    rows: int
    cols: int  # smem elements along K
    smem_type: str  # container of one smem element
    major: str
    swizzle: str
    layout: ComposedLayout
    desc: int
    pack: int = 1
    bits: int = 8

    @property
    def elements(self) -> int:
        """Size of the buffer in smem elements: the layout's cosize.

        >>> smem_operand("B", 8, 16, "f16", "K").elements
        128
        """
        return self.layout.cosize()


def pick_swizzle(rows: int, cols: int, major: str, dtype) -> str:
    """The widest swizzle whose atom tiles a (rows, cols) block of ``major``: K-major
    swizzle rows run along K, MN-major along MN (one descriptor covers one K-major row).

    >>> pick_swizzle(64, 16, "K", "f16"), pick_swizzle(64, 16, "MN", "f16")
    ('SW32', 'SW128')
    >>> pick_swizzle(24, 16, "MN", "f16")
    'INTER'
    """
    for sw in SWIZZLES:
        atom = gmma_layout_atom(major, sw, dtype)
        r, c = atom.shape
        if rows % r == 0 and cols % c == 0:
            return sw
    raise CompileError(
        f"no wgmma layout atom tiles a {rows}x{cols} {major}-major block of {dtype}: "
        "rows must be a multiple of 8 and K a whole number of 16 bytes"
    )


def smem_operand(name: str, rows: int, k: int, t, major: str) -> SmemOperand:
    """The shared-memory image of a rows x k operand of type ``t`` (b1: 8 per byte).

    >>> op = smem_operand("A", 64, 16, "f16", "K")
    >>> op.swizzle, str(op.layout), hex(op.desc)
    ('SW32', 'Sw<1,3,3> o 0 o ((8,8),(16,1)):((16,128),(1,0))', '0xc000001000010000')
    """
    from cutemma.mma.types import numeric_type

    t = numeric_type(t)
    pack = 8 if t.bits == 1 else 1
    dtype = "u8" if pack > 1 else t.name
    cols = k // pack
    sw = pick_swizzle(rows, cols, major, dtype)
    layout = tile_to_shape(gmma_layout_atom(major, sw, dtype), (rows, cols))
    desc = make_gmma_desc(layout, major, dtype).raw
    ctype = "uint8_t" if pack > 1 else element_container(t)
    return SmemOperand(name, rows, cols, ctype, major, sw, layout, desc, pack, t.bits)


def _split(layout: ComposedLayout) -> tuple[Swizzle, Layout]:
    if isinstance(layout, Layout):  # an INTER atom's identity swizzle collapses (as in CuTe)
        return Swizzle(0, 4, 3), layout
    if layout.offset != 0:
        raise CompileError(f"smem layout {layout} has an offset; probes place tiles at 0")
    return layout.outer, layout.inner


def smem_offset_expr(op: SmemOperand, row: str, col: str) -> str:
    """The smem element offset of (row, col) as C: the layout's two modes, then its swizzle.

    >>> smem_offset_expr(smem_operand("A", 64, 16, "f16", "K"), "r", "c")
    '((r % 8 * 16 + r / 8 * 128 + c) ^ (((r % 8 * 16 + r / 8 * 128 + c) & 64) >> 3))'
    """
    sw, inner = _split(op.layout)
    rows = layout_expr(inner.shape[0], inner.stride[0], row)
    cols = layout_expr(inner.shape[1], inner.stride[1], col)
    return swizzle_expr(sw, f"({rows[1:-1]} + {cols[1:-1]})")


def copy_to_smem(op: SmemOperand, src: str) -> str:
    """A loop in which the 128 threads copy tile ``src`` (rows x K at ``r + k*rows``) into
    the shared buffer ``s{name}``.

    >>> print(copy_to_smem(smem_operand("B", 8, 16, "f16", "K"), "B"))
    #pragma unroll 1
    for (int i = threadIdx.x; i < 128; i += 128) {
      int r = i % 8, c = i / 8;
      sB[((r * 16 + c) ^ (((r * 16 + c) & 64) >> 3))] = B[i];
    }
    """
    total = op.rows * op.cols
    where = smem_offset_expr(op, "r", "c")
    if op.pack == 1:
        value = f"{src}[i]"
    else:  # sub-byte: element k = c * pack + j sits at bit j * bits of smem byte c
        mask = (1 << op.bits) - 1
        parts = [
            f"((uint32_t){src}[r + (c * {op.pack} + {j}) * {op.rows}] & {mask}u) << {j * op.bits}"
            for j in range(op.pack)
        ]
        value = f"(uint8_t)({' | '.join(parts)})"
    body = f"int r = i % {op.rows}, c = i / {op.rows};\ns{op.name}[{where}] = {value};"
    # Kept rolled: unrolled, NVVM spends a third of the probe's compile time on it.
    loop = block(f"for (int i = threadIdx.x; i < {total}; i += {THREADS})", body)
    return f"#pragma unroll 1\n{loop}"


# --- register fragments ------------------------------------------------------------------


def _thread_expr(tv: Layout) -> str:
    return layout_expr(tv.shape[0], tv.stride[0], "t")


def _value_offsets(tv: Layout) -> list[int]:
    vals = Layout(tv.shape[1], tv.stride[1])
    return [vals(v) for v in range(vals.size())]


def load_fragment(var: str, regs, tv: Layout, src: str, base: str, t: NumericType) -> str:
    """Pack values of tile ``src`` into the register array ``var`` through the TV layout:
    register r holds values ``r*per .. r*per+per-1`` in rising bit positions (a sparse
    RS A passes its packed layout, :func:`cutemma.mma.sparse.compressed_tv_layout`).

    >>> from cutemma.mma import make_mma_atom
    >>> a = make_mma_atom('SM90_64x8x16_F32F16F16_RS')
    >>> print(load_fragment("a", a.op.a, a.tv_layout_A, "A", "a0", a.val_type_A).splitlines()[0])
    a[0] = (uint32_t)A[a0 + 0] | (uint32_t)A[a0 + 64] << 16;
    """
    offs = _value_offsets(tv)
    count = regs.count
    per = 32 // t.bits  # values per 32-bit register
    lines = []
    if regs.cpp == "float" and element_container(t) == "float":  # f32 accumulators: no packing
        return "\n".join(f"{var}[{r}] = {src}[{base} + {offs[r]}];" for r in range(count))
    for r in range(count):
        parts = []
        for j in range(per):
            bits = _bits_of(t, f"{src}[{base} + {offs[r * per + j]}]")
            parts.append(bits if j == 0 else f"{bits} << {j * t.bits}")
        value = " | ".join(parts)
        if regs.cpp == "float":
            value = f"__uint_as_float({value})"
        lines.append(f"{var}[{r}] = {value};")
    return "\n".join(lines)


def store_fragment(var: str, regs, tv: Layout, dst: str, base: str, t: NumericType) -> str:
    """Unpack the accumulator registers ``var`` into tile ``dst`` through the TV layout.

    >>> from cutemma.mma import make_mma_atom
    >>> a = make_mma_atom('SM90_64x8x16_F16F16F16_SS')
    >>> print(store_fragment("acc", a.op.c, a.tv_layout_C, "D", "c0", a.val_type_C).splitlines()[1])
    D[c0 + 64] = (uint16_t)(acc[0] >> 16);
    """
    offs = _value_offsets(tv)
    per = 32 // t.bits
    ctype = element_container(t)
    lines = []
    for v, off in enumerate(offs):
        reg = f"{var}[{v // per}]"
        if per == 1:
            value = reg if ctype == "float" else f"({ctype}){reg}"
        else:
            shift = (v % per) * t.bits
            value = f"({ctype})({reg} >> {shift})" if shift else f"({ctype}){reg}"
        lines.append(f"{dst}[{base} + {off}] = {value};")
    return "\n".join(lines)


# --- the instruction ---------------------------------------------------------------------


def wgmma_asm(op: Operation) -> str:
    """The instruction through :func:`cutemma.cuda.codegen.mma_asm` (the catalog's ptx,
    operand order, register arrays and extras): C is the read-write accumulator ``acc``,
    A is ``a`` (registers) or ``desc_a``, B ``desc_b``; scale-d comes from ``scale_d``
    and sparse metadata from ``sp_meta`` (PTX ISA 9.7.15.5.2 ``wgmma.mma_async``,
    9.7.15.6.3 ``wgmma.mma_async.sp``).

    >>> from cutemma.mma import mma_op
    >>> print(wgmma_asm(mma_op('SM90_64x8x16_F16F16F16_SS')).splitlines()[4])
      "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%0, %1}, %2, %3, p_scale_D, 1, 1, 0, 0;\\n"
    """
    a = [f"a[{i}]" for i in range(op.a.count)] if op.a_source == "reg" else ["desc_a"]
    return mma_asm(
        op,
        a=a,
        b=["desc_b"],
        c=[f"acc[{i}]" for i in range(op.c.count)],
        extras={"scale_D": "scale_d", "sp_meta": "sp_meta"},
    )


# --- the kernel --------------------------------------------------------------------------


def kernel_name(op: Operation) -> str:
    """A C identifier for the probe of ``op`` (majors and scales included, so the same
    shape with other params gets its own kernel).

    >>> from cutemma.mma import mma_op
    >>> kernel_name(mma_op('SM90_64x8x16_F16F16F16_SS', b_major='MN'))
    'probe_SM90_64x8x16_F16F16F16_SS_a_major_K_b_major_MN_scale_a_1_scale_b_1'
    """
    tail = "_".join(f"{k}_{v}" for k, v in op.params).replace("-", "m")
    base = op.name.split("<", 1)[0]  # the majors are in the params too
    text = f"probe_{base}_{tail}" if tail else f"probe_{base}"
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in text)


def _descriptor_lines(ops: list[SmemOperand]) -> list[str]:
    lines = []
    for s in ops:
        low = s.name.lower()
        lines.append(
            f"uint64_t desc_{low} = {s.desc:#x}ull + "
            f"((uint64_t)((uint32_t)__cvta_generic_to_shared(s{s.name}) >> 4) & 0x3FFF);"
            f"  // {s.major}-major {s.swizzle}: {s.layout}"
        )
    return lines


# Volatile views for the unrolled per-value fragment accesses: NVVM's memory optimisations
# over hundreds of accesses in one block cost 4x the compile time (measured: N=256 f32,
# 0.10 s -> 0.025 s per kernel) and buy nothing in a probe that runs once.
_VOLATILE = "const volatile {a}* vA = A; const volatile {c}* vC = C; volatile {d}* vD = D;"


def _smem_operands(op: Operation, tr) -> list[SmemOperand]:
    """A (SS only; sparse: the stored half of K) and B in shared memory, by the op's majors."""
    m, n, k = tr.shape_mnk
    out = []
    if op.a_source == "smem":
        ka = k // 2 if _sparse(op) else k
        out.append(smem_operand("A", m, ka, tr.val_type_A, op.param("a_major")))
    out.append(smem_operand("B", n, k, tr.val_type_B, op.param("b_major")))
    return out


def _sparse(op: Operation) -> bool:
    return op.ptx.startswith("wgmma.mma_async.sp.")


def _register_a_layout(op: Operation, tr) -> Layout:
    """tv_layout_A, or for a sparse atom its packed form over the 64 x K/2 tile."""
    fmt = sparse_format(op)
    return tr.tv_layout_A if fmt is None else compressed_tv_layout(tr.tv_layout_A, fmt)


def _load_lines(op: Operation, tr, smem: list[SmemOperand]) -> list[str]:
    """Shared-memory copies, descriptors, RS A registers and the accumulators."""
    cont = {x: element_container(getattr(tr, f"val_type_{x}")) for x in "ABCD"}
    lines = [f"__shared__ __align__(1024) {s.smem_type} s{s.name}[{s.elements}];" for s in smem]
    lines.append("int t = threadIdx.x;")
    lines.append(_VOLATILE.format(a=cont["A"], c=cont["C"], d=cont["D"]))
    lines += [copy_to_smem(s, s.name) for s in smem]
    lines.append('asm volatile("fence.proxy.async.shared::cta;" ::: "memory");')
    lines.append("__syncthreads();")
    lines += _descriptor_lines(smem)
    if op.a_source == "reg":
        la = _register_a_layout(op, tr)
        lines.append(f"{op.a.cpp} a[{op.a.count}];")
        lines.append(f"int a0 = {_thread_expr(la)};  // A {la}")
        lines.append(load_fragment("a", op.a, la, "vA", "a0", tr.val_type_A))
    lines.append(f"{op.c.cpp} acc[{op.c.count}];")
    lines.append(f"int c0 = {_thread_expr(tr.tv_layout_C)};  // C {tr.tv_layout_C}")
    lines.append(load_fragment("acc", op.c, tr.tv_layout_C, "vC", "c0", tr.val_type_C))
    return lines


def _mma_lines(op: Operation) -> list[str]:
    """fence, the instruction, commit, wait (PTX ISA 9.7.15.6.1-9.7.15.6.3)."""
    lines = ["int scale_d = 1;  // D = A B + C"]
    fmt = sparse_format(op)
    if fmt is not None:  # PTX ISA 9.7.15.6.2: one .b32 sp-meta register per thread
        lines.append(f"uint32_t sp_meta = E[t];  // {fmt.ratio} metadata, layout {fmt.meta}")
    lines.append('asm volatile("wgmma.fence.sync.aligned;" ::: "memory");')
    lines.append(wgmma_asm(op))
    lines.append('asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");')
    lines.append('asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");')
    return lines


def sass_kind(op: Operation, tr) -> str:
    """The SASS opcode the instruction assembles to on sm_90a: HGMMA (f16/bf16/tf32),
    QGMMA (fp8), IGMMA (s8/u8), BGMMA (b1).

    >>> from cutemma.mma import mma_op
    >>> sass_kind(mma_op('SM90_64x8x32_F16E4M3E5M2_SS_TN'), traits_of(mma_op('SM90_64x8x32_F16E4M3E5M2_SS_TN')))
    'QGMMA'
    """
    a = tr.val_type_A
    return "QGMMA" if a.name in ("e4m3", "e5m2") else SASS_KIND[a.kind]


def make_probe(op: Operation, atom=None) -> Probe:
    """The probe kernel of a GMMA Operation (SS or RS, dense or sparse). ``atom`` (an
    MmaAtom of ``op``) overrides the catalog's traits, so a deliberately altered layout
    reaches the kernel.

    >>> from cutemma.mma import mma_op
    >>> p = make_probe(mma_op('SM90_64x16x32_S32S8U8_RS_TN'))
    >>> p.sass_kinds, p.threads, p.shared_bytes  # static __shared__ only
    (('IGMMA',), 128, 0)
    >>> make_probe(mma_op('SM90_SPARSE_64x8x32_F16F16F16_SS')).runnable_on
    ('sm_90a',)
    """
    if not op.ptx.startswith("wgmma.mma_async"):
        raise CompileError(f"{op.name}: not a GMMA atom (ptx {op.ptx!r}); use probe_for")
    tr = atom.traits if atom is not None else traits_of(op)
    name = kernel_name(op)
    params = tile_params(tr)
    note = ""
    if _sparse(op):
        params.append(Param("const uint32_t*", "E"))
        note = "\nA: the packed 64 x K/2 tile; E: each thread's sp-meta word (cutemma.mma.sparse)"
    body = [comment(f"{op.name} {dict(op.params)}: {op.ptx}{note}")]
    body += _load_lines(op, tr, _smem_operands(op, tr))
    body += _mma_lines(op)
    body.append(store_fragment("acc", op.c, tr.tv_layout_C, "vD", "c0", tr.val_type_D))
    return Probe(
        op=op,
        kernel_name=name,
        source=kernel(name, params, "\n".join(body), THREADS),
        arch=ARCH,
        sass_kinds=(sass_kind(op, tr),),
        threads=THREADS,
        shared_bytes=0,
        runnable_on=(ARCH,),
    )
