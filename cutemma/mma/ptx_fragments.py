"""The PTX ISA's matrix-fragment formulas, one function per instruction shape and type class.

Each function takes ``(operand, lane, i, variant)`` (lane and element index ``i``
broadcastable integer arrays) and returns the ``(row, col)`` the ISA gives fragment element
``i`` of that lane, citing its section of PTX ISA 9.x. :mod:`cutemma.mma.ptx_spec` tables them
by (shape, type class) and evaluates them; this module never reads a Layout.

>>> [tuple(map(int, m16n8k8_f16('C', 5, i, ''))) for i in range(2)]   # lane 5: group 1
[(1, 2), (1, 3)]
"""

from __future__ import annotations

import numpy as np


def _gt(lane):
    """The ISA's groupID and threadID_in_group of a lane."""
    return lane >> 2, lane % 4


# --- mma.sync, warp level --------------------------------------------------------
# Each function takes (operand, lane, i, variant) with lane and i broadcastable
# integer arrays and returns (row, col). `variant` is only read by m8n8k4 .f16
# (the A/B major, the C type); everything else has one form.


def m8n8k4_f16(operand: str, lane, i, variant: str):
    """9.7.14.5.1 mma.m8n8k4 .f16 (seed 002): four quadpairs, low lanes <16, high >=16.

    Lanes 16..31 work on rows 4..7: lane 16's a0 of a row-major A.

    >>> tuple(map(int, m8n8k4_f16('A', 16, 0, 'row')))
    (4, 0)
    """
    hi4 = np.where(lane < 16, 0, 4)  # the high group works on rows/cols 4..7
    if operand == "A":
        if variant == "row":
            return lane % 4 + hi4, i
        return i % 4 + hi4, lane % 4
    if operand == "B":
        if variant == "row":
            return lane % 4, i + hi4
        return i, lane % 4 + hi4
    if variant == "f16":
        return lane % 4 + hi4, i
    x = (lane & 0b1) + (i & 0b10)  # .f32 accumulator, Figures 51/52
    return x + hi4, (i & 0b100) + (lane & 0b10) + (i & 0b1)


def m8n8k4_f64(operand: str, lane, i, variant: str):
    """9.7.14.5.2 mma.m8n8k4 .f64 (seed 002).

    Lane 5 is group 1, thread 1 of its group; its c0 and c1:

    >>> [tuple(map(int, m8n8k4_f64('C', 5, i, 'f32'))) for i in range(2)]
    [(1, 2), (1, 3)]
    """
    g, t = _gt(lane)
    if operand == "A":
        return g, t + 0 * i
    if operand == "B":
        return t + 0 * i, g
    return g, t * 2 + (i & 0x1)


def m8n8_int(per_reg: int):
    """9.7.14.5.3-5 mma.m8n8k16 (.s8/.u8), m8n8k32 (.s4/.u4), m8n8k128 (.b1).

    One .b32 register of A and of B; ``per_reg`` elements in it (4, 8, 32).
    """

    def fragment(operand: str, lane, i, variant: str):
        g, t = _gt(lane)
        if operand == "A":
            return g + 0 * i, t * per_reg + i
        if operand == "B":
            return t * per_reg + i, g + 0 * i
        return g + 0 * i, t * 2 + i

    return fragment


def _c_m16n8(lane, i):
    """The one m16n8 accumulator of 9.7.14.5.6-13: c0,c1 on row g, c2,c3 on g+8."""
    g, t = _gt(lane)
    return np.where(i < 2, g, g + 8), t * 2 + (i & 0x1)


def m16n8k4_tf32_f64(operand: str, lane, i, variant: str):
    """9.7.14.5.6 mma.m16n8k4, .tf32 and .f64 alike.

    Lane 5's a0 is on row g = 1, its a1 on row g + 8:

    >>> [tuple(map(int, m16n8k4_tf32_f64('A', 5, i, 'row'))) for i in range(2)]
    [(1, 1), (9, 1)]
    """
    g, t = _gt(lane)
    if operand == "A":
        return np.where(i == 0, g, g + 8), t + 0 * i
    if operand == "B":
        return t + 0 * i, g + 0 * i
    return _c_m16n8(lane, i)


def m16n8k8_f16(operand: str, lane, i, variant: str):
    """9.7.14.5.7 mma.m16n8k8 .f16/.bf16.

    Lane 5's b0 and b1: two consecutive K rows of column g = 1.

    >>> [tuple(map(int, m16n8k8_f16('B', 5, i, 'col'))) for i in range(2)]
    [(2, 1), (3, 1)]
    """
    g, t = _gt(lane)
    if operand == "A":
        return np.where(i < 2, g, g + 8), t * 2 + (i & 0x1)
    if operand == "B":
        return t * 2 + i, g + 0 * i
    return _c_m16n8(lane, i)


def m16n8k8_tf32_f64(operand: str, lane, i, variant: str):
    """9.7.14.5.7 mma.m16n8k8 .tf32 and .f64 (same formulas, Figures 72/73, 75/76).

    Lane 5's a0..a3: rows g, g + 8, then the same at K column t + 4.

    >>> [tuple(map(int, m16n8k8_tf32_f64('A', 5, i, 'row'))) for i in range(4)]
    [(1, 1), (9, 1), (1, 5), (9, 5)]
    """
    g, t = _gt(lane)
    if operand == "A":
        return np.where(i % 2 == 0, g, g + 8), np.where(i < 2, t, t + 4)
    if operand == "B":
        return np.where(i == 0, t, t + 4), g + 0 * i
    return _c_m16n8(lane, i)


def m16n8k16_f16(operand: str, lane, i, variant: str):
    """9.7.14.5.8 mma.m16n8k16 .f16/.bf16.

    Lane 5's a0, and its a7 eight rows and eight K columns further on:

    >>> [tuple(map(int, m16n8k16_f16('A', 5, i, 'row'))) for i in (0, 7)]
    [(1, 2), (9, 11)]
    """
    g, t = _gt(lane)
    if operand == "A":
        row = np.where((i < 2) | ((4 <= i) & (i < 6)), g, g + 8)
        return row, np.where(i < 4, t * 2 + (i & 0x1), t * 2 + (i & 0x1) + 8)
    if operand == "B":
        return np.where(i < 2, t * 2 + (i & 0x1), t * 2 + (i & 0x1) + 8), g + 0 * i
    return _c_m16n8(lane, i)


def m16n8k16_f64(operand: str, lane, i, variant: str):
    """9.7.14.5.8 mma.m16n8k16 .f64 (Figures 80, 82).

    Lane 5's a0..a3: rows alternate g, g + 8; K steps by 4 every two values.

    >>> [tuple(map(int, m16n8k16_f64('A', 5, i, 'row'))) for i in range(4)]
    [(1, 1), (9, 1), (1, 5), (9, 5)]
    """
    g, t = _gt(lane)
    if operand == "A":
        even = i % 2 == 0
        return np.where(even, g, g + 8), np.where(even, i * 2 + t, i * 2 - 2 + t)
    if operand == "B":
        return t + i * 4, g + 0 * i
    return _c_m16n8(lane, i)


def m16n8k16_i8(operand: str, lane, i, variant: str):
    """9.7.14.5.9 mma.m16n8k16 .s8/.u8 (and .e4m3/.e5m2).

    Four bytes per register: lane 5's a0, and a4 (its second register) on row g + 8.

    >>> [tuple(map(int, m16n8k16_i8('A', 5, i, 'row'))) for i in (0, 4)]
    [(1, 4), (9, 4)]
    """
    g, t = _gt(lane)
    if operand == "A":
        return np.where(i < 4, g, g + 8), t * 4 + (i & 0x3)
    if operand == "B":
        return t * 4 + i, g + 0 * i
    return _c_m16n8(lane, i)


def m16n8k32_i4(operand: str, lane, i, variant: str):
    """9.7.14.5.10 mma.m16n8k32 .s4/.u4 (Figures 87, 89).

    Eight nibbles per register: lane 5's a0, and a8 (its second register) on row g + 8.

    >>> [tuple(map(int, m16n8k32_i4('A', 5, i, 'row'))) for i in (0, 8)]
    [(1, 8), (9, 8)]
    """
    g, t = _gt(lane)
    if operand == "A":
        return np.where(i < 8, g, g + 8), t * 8 + (i & 0x7)
    if operand == "B":
        return t * 8 + (i & 0x7), g + 0 * i
    return _c_m16n8(lane, i)


def m16n8k32_i8(operand: str, lane, i, variant: str):
    """9.7.14.5.10 mma.m16n8k32 .s8/.u8/.e4m3/.e5m2/.e3m2/.e2m3/.e2m1 (Figures 88, 90, 91).

    Lane 5's a0, and a8 (its third register): back on row g, 16 K columns on.

    >>> [tuple(map(int, m16n8k32_i8('A', 5, i, 'row'))) for i in (0, 8)]
    [(1, 4), (1, 20)]
    """
    g, t = _gt(lane)
    if operand == "A":
        row = np.where((i < 4) | ((8 <= i) & (i < 12)), g, g + 8)
        return row, np.where(i < 8, t * 4 + (i & 0x3), t * 4 + (i & 0x3) + 16)
    if operand == "B":
        return np.where(i < 4, t * 4 + (i & 0x3), t * 4 + (i & 0x3) + 16), g + 0 * i
    return _c_m16n8(lane, i)


def m16n8k64_i4(operand: str, lane, i, variant: str):
    """9.7.14.5.11 mma.m16n8k64 .s4/.u4/.e2m1 (Figures 93-95).

    Lane 5's a0, and a16 (its third register): back on row g, 32 K columns on.

    >>> [tuple(map(int, m16n8k64_i4('A', 5, i, 'row'))) for i in (0, 16)]
    [(1, 8), (1, 40)]
    """
    g, t = _gt(lane)
    if operand == "A":
        row = np.where((i < 8) | ((16 <= i) & (i < 24)), g, g + 8)
        return row, np.where(i < 16, t * 8 + (i & 0x7), t * 8 + (i & 0x7) + 32)
    if operand == "B":
        return np.where(i < 8, t * 8 + (i & 0x7), t * 8 + (i & 0x7) + 32), g + 0 * i
    return _c_m16n8(lane, i)


def m16n8k128_b1(operand: str, lane, i, variant: str):
    """9.7.14.5.12 mma.m16n8k128 .b1 (Figures 97-99).

    32 bits per register: lane 5's a0, and a32 (its second register) on row g + 8.

    >>> [tuple(map(int, m16n8k128_b1('A', 5, i, 'row'))) for i in (0, 32)]
    [(1, 32), (9, 32)]
    """
    g, t = _gt(lane)
    if operand == "A":
        return np.where(i < 32, g, g + 8), t * 32 + (i & 0x1F)
    if operand == "B":
        return t * 32 + i, g + 0 * i
    return _c_m16n8(lane, i)


def m16n8k256_b1(operand: str, lane, i, variant: str):
    """9.7.14.5.13 mma.m16n8k256 .b1 (Figures 100-103).

    The ISA prints A's column as ``(threadID_in_group * 32) + i`` for i < 64; taken
    literally a1..a63 of lane 0 and a96..a127 would both reach columns 128..159
    of row g+8, so two lanes would hold one element. The figure and the i >= 64
    branch use ``i & 0x1F``, which we follow; tests check the table is a bijection.

    Lane 5's a0, and a64 (its third register): back on row g, 128 K columns on.

    >>> [tuple(map(int, m16n8k256_b1('A', 5, i, 'row'))) for i in (0, 64)]
    [(1, 32), (1, 160)]
    """
    g, t = _gt(lane)
    if operand == "A":
        row = np.where((i < 32) | ((64 <= i) & (i < 96)), g, g + 8)
        return row, np.where(i < 64, t * 32 + (i & 0x1F), t * 32 + (i & 0x1F) + 128)
    if operand == "B":
        return np.where(i < 32, t * 32 + (i & 0x1F), t * 32 + (i & 0x1F) + 128), g + 0 * i
    return _c_m16n8(lane, i)


# --- wgmma, warpgroup level ------------------------------------------------------
# 9.7.15.5.1.1 "Register Fragments" gives these as figures (148-155), not formulas.
# Read off the figures: warp w of the warpgroup owns rows 16w..16w+15; inside a
# warp, A is the mma.m16n8kK A fragment of the same element width, and D repeats
# the m16n8 accumulator once per 8 columns (d0..d3 cols 0..7, d4..d7 cols 8..15 ...).


def wgmma_a(per_warp):
    """A in registers: warp w holds rows 16w.. as the warp-level fragment does."""

    def fragment(thread, i):
        row, col = per_warp("A", thread % 32, i, "row")
        return row + 16 * (thread // 32), col

    return fragment


def wgmma_d(thread, i):
    """Accumulator D of every wgmma.mma_async.m64nNkK (Figures 149, 151, 153, 155).

    Thread 37 is lane 5 of warp 1 (rows 16..31); its d5 is c1 of columns 8..15:

    >>> tuple(map(int, wgmma_d(37, 5)))
    (17, 11)
    """
    row, col = _c_m16n8(thread % 32, i % 4)
    return row + 16 * (thread // 32), col + 8 * (i // 4)


# Sparse wgmma (9.7.15.6) keeps A compressed: a register pair of the dense
# fragment (K/2 wide) holds the 2 kept values of one group of 4 along K. In
# logical K the thread so owns whole groups, which is the dense fragment of
# elements half as wide (CuTe models sparse A this way, e.g. f16 sparse RS uses
# its 8-bit ALayout_64x32).
SPARSE_A = {"f16": m16n8k32_i8, "tf32": m16n8k16_f16, "i8": m16n8k64_i4}


# --- single-thread instructions ---------------------------------------------------


def single_thread(rows: int, cols: int):
    """dp4a/dp2a (9.7.1.23, 9.7.1.24) and fma.f32x2: one thread holds the whole operand.

    dp4a: d = c + sum_i a.byte[i] * b.byte[i], so A is 1x4 (k = i), B is 4x1 (k = i).

    dp4a's A is 1 x 4, and value i sits at column i:

    >>> [single_thread(1, 4)(0, i) for i in range(4)]
    [(0, 0), (0, 1), (0, 2), (0, 3)]
    """

    def fragment(lane, i):
        return i % rows + 0 * lane, i // rows + 0 * lane

    return fragment
