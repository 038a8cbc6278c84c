"""Probe kernels for sm100 ``tcgen05.mma`` atoms: compile-only (no sm_100 GPU is lent).

The kernel keeps the probe contract of :mod:`cutemma.cuda.probe`
(``NAME(const A_T* A, const B_T* B, const C_T* C, D_T* D)``) and walks the whole
tcgen05 life cycle once, with 128 threads (four warps, one per 32 lanes of tensor memory):

1. A (SS) and B are copied into shared memory in the canonical layout
   ``tile_to_shape(umma_layout_atom(major, swizzle, type), (MN, K))`` (the widest swizzle
   that tiles), read by descriptors from ``make_umma_desc`` (start address added in the
   kernel); the instruction descriptor is ``make_instr_desc`` of the op's params.
2. Warp 0 allocates 512 tensor-memory columns (``tcgen05.alloc``, then
   ``tcgen05.relinquish_alloc_permit``); C (and A for TS, sparsity metadata, block scale
   factors) go in with ``tcgen05.st``.
3. Thread 0 issues the instruction and ``tcgen05.commit`` to an mbarrier; everyone waits
   on it, reads D with ``tcgen05.ld`` (``32x32b``: lane = row, one 32-bit column each),
   stores it, and warp 0 frees the columns (``tcgen05.dealloc``).

Syntax: PTX ISA 9.7.16 "TensorCore 5th Generation Family Instructions" (tcgen05.alloc /
dealloc / relinquish_alloc_permit, tcgen05.ld / st / wait, tcgen05.mma, tcgen05.commit,
tcgen05.fence); the same forms are listed by CCCL's libcudacxx ``cuda::ptx`` reference.

Why compile-only: the tensor-memory data-path layouts of D (and of A for TS, of the
metadata and of the scale factors) are not modelled by the catalog (its sm100 traits say
only which CTA holds which element), 2-SM forms need a cluster launch, and no sm_100 GPU
is available; the D read-back assumes lane = row, column = n (the M=128 cta_group::1 f32
case). ``runnable_on`` is empty.

>>> from cutemma.mma import mma_op
>>> p = make_probe(mma_op('SM100_MMA_F16BF16_SS'))
>>> p.arch, p.sass_kinds, p.threads, p.runnable_on
('sm_100a', ('UTCHMMA',), 128, ())
"""

from __future__ import annotations

from cutemma.cuda.codegen import element_container, mma_asm, tile_params
from cutemma.cuda.probe_gmma import SmemOperand, copy_to_smem, kernel_name
from cutemma.cuda.probe_kernel import Probe
from cutemma.cuda.source import asm_volatile, block, comment, indent, kernel
from cutemma.errors import CompileError
from cutemma.layout import tile_to_shape
from cutemma.mma.catalog import traits_of
from cutemma.mma.operation import Operation
from cutemma.mma.types import numeric_type
from cutemma.smem import make_instr_desc, make_umma_desc, umma_layout_atom

THREADS = 128
ARCH = "sm_100a"
COLUMNS = 512  # all of tensor memory: D at 0, then A (TS), metadata, scale factors
A_COL, META_COL, SFA_COL, SFB_COL = 256, 320, 352, 384
SWIZZLES = ("SW128", "SW64", "SW32", "INTER")
# SASS opcode of each .kind on sm_100a (cuobjdump of these probes, NVRTC 13.0).
SASS_KIND = {
    "tf32": "UTCHMMA",
    "f16": "UTCHMMA",
    "i8": "UTCIMMA",
    "f8f6f4": "UTCQMMA",
    "mxf8f6f4": "UTCQMMA",
    "mxf4": "UTCOMMA",
    "mxf4nvf4": "UTCOMMA",
}


def _kind(op: Operation) -> str:
    return op.ptx.split(".kind::", 1)[1].split(".", 1)[0]


def _cta_group(op: Operation) -> int:
    return 2 if ".cta_group::2" in op.ptx else 1


def smem_bits(op: Operation, t) -> int:
    """Bits one element takes in shared memory: kind::f8f6f4 and kind::mxf8f6f4 pad 6- and
    4-bit types to a byte; kind::mxf4/mxf4nvf4 pack e2m1 two to a byte.

    >>> from cutemma.mma import mma_op
    >>> op = mma_op('SM100_MMA_F8F6F4_SS', a_type='e2m1', b_type='e3m2')
    >>> smem_bits(op, 'e2m1'), smem_bits(mma_op('SM100_MMA_MXF4_SS'), 'e2m1')
    (8, 4)
    """
    bits = numeric_type(t).bits
    if bits < 8 and _kind(op) in ("f8f6f4", "mxf8f6f4"):
        return 8
    return bits


def umma_operand(name: str, rows: int, k: int, t, major: str, bits: int) -> SmemOperand:
    """The shared-memory image of a rows x k tcgen05 operand, ``bits`` per element there.

    >>> o = umma_operand("B", 256, 16, "bf16", "K", 16)
    >>> o.swizzle, o.elements
    ('SW32', 4096)
    """
    t = numeric_type(t)
    dtype = {4: "e2m1", 8: "u8"}.get(bits, t.name)
    pack = 8 // bits if bits < 8 else 1
    cols = k // pack
    unit = "u8" if pack > 1 else dtype
    for sw in SWIZZLES:
        atom = umma_layout_atom(major, sw, unit)
        if rows % atom.shape[0] == 0 and cols % atom.shape[1] == 0:
            layout = tile_to_shape(atom, (rows, cols))
            desc = make_umma_desc(layout, major, unit).raw
            ctype = "uint8_t" if bits <= 8 else element_container(t)
            return SmemOperand(name, rows, cols, ctype, major, sw, layout, desc, pack, bits)
    raise CompileError(f"no tcgen05 layout atom tiles a {rows}x{cols} {major}-major {t.name} block")


def _operands(op: Operation, tr) -> list[SmemOperand]:
    m, n, k = tr.shape_mnk
    g = _cta_group(op)  # a 2-SM atom: each CTA holds M/2 rows of A and N/2 of B
    sparse = op.ptx.startswith("tcgen05.mma.sp")
    out = []
    p = dict(op.params)
    if op.a_source == "smem":
        ka = k // 2 if sparse else k
        a_bits = smem_bits(op, p["a_type"])
        out.append(umma_operand("A", m // g, ka, p["a_type"], p["a_major"], a_bits))
    b_bits = smem_bits(op, p["b_type"])
    out.append(umma_operand("B", n // g, k, p["b_type"], p["b_major"], b_bits))
    return out


def instr_desc(op: Operation) -> int:
    """The 32-bit instruction descriptor of ``op``'s types, M, N and majors.

    >>> from cutemma.mma import mma_op
    >>> hex(instr_desc(mma_op('SM100_MMA_F16BF16_SS')))
    '0x8400010'
    """
    p = dict(op.params)
    extra = {"saturate": bool(p.get("saturate"))} if "saturate" in p else {}
    if "sf_type" in p:
        extra["scale_type"] = p["sf_type"]
    return make_instr_desc(
        _kind(op), p["a_type"], p["b_type"], p["c_type"], p["m"], p["n"],
        p["a_major"], p["b_major"], sparse=op.ptx.startswith("tcgen05.mma.sp"), **extra,
    ).raw  # fmt: skip


def _tmem_store(col: str, value: str) -> str:
    """One 32-bit column of this thread's lane: ``tcgen05.st ... 32x32b.x1``."""
    return asm_volatile(
        "tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};",
        inputs=[("r", f"tmem + lane_base + {col}"), ("r", value)],
        clobbers=["memory"],
    )


def _setup_lines(op: Operation, tr, smem: list[SmemOperand]) -> list[str]:
    g = _cta_group(op)
    lines = [f"__shared__ __align__(1024) {s.smem_type} s{s.name}[{s.elements}];" for s in smem]
    lines += [
        "__shared__ uint32_t tmem_slot;",
        "__shared__ __align__(8) uint64_t mma_done;",
        "int t = threadIdx.x, warp = t / 32;",
    ]
    lines += [copy_to_smem(s, s.name) for s in smem]
    lines.append("uint32_t slot = (uint32_t)__cvta_generic_to_shared(&tmem_slot);")
    lines.append("uint32_t bar = (uint32_t)__cvta_generic_to_shared(&mma_done);")
    alloc = asm_volatile(
        f"tcgen05.alloc.cta_group::{g}.sync.aligned.shared::cta.b32 [%0], {COLUMNS};\n"
        f"tcgen05.relinquish_alloc_permit.cta_group::{g}.sync.aligned;",
        inputs=[("r", "slot")],
        clobbers=["memory"],
    )
    lines.append(block("if (warp == 0)", alloc))
    init = asm_volatile("mbarrier.init.shared::cta.b64 [%0], 1;", inputs=[("r", "bar")])
    lines.append(block("if (t == 0)", init))
    lines.append('asm volatile("fence.proxy.async.shared::cta;" ::: "memory");')
    lines += _thread_sync()
    lines.append("uint32_t tmem = tmem_slot, lane_base = (uint32_t)(warp * 32) << 16;")
    lines += _tmem_inputs(op, tr)
    lines += _thread_sync()
    return lines


def _thread_sync() -> list[str]:
    return [
        'asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");',
        "__syncthreads();",
        'asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");',
    ]


def _tmem_inputs(op: Operation, tr) -> list[str]:
    """C into columns 0..N-1 of lane = row; A (TS), metadata and scale factors after it."""
    m, n, k = tr.shape_mnk
    c_t, a_t = tr.val_type_C, tr.val_type_A
    row = f"(warp * 32 + t % 32) % {m // _cta_group(op)}"
    c = f"C[r + j * {m}]"
    c_val = f"__float_as_uint({c})" if element_container(c_t) == "float" else f"(uint32_t){c}"
    body = [f"int r = {row};"]
    body.append(block(f"for (int j = 0; j < {n}; ++j)", _tmem_store("j", c_val)))
    if op.a_source == "tmem":
        per = 32 // a_t.bits
        mask = (1 << a_t.bits) - 1
        word = " | ".join(
            f"(((uint32_t)A[r + (w * {per} + {i}) * {m}] & {mask}u) << {i * a_t.bits})"
            for i in range(per)
        )
        words = k * a_t.bits // 32
        body.append(block(f"for (int w = 0; w < {words}; ++w)", _tmem_store(f"{A_COL} + w", word)))
    names = [e.name for e in op.extras]
    if "sp_meta_tmem" in names:
        body.append(_tmem_store(str(META_COL), "0x44444444u"))
    if "scale_A_tmem" in names:
        unit = "0x7F7F7F7Fu" if dict(op.params).get("sf_type") == "ue8m0" else "0x38383838u"
        body += [_tmem_store(str(SFA_COL + j), unit) for j in range(4)]
        body += [_tmem_store(str(SFB_COL + j), unit) for j in range(4)]
    body.append('asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");')
    return ["{\n" + indent("\n".join(body)) + "\n}"]


def umma_asm(op: Operation) -> str:
    """The instruction through :func:`cutemma.cuda.codegen.mma_asm` (catalog ptx, operands,
    extras); a tensor-memory A (TS) is an address in brackets, ``[a-tmem]`` (PTX ISA
    tcgen05.mma syntax), which codegen writes as a bare register: fixed up here.

    >>> from cutemma.mma import mma_op
    >>> '[%0], %1' in umma_asm(mma_op('SM100_MMA_TF32_TS'))
    True
    """
    extras = {
        "idesc": "idesc",
        "disable_output_lane": ["0u"] * 8,
        "enable_input_d": "1",
        "sp_meta_tmem": f"tmem + {META_COL}",
        "scale_A_tmem": f"tmem + {SFA_COL}",
        "scale_B_tmem": f"tmem + {SFB_COL}",
    }
    for e in op.extras:
        if e.name == "disable_output_lane":
            extras[e.name] = ["0u"] * int(e.cpp.split("[")[1].rstrip("]"))
    a = ["desc_a"] if op.a_source == "smem" else [f"tmem + {A_COL}"]
    text = mma_asm(op, a=a, b=["desc_b"], c=["tmem"], extras=extras)
    if op.a_source == "tmem":
        text = _bracket_first_input(text, op)
    return text


def _bracket_first_input(text: str, op: Operation) -> str:
    """Put brackets round A's placeholder, the first operand after ``[d-tmem]``."""
    head, sep, tail = text.partition(op.ptx + " ")
    d_tmem, rest = tail.split(", ", 1)
    a_ref, rest = rest.split(", ", 1)
    if a_ref.startswith("["):  # codegen already writes it as an address
        return text
    if not a_ref.startswith("%"):
        raise CompileError(f"{op.name}: unexpected tcgen05 operand text {tail[:60]!r}")
    return f"{head}{sep}{d_tmem}, [{a_ref}], {rest}"


def _mma_lines(op: Operation, smem: list[SmemOperand]) -> list[str]:
    g = _cta_group(op)
    descs = [
        f"uint64_t desc_{s.name.lower()} = {s.desc:#x}ull + "
        f"((uint64_t)((uint32_t)__cvta_generic_to_shared(s{s.name}) >> 4) & 0x3FFF);"
        f"  // {s.major}-major {s.swizzle}: {s.layout}"
        for s in smem
    ]
    issue = [f"uint32_t idesc = {instr_desc(op):#x}u;", umma_asm(op)]
    issue.append(
        asm_volatile(
            f"tcgen05.commit.cta_group::{g}.mbarrier::arrive::one.shared::cluster.b64 [%0];",
            inputs=[("r", "bar")],
            clobbers=["memory"],
        )
    )
    wait = asm_volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
        "selp.u32 %0, 1, 0, p;\n}",
        outputs=[("=r", "done")],
        inputs=[("r", "bar")],
        clobbers=["memory"],
    )
    return [
        *descs,
        block("if (t == 0)", "\n".join(issue)),
        "uint32_t done = 0;",
        block("while (!done)", wait),
        'asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");',
    ]


def _read_back(op: Operation, tr) -> list[str]:
    """D from tensor memory (lane = row, one column per n), then free the columns."""
    m, n, _ = tr.shape_mnk
    rows = m // _cta_group(op)
    d_c = element_container(tr.val_type_D)
    value = "__uint_as_float(v)" if d_c == "float" else f"({d_c})v"
    load = asm_volatile(
        "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];\ntcgen05.wait::ld.sync.aligned;",
        outputs=[("=r", "v")],
        inputs=[("r", "tmem + lane_base + j")],
        clobbers=["memory"],
    )
    store = f"if (warp * 32 + t % 32 < {rows}) D[warp * 32 + t % 32 + j * {m}] = {value};"
    g = _cta_group(op)
    free = asm_volatile(
        f"tcgen05.dealloc.cta_group::{g}.sync.aligned.b32 %0, {COLUMNS};", inputs=[("r", "tmem")]
    )
    return [
        block(f"for (int j = 0; j < {n}; ++j)", f"uint32_t v;\n{load}\n{store}"),
        *_thread_sync(),
        block("if (warp == 0)", free),
    ]


def make_probe(op: Operation, atom=None) -> Probe:
    """The compile-only probe kernel of a tcgen05.mma Operation (SS/TS, 1-SM/2-SM, sparse,
    block-scaled).

    >>> from cutemma.mma import mma_op
    >>> make_probe(mma_op('SM100_MMA_S8_2x1SM_TS')).sass_kinds
    ('UTCIMMA',)
    """
    if not op.ptx.startswith("tcgen05.mma"):
        raise CompileError(f"{op.name}: not a tcgen05.mma atom (ptx {op.ptx!r}); use probe_for")
    tr = atom.traits if atom is not None else traits_of(op)
    name = kernel_name(op)
    params = tile_params(tr)
    smem = _operands(op, tr)
    body = [comment(f"{op.name} {dict(op.params)}: {op.ptx}\ncompile-only (module doc)")]
    body += _setup_lines(op, tr, smem)
    body += _mma_lines(op, smem)
    body += _read_back(op, tr)
    return Probe(
        op=op,
        kernel_name=name,
        source=kernel(name, params, "\n".join(body), THREADS),
        arch=ARCH,
        sass_kinds=(SASS_KIND[_kind(op)],),
        threads=THREADS,
        shared_bytes=0,
        runnable_on=(),
    )
