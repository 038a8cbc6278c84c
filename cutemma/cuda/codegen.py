"""CUDA C++ from catalog Operations: each instruction's ``asm volatile``, and warp-level probes.

:func:`mma_asm` renders one Operation's PTX from its catalog description alone:
the mnemonic, the operand groups in ``op.operands`` order, each register array
with its constraint letter, then ``op.extras`` (run-time registers, immediates,
predicates). Nothing here spells an instruction; a new catalog entry renders
without edits. :func:`warp_probe` builds the probe kernel of a register-sourced
atom (mma.sync, dp4a/dp2a, fma.f32x2): every offset it reads or writes comes from
the atom's traits layouts evaluated here, written into the source as constants.

Operand syntax facts (PTX ISA 9.x): mma/wgmma operands are brace vectors
``{%0, %1}`` ("9.7.14.5.14 mma", "9.7.15.5.2 wgmma.mma_async"); dp4a/dp2a/fma take
scalars; a descriptor is one 64-bit scalar; wgmma's scale-d is a predicate, its
imm-scale-a/b and imm-trans-a/b are immediates; tcgen05.mma names tensor memory
by address in brackets ``[%0]`` ("9.7.16.10.9 tcgen05.mma"); mma.sync block
scaling appends ``scale-a-data, {byte-id-a, thread-id-a}, scale-b-data,
{byte-id-b, thread-id-b}`` ("9.7.14.5.14", the form also used by public sm_120
probes, e.g. the kernels found by searching ``kind::mxf4.block_scale``);
fma ``.f32x2`` works on ``.b64`` registers holding two f32 lanes ("9.7.3.6 fma").

>>> from cutemma.mma import mma_op
>>> print(mma_asm(mma_op('SM61_DP4A'), d=['d'], a=['a'], b=['b'], c=['c']))
asm volatile(
  "dp4a.s32.s32 %0, %1, %2, %3;\\n"
  : "=r"(d)
  : "r"(a), "r"(b), "r"(c));
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from cutemma.cuda.source import Param, asm_volatile, comment, constant_table, declare, kernel
from cutemma.errors import CompileError
from cutemma.mma.operation import CONSTRAINTS, Operation, RegArray
from cutemma.mma.traits import mode_table
from cutemma.mma.types import NumericType, numeric_type

# Constraint letters of extra operands' C types (GCC/NVCC inline asm: 'h' is 16-bit).
_EXTRA_CONSTRAINTS = {**CONSTRAINTS, "uint16_t": "h"}
# Immediates written together as one brace vector (mma.sync block scaling, PTX ISA 9.7.14.5.14).
_VECTOR_EXTRAS = (("byte_id_", "thread_id_"),)
_VECTOR_HEADS = ("mma", "wgmma")


@dataclass
class _Slots:
    """asm operands in placeholder order: outputs first, then inputs."""

    outputs: list[tuple[str, str]] = field(default_factory=list)
    inputs: list[tuple[str, str]] = field(default_factory=list)

    def placeholders(
        self, exprs: Sequence[str], constraint: str, output: bool
    ) -> list[tuple[int, bool]]:
        """Append operands; return references that :meth:`number` turns into %-numbers."""
        target = self.outputs if output else self.inputs
        start = len(target)
        target.extend((constraint, e) for e in exprs)
        return [(i, output) for i in range(start, start + len(exprs))]

    def number(self, ref: tuple[int, bool]) -> int:
        index, output = ref
        return index if output else len(self.outputs) + index


def _head(op: Operation) -> str:
    return op.ptx.split(".", 1)[0]


def _check_count(op: Operation, which: str, reg: RegArray, exprs: Sequence[str]) -> None:
    if len(exprs) != reg.count:
        raise CompileError(
            f"{op.name}: operand {which} is {reg} per thread; got {len(exprs)} expressions"
        )


def _group_text(numbers: list[int], scalar: bool) -> str:
    names = ", ".join(f"%{n}" for n in numbers)
    return names if scalar else "{" + names + "}"


def _operand_groups(op: Operation, exprs: Mapping[str, Sequence[str]], slots: _Slots) -> dict:
    """Placeholder references of D, A, B, C (outputs: D, or wgmma's read-write C)."""
    refs = {}
    read_write_c = op.d is None and _head(op) != "tcgen05"  # tcgen05's C: a tmem address
    for which, reg in zip("DABC", op.registers, strict=True):
        if reg is None:
            continue
        ex = list(exprs[which])
        _check_count(op, which, reg, ex)
        if which == "D":
            refs[which] = slots.placeholders(ex, "=" + reg.constraint, True)
        elif which == "C" and read_write_c:
            refs[which] = slots.placeholders(ex, "+" + reg.constraint, True)
        else:  # inputs: numbered after every output when rendered (_Slots.number)
            refs[which] = slots.placeholders(ex, reg.constraint, False)
    return refs


def _extra_constraint(op: Operation, cpp: str, name: str) -> str:
    base = cpp.split("[", 1)[0]
    if base not in _EXTRA_CONSTRAINTS:
        raise CompileError(
            f"{op.name}: extra {name} has C type {cpp}; codegen knows {', '.join(_EXTRA_CONSTRAINTS)}"
        )
    return _EXTRA_CONSTRAINTS[base]


def _extra_count(cpp: str) -> int:
    return int(cpp.split("[", 1)[1].rstrip("]")) if "[" in cpp else 1


def _extras_text(op: Operation, values: Mapping[str, object], slots: _Slots):
    """Text pieces of the extras (with placeholders as refs) and the predicate setups."""
    pieces: list[list] = []  # each: list of str / ref, joined with ', ' inside braces when vector
    preds: list[tuple[str, tuple[int, bool]]] = []
    pending_vector: list | None = None
    for extra in op.extras:
        value = values.get(extra.name, extra.value)
        if extra.kind == "imm":
            if value is None:
                raise CompileError(f"{op.name}: immediate {extra.name} needs a value")
            item: object = str(int(value))
        elif extra.kind == "pred":
            if value is None:
                raise CompileError(f"{op.name}: predicate {extra.name} needs a C expression")
            (ref,) = slots.placeholders([str(value)], "r", False)
            pname = f"p_{extra.name}"
            preds.append((pname, ref))
            item = pname
        else:
            if value is None:
                raise CompileError(f"{op.name}: register {extra.name} needs a C expression")
            count = _extra_count(extra.cpp)
            exprs = list(value) if count > 1 else [str(value)]
            refs = slots.placeholders(exprs, _extra_constraint(op, extra.cpp, extra.name), False)
            item = ("vec", refs) if count > 1 else ("ref", refs[0])
            if extra.name.endswith("_tmem"):
                item = ("addr", refs[0])
        if any(extra.name.startswith(v[1]) for v in _VECTOR_EXTRAS) and pending_vector is not None:
            pending_vector.append(item)
            continue
        if any(extra.name.startswith(v[0]) for v in _VECTOR_EXTRAS):
            pending_vector = [item]
            pieces.append(("vecimm", pending_vector))
            continue
        pending_vector = None
        pieces.append(item)
    return pieces, preds


def _render_piece(piece, slots: _Slots) -> str:
    if isinstance(piece, str):
        return piece
    kind, val = piece
    if kind == "ref":
        return f"%{slots.number(val)}"
    if kind == "addr":
        return f"[%{slots.number(val)}]"
    if kind == "vec":
        return "{" + ", ".join(f"%{slots.number(r)}" for r in val) + "}"
    return "{" + ", ".join(_render_piece(p, slots) for p in val) + "}"


def _in_tmem(op: Operation, which: str) -> bool:
    """Tensor-memory operands are addresses in brackets: tcgen05's D/C, and a TS form's A."""
    source = {"A": op.a_source, "B": op.b_source}.get(which)
    return source == "tmem" or (which == "C" and _head(op) == "tcgen05")


def _packed_pairs(op: Operation) -> bool:
    """fma.rn.f32x2 and kin: every operand is one .b64 register of two f32 lanes."""
    return op.ptx.split(".")[-1].endswith("x2")


def mma_asm(
    op: Operation,
    d: Sequence[str] | None = None,
    a: Sequence[str] | None = None,
    b: Sequence[str] | None = None,
    c: Sequence[str] | None = None,
    extras: Mapping[str, object] | None = None,
    clobbers: Sequence[str] = (),
) -> str:
    """The ``asm volatile`` statement of one ``op`` instruction on C expressions.

    ``d``/``a``/``b``/``c`` hold one C lvalue/expression per register of the
    Operation's arrays (``op.d.count`` ...). ``extras`` maps an extra's name to a
    C expression (registers, predicates — nonzero is true) or overrides an
    immediate's value; ``clobbers`` (e.g. ``["memory"]``) are passed through. Where ``op.d`` is None (wgmma) C is read-write; for
    tcgen05 C is the tensor-memory address.

    >>> from cutemma.mma import mma_op
    >>> op = mma_op('SM80_16x8x8_F16F16F16F16_TN')
    >>> print(mma_asm(op, ['d0', 'd1'], ['a0', 'a1'], ['b0'], ['c0', 'c1']).splitlines()[1])
      "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3}, {%4}, {%5, %6};\\n"
    """
    extras = dict(extras or {})
    exprs = {"D": d or [], "A": a or [], "B": b or [], "C": c or []}
    slots = _Slots()
    refs = _operand_groups(op, exprs, slots)
    pieces, preds = _extras_text(op, extras, slots)
    scalar = _head(op) not in _VECTOR_HEADS
    if _packed_pairs(op):
        return _packed_pair_asm(op, refs, slots, clobbers)
    texts = []
    for which in op.operands:
        reg = {"D": op.d, "A": op.a, "B": op.b, "C": op.c}[which]
        if reg is None:
            continue
        numbers = [slots.number(r) for r in refs[which]]
        if _in_tmem(op, which):
            texts.append(f"[%{numbers[0]}]")
        elif reg.cpp == "uint64_t" and reg.count == 1:  # a descriptor: one 64-bit scalar
            texts.append(f"%{numbers[0]}")
        else:
            texts.append(_group_text(numbers, scalar))
    texts += [_render_piece(p, slots) for p in pieces]
    line = f"{op.ptx} {', '.join(texts)};"
    if preds:
        setup = [".reg .pred " + ", ".join(p for p, _ in preds) + ";"]
        setup += [f"setp.ne.b32 {p}, %{slots.number(r)}, 0;" for p, r in preds]
        line = "\n".join(["{", *setup, line, "}"])
    return asm_volatile(line, slots.outputs, slots.inputs, clobbers)


def _packed_pair_asm(op: Operation, refs, slots: _Slots, clobbers: Sequence[str]) -> str:
    lines = ["{", ".reg .b64 pd, pa, pb, pc;"]
    for which in ("A", "B", "C"):
        nums = [slots.number(r) for r in refs[which]]
        lanes = nums if len(nums) == 2 else nums * 2  # one value serves both lanes
        lines.append(f"mov.b64 p{which.lower()}, {{%{lanes[0]}, %{lanes[1]}}};")
    lines.append(f"{op.ptx} pd, pa, pb, pc;")
    d = [slots.number(r) for r in refs["D"]]
    lines += [f"mov.b64 {{%{d[0]}, %{d[1]}}}, pd;", "}"]
    return asm_volatile("\n".join(lines), slots.outputs, slots.inputs, clobbers)


# --- warp-level probes ------------------------------------------------------------------------

# NVRTC target of each catalog arch for register-sourced atoms (NVRTC 13 has no sm_70/sm_75:
# notes/CUDA.md), and the later targets where the same instruction may run.
_TARGET_OF_ARCH = {61: "sm_80", 70: "sm_80", 75: "sm_80", 80: "sm_80", 89: "sm_89", 90: "sm_90a"}
_TARGET_ORDER = ("sm_80", "sm_89", "sm_90a", "sm_100a", "sm_120a")
_PARTS = {"complex": ("re", "im"), "gauss": ("t0", "t1", "t2")}


def element_container(t: NumericType) -> str:
    """The C type one element of ``t`` travels in, in a probe's global arrays.

    16-bit floats are their bits (``uint16_t``); 8-bit and narrower types one
    element per ``uint8_t`` (low bits); complex types one ``double`` per part.

    >>> [element_container(numeric_type(n)) for n in ('bf16', 'e2m1', 'tf32', 's32', 'c64')]
    ['uint16_t', 'uint8_t', 'float', 'int32_t', 'double']
    """
    if t.kind in ("complex", "gauss") or t.name == "f64":
        return "double"
    if t.name in ("f32", "tf32"):
        return "float"
    if t.bits == 32:
        return "int32_t"
    return "uint16_t" if t.bits == 16 else "uint8_t"


def tile_params(traits) -> list[Param]:
    """The ``(A, B, C, D)`` tile parameters every probe kernel takes (:mod:`cutemma.cuda.probe`),
    in the element containers of ``traits``' (or an atom's) value types.

    >>> from cutemma.mma import make_mma_atom
    >>> [f"{p.ctype} {p.name}" for p in tile_params(make_mma_atom('SM61_DP4A'))][1:]
    ['const uint8_t* B', 'const int32_t* C', 'int32_t* D']
    """
    return [
        Param(f"const {element_container(traits.val_type_A)}*", "A"),
        Param(f"const {element_container(traits.val_type_B)}*", "B"),
        Param(f"const {element_container(traits.val_type_C)}*", "C"),
        Param(f"{element_container(traits.val_type_D)}*", "D"),
    ]


def element_parts(t: NumericType) -> tuple[str, ...]:
    """Names of the doubles one complex element is stored as (one part for real types).

    >>> element_parts(numeric_type('gc64'))
    ('t0', 't1', 't2')
    """
    return _PARTS.get(t.kind, ("",))


@dataclass(frozen=True)
class OperandPlan:
    """How one operand's tile offsets map onto one thread's register array.

    ``thread_offsets[t]`` and ``value_offsets[v]`` are the two modes of the
    traits (T, V) layout evaluated here; value ``v`` sits in register
    ``v // per_register`` at bit ``(v % per_register) * width``.
    """

    which: str
    reg: RegArray
    vtype: NumericType
    thread_offsets: tuple[int, ...]
    value_offsets: tuple[int, ...]
    per_register: int
    width: int


def operand_plan(op: Operation, atom, which: str) -> OperandPlan:
    """The :class:`OperandPlan` of operand ``which`` ('A', 'B', 'C' or 'D') of ``atom``.

    >>> from cutemma.mma import make_mma_atom
    >>> atom = make_mma_atom('SM80_16x8x16_F32F16F16F32_TN')
    >>> p = operand_plan(atom.op, atom, 'A')
    >>> p.per_register, p.width, p.value_offsets[:4]
    (2, 16, (0, 16, 8, 24))
    """
    layout = atom.tv_layout_C if which in ("C", "D") else getattr(atom, f"tv_layout_{which}")
    vtype = getattr(atom, f"val_type_{which}")
    reg = {"D": op.d, "A": op.a, "B": op.b, "C": op.c}[which]
    thr = mode_table(layout.shape[0], layout.stride[0]).reshape(-1)
    val = mode_table(layout.shape[1], layout.stride[1]).reshape(-1)
    if reg is None or val.size % reg.count:
        raise CompileError(
            f"{op.name}: operand {which} has {val.size} values per thread, not a multiple of "
            f"its register array {reg}"
        )
    per = val.size // reg.count
    width = 32 // per if per > 1 else vtype.bits
    if per > 1 and vtype.bits * per < 32 and "kind::" not in op.ptx:
        width = vtype.bits  # dp2a's B: two bytes in the low half (.lo), PTX ISA 9.7.1.24
    return OperandPlan(which, reg, vtype, tuple(map(int, thr)), tuple(map(int, val)), per, width)


def _index(plan: OperandPlan, v: int, part: int) -> str:
    base, off = f"{plan.which.lower()}_base", plan.value_offsets[v]
    nparts = len(element_parts(plan.vtype))
    return f"{nparts} * ({base} + {off}) + {part}" if nparts > 1 else f"{base} + {off}"


def _load_register(plan: OperandPlan, array: str, r: int, part: int) -> str:
    """C expression of register ``r`` of operand ``plan`` built from the global array."""
    container = element_container(plan.vtype)
    values = range(r * plan.per_register, (r + 1) * plan.per_register)
    if plan.per_register == 1:
        x = f"{array}[{_index(plan, r, part)}]"
        if plan.reg.cpp == "uint32_t" and container == "float":
            return f"__float_as_uint({x})"
        cpp = _reg_cpp(plan.reg)
        return x if container == cpp else f"({cpp}){x}"
    mask = (1 << plan.width) - 1
    terms = []
    for j, v in enumerate(values):
        x = f"(uint32_t){array}[{_index(plan, v, part)}]"
        if plan.width < 8 * _container_bytes(container):
            x = f"({x} & {mask:#x}u)"
        terms.append(f"({x} << {j * plan.width})" if j else x)
    return " | ".join(terms)


def _container_bytes(container: str) -> int:
    return {"uint8_t": 1, "uint16_t": 2, "float": 4, "int32_t": 4, "double": 8}[container]


def _store_register(plan: OperandPlan, reg_expr: str, r: int, part: int) -> list[str]:
    """Statements writing register ``r`` of D back to the global array ``D``."""
    container = element_container(plan.vtype)
    if plan.per_register == 1:
        x = reg_expr
        if plan.reg.cpp == "uint32_t" and container == "float":
            x = f"__uint_as_float({x})"
        elif container != _reg_cpp(plan.reg):
            x = f"({container}){x}"
        return [f"D[{_index(plan, r, part)}] = {x};"]
    values = range(r * plan.per_register, (r + 1) * plan.per_register)
    return [
        f"D[{_index(plan, v, part)}] = ({container})({reg_expr} >> {j * plan.width});"
        for j, v in enumerate(values)
    ]


def _thread_table(atom, threads: int) -> list[int]:
    """Physical thread -> logical thread of the atom (thr_id inverted), -1 for bystanders."""
    table = [-1] * threads
    for logical in range(atom.thr_id.size()):
        table[int(atom.thr_id(logical))] = logical
    return table


def probe_target(op: Operation) -> str:
    """The NVRTC target a register-sourced atom's probe is compiled for in CI.

    >>> from cutemma.mma import mma_op
    >>> probe_target(mma_op('SM70_8x8x4_F32F16F16F32_NT'))  # NVRTC 13 has no sm_70
    'sm_80'
    """
    if op.arch in _TARGET_OF_ARCH:
        return _TARGET_OF_ARCH[op.arch]
    return f"sm_{op.arch}a"


def runnable_targets(op: Operation) -> tuple[str, ...]:
    """The targets whose GPUs run a register-sourced atom: its own and every later one.

    sm_120a's ``kind::`` forms and sm_100's f32x2 exist only from their arch on;
    an sm_80..sm_90 mma.sync runs on every later GPU (PTX ISA: "requires sm_XX or higher").

    >>> from cutemma.mma import mma_op
    >>> runnable_targets(mma_op('SM89_16x8x32_F32E4M3E4M3F32_TN'))
    ('sm_89', 'sm_90a', 'sm_100a', 'sm_120a')
    """
    first = _TARGET_ORDER.index(probe_target(op))
    return _TARGET_ORDER[first:]


def _scale_one(op: Operation) -> str:
    """A 32-bit register holding the scale factor 1.0 in each byte (the op's scale type)."""
    sf = numeric_type(op.ptx.rsplit(".", 1)[1])
    byte = int(np.array(1.0, dtype=sf.host).view(np.uint8))
    return f"{int.from_bytes(bytes([byte] * 4), 'little'):#010x}u"


def _declare_operand(plan: OperandPlan, array: str, var: str, parts: tuple[str, ...]) -> list[str]:
    lines = []
    for p, part in enumerate(parts):
        name = f"{var}_{part}" if part else var
        values = [_load_register(plan, array, r, p) for r in range(plan.reg.count)]
        lines.append(declare(_reg_cpp(plan.reg), name, count=plan.reg.count))
        lines += [f"{name}[{r}] = {v};" for r, v in enumerate(values)]
    return lines


def _reg_cpp(reg: RegArray) -> str:
    return "double" if reg.cpp in ("complex<double>", "GaussComplex") else reg.cpp


def _regs(name: str, count: int) -> list[str]:
    return [f"{name}[{i}]" for i in range(count)]


def _mma_statements(op: Operation, plans: dict) -> list[str]:
    """The instruction(s): one asm for real atoms; CuTe's 4 / 3 real MMAs for complex ones."""
    extras = {e.name: _scale_one(op) for e in op.extras if e.name.startswith("scale_")}
    n = {w: plans[w].reg.count for w in "DABC"}
    if "complex" in op.modifiers:
        # (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ai br + ar bi), one real MMA per product.
        neg = [f"a_im_neg[{i}] = -a_im[{i}];" for i in range(n["A"])]
        calls = [
            ("d_re", "a_re", "b_re", "c_re"),
            ("d_im", "a_im", "b_re", "c_im"),
            ("d_re", "a_im_neg", "b_im", "d_re"),
            ("d_im", "a_re", "b_im", "d_im"),
        ]
        out = [declare("double", "a_im_neg", count=n["A"]), *neg]
        out += [declare("double", v, count=n["D"]) for v in ("d_re", "d_im")]
        return out + [
            mma_asm(op, _regs(d, n["D"]), _regs(a, n["A"]), _regs(b, n["B"]), _regs(c, n["C"]))
            for d, a, b, c in calls
        ]
    if "gauss" in op.modifiers:
        # CuTe's GaussComplex: t0 += ar br, t1 += ai bi, t2 += (ar + ai)(br + bi).
        out = [
            declare("double", v, count=n[w[0].upper()]) for w, v in (("a", "a_sum"), ("b", "b_sum"))
        ]
        out += [f"a_sum[{i}] = a_re[{i}] + a_im[{i}];" for i in range(n["A"])]
        out += [f"b_sum[{i}] = b_re[{i}] + b_im[{i}];" for i in range(n["B"])]
        out += [declare("double", f"d_{t}", count=n["D"]) for t in ("t0", "t1", "t2")]
        calls = [("t0", "a_re", "b_re"), ("t1", "a_im", "b_im"), ("t2", "a_sum", "b_sum")]
        return out + [
            mma_asm(
                op,
                _regs(f"d_{t}", n["D"]),
                _regs(a, n["A"]),
                _regs(b, n["B"]),
                _regs(f"c_{t}", n["C"]),
            )
            for t, a, b in calls
        ]
    out = [declare(_reg_cpp(plans["D"].reg), "d", count=n["D"])]
    return out + [
        mma_asm(
            op,
            _regs("d", n["D"]),
            _regs("a", n["A"]),
            _regs("b", n["B"]),
            _regs("c", n["C"]),
            extras,
        )
    ]


def warp_probe(op: Operation, atom=None):
    """The :class:`~cutemma.cuda.probe_kernel.Probe` of a register-sourced atom (mma.sync, dp4a, fma).

    Each thread finds its logical thread through the inverted ThrID, reads its A,
    B, C values at the traits layouts' offsets (thread part from a ``__constant__``
    table, value part as constants), packs them into the instruction's registers,
    runs it once, and writes D through the C layout. Bystander lanes (the other
    quadpairs of an SM70 8x8x4) run the instruction on thread 0's data and store nothing.
    ``atom`` (default: the catalog's) lets a caller probe altered traits.

    >>> from cutemma.mma import mma_op
    >>> p = warp_probe(mma_op('SM80_16x8x8_F16F16F16F16_TN'))
    >>> p.kernel_name, p.threads, 'const uint16_t* __restrict__ A' in p.source
    ('probe_SM80_16x8x8_F16F16F16F16_TN', 32, True)
    """
    from cutemma.cuda.probe_kernel import Probe
    from cutemma.mma import make_mma_atom

    if op.a_source != "reg" or op.b_source != "reg":
        raise CompileError(
            f"{op.name}: A from {op.a_source}, B from {op.b_source}; warp_probe takes "
            "register-sourced atoms (GMMA/tcgen05 probes live in probe_gmma/probe_umma)"
        )
    atom = atom if atom is not None else make_mma_atom(op)
    name = "probe_" + op.name
    threads = 32 if atom.thr_id.size() > 1 else 1
    plans = {w: operand_plan(op, atom, w) for w in "DABC"}
    tables = [constant_table("int", f"{name}_thread", _thread_table(atom, threads))]
    tables += [constant_table("int", f"{name}_{w.lower()}", plans[w].thread_offsets) for w in "ABC"]
    body = [
        "const int t = " + f"{name}_thread[threadIdx.x];",
        "const int ts = t < 0 ? 0 : t;  // bystanders compute on thread 0's data",
    ]
    body += [f"const int {w.lower()}_base = {name}_{w.lower()}[ts];" for w in "ABC"]
    for w in "ABC":
        parts = element_parts(plans[w].vtype)
        body += _declare_operand(plans[w], w, w.lower(), parts)
    body += _mma_statements(op, plans)
    body.append("if (t < 0) return;")
    body.append("const int d_base = c_base;")
    dplan = plans["D"]
    parts = element_parts(dplan.vtype)
    for p, part in enumerate(parts):
        var = f"d_{part}" if part else "d"
        for r in range(dplan.reg.count):
            body += _store_register(dplan, f"{var}[{r}]", r, p)
    params = tile_params(atom)
    head = comment(
        f"probe {op.name}: {op.ptx}\n"
        f"A {atom.tv_layout_A}  B {atom.tv_layout_B}  C {atom.tv_layout_C}  ThrID {atom.thr_id}"
    )
    source = "\n".join([head, *tables, kernel(name, params, "\n".join(body), threads)])
    return Probe(
        op=op,
        kernel_name=name,
        source=source,
        arch=probe_target(op),
        sass_kinds=sass_kinds(op),
        threads=threads,
        runnable_on=runnable_targets(op),
    )


def sass_kinds(op: Operation) -> tuple[str, ...]:
    """The SASS opcodes (before the first '.') a register-sourced atom must compile to.

    >>> from cutemma.mma import mma_op
    >>> sass_kinds(mma_op('SM80_16x8x32_S32S8S8S32_TN')), sass_kinds(mma_op('SM61_DP2A'))
    (('IMMA',), ('IDP',))
    """
    head = op.ptx.split(".", 1)[0]
    if ".m8n8k4." in op.ptx and ".f16." in op.ptx:
        # Compiled for sm_80+ (NVRTC 13 has no sm_70), ptxas emulates the SM70 quadpair
        # MMA in software (SHFL + FFMA/HFMA2 in a called routine): no tensor-core kind.
        return ()
    if head in ("dp4a", "dp2a"):
        return ("IDP",)
    if head == "fma":
        return ("FFMA2",)
    types = set(op.ptx.split("."))
    if "f64" in types:
        return ("DMMA",)
    if "b1" in types:
        return ("BMMA",)
    if types & {"s8", "u8", "s4", "u4"}:
        return ("IMMA",)
    if types & {"e4m3", "e5m2", "e3m2", "e2m3", "e2m1"}:
        return ("QMMA", "OMMA")
    return ("HMMA",)
