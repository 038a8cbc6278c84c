"""CopyOperation: what one data-movement instruction physically is.

The copy side of CuTe's split between ``arch/copy_sm*.hpp`` (the instruction) and
``atom/copy_traits_sm*.hpp`` (its meaning): a :class:`CopyOperation` holds the PTX, the
memory space and register array each side of the copy lives in, and the name's
parameters. It has no layouts; those are in :class:`~cutemma.copy.traits.CopyTraits`.

>>> from cutemma.copy import copy_op
>>> op = copy_op('SM75_U32x4_LDSM_N')
>>> op.ptx, str(op.src), str(op.dst)
('ldmatrix.sync.aligned.m8n8.x4.shared.b16', 'smem uint128_t[1]', 'reg uint32_t[4]')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cutemma.errors import CopyError

SPACES = ("reg", "smem", "gmem", "tmem")

# C++ register element types a copy operand may use, and their widths in bits.
CPP_BITS = {
    "uint8_t": 8,
    "uint16_t": 16,
    "uint32_t": 32,
    "uint64_t": 64,
    "uint128_t": 128,
    "uint256_t": 256,
}


@dataclass(frozen=True)
class Operand:
    """One side of a copy: memory space, C++ element type and count (CuTe's S/DRegisters).

    For a memory side (``smem``/``gmem``/``tmem``) the array is the unit the instruction
    addresses per thread (``uint128_t[1]``: one 16-byte row).

    >>> Operand('reg', 'uint32_t', 2).bits
    64
    """

    space: str
    cpp: str
    count: int = 1

    def __post_init__(self):
        count_ok = isinstance(self.count, int) and not isinstance(self.count, bool)
        names_ok = isinstance(self.space, str) and isinstance(self.cpp, str)
        if not names_ok or self.space not in SPACES or self.cpp not in CPP_BITS:
            count_ok = False
        if not count_ok or self.count < 1:
            raise CopyError(
                f"copy operand {self.space} {self.cpp}[{self.count}]: space must be one of "
                f"{SPACES}, element type one of {', '.join(CPP_BITS)}, count >= 1"
            )

    @property
    def bits(self) -> int:
        """Bits of the whole array.

        >>> Operand('smem', 'uint128_t').bits
        128
        """
        return CPP_BITS[self.cpp] * self.count

    def __str__(self) -> str:
        return f"{self.space} {self.cpp}[{self.count}]"


@dataclass(frozen=True)
class CopyOperation:
    """What one copy instruction is: PTX, source and destination operands, parameters.

    ``ptx`` is the instruction mnemonic (empty for :code:`UniversalCopy`, a plain C++
    assignment, and for the shuffles, a short sequence named in ``note``).
    ``modifiers`` name behaviour the emulator honours: ``'trans'`` (ldmatrix/stmatrix
    transpose), ``'zfill'`` (cp.async source-size operand), ``'pack16'`` (tcgen05
    pack::16b / unpack::16b). ``params`` are the template parameters as sorted pairs.
    ``ptx_isa`` is the PTX ISA version the instruction needs, ``arch`` its first
    architecture (CuTe's name prefix).

    >>> from cutemma.copy import copy_op
    >>> copy_op('SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>').modifiers
    ('zfill',)
    """

    name: str
    arch: int
    family: str
    ptx: str
    src: Operand
    dst: Operand
    modifiers: tuple[str, ...] = ()
    params: tuple[tuple[str, object], ...] = ()
    ptx_isa: tuple[int, int] | None = None
    note: str = field(default="", compare=False)

    def param(self, key: str, default=None):
        """One parameter by name.

        >>> from cutemma.copy import copy_op
        >>> copy_op('SM80_CP_ASYNC_CACHEALWAYS<uint64_t>').param('bits')
        64
        """
        return dict(self.params).get(key, default)

    @property
    def kind(self) -> str:
        """``'<src space> -> <dst space>'``, e.g. ``'smem -> reg'`` for ldmatrix.

        >>> from cutemma.copy import copy_op
        >>> copy_op('SM90_U32x4_STSM_N').kind
        'reg -> smem'
        """
        return f"{self.src.space} -> {self.dst.space}"

    def __str__(self) -> str:
        return self.name
