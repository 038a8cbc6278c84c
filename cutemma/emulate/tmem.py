"""Tensor-memory copies on the CPU: ``tcgen05.ld`` / ``tcgen05.st`` of one warp.

Tensor memory is modelled as a (128 lanes, 512 columns) array of 32-bit words. A TMEM atom's
traits (:mod:`cutemma.copy.arch.sm100_tmem`) say which logical bit each register bit is (its
register-side layout) and where each logical bit lives in tensor memory (``val_id``: a bit
address, one lane ``DP_BITS`` on, columns 32 bits wide). A load gathers every register value
from the address its logical bits map to, relative to the instruction's address (lane, column);
a store scatters them back. With ``.pack::16b`` / ``.unpack::16b`` (the ``_16b`` atoms, read in
16-bit values) a column holds one 16-bit value in its low half.

>>> import numpy as np
>>> from cutemma.copy import make_copy_atom
>>> tmem = np.arange(128 * 512, dtype=np.uint32).reshape(128, 512)
>>> regs = tmem_load(make_copy_atom("SM100_TMEM_LOAD_32dp32b2x", 32), tmem, 32, 8)
>>> regs[3].tolist(), int(tmem[35, 8]), int(tmem[35, 9])   # lane 3: row 32 + 3, columns 8, 9
([17928, 17929], 17928, 17929)
"""

from __future__ import annotations

from functools import cache

import numpy as np

from cutemma.copy.arch.sm100_tmem import DP_BITS
from cutemma.errors import CopyError
from cutemma.layout.checks import as_int
from cutemma.mma.traits import mode_table, tv_table

LANES, COLUMNS = 128, 512


@cache
def _addresses(atom) -> tuple[np.ndarray, np.ndarray]:
    """(lane, column) offsets, each (32, values), of every register value of a TMEM atom."""
    traits = atom.traits
    if traits.val_id is None:
        raise CopyError(f"{atom.name} is not a tensor-memory load or store (no val_id)")
    reg = atom.layout_dst_tv if atom.op.dst.space == "reg" else atom.layout_src_tv
    if atom.op.src.space != "tmem" and atom.op.dst.space != "tmem":
        raise CopyError(f"{atom.name}: neither side is tensor memory")
    bits = atom.val_type.bits
    addr_of_bit = mode_table(traits.val_id.shape, traits.val_id.stride)
    first = addr_of_bit[tv_table(reg) * bits]  # tensor-memory bit address of each value
    if bits == 16 and "pack16" not in atom.op.modifiers:
        raise CopyError(f"{atom.name}: read it in 32-bit values (16-bit ones need a _16b atom)")
    lane, bit = first // DP_BITS, first % DP_BITS
    if (bit % 32).any():
        raise CopyError(f"{atom.name}: values of {bits} bits do not start on a column")
    return lane, bit // 32


def _checked_atom(atom):
    from cutemma.copy.atom import CopyAtom

    if not isinstance(atom, CopyAtom):
        raise CopyError(
            "tensor-memory emulation takes a CopyAtom of tcgen05.ld/st, e.g. "
            f"make_copy_atom('SM100_TMEM_LOAD_32dp32b1x', 'f32'); got {atom!r}"
        )
    return atom


def _check(tmem: np.ndarray, lane0: int, col0: int, lane: np.ndarray, col: np.ndarray, what):
    if not isinstance(tmem, np.ndarray):
        raise CopyError(f"{what}: tensor memory is a numpy array, got {type(tmem).__name__}")
    if as_int(lane0) is None or as_int(col0) is None:
        raise CopyError(f"{what}: lane {lane0!r} and column {col0!r} must be whole numbers")
    if tmem.shape != (LANES, COLUMNS):
        raise CopyError(f"{what}: tensor memory is ({LANES}, {COLUMNS}) words, got {tmem.shape}")
    if lane0 % 16 or not 0 <= lane0 < LANES:
        raise CopyError(f"{what}: lane {lane0}; give a multiple of 16 below {LANES}")
    if col0 < 0 or col0 + int(col.max()) >= COLUMNS or lane0 + int(lane.max()) >= LANES:
        raise CopyError(f"{what}: columns {col0}..{col0 + int(col.max())} run past {COLUMNS}")


def tmem_load(atom, tmem: np.ndarray, lane0: int, col0: int) -> np.ndarray:
    """``tcgen05.ld`` of one warp at tensor-memory address (``lane0``, ``col0``): (32, values).

    16-bit atoms (``_16b``) return the low halves of the columns they read. With the 32dp32b1x
    shape, thread t reads lane ``lane0 + t`` of column ``col0`` (PTX ISA, tcgen05 data-path
    layout 32x32b):

    >>> import numpy as np
    >>> from cutemma.copy import make_copy_atom
    >>> tmem = np.arange(128 * 512, dtype=np.uint32).reshape(128, 512)  # word = 512*lane + col
    >>> tmem_load(make_copy_atom("SM100_TMEM_LOAD_32dp32b1x", 32), tmem, 32, 4)[:3].tolist()
    [[16388], [16900], [17412]]
    """
    lane, col = _addresses(_checked_atom(atom))
    _check(tmem, lane0, col0, lane, col, f"{atom.name} load")
    words = tmem[lane0 + lane, col0 + col]
    return (words & 0xFFFF).astype(np.uint16) if atom.val_type.bits == 16 else words.copy()


def tmem_load_red(atom, tmem: np.ndarray, lane0: int, col0: int) -> tuple[np.ndarray, np.ndarray]:
    """``tcgen05.ld.red`` of one warp (the ``SM100_TMEM_LOAD_STAT`` atoms): the loaded registers
    (32, values) as ``tmem_load`` gives them, and each thread's reduction ``redVal`` (32,).

    PTX ISA 8.8, tcgen05.ld: the ``.redOp`` (here ``.max``, on ``.f32``) is taken over "the
    data that is loaded across columns in each lane", so thread t's ``redVal`` is the maximum
    of the f32 values it loaded. Without ``.NaN`` a NaN input does not win the reduction.

    >>> import numpy as np
    >>> from cutemma.copy import make_copy_atom
    >>> tmem = np.zeros((128, 512), dtype=np.float32)
    >>> tmem[0, 5] = 3.5
    >>> regs, row_max = tmem_load_red(make_copy_atom("SM100_TMEM_LOAD_STAT_32dp32b32x", "f32"),
    ...                               tmem.view(np.uint32), 0, 0)
    >>> float(row_max[0]), float(row_max[1]), regs.shape
    (3.5, 0.0, (32, 32))
    """
    atom = _checked_atom(atom)
    if "red_max" not in atom.op.modifiers:
        raise CopyError(
            f"{atom.name} loads without a reduction; tcgen05.ld.red is an "
            "SM100_TMEM_LOAD_STAT_32dp32b<32|128>x atom"
        )
    regs = tmem_load(atom, tmem, lane0, col0)
    values = regs.astype(np.uint32).view(np.float32)
    return regs, np.fmax.reduce(values, axis=1)


def tmem_store(atom, regs: np.ndarray, tmem: np.ndarray, lane0: int, col0: int) -> None:
    """``tcgen05.st`` of one warp: register values (32, values) into tensor memory.

    >>> import numpy as np
    >>> from cutemma.copy import make_copy_atom
    >>> st = make_copy_atom("SM100_TMEM_STORE_32dp32b1x", 32)
    >>> tmem = np.zeros((128, 512), dtype=np.uint32)
    >>> tmem_store(st, np.arange(32, dtype=np.uint32).reshape(32, 1), tmem, 0, 4)
    >>> tmem[:3, 4].tolist()
    [0, 1, 2]
    """
    lane, col = _addresses(_checked_atom(atom))
    _check(tmem, lane0, col0, lane, col, f"{atom.name} store")
    regs = np.asarray(regs)
    if regs.shape != lane.shape:
        raise CopyError(f"{atom.name} store: registers shaped {regs.shape}; expected {lane.shape}")
    if regs.dtype.kind not in "biu" or (regs.size and (regs.min() < 0 or regs.max() >= 1 << 32)):
        raise CopyError(
            f"{atom.name} store: registers hold {regs.dtype} values; a register is a 32-bit "
            "word: give unsigned integers below 2^32 (float32 bits as regs.view(np.uint32))"
        )
    tmem[lane0 + lane, col0 + col] = regs.astype(np.uint32)
