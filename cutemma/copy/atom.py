"""CopyAtom: a CopyOperation and its CopyTraits, read in units of one value type.

CuTe's ``Copy_Atom<Op, T>`` recasts the traits' bit layouts to elements of ``T``
(``recast_layout<uint1_t, T>``: an upcast by ``sizeof_bits<T>``), so that
``layout_src_tv`` maps (thread, value) to the element index. ``move`` runs the atom
on the CPU: each element goes from the thread/value that supplies it to the
thread/value that receives it, through the shared index space.

>>> import numpy as np
>>> from cutemma.copy import make_copy_atom
>>> atom = make_copy_atom('SM75_U32x1_LDSM_N', 'f16')
>>> str(atom.layout_src_tv), str(atom.layout_dst_tv)
('((8,4),8):((8,0),1)', '(32,2):(2,1)')
>>> src = np.arange(32 * 8).reshape(32, 8)       # lane r supplies row r (lanes >= 8 unused)
>>> atom.move(src)[5].tolist()                  # lane 5 receives row 1, columns 2, 3
[10, 11]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from cutemma.copy.operation import CPP_BITS, CopyOperation
from cutemma.copy.traits import CopyTraits
from cutemma.display import RichDisplay
from cutemma.errors import AtomError, CopyError, LayoutError
from cutemma.layout import Layout, size, upcast
from cutemma.mma.traits import tv_table


@dataclass(frozen=True)
class ValueType:
    """The element a CopyAtom is read in: a name, its width and C++ spelling.

    >>> value_type('bf16'), value_type(32).cpp
    (ValueType(name='bf16', bits=16, cpp='bfloat16_t'), 'uint32_t')
    """

    name: str
    bits: int
    cpp: str


def value_type(dtype) -> ValueType:
    """A value type from a cutemma numeric type or spelling, ``'uint32_t'``, or a bit count.

    >>> value_type('half_t').bits, value_type('uint128_t').bits
    (16, 128)
    """
    from cutemma.mma.types import NumericType, numeric_type

    if isinstance(dtype, ValueType):
        return dtype
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        cpp = f"uint{dtype}_t"
        if cpp not in CPP_BITS:
            raise CopyError(f"value type of {dtype} bits: use 8, 16, 32, 64, 128 or 256")
        return ValueType(cpp, dtype, cpp)
    if isinstance(dtype, str) and dtype in CPP_BITS:
        return ValueType(dtype, CPP_BITS[dtype], dtype)
    try:
        t = dtype if isinstance(dtype, NumericType) else numeric_type(dtype)
    except AtomError:
        raise CopyError(
            f"value type {dtype!r}: give a numeric type ('f16', 'half_t', 'e4m3', ...), "
            f"an unsigned C++ type ({', '.join(CPP_BITS)}) or a bit count"
        ) from None
    return ValueType(t.name, t.bits, t.cpp)


@dataclass(frozen=True)
class CopyAtom(RichDisplay):
    """One copy instruction for one value type: ``.op``, ``.traits``, ``.val_type``.

    >>> from cutemma.copy import make_copy_atom
    >>> a = make_copy_atom('SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>', 'bf16')
    >>> a.num_val_src, a.num_val_dst
    (8, 8)
    """

    op: CopyOperation
    traits: CopyTraits
    val_type: ValueType

    def __post_init__(self):
        if not isinstance(self.op, CopyOperation) or not isinstance(self.traits, CopyTraits):
            raise CopyError(
                f"CopyAtom(op, traits, val_type) takes a CopyOperation and its CopyTraits, got "
                f"{type(self.op).__name__} and {type(self.traits).__name__}; "
                "make_copy_atom(name, dtype) builds one"
            )
        if not isinstance(self.val_type, ValueType):  # a name or bit count, as make_copy_atom
            object.__setattr__(self, "val_type", value_type(self.val_type))
        for which in ("src", "dst", "ref"):
            lay = self._recast(getattr(self.traits, f"{which}_layout"), which)
            if size(lay[0]) != self.traits.threads:
                raise CopyError(
                    f"{self.op.name} cannot move {self.val_type.name} ({self.val_type.bits} bits): "
                    f"its {which} layout {getattr(self.traits, which + '_layout')} in "
                    f"{self.val_type.bits}-bit units is {lay}, which no longer has "
                    f"{self.traits.threads} threads; use a value type of at most "
                    f"{_widest_unit(getattr(self.traits, which + '_layout'))} bits"
                )

    def _recast(self, bit_layout: Layout, which: str) -> Layout:
        try:
            return upcast(bit_layout, self.val_type.bits)
        except LayoutError:
            raise CopyError(
                f"{self.op.name} cannot move {self.val_type.name} ({self.val_type.bits} bits): "
                f"its {which} bit layout {bit_layout} does not split into "
                f"{self.val_type.bits}-bit values; use a value type of at most "
                f"{_widest_unit(bit_layout)} bits"
            ) from None

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def thr_id(self) -> Layout:
        """Logical thread -> thread index (CuTe's ThrID)."""
        return self.traits.thr_id

    @cached_property
    def layout_src_tv(self) -> Layout:
        """(thread, value) -> element index each thread supplies (CuTe's ValLayoutSrc)."""
        return self._recast(self.traits.src_layout, "src")

    @cached_property
    def layout_dst_tv(self) -> Layout:
        """(thread, value) -> element index each thread receives (CuTe's ValLayoutDst)."""
        return self._recast(self.traits.dst_layout, "dst")

    @cached_property
    def layout_ref_tv(self) -> Layout:
        """The reference (thread, value) -> element index (CuTe's ValLayoutRef)."""
        return self._recast(self.traits.ref_layout, "ref")

    @property
    def num_val_src(self) -> int:
        """Values each thread supplies per instruction."""
        return size(self.layout_src_tv[1])

    @property
    def num_val_dst(self) -> int:
        """Values each thread receives per instruction."""
        return size(self.layout_dst_tv[1])

    def move(self, src: np.ndarray) -> np.ndarray:
        """Run the atom on the CPU: (threads, num_val_src) values -> (threads, num_val_dst).

        Each destination value takes the source value of the same element index. Where
        several source threads name one index (ldmatrix lanes that give no address,
        stride 0), the lowest thread's value is used, as those lanes' data is not read.

        >>> from cutemma.copy import make_copy_atom
        >>> import numpy as np
        >>> a = make_copy_atom('SM50_Shuffle_U32_2x2Trans_XOR1', 'uint32_t')
        >>> a.move(np.arange(64).reshape(32, 2))[:2].tolist()   # a 2x2 transpose in lanes 0, 1
        [[0, 2], [1, 3]]
        """
        src = np.asarray(src)
        want = (self.traits.threads, self.num_val_src)
        if src.shape != want:
            raise CopyError(f"{self.name}.move: source values shaped {src.shape}; expected {want}")
        return src.reshape(-1)[self.route]

    @cached_property
    def route(self) -> np.ndarray:
        """(threads, num_val_dst) table: flat index ``t * num_val_src + v`` of the source value
        each destination value takes (what :meth:`move` gathers).

        >>> from cutemma.copy import make_copy_atom
        >>> make_copy_atom('SM75_U16x2_LDSM_T', 'f16').route[1].tolist()   # lane 1: rows 2, 3
        [16, 24]
        """
        s_tab, d_tab = tv_table(self.layout_src_tv), tv_table(self.layout_dst_tv)
        by_index: dict[int, int] = {}
        for flat, i in enumerate(s_tab.ravel()):  # row-major: lowest thread first
            by_index.setdefault(int(i), flat)
        missing = sorted({int(i) for i in d_tab.ravel()} - set(by_index))
        if missing:
            raise CopyError(
                f"{self.name}.move: destination elements {missing[:6]} are supplied by no source "
                "thread (this atom's source and destination index spaces differ)"
            )
        return np.vectorize(lambda i: by_index[int(i)], otypes=[np.int64])(d_tab)

    def __repr__(self) -> str:
        return f"CopyAtom({self.name}, {self.val_type.name})"


def _widest_unit(bit_layout: Layout) -> int:
    """Largest power of two dividing the contiguous run of every value mode of a bit layout."""
    for bits in (256, 128, 64, 32, 16, 8):
        try:
            lay = upcast(bit_layout, bits)
        except LayoutError:
            continue
        if size(lay[0]) == size(bit_layout[0]):
            return bits
    return 1
