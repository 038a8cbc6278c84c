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

from cutemma.cuda.source import asm_volatile
from cutemma.errors import CompileError
from cutemma.mma.operation import CONSTRAINTS, Operation, RegArray

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


def _group_text(op: Operation, numbers: list[int], scalar: bool) -> str:
    names = [f"%{n}" for n in numbers]
    if scalar:
        return ", ".join(names)
    return "{" + ", ".join(names) + "}"


def _operand_groups(op: Operation, exprs: Mapping[str, Sequence[str]], slots: _Slots):
    """(placeholder refs, text kind) of D, A, B, C in ``op.operands`` order."""
    refs = {}
    d_less = op.d is None  # wgmma / tcgen05: C is the accumulator (read-write or tmem address)
    tmem_c = _head(op) == "tcgen05"
    order = ["D"] if op.d is not None else []
    order += [o for o in ("A", "B", "C") if o in op.operands or o == "C"]
    for which in order:
        reg = {"D": op.d, "A": op.a, "B": op.b, "C": op.c}[which]
        if reg is None:
            continue
        ex = list(exprs[which])
        _check_count(op, which, reg, ex)
        if which == "D":
            refs[which] = slots.placeholders(ex, "=" + reg.constraint, True)
        elif which == "C" and d_less and not tmem_c:
            refs[which] = slots.placeholders(ex, "+" + reg.constraint, True)
        else:
            refs[which] = None  # inputs numbered after all outputs are known
    for which in order:
        if refs.get(which, 0) is None:
            reg = {"A": op.a, "B": op.b, "C": op.c}[which]
            refs[which] = slots.placeholders(list(exprs[which]), reg.constraint, False)
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
        if which == "C" and _head(op) == "tcgen05":
            texts.append(f"[%{numbers[0]}]")
        elif reg.cpp == "uint64_t" and reg.count == 1:  # a descriptor: one 64-bit scalar
            texts.append(f"%{numbers[0]}")
        else:
            texts.append(_group_text(op, numbers, scalar))
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
