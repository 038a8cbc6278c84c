"""CUDA C++ of an sm80 GEMM, D = alpha * A @ B + beta * C, generated from a GemmPlan.

The kernel: a TiledMMA of ``mma.sync.m16n8k16`` (f16/bf16 in, f32 accumulate);
global -> shared through ``cp.async`` (16-byte chunks, or 8/4-byte ``.ca`` ones where a row
is not whole 16-byte chunks; zero-filled past the matrix edge: ``src-size`` < cp-size fills
the rest with zeros, PTX ISA "cp.async";
https://docs.rs/crate/ptx-90-parser/latest/source/docs/instructions/cp.md) in a
``stages``-deep pipeline; swizzled shared tiles; ``ldmatrix`` (x4, or the x2/x1 a design
asks) into the atom fragments; the epilogue through partition_C, predicated at the edges.
Every offset is a number from :class:`cutemma.kernels.sm80.plan.GemmPlan`: a thread part
written as the expression of its Layout (or one per group of values), plus constants.

>>> from cutemma.kernels.sm80.plan import GemmConfig
>>> src = gemm_source(GemmConfig(), "bf16", "K", "N", out="bf16")
>>> "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in src, kernel_name(GemmConfig(), "bf16", "K", "N", "bf16", "bf16", True, True)
(True, 'cutemma_gemm_sm80_bf16_KN_b128x128x32_w2x2_s4_obf16_cbf16_v8v8')
"""

from __future__ import annotations

from cutemma.cuda.codegen import mma_asm
from cutemma.cuda.source import (
    FIXED_WIDTH_TYPES,
    FLOAT_CONVERSIONS,
    FROM_F32,
    SMEM_ADDR,
    TO_F32,
    Param,
    comment,
    indent,
    kernel,
    translation_unit,
)
from cutemma.errors import TiledMmaError
from cutemma.kernels.common.expr import check_outs, swizzle_expr, thread_expr
from cutemma.kernels.common.partition import Split
from cutemma.kernels.common.scheduler import raster_sm80
from cutemma.kernels.common.types import OUT_TYPES
from cutemma.kernels.epilogue import NO_EPILOGUE, Epilogue
from cutemma.kernels.sm80.pipeline import mainloop_steps
from cutemma.kernels.sm80.plan import CopyPlan, GemmConfig, GemmPlan

# input element containers: 16-bit floats as bits, tf32 as the fp32 bits the tensor core reads
IN_TYPES = {"f16": "uint16_t", "bf16": "uint16_t", "tf32": "uint32_t", "s8": "int8_t"}
IN_TYPES |= {fp8: "uint8_t" for fp8 in ("e4m3", "e5m2", "e4m3_e5m2", "e5m2_e4m3")}  # fp8 bits

HELPERS = (
    "\n"
    + SMEM_ADDR
    + r"""
// 16-byte cp.async; src_bytes < 16 zero-fills the rest of the chunk (0: all zeros)
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(src_bytes));
}

// a whole 16-byte chunk, known inside the matrix
__device__ __forceinline__ void cp_async_16_full(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(src));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N)); }

"""
    + FLOAT_CONVERSIONS
)
# 8- and 4-byte chunks (cp.async.ca: .cg moves 16 bytes only), for rows that are not whole
# 16-byte chunks; in the source only where a copy uses them
NARROW_CP_ASYNC = "".join(
    f"""
__device__ __forceinline__ void cp_async_{n}(uint32_t dst, const void* src, int src_bytes) {{
  asm volatile("cp.async.ca.shared.global [%0], [%1], {n}, %2;\\n" :: "r"(dst), "l"(src), "r"(src_bytes));
}}
__device__ __forceinline__ void cp_async_{n}_full(uint32_t dst, const void* src) {{
  asm volatile("cp.async.ca.shared.global [%0], [%1], {n};\\n" :: "r"(dst), "l"(src));
}}
"""
    for n in (8, 4)
)


def as_config(config: object, design: object = None) -> tuple[object, object]:
    """(config, design) of what a caller passed as ``config``: a GemmDesign (what
    :func:`cutemma.kernels.pick_config` returns) stands for its config, and for itself when
    it is a custom one; anything else is passed on to be checked.

    >>> as_config(GemmConfig(64, 64, 32))
    (GemmConfig(block_m=64, block_n=64, block_k=32, warps=(2, 2), stages=4, swizzle_bytes=128, group_m=8), None)
    """
    inner = getattr(config, "config", None)  # duck-typed: the design module imports this one
    if isinstance(inner, GemmConfig) and hasattr(config, "custom"):
        return inner, (config if config.custom else design)
    return config, design


def kernel_name(
    config: GemmConfig,
    dtype: str,
    a_major: str,
    b_major: str,
    out: str,
    c_type: str,
    vec_a: bool,
    vec_b: bool,
    design: object = None,
    epilogue: Epilogue = NO_EPILOGUE,
) -> str:
    """The kernel's symbol: every choice that changes the source is in it (a design's own
    TiledMMA, layouts and copies: its name; a fused epilogue's ops and tensor types last,
    :attr:`Epilogue.suffix`).

    An f16 kernel, A M-major, B K-major, f32 out and C, B read one element at a time:

    >>> kernel_name(GemmConfig(64, 64, 32, (2, 2), 4), "f16", "M", "K", "f32", "f32", True, False)
    'cutemma_gemm_sm80_f16_MK_b64x64x32_w2x2_s4_of32_cf32_v8v1'
    """
    config, design = as_config(config, design)
    GemmPlan.check_names(config, dtype, a_major, b_major)
    check_outs("kernel_name", out, c_type)
    if not (isinstance(vec_a, bool) and isinstance(vec_b, bool)):
        raise TiledMmaError(f"kernel_name: vec_a={vec_a!r}, vec_b={vec_b!r}: each True or False")
    va, vb = ("v8" if vec_a else "v1"), ("v8" if vec_b else "v1")
    name = f"cutemma_gemm_sm80_{dtype}_{a_major}{b_major}_{config.name}_o{out}_c{c_type}_{va}{vb}"
    name = name if design is None else f"{name}_{design.name}"
    return name + epilogue.suffix


def params(
    out: str, c_type: str, dtype: str = "f16", epilogue: Epilogue = NO_EPILOGUE
) -> list[Param]:
    """The kernel signature, shared by the generator and the launcher (a fused epilogue's
    tensors and strides last: :meth:`Epilogue.params`).

    Inputs are ``__restrict__``; C and D are not (``D = C`` updates in place):

    >>> [p.declaration for p in params("f32", "f32", "s8")[:4]]
    ['const int8_t* __restrict__ A', 'const int8_t* __restrict__ B', 'const float* C', 'float* D']
    """
    return [
        Param(f"const {IN_TYPES[dtype]}*", "A"),
        Param(f"const {IN_TYPES[dtype]}*", "B"),
        Param(f"const {OUT_TYPES[c_type]}*", "C", restrict=False),
        Param(f"{OUT_TYPES[out]}*", "D", restrict=False),
        Param("int", "M"),
        Param("int", "N"),
        Param("int", "K"),
        Param("long long", "lda"),
        Param("long long", "ldb"),
        Param("long long", "ldc_m"),
        Param("long long", "ldc_n"),
        Param("long long", "ldd_m"),
        Param("long long", "ldd_n"),
        Param("float", "alpha"),
        Param("float", "beta"),
        # batched 3-D: element strides between the problems of blockIdx.y (0 broadcasts)
        Param("long long", "batch_a"),
        Param("long long", "batch_b"),
        Param("long long", "batch_c"),
        Param("long long", "batch_d"),
        *epilogue.params(),
    ]


def _combine(base: str, op: str, const: int) -> str:
    if const == 0:
        return base
    return f"({base} {op} {const})"


def _keyed(split: Split, base: str, key: int) -> str:
    """C text of a split's thread part ``base`` at one of its keys (Split.parts): base ^ key,
    (op 's+') the stage's swizzle of base + key, or (op 'k+') key's own thread part."""
    if split.op == "k+":
        return f"{base}{key}"
    if split.op == "s+":
        return f"({swizzle_expr(split.swizzle, _combine(base, '+', key))})"
    return _combine(base, "^", key)


def _copy_roles(plan: GemmPlan, cp: CopyPlan) -> dict[str, str]:
    """C names of one operand's copy: its extent, block origin, leading stride, stage offset."""
    X = cp.which
    return {
        "X": X,
        "ext": "M" if X == "A" else "N",
        "mn0": "m0" if X == "A" else "n0",
        "ld": "lda" if X == "A" else "ldb",
        "block": "BLOCK_M" if X == "A" else "BLOCK_N",
        "off": "0" if X == "A" else str(plan.stage_elems_A),
    }


def _copy_setup(plan: GemmPlan, cp: CopyPlan, vec: bool) -> str:
    """Once per thread: its chunks' global pointers (advanced a k tile per copy), their
    shared destinations, and whether the block's rows (columns) are all inside."""
    r = _copy_roles(plan, cp)
    X, ld, mn0, ext, eb = r["X"], r["ld"], r["mn0"], r["ext"], plan.elem_bytes
    keys, parts = cp.smem.parts()
    lines = [
        f"const uint32_t {X}_dst{j} = smem_base + {eb} * ({r['off']} + "
        f"{_keyed(cp.smem, f'{X}_copy_base', key)});"
        for j, key in enumerate(keys)
    ]
    if not vec:
        return "\n".join(lines)
    if cp.k_contiguous:  # rows are m (n), chunks run along k: the k tail clips every row alike
        origin, step = f"(long long)({mn0} + {X}_o) * {ld} + {X}_c", "BLOCK_K"
    else:  # rows are k, chunks run along m (n): the m (n) edge clips this thread's column
        origin, step = f"(long long){X}_o * {ld} + {mn0} + {X}_c", f"(long long)BLOCK_K * {ld}"
        lines.append(
            f"const int {X}_col_bytes = min(max({eb} * ({ext} - ({mn0} + {X}_c)), 0), "
            f"{cp.chunk_bytes});"
        )
    T = IN_TYPES[plan.dtype]
    lines.append(f"const {T}* {X}_src = {X} + {origin};  // this thread's first chunk, k tile 0")
    lines.append(f"const long long {X}_step = {step};  // one k tile, in elements")
    if len(cp.smem.parts()[1]) > 1:  # only a second chunk steps by it (no unused variable)
        lines.append(
            f"const long long {X}_rows = {cp.rows_per_pass} * {ld};  // chunk i+1 - chunk i"
        )
    lines.append(f"const bool {X}_inside = {mn0} + {r['block']} <= {ext};")
    return "\n".join(lines)


def _copy_lines(plan: GemmPlan, cp: CopyPlan, vec: bool, fast: bool) -> str:
    """Copy k tile ``kt`` of one operand into the write stage ``wr`` (bytes), unrolled over
    chunks. ``fast``: a full tile inside the matrix, no predicates; else each chunk is
    clipped at the edges (zero fill). The chunk pointers then move on a k tile."""
    r = _copy_roles(plan, cp)
    X, ld, mn0, ext = r["X"], r["ld"], r["mn0"], r["ext"]
    eb, T = plan.elem_bytes, IN_TYPES[plan.dtype]
    _, parts = cp.smem.parts()
    lines = [f"const {T}* p = {X}_src;"] if vec else []
    if vec and not fast and cp.k_contiguous:
        lines.append(
            f"const int {X}_k_bytes = min(max({eb} * (K - (kt * BLOCK_K + {X}_c)), 0), "
            f"{cp.chunk_bytes});"
        )
    for i, (j, add) in enumerate(parts):
        o_off = i * cp.rows_per_pass
        dst = f"{X}_dst{j} + wr" + (f" + {eb * add}" if add else "")
        if vec and i:
            lines.append(f"p += {X}_rows;")
        if fast:
            lines.append(f"cp_async_{cp.chunk_bytes}_full({dst}, p);  // chunk {i}: row +{o_off}")
            continue
        if vec:
            if cp.k_contiguous:
                ok, nbytes = f"{mn0} + {X}_o + {o_off} < {ext}", f"{X}_k_bytes"
            else:
                ok, nbytes = f"kt * BLOCK_K + {X}_o + {o_off} < K", f"{X}_col_bytes"
            body = [
                f"const int bytes = ({ok}) ? {nbytes} : 0;",
                f"cp_async_{cp.chunk_bytes}({dst}, bytes ? p : {X}, bytes);",
            ]
        else:
            if cp.k_contiguous:  # rows are m (n), chunks run along k
                row, col = f"{mn0} + {X}_o + {o_off}", f"kt * BLOCK_K + {X}_c"
                ext_o, ext_c = ext, "K"
            else:  # rows are k, chunks run along m (n)
                row, col = f"kt * BLOCK_K + {X}_o + {o_off}", f"{mn0} + {X}_c"
                ext_o, ext_c = "K", ext
            elem = f"(({dst}) - smem_base) / {eb}"
            body = [
                f"const int row = {row}, col = {col};",
                f"{T}* dst = smem + {elem};",
                f"const bool row_ok = row < {ext_o};",
                f"#pragma unroll\nfor (int j = 0; j < {cp.vec}; ++j) "
                f"dst[j] = (row_ok && col + j < {ext_c}) ? {X}[(long long)row * {ld} + col + j] "
                f": ({T})0;",
            ]
        lines.append(f"{{  // {X} chunk {i}: row +{o_off}\n{indent(chr(10).join(body))}\n}}")
    if not vec:
        return _only_copiers(plan, cp, "\n".join(lines))
    lines.append(f"{X}_src += {X}_step;")
    return _only_copiers(plan, cp, "\n".join([f"{{  // {X}", indent("\n".join(lines)), "}"]))


def _only_copiers(plan: GemmPlan, cp: CopyPlan, text: str) -> str:
    """``text`` run by the copy's threads only, when fewer than the block's move the tile
    (the others still commit, wait and reach the barriers, which are steps of their own)."""
    if cp.threads == plan.threads:
        return text
    return "\n".join(
        [
            f"if (tid < {cp.threads}) {{  // {cp.which}: threads {cp.threads}.. idle",
            indent(text),
            "}",
        ]
    )


def _ldsm_setup(plan: GemmPlan, which: str) -> str:
    """Shared addresses of the lane's ldmatrix rows: one per key of the split (see Split.parts)."""
    _, split = plan.ldmatrix(which)
    keys, _ = split.parts()
    off = "0" if which == "A" else str(plan.stage_elems_A)
    return "\n".join(
        f"const uint32_t {which}_ldsm{j} = smem_base + {plan.elem_bytes} * ({off} + "
        f"{_keyed(split, f'{which}_ldsm_base', key)});"
        for j, key in enumerate(keys)
    )


def _regload_setup(plan: GemmPlan, which: str) -> str:
    """Shared addresses of the lane's register loads: one per key (see Split.parts)."""
    split = plan.regload(which)
    keys, _ = split.parts()
    off = "0" if which == "A" else str(plan.stage_elems_A)
    return "\n".join(
        f"const uint32_t {which}_ld{j} = smem_base + {plan.elem_bytes} * ({off} + "
        f"{_keyed(split, f'{which}_ld_base', key)});"
        for j, key in enumerate(keys)
    )


_LD_NARROW = {1: "ld.shared.u8", 2: "ld.shared.b16"}


def _regload_lines(plan: GemmPlan, which: str, ik: int, buf: int) -> list[str]:
    """Plain shared loads of ``which``'s fragments of k block ``ik`` (UniversalCopy): each
    register one 32-bit load where its values are consecutive, else one load per value,
    packed low bytes first."""
    split, eb, vpr = plan.regload(which), plan.elem_bytes, 4 // plan.elem_bytes
    _, parts = split.parts()
    wide = plan.regload_wide(which)
    groups = plan.mma_m if which == "A" else plan.mma_n
    regs = plan.frag_regs[which]
    frag = "a_frag" if which == "A" else "b_frag"
    out = []

    def addr(i: int) -> str:
        j, add = parts[i]
        return f"{which}_ld{j} + rd" + (f" + {eb * add}" if add else "")

    for g in range(groups):
        for r in range(regs):
            dst = f"{frag}[{buf}][{g}][{r}]"
            first = ((g * plan.k_blocks + ik) * regs + r) * vpr  # constant of value 0
            if wide[first // vpr]:
                out.append(
                    f'asm volatile("ld.shared.b32 %0, [%1];\\n" : "=r"({dst}) : "r"({addr(first)}));'
                )
                continue
            body = [f"uint16_t h[{vpr}];"]
            for h in range(vpr):
                body.append(
                    f'asm volatile("{_LD_NARROW[eb]} %0, [%1];\\n" : "=h"(h[{h}]) : "r"({addr(first + h)}));'
                )
            mask = (1 << (8 * eb)) - 1
            pack = " | ".join(
                f"((uint32_t)(h[{h}] & {mask:#x}) << {8 * eb * h})"
                if h
                else f"(uint32_t)(h[0] & {mask:#x})"
                for h in range(vpr)
            )
            body.append(f"{dst} = {pack};")
            out.append("{ " + " ".join(body) + " }")
    return out


def _ldsm_lines(plan: GemmPlan, ik: int, buf: int) -> str:
    """ldmatrix (or, for a UniversalCopy operand, plain loads) of k block ``ik`` from the read
    stage ``rd`` into fragment buffer ``buf``."""
    if plan.universal["A"] or plan.universal["B"]:
        return _mixed_load_lines(plan, ik, buf)
    la, lb = plan.ldmatrix("A")[0], plan.ldmatrix("B")[0]
    out = [f"// k block {ik} -> buffer {buf}: ldmatrix A ({la.atom.ptx}), B ({lb.atom.ptx})"]
    out += _ldsm_a(plan, ik, buf) + _ldsm_b(plan, ik, buf)
    return "\n".join(out)


def _mixed_load_lines(plan: GemmPlan, ik: int, buf: int) -> str:
    how = {w: "plain loads" if plan.universal[w] else plan.ldmatrix(w)[0].atom.ptx for w in "AB"}
    out = [f"// k block {ik} -> buffer {buf}: A by {how['A']}, B by {how['B']}"]
    for w, ldsm in (("A", _ldsm_a), ("B", _ldsm_b)):
        out += _regload_lines(plan, w, ik, buf) if plan.universal[w] else ldsm(plan, ik, buf)
    return "\n".join(out)


def _ldsm_a(plan: GemmPlan, ik: int, buf: int) -> list[str]:
    """ldmatrix of A's k block ``ik``: per atom row, ``regs_a / ldsm_a`` instructions, the
    r-th filling registers ``r * ldsm_a ..`` (one but for a narrower asked copy atom)."""
    la, sa = plan.ldmatrix("A")
    kb, eb = plan.k_blocks, plan.elem_bytes
    out = []
    _, pa = sa.parts()
    na = plan.ldsm_a
    per_atom = plan.regs_a // na
    for im in range(plan.mma_m):
        for r0 in range(per_atom):
            j, add = pa[(im * per_atom + r0) * kb + ik]
            regs = ", ".join(f'"=r"(a_frag[{buf}][{im}][{r0 * na + r}])' for r in range(na))
            addr = f"A_ldsm{j} + rd" + (f" + {eb * add}" if add else "")
            ops = ", ".join(f"%{r}" for r in range(na))
            out.append(
                f'asm volatile("{la.atom.ptx} {{{ops}}}, [%{na}];\\n" : {regs} : "r"({addr}));'
            )
    return out


def _ldsm_b(plan: GemmPlan, ik: int, buf: int) -> list[str]:
    lb, sb = plan.ldmatrix("B")
    kb, eb = plan.k_blocks, plan.elem_bytes
    out = []
    _, pb = sb.parts()
    nb = lb.atom.num
    for ib in range(plan.ldmatrix_groups("B")):
        j, add = pb[ib * kb + ik]
        rb = plan.regs_b
        regs = [f"b_frag[{buf}][{(ib * nb + r) // rb}][{(ib * nb + r) % rb}]" for r in range(nb)]
        outs = ", ".join(f'"=r"({r})' for r in regs)
        ops = ", ".join(f"%{r}" for r in range(nb))
        addr = f"B_ldsm{j} + rd" + (f" + {eb * add}" if add else "")
        out.append(f'asm volatile("{lb.atom.ptx} {{{ops}}}, [%{nb}];\\n" : {outs} : "r"({addr}));')
    return out


def _mma_lines(plan: GemmPlan, ik: int, buf: int) -> str:
    """mma.sync of one k block on fragment buffer ``buf`` (serpentine over n)."""
    op = plan.tiled.atom.op
    out = [f"// k block {ik}: mma from buffer {buf}"]
    for im in range(plan.mma_m):
        order = range(plan.mma_n) if im % 2 == 0 else reversed(range(plan.mma_n))
        for jn in order:
            # the rep_m x rep_n atoms a thread runs per TiledMMA tile (1 x 1 but for
            # permutations wider than the atom layout), accumulators in partition_C order
            for rn in range(plan.rep_n):
                for rm in range(plan.rep_m):
                    tile = (im * plan.mma_n + jn) * plan.rep_m * plan.rep_n + rn * plan.rep_m + rm
                    acc = [f"acc[{tile * plan.regs_c + v}]" for v in range(plan.regs_c)]
                    ra, rb = rm * plan.regs_a, rn * plan.regs_b
                    a = [f"a_frag[{buf}][{im}][{ra + r}]" for r in range(plan.regs_a)]
                    b = [f"b_frag[{buf}][{jn}][{rb + r}]" for r in range(plan.regs_b)]
                    out.append(mma_asm(op, d=acc, a=a, b=b, c=acc))
    return "\n".join(out)


def _step_lines(plan: GemmPlan, step: tuple, where: str) -> str:
    """CUDA of one step of :func:`cutemma.kernels.sm80.pipeline.mainloop_steps`, in the
    'prologue', the 'full' (unpredicated copies) or the 'edge' loop."""
    kind, S = step[0], plan.config.stages
    stage_bytes = plan.elem_bytes * (plan.stage_elems_A + plan.stage_elems_B)
    if kind == "copy":
        if where == "full":
            return f"copy_full();  // k tile kt + {step[1]}"
        return f"copy_tile({step[1] if where == 'prologue' else f'kt + {step[1]}'});"
    if kind == "commit":
        return "cp_async_commit();"
    if kind == "wait":
        return f"cp_async_wait<{step[1]}>();  // at most {step[1]} copy groups pending"
    if kind == "sync":
        return "__syncthreads();"
    if kind == "next_read":
        return f"rd = (rd == {(S - 1) * stage_bytes}) ? 0 : rd + {stage_bytes};  // next read stage"
    if kind == "ldsm":
        return _ldsm_lines(plan, step[1], step[2])
    if kind == "mma":
        return _mma_lines(plan, step[1], step[2])
    if kind == "move":
        src, dst = step[1], step[2]
        return (
            f"#pragma unroll\nfor (int i = 0; i < {plan.mma_m * plan.frag_regs['A']}; ++i) "
            f"(&a_frag[{dst}][0][0])[i] = (&a_frag[{src}][0][0])[i];\n"
            f"#pragma unroll\nfor (int i = 0; i < {plan.mma_n * plan.frag_regs['B']}; ++i) "
            f"(&b_frag[{dst}][0][0])[i] = (&b_frag[{src}][0][0])[i];"
        )
    raise ValueError(f"unknown mainloop step {step!r}")  # pragma: no cover


def _mainloop(plan: GemmPlan, vec_a: bool, vec_b: bool) -> str:
    """The copy lambdas, the prologue, then two k-tile loops: while the tile to copy is full
    and the block inside the matrix, copies without predicates; then the rest, clipped."""
    cpa, cpb = plan.copy("A"), plan.copy("B")
    S = plan.config.stages
    stage_bytes = plan.elem_bytes * (plan.stage_elems_A + plan.stage_elems_B)
    pro, body = mainloop_steps(S, plan.k_blocks)
    next_wr = f"wr = (wr == {(S - 1) * stage_bytes}) ? 0 : wr + {stage_bytes};"
    edge = "\n".join([_copy_lines(plan, cpa, vec_a, False), _copy_lines(plan, cpb, vec_b, False)])
    lines = [
        f"uint32_t rd = 0, wr = 0;  // read and write stage, bytes from smem (stage = {stage_bytes})",
        "// k tile kt into stage wr, each chunk clipped at the edges (nothing past the last tile)",
        "auto copy_tile = [&](int kt) {",
        indent("\n".join(["if (kt < k_tiles) {", indent(edge), "}", next_wr])),
        "};",
    ]
    fast_loop = []
    if vec_a and vec_b:
        fast = "\n".join([_copy_lines(plan, cpa, True, True), _copy_lines(plan, cpb, True, True)])
        lines += [
            "// the next full k tile of a block inside the matrix into stage wr: no predicates",
            "auto copy_full = [&]() {",
            indent("\n".join([fast, next_wr])),
            "};",
            f"const int k_fast = (A_inside && B_inside) ? K / BLOCK_K - {S - 1} : 0;",
        ]
        fast_loop = [
            "#pragma unroll 1",
            "for (; kt < k_fast; ++kt) {  // steady state: the tile copied is full and inside",
            indent("\n".join(_step_lines(plan, s, "full") for s in body)),
            "}",
        ]
    lines += [
        comment(f"prologue: k tiles 0..{S - 2} in flight; tile 0's k block 0 in fragments"),
        *[_step_lines(plan, s, "prologue") for s in pro],
        comment(
            "k tile kt: ldmatrix k block kb+1 before the mma of kb; before the last k block,\n"
            "wait for tile kt+1 and ldmatrix its k block 0 (fragments cross the barrier);\n"
            f"tile kt+{S - 1} is copied into the stage tile kt-1 left"
        ),
        "int kt = 0;",
        *fast_loop,
        "#pragma unroll 1",
        "for (; kt < k_tiles; ++kt) {  // the last tiles, or a block at the edge",
        indent("\n".join(_step_lines(plan, s, "edge") for s in body)),
        "}",
        "cp_async_wait<0>();",
    ]
    return "\n".join(lines)


def _register_read_setup(plan: GemmPlan, tables: list[str]) -> list[str]:
    """Per-lane shared addresses of the register reads: ldmatrix rows, or (UniversalCopy)
    the TV layouts' value offsets."""
    out = []
    for which in "AB":
        if plan.universal[which]:
            tv = plan.tiled.tv_layout_A_tiled if which == "A" else plan.tiled.tv_layout_B_tiled
            out += [
                comment(
                    f"{which} by plain loads at tv_layout_{which}_tiled {tv} (element offsets)"
                ),
                *_thread_parts(f"{which}_ld_base", plan.regload(which), tables),
                _regload_setup(plan, which),
            ]
            continue
        la, sa = plan.ldmatrix(which)
        head = (
            "ldmatrix row address of each lane (element offset in a stage); A "
            if which == "A"
            else "B "
        )
        out += [
            comment(f"{head}{la.atom.ptx}"),
            *_thread_parts(f"{which}_ldsm_base", sa, tables),
            _ldsm_setup(plan, which),
        ]
    return out


def _thread_parts(name: str, split: Split, tables: list[str]) -> list[str]:
    """The thread part of a split as ``name``, or (op 'k+') one per key as ``name<j>``."""
    if split.op != "k+":
        return [thread_expr(name, split.thread, tables)]
    return [thread_expr(f"{name}{j}", key, tables) for j, key in enumerate(split.keys)]


def _epilogue_lines(plan: GemmPlan, out: str, c_type: str, epilogue: Epilogue = NO_EPILOGUE) -> str:
    """D = epi(alpha * acc + beta * C) through partition_C, each store predicated on the
    edge; the fused ops read their tensors at the (m, n) partition_C gives the value."""
    _, _, consts = plan.epilogue
    lines = [epilogue.setup()] if epilogue else []
    for idx, dm, dn in consts:
        acc = _acc_value(plan, idx)
        c_val = TO_F32[c_type].format(x="C[(long long)m * ldc_m + (long long)n * ldc_n]")
        if out == "s32":  # integer alpha, beta (the dispatcher checks they are whole numbers)
            val = f"(int)alpha * {acc} + (beta != 0.f ? (int)beta * {c_val} : 0)"
        else:
            val = f"alpha * {acc} + (beta != 0.f ? beta * {c_val} : 0.f)"
            if epilogue:
                val = epilogue.apply(val, "m", "n")
        store = f"D[(long long)m * ldd_m + (long long)n * ldd_n] = {FROM_F32[out].format(x=val)};"
        lines.append(
            f"{{ const int m = m0 + C_m + {dm}, n = n0 + C_n + {dn}; if (m < M && n < N) {store} }}"
        )
    return "\n".join(lines)


def _acc_value(plan: GemmPlan, idx: int) -> str:
    """C expression of accumulator value ``idx`` (partition_C order): ``acc[idx]``, or for
    packed f16x2 accumulators the half of register ``idx // 2`` (even values low), as f32.

    >>> from cutemma.kernels.design import GemmDesign
    >>> d = GemmDesign("SM80_16x8x8_F16F16F16F16_TN", (64, 64, 32))
    >>> _acc_value(GemmPlan(d.config, "f16", "K", "K", d), 5)
    'f16_to_f32((uint16_t)(acc[2] >> 16))'
    """
    if not plan.acc_packed:
        return f"acc[{idx}]"
    reg, half = divmod(idx, 2)
    bits = f"(acc[{reg}] >> 16)" if half else f"acc[{reg}]"
    return TO_F32["f16"].format(x=f"(uint16_t){bits}")


def _batch_offsets() -> str:
    """blockIdx.y is the batch index: move every pointer to its problem (2-D: y = 0)."""
    return """\
// batch: problem blockIdx.y of a 3-D GEMM; a batch stride of 0 broadcasts that operand
const long long batch = blockIdx.y;
A += batch * batch_a; B += batch * batch_b; C += batch * batch_c; D += batch * batch_d;"""


def gemm_source(
    config: GemmConfig,
    dtype: str,
    a_major: str,
    b_major: str,
    out: str = "f32",
    c_type: str | None = None,
    vec_a: bool = True,
    vec_b: bool = True,
    design: object = None,
    epilogue: Epilogue = NO_EPILOGUE,
) -> str:
    """The CUDA C++ translation unit of one GEMM kernel (deterministic for its arguments);
    ``design`` (a custom :class:`cutemma.kernels.design.GemmDesign`): its TiledMMA, smem
    layouts and copies in place of the config's.

    ``epilogue``: fused ops applied to each value before the output cast
    (:mod:`cutemma.kernels.epilogue`); without one the source is what it always was.

    An int8 kernel issues the k32 int8 mma.sync, accumulating in s32 (no k16 form):

    >>> src = gemm_source(GemmConfig(), "s8", "K", "K", out="s32")
    >>> "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32" in src, "m16n8k16" in src
    (True, False)
    """
    config, design = as_config(config, design)
    plan = GemmPlan(config, dtype, a_major, b_major, design)
    c_type = c_type or out
    check_outs("gemm_source", out, c_type)
    if epilogue and out == "s32":
        raise TiledMmaError("gemm_source: an epilogue works on float values; int8 writes s32")
    name = kernel_name(config, dtype, a_major, b_major, out, c_type, vec_a, vec_b, design, epilogue)
    tables: list[str] = []
    cpa, cpb = plan.copy("A"), plan.copy("B")
    narrow = cpa.chunk_bytes != 16 or cpb.chunk_bytes != 16
    m_t, n_t, _ = plan.epilogue
    S = config.stages
    T = IN_TYPES[dtype]
    acc_t, acc_zero = ("int", "0") if dtype == "s8" else ("float", "0.f")
    if plan.acc_packed:  # f16x2 accumulator registers: all-zero bits are two +0.0 halves
        acc_t, acc_zero = "uint32_t", "0u"
    n_acc = plan.mma_m * plan.mma_n * plan.rep_m * plan.rep_n * plan.regs_c
    setup = [
        "const int tid = threadIdx.x;",
        _batch_offsets(),
        raster_sm80(),
        "const int k_tiles = (K + BLOCK_K - 1) / BLOCK_K;",
        f"extern __shared__ __align__(128) {T} smem[];",
        comment(f"{S} stages, each A {plan.smem_A} then B {plan.smem_B}; addresses in bytes"),
        "const uint32_t smem_base = smem_addr(smem);",
        comment("cp.async partition: thread -> (chunk c, row o) = idx2crd(tid, thr_layout)"),
    ]
    for cp in (cpa, cpb):
        X = cp.which
        (cpr, rpp) = cp.thr_layout.shape
        setup.append(
            f"const int {X}_c = (tid % {cpr}) * {cp.vec}, {X}_o = tid / {cpr};  "
            f"// thr_layout {cp.thr_layout}, {cp.iters} chunks per thread"
            + (f" (threads {cp.threads}.. idle)" if cp.threads < plan.threads else "")
        )
        setup.append(thread_expr(f"{X}_copy_base", cp.smem.thread, tables))
        setup.append(_copy_setup(plan, cp, vec_a if X == "A" else vec_b))
    setup += _register_read_setup(plan, tables)
    setup += [
        comment(f"partition_C: tv_layout_C_tiled {plan.tiled.tv_layout_C_tiled}"),
        thread_expr("C_m", m_t, tables),
        thread_expr("C_n", n_t, tables),
        f"{acc_t} acc[{n_acc}];",
        f"#pragma unroll\nfor (int i = 0; i < {n_acc}; ++i) acc[i] = {acc_zero};",
        f"uint32_t a_frag[2][{plan.mma_m}][{plan.frag_regs['A']}];  // two buffers: k block kb+1 "
        "loads while kb runs",
        f"uint32_t b_frag[2][{plan.mma_n}][{plan.frag_regs['B']}];",
    ]
    mainloop = _mainloop(plan, vec_a, vec_b)
    body = "\n".join(
        setup + [mainloop, comment("epilogue"), _epilogue_lines(plan, out, c_type, epilogue)]
    )
    header = comment(
        f"cutemma sm80 GEMM: D = alpha * A @ B + beta * C\n"
        f"config {config.name}; {dtype} in, {'f16' if plan.acc_packed else 'f32'} accumulate, "
        f"{out} out; A {a_major}-major, "
        f"B {b_major}-major\n"
        f"TiledMMA {plan.tiled.atom.name} x {config.warps}: tile {plan.tiled.tile_size_mnk}, "
        f"{plan.mma_m}x{plan.mma_n} atoms per thread per k block\n"
        f"tv_layout_A_tiled {plan.tiled.tv_layout_A_tiled}\n"
        f"tv_layout_B_tiled {plan.tiled.tv_layout_B_tiled}"
    )
    defines = "\n".join(
        f"#define {k} {v}"
        for k, v in (
            ("BLOCK_M", config.block_m),
            ("BLOCK_N", config.block_n),
            ("BLOCK_K", config.block_k),
            ("GROUP_M", config.group_m),
        )
    )
    return translation_unit(
        header,
        FIXED_WIDTH_TYPES,
        defines,
        HELPERS + (NARROW_CP_ASYNC if narrow else "") + epilogue.helpers(),
        *tables,
        kernel(name, params(out, c_type, dtype, epilogue), body, launch_bounds=plan.threads),
    )
