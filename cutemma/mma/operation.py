"""Operation: what one MMA instruction physically is.

An :class:`Operation` holds the PTX instruction (mnemonic and operand order), the
register arrays each thread passes for D, A, B and C, where A and B come from,
and the extra operands. It has no layouts; those are in :class:`~cutemma.mma.traits.Traits`.

>>> from cutemma.mma import mma_op
>>> op = mma_op('SM70_8x8x4_F32F16F16F32_NT')
>>> op.ptx
'mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32'
>>> [str(r) for r in op.registers]
['float[8]', 'uint32_t[2]', 'uint32_t[2]', 'float[8]']
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cutemma.errors import AtomError

SOURCES = ("reg", "smem", "tmem")

# asm constraint letter of each register element type (GCC/NVCC inline asm).
CONSTRAINTS = {
    "float": "f",
    "double": "d",
    "uint32_t": "r",
    "int32_t": "r",
    "uint64_t": "l",
    "complex<double>": "d",
    "GaussComplex": "d",
}


@dataclass(frozen=True)
class RegArray:
    """One register array of an operand: C++ element type and count (``float[8]``).

    >>> RegArray('uint32_t', 2), RegArray('uint32_t', 2).constraint
    (RegArray('uint32_t[2]'), 'r')
    """

    cpp: str
    count: int

    def __post_init__(self):
        if self.cpp not in CONSTRAINTS or self.count < 0:
            raise AtomError(
                f"register array {self.cpp}[{self.count}]: element type must be one of "
                f"{', '.join(CONSTRAINTS)} and the count non-negative"
            )

    @property
    def constraint(self) -> str:
        """The inline-asm constraint letter (``'r'``, ``'f'``, ``'d'``, ``'l'``).

        >>> RegArray('double', 2).constraint
        'd'
        """
        return CONSTRAINTS[self.cpp]

    def __str__(self) -> str:
        return f"{self.cpp}[{self.count}]"

    def __repr__(self) -> str:
        return f"RegArray('{self}')"


@dataclass(frozen=True)
class Extra:
    """An operand besides D, A, B, C: scale-D, scale-A/B, majors, sparsity metadata, ...

    ``kind`` is 'reg' (runtime register, with its C++ type), 'imm' (an immediate
    fixed when the instruction is emitted, with its value) or 'pred'.

    >>> Extra('scale_D', 'pred', 'int32_t')
    Extra(name='scale_D', kind='pred', cpp='int32_t', value=None)
    """

    name: str
    kind: str
    cpp: str = "int32_t"
    value: object = None


@dataclass(frozen=True)
class Operation:
    """What one MMA instruction is: PTX, registers, operand sources, extras.

    ``operands`` is the order of the operand groups in the PTX instruction text
    (``('D', 'A', 'B', 'C')`` for mma.sync; wgmma has no C and ends with extras).
    ``d``/``a``/``b``/``c`` are per-thread register arrays (None where the operand
    is not in registers, e.g. GMMA D == C, or A/B from shared memory through a
    descriptor, which is then one ``uint64_t``). ``modifiers`` name the arithmetic
    variations the emulator must honour: ``'satfinite'``, ``'xor.popc'``,
    ``'and.popc'``, ``'complex'``. ``params`` are the name's parameters (majors,
    scales) as sorted (key, value) pairs. ``family`` names the catalog family
    that built it, which also knows its Traits. ``ptx_isa`` is the PTX ISA version
    the instruction needs where that is newer than the NVRTC of the ``cuda`` extra
    (13.0, PTX ISA 9.0) reads; None otherwise.

    >>> from cutemma.mma import mma_op
    >>> mma_op('SM80_16x8x32_S32S8S8S32_TN_SATURATE').modifiers
    ('satfinite',)
    """

    name: str
    arch: int
    family: str
    ptx: str
    d: RegArray | None
    a: RegArray | None
    b: RegArray | None
    c: RegArray | None
    operands: tuple[str, ...] = ("D", "A", "B", "C")
    a_source: str = "reg"
    b_source: str = "reg"
    extras: tuple[Extra, ...] = ()
    modifiers: tuple[str, ...] = ()
    params: tuple[tuple[str, object], ...] = ()
    ptx_isa: tuple[int, int] | None = None
    note: str = field(default="", compare=False)

    def __post_init__(self):
        for which, src in (("a_source", self.a_source), ("b_source", self.b_source)):
            if src not in SOURCES:
                raise AtomError(f"{self.name}: {which}={src!r}; must be one of {SOURCES}")

    @property
    def registers(self) -> tuple[RegArray | None, ...]:
        """(D, A, B, C) register arrays, CuTe's DRegisters .. CRegisters.

        >>> from cutemma.mma import mma_op
        >>> mma_op('SM80_16x8x8_F32F16F16F32_TN').registers[2]
        RegArray('uint32_t[1]')
        """
        return (self.d, self.a, self.b, self.c)

    def param(self, key: str, default=None):
        """One parameter by name.

        >>> from cutemma.mma import mma_op
        >>> mma_op('SM80_8x8x4_F64F64F64F64_TN').param('missing', 0)
        0
        """
        return dict(self.params).get(key, default)

    def __str__(self) -> str:
        return self.name
