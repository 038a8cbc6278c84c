"""Per-thread partitions of a kernel's tables: an offset table over (thread, value) split
into a thread part (a :class:`ThreadValue`, written as the expression of the Layout inferred
from its table) and a constant per unrolled value, checked for every thread; the C
partition of a TiledMMA repeated over a block tile. Both families' plans build on these.

>>> split_offsets([[0, 16], [8, 24]], None, "x").op
'+'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cutemma.errors import NotALayoutError, TiledMmaError
from cutemma.layout import Layout, Swizzle, flatten
from cutemma.mma.infer import infer_layout


@dataclass(frozen=True)
class ThreadValue:
    """A per-thread integer: its table over threadIdx.x and the Layout inferred from it.

    ``swizzle`` (if any) is applied after the layout: value = swizzle(layout(tid)).
    ``layout`` is None when no layout reproduces the table (a constant table is emitted).

    >>> ThreadValue.of([0, 8, 16, 24]).layout
    4:8
    """

    table: tuple[int, ...]
    layout: Layout | None
    swizzle: Swizzle | None = None

    @staticmethod
    def of(table: Sequence[int], swizzle: Swizzle | None = None) -> ThreadValue:
        inner = [swizzle(x) for x in table] if swizzle else list(table)  # involution
        try:
            layout = infer_layout(inner) if any(inner) else Layout(len(inner), 0)
        except NotALayoutError:
            layout = None
        return ThreadValue(tuple(table), layout, swizzle)

    def __call__(self, tid: int) -> int:
        if self.layout is None:
            return self.table[tid]
        raw = self.layout(tid)
        return self.swizzle(raw) if self.swizzle else raw


@dataclass(frozen=True)
class Split:
    """offset(t, i) = thread(t) <op> const[i], checked for every thread and i; op 's+' is
    ``swizzle(thread(t) + const[i])``: the sum before the stage's swizzle (offsets whose
    swizzle mixes bits of the thread and of the value, so that neither + nor ^ splits them
    after it).

    >>> s = Split(ThreadValue.of([0, 8]), (0, 64), "s+", Swizzle(1, 3, 3))
    >>> [s.at(t, i) for t in (0, 1) for i in (0, 1)]
    [0, 72, 8, 64]
    """

    thread: ThreadValue
    consts: tuple[int, ...]
    op: str  # '+', '^', 's+' or 'k+'
    swizzle: Swizzle | None = None  # op 's+': applied after the sum
    # op 'k+': offset(t, i) = keys[key_of[i]](t) + consts[i], a thread part per key
    keys: tuple[ThreadValue, ...] = ()
    key_of: tuple[int, ...] = ()

    def at(self, t: int, i: int) -> int:
        """offset(t, i) as the split writes it."""
        if self.op == "k+":
            return self.keys[self.key_of[i]](t) + self.consts[i]
        b, c = self.thread(t), self.consts[i]
        if self.op == "+":
            return b + c
        if self.op == "^":
            return b ^ c
        return self.swizzle(b + c)

    def parts(self) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
        """Each constant as (key index, add): offset(t, i) = (thread(t) ^ keys[key]) + add.

        A kernel keeps one register per key (few: the bits a constant shares with
        some thread's part) and folds ``add`` into the instruction's immediate.
        The bits of ``add`` are set in no thread's part, so there ``^`` is ``+``.

        >>> s = split_offsets([[0, 16, 64, 80], [16, 0, 80, 64]], None, "x")
        >>> s.op, s.parts()
        ('^', ((0, 16), ((0, 0), (1, 0), (0, 64), (1, 64))))
        """
        if self.op == "+":
            return (0,), tuple((0, c) for c in self.consts)
        if self.op == "k+":  # key j: its own thread part (the kernel's register j)
            return tuple(range(len(self.keys))), tuple(zip(self.key_of, self.consts))
        if self.op == "s+":
            # the swizzle reads and writes bits below `span` only: a constant's higher part
            # passes through it (swizzle(x + hi) = swizzle(x) + hi), so each distinct low
            # part is a key (offset = swizzle(thread + key) + add)
            span = 1 << (self.swizzle.yyy_mask | self.swizzle.zzz_mask).bit_length()
            keys = tuple(sorted({c % span for c in self.consts}))
            return keys, tuple((keys.index(c % span), c - c % span) for c in self.consts)
        used = 0
        for t in range(len(self.thread.table)):
            used |= self.thread(t)
        keys = tuple(sorted({c & used for c in self.consts}))
        parts = tuple((keys.index(c & used), c & ~used) for c in self.consts)
        for t in range(len(self.thread.table)):
            b = self.thread(t)
            for c, (j, add) in zip(self.consts, parts):
                if (b ^ keys[j]) + add != b ^ c:  # pragma: no cover - true by construction
                    raise TiledMmaError(f"offset {b} ^ {c} does not split at key {keys[j]}")
        return keys, parts


def split_offsets(
    table: list[list[int]],
    swizzle: Swizzle | None,
    what: str,
    before_swizzle: bool = False,
    max_keys: int = 0,
) -> Split:
    """Write ``table[t][i]`` as ``thread[t] + const[i]`` or, failing that, ``thread[t] ^ const[i]``;
    with ``before_swizzle``, failing both, as ``swizzle(thread[t] + const[i])`` (op 's+': the
    offsets before the swizzle split by +). Failing all, with ``max_keys``, as
    ``key[j](t) + const[i]`` (op 'k+'): the values grouped by how their offset moves with the
    thread, a thread part per group, at most ``max_keys`` of them (a register each: a swizzle
    or a layout mode boundary that a thread's and a value's parts both cross, as 3 warps of
    16 rows do in a 32-row swizzle atom, leaves no single thread part).

    >>> s = split_offsets([[0, 16], [8, 24]], None, "x")
    >>> s.op, s.consts, s.thread.table
    ('+', (0, 16), (0, 8))
    >>> sw = Swizzle(1, 3, 3)  # bit 3 ^= bit 6: thread 8 + value 56 carries into bit 6
    >>> s = split_offsets([[sw(t + c) for c in (0, 56, 64)] for t in (0, 8)], sw, "x", True)
    >>> s.op, s.consts, s.thread.table, s.parts()
    ('s+', (0, 56, 64), (0, 8), ((0, 56, 64), ((0, 0), (1, 0), (2, 0))))
    """
    base = [row[0] for row in table]
    for op, inv in (("+", lambda x, b: x - b), ("^", lambda x, b: x ^ b)):
        consts = [inv(x, base[0]) for x in table[0]]
        apply = (lambda b, c: b + c) if op == "+" else (lambda b, c: b ^ c)
        if all(
            apply(base[t], c) == row[i] for t, row in enumerate(table) for i, c in enumerate(consts)
        ):
            return Split(ThreadValue.of(base, swizzle), tuple(consts), op)
    if before_swizzle and swizzle is not None and swizzle.shift > 0:
        flat = [[swizzle(x) for x in row] for row in table]  # a swizzle is its own inverse
        pre = [row[0] for row in flat]
        consts = [x - pre[0] for x in flat[0]]
        if all(pre[t] + c == row[i] for t, row in enumerate(flat) for i, c in enumerate(consts)):
            return Split(ThreadValue.of(pre), tuple(consts), "s+", swizzle)
    if max_keys:
        keyed = _keyed_split(table, max_keys)
        if keyed is not None:
            return keyed
    raise TiledMmaError(
        f"{what}: offsets do not split into a per-thread part and a per-value constant "
        "(neither + nor ^ reproduces them); choose a tile whose values do not share bits "
        "with the thread index"
    )


def _keyed_split(table: list[list[int]], max_keys: int) -> Split | None:
    """The 'k+' split of ``table``: value i's column less its thread-0 offset is its key's
    thread part, the thread-0 offset its constant; None past ``max_keys`` keys.

    >>> s = _keyed_split([[0, 5], [8, 6]], 2)
    >>> s.op, s.consts, [k.table for k in s.keys], [s.at(1, i) for i in (0, 1)]
    ('k+', (0, 5), [(0, 8), (0, 1)], [8, 6])
    """
    cols = list(zip(*table))
    parts = [tuple(x - col[0] for x in col) for col in cols]
    keys = list(dict.fromkeys(parts))
    if len(keys) > max_keys:
        return None
    index = {k: j for j, k in enumerate(keys)}
    threads = tuple(ThreadValue.of(k) for k in keys)
    return Split(
        threads[0], tuple(col[0] for col in cols), "k+", None, threads,
        tuple(index[p] for p in parts),
    )  # fmt: skip


def c_partition(
    tv: np.ndarray, tm: int, tn: int, mma_m: int, mma_n: int
) -> tuple[ThreadValue, ThreadValue, tuple[tuple[int, int, int], ...]]:
    """partition_C of a TiledMMA repeated ``mma_m`` x ``mma_n`` times over a block tile.

    ``tv`` is the (thread, value) table of ``tv_layout_C_tiled`` (offsets in the
    ``tm`` x ``tn`` tile, column-major). Returns (m of thread, n of thread,
    [(acc index, dm, dn)]): accumulator ``acc[(im * mma_n + jn) * V + v]`` holds
    C(m_t + dm, n_t + dn); checked for every thread to be thread part + constant.

    >>> tv = np.array([[0, 4], [1, 5]])  # 2 threads, 2 values over a 2x4 tile (m + 2n)
    >>> m_t, n_t, consts = c_partition(tv, 2, 4, 1, 1)
    >>> m_t.table, n_t.table, consts
    ((0, 1), (0, 0), ((0, 0, 0), (1, 0, 2)))
    """
    threads, per = tv.shape
    values = [(im, jn, v) for im in range(mma_m) for jn in range(mma_n) for v in range(per)]

    def coord(t, im, jn, v):
        off = int(tv[t, v])
        return off % tm + im * tm, off // tm + jn * tn

    m_t = [coord(t, 0, 0, 0)[0] for t in range(threads)]
    n_t = [coord(t, 0, 0, 0)[1] for t in range(threads)]
    consts = []
    for idx, (im, jn, v) in enumerate(values):
        dm, dn = coord(0, im, jn, v)[0] - m_t[0], coord(0, im, jn, v)[1] - n_t[0]
        for t in range(threads):
            if coord(t, im, jn, v) != (m_t[t] + dm, n_t[t] + dn):
                raise TiledMmaError(f"C value {(im, jn, v)} of thread {t} is not thread + const")
        consts.append((idx, dm, dn))
    return ThreadValue.of(m_t), ThreadValue.of(n_t), tuple(consts)


def layout_terms(layout: Layout) -> list[tuple[int, int, int]]:
    """(divisor, extent, stride) per flat mode of a rank-1 function of the thread index.

    >>> layout_terms(Layout((4, 8), (32, 1)))
    [(1, 4, 32), (4, 8, 1)]
    """
    shapes, strides = flatten(layout.shape), flatten(layout.stride)
    shapes = shapes if isinstance(shapes, tuple) else (shapes,)
    strides = strides if isinstance(strides, tuple) else (strides,)
    out, div = [], 1
    for s, d in zip(shapes, strides):
        if s != 1 and d != 0:
            out.append((div, s, d))
        div *= s
    return out
