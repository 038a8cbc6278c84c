"""Small composable emitters of CUDA C++ text, for generated kernels.

Each emitter returns a string; a kernel is built by nesting them. Python plays
the role of C++ templates: every index is a number computed from a Layout and
written into the source as a constant (see :func:`constant_table`), never a
formula re-derived by hand. Generated source should read like hand-written
code: named variables and a comment saying which atom and layouts it encodes.

>>> src = translation_unit(
...     comment("probe: writes the thread index"),
...     kernel("probe", [Param("int*", "out")], "out[threadIdx.x] = threadIdx.x;"),
... )
>>> print(src)
// probe: writes the thread index
<BLANKLINE>
extern "C" __global__ void probe(int* __restrict__ out) {
  out[threadIdx.x] = threadIdx.x;
}
<BLANKLINE>
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cutemma.errors import CompileError

INDENT = "  "

# NVRTC has no system headers (no <cstdint>, no <cuda_fp16.h>), so generated
# code names fixed-width types through these typedefs; 16-bit floats travel as
# their bits in uint16_t / packed uint32_t, which is what mma operands are anyway.
FIXED_WIDTH_TYPES = """\
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;"""

# shared memory's 32-bit address of a generic pointer: what cp.async, ldmatrix, mbarrier and
# the bulk/tensor copies take (every generated kernel that stages through shared memory)
SMEM_ADDR = """\
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
"""

# f32 <-> 16-bit float conversions on the bits (16-bit floats travel as uint16_t, above);
# TO_F32 / FROM_F32 name them per element type for generated loads and stores
FLOAT_CONVERSIONS = """\
__device__ __forceinline__ float f16_to_f32(uint16_t h) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ float bf16_to_f32(uint16_t h) { return __uint_as_float(((uint32_t)h) << 16); }
__device__ __forceinline__ uint16_t f32_to_f16(float f) {
  uint16_t h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ uint16_t f32_to_bf16(float f) {
  uint16_t h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
"""
TO_F32 = {"f32": "{x}", "f16": "f16_to_f32({x})", "bf16": "bf16_to_f32({x})", "s32": "{x}"}
FROM_F32 = {"f32": "{x}", "f16": "f32_to_f16({x})", "bf16": "f32_to_bf16({x})", "s32": "{x}"}

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _check_identifier(name: str, what: str) -> str:
    if not _IDENTIFIER.match(name):
        raise CompileError(f"{what} {name!r} is not a C identifier: use letters, digits and _")
    return name


@dataclass(frozen=True)
class Param:
    """One kernel parameter: a C type and a name. Pointers get ``__restrict__``.

    The same list describes the signature here and lets the launcher check the
    dtype of each tensor argument against its pointer type.

    >>> Param("const float*", "a").declaration
    'const float* __restrict__ a'
    >>> Param("int", "n").is_pointer
    False
    """

    ctype: str
    name: str
    restrict: bool = True

    def __post_init__(self) -> None:
        _check_identifier(self.name, "parameter name")

    @property
    def is_pointer(self) -> bool:
        return self.ctype.rstrip().endswith("*")

    @property
    def pointee(self) -> str:
        """The element type a pointer parameter points to, without const.

        >>> Param("const uint32_t*", "b").pointee
        'uint32_t'
        """
        return self.ctype.rstrip().rstrip("*").replace("const", "").strip()

    @property
    def declaration(self) -> str:
        qualifier = " __restrict__" if self.is_pointer and self.restrict else ""
        return f"{self.ctype}{qualifier} {self.name}"


def indent(text: str, levels: int = 1) -> str:
    """Indent every non-empty line of ``text``.

    >>> indent("a;\\n\\nb;")
    '  a;\\n\\n  b;'
    """
    pad = INDENT * levels
    return "\n".join(pad + line if line.strip() else "" for line in text.splitlines())


def comment(text: str) -> str:
    """``text`` as // comment lines.

    >>> print(comment("atom SM80_16x8x16_F32F16F16F32_TN\\nC layout ((4,8),(2,2)):((32,1),(16,8))"))
    // atom SM80_16x8x16_F32F16F16F32_TN
    // C layout ((4,8),(2,2)):((32,1),(16,8))
    """
    return "\n".join(f"// {line}".rstrip() for line in text.splitlines())


def includes(*headers: str) -> str:
    """``#include <...>`` lines.

    >>> includes("cuda_fp16.h")
    '#include <cuda_fp16.h>'
    """
    return "\n".join(f"#include <{h}>" for h in headers)


def block(header: str, body: str) -> str:
    """``header { body }`` with the body indented.

    >>> print(block("for (int i = 0; i < 4; ++i)", "acc[i] = 0.f;"))
    for (int i = 0; i < 4; ++i) {
      acc[i] = 0.f;
    }
    """
    return f"{header} {{\n{indent(body)}\n}}"


def _literal(value: int | float | str) -> str:
    """A C literal for a Python number; floats get an 'f' so they stay float."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CompileError(f"cannot write {value!r} as a C float literal; give a finite number")
        return f"{value!r}f"
    return str(value)


def declare(
    ctype: str,
    name: str,
    init: int | float | str | Sequence | None = None,
    count: int | None = None,
) -> str:
    """A local variable or register array, optionally initialised.

    >>> declare("float", "acc", 0.0, count=4)
    'float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};'
    >>> declare("uint32_t", "a_frag", count=2)
    'uint32_t a_frag[2];'
    >>> declare("int", "lane", "threadIdx.x % 32")
    'int lane = threadIdx.x % 32;'
    """
    _check_identifier(name, "variable name")
    target = f"{ctype} {name}" + (f"[{count}]" if count is not None else "")
    if init is None:
        return f"{target};"
    if count is not None:
        values = list(init) if isinstance(init, (list, tuple)) else [init] * count
        return f"{target} = {{{', '.join(_literal(v) for v in values)}}};"
    return f"{target} = {_literal(init)};"


def constant_table(ctype: str, name: str, values: Iterable[int]) -> str:
    """A file-scope ``__constant__`` table: layout offsets read by thread index.

    A table indexed by a run-time thread index belongs in constant memory; a
    local array indexed at run time would spill to local memory.

    >>> constant_table("int", "a_offset", [0, 16, 1, 17])
    '__constant__ int a_offset[4] = {0, 16, 1, 17};'
    """
    values = [int(v) for v in values]
    _check_identifier(name, "table name")
    return f"__constant__ {ctype} {name}[{len(values)}] = {{{', '.join(map(str, values))}}};"


def operand_list(first: int, count: int) -> str:
    """A brace list of ``count`` asm placeholders starting at ``%first``.

    >>> operand_list(4, 4)
    '{%4, %5, %6, %7}'
    """
    return "{" + ", ".join(f"%{i}" for i in range(first, first + count)) + "}"


def _asm_operands(operands: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f'"{constraint}"({expr})' for constraint, expr in operands)


def asm_volatile(
    ptx: str,
    outputs: Sequence[tuple[str, str]] = (),
    inputs: Sequence[tuple[str, str]] = (),
    clobbers: Sequence[str] = (),
) -> str:
    """An ``asm volatile`` statement; operands are (constraint, expression) pairs.

    Each PTX line becomes its own string literal so the generated source and
    the PTX both stay one instruction per line.

    >>> print(asm_volatile("mov.u32 %0, %1;", [("=r", "x")], [("r", "y")]))
    asm volatile(
      "mov.u32 %0, %1;\\n"
      : "=r"(x)
      : "r"(y));
    """
    text = "\n".join(f'"{line}\\n"' for line in ptx.strip().splitlines())
    sections = [_asm_operands(outputs), _asm_operands(inputs)]
    if clobbers:
        sections.append(", ".join(f'"{c}"' for c in clobbers))
    while sections and not sections[-1]:
        sections.pop()
    tail = "".join(f"\n: {s}" if s else "\n:" for s in sections)
    return f"asm volatile(\n{indent(text + tail)});"


def kernel(name: str, params: Sequence[Param], body: str, launch_bounds: int | None = None) -> str:
    """An ``extern "C" __global__`` kernel (unmangled, so it is found by name).

    >>> print(kernel("k", [Param("float*", "d"), Param("int", "n")], "d[0] = n;", 128))
    extern "C" __global__ void __launch_bounds__(128) k(float* __restrict__ d, int n) {
      d[0] = n;
    }
    """
    _check_identifier(name, "kernel name")
    bounds = f"__launch_bounds__({launch_bounds}) " if launch_bounds else ""
    signature = ", ".join(p.declaration for p in params)
    return block(f'extern "C" __global__ void {bounds}{name}({signature})', body)


def translation_unit(*parts: str) -> str:
    """Join top-level pieces with a blank line between; ends with a newline.

    >>> translation_unit("// a", "// b")
    '// a\\n\\n// b\\n'
    """
    return "\n\n".join(p.strip("\n") for p in parts if p.strip()) + "\n"
