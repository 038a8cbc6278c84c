"""infer_layout: from a (thread, value) -> index table to the simplest CuTe layout.

This is what seed 004 does by hand for the SM70 accumulator ("(T0,V0) is at 0,
(T1,V0) at 1, (T2,V0) at 16 ..."): read the offsets along each mode, split the
mode into runs of equal stride, nest the runs. A user adding an instruction
writes its PTX fragment formulas, turns them into a table (see
:mod:`cutemma.mma.ptx_spec`) and lets this module find the layout.

>>> from cutemma.mma.ptx_spec import fragment_coords, flat_coords
>>> c = fragment_coords('m16n8k8', 'f16', 'C')
>>> str(infer_layout(flat_coords(c, 'C', (16, 8, 8))))
'((4,8),(2,2)):((32,1),(16,8))'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from cutemma.errors import NotALayoutError
from cutemma.layout import Layout

Mode = list[tuple[int, int]]  # flat (extent, stride) pairs, innermost first


def infer_layout(
    table: np.ndarray | Sequence | Callable[[int, int], int],
    extents: tuple[int, ...] | None = None,
) -> Layout:
    """The simplest CuTe layout equal, as a function, to ``table``.

    ``table`` is a 2-D integer array ``table[t, v]`` of flat indices (a 1-D one
    gives a rank-1 layout), or a function ``f(t, v)`` with ``extents=(T, V)``.
    Each mode is factored into the fewest (extent, stride) runs; a mode of one run
    is a plain int. Raises :class:`~cutemma.errors.NotALayoutError`, naming the
    entries that break it, when no layout reproduces the table.

    >>> str(infer_layout([[0, 8, 2, 10], [1, 9, 3, 11], [16, 24, 18, 26], [17, 25, 19, 27]]))
    '((2,2),(2,2)):((1,16),(8,2))'
    >>> str(infer_layout(lambda t, v: 4 * t + v, (8, 4)))
    '(8,4):(4,1)'
    """
    arr = _as_table(table, extents)
    if arr.ndim == 1:
        mode = _factor_mode(arr, "the table")
        layout = _make([mode])
    else:
        _check_separable(arr)
        t_mode = _factor_mode(arr[:, 0], "the thread mode (column v=0)")
        v_mode = _factor_mode(arr[0, :], "the value mode (row t=0)")
        layout = _make([t_mode, v_mode])
    _verify(layout, arr)
    return layout


def _as_table(table, extents) -> np.ndarray:
    if callable(table):
        if extents is None:
            raise NotALayoutError("infer_layout(f): give extents=(T, V) for a function table")
        grid = np.indices(tuple(extents)).reshape(len(extents), -1).T
        values = [int(table(*map(int, idx))) for idx in grid]
        table = np.array(values, dtype=np.int64).reshape(tuple(extents))
    arr = np.asarray(table)
    if arr.ndim not in (1, 2) or arr.size == 0:
        raise NotALayoutError(
            f"infer_layout: table has shape {arr.shape}; expected a non-empty 1-D "
            "(index) or 2-D (thread, value) array of integers"
        )
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.equal(np.mod(arr, 1), 0)):
            raise NotALayoutError(f"infer_layout: table of {arr.dtype} has non-integer entries")
    arr = arr.astype(np.int64)
    if arr.flat[0] != 0:
        where = "(0,0)" if arr.ndim == 2 else "0"
        raise NotALayoutError(
            f"infer_layout: entry {where} is {int(arr.flat[0])}; a CuTe layout maps "
            "coordinate 0 to 0 (subtract the base offset first)"
        )
    return arr


def _check_separable(arr: np.ndarray) -> None:
    # A layout of rank 2 is L(t, v) = L_T(t) + L_V(v): each entry is the sum of
    # its thread's first value and its value's first thread.
    expect = arr[:, :1] + arr[:1, :]
    bad = np.argwhere(arr != expect)
    if len(bad):
        shown = ", ".join(
            f"(t={t},v={v}) is {arr[t, v]}, not {arr[t, 0]}+{arr[0, v]}={expect[t, v]}"
            for t, v in bad[:5]
        )
        raise NotALayoutError(
            f"infer_layout: {len(bad)} entries are not table[t,0] + table[0,v], which a "
            f"(thread, value) layout requires: {shown}"
        )


def _run_length(seq: np.ndarray) -> int:
    """Length of the longest prefix of seq that is 0, d, 2d, ... with d = seq[1]."""
    d = seq[1]
    ok = seq == d * np.arange(len(seq))
    return len(seq) if ok.all() else int(np.argmin(ok))


def _factor(seq: np.ndarray) -> Mode | None:
    """Factor offsets seq (seq[0] == 0) into runs, longest arithmetic run first.

    A run of extent k and stride d fits when k divides len(seq) and every block
    of k entries is the first block shifted: seq[a + k*b] == seq[a] + seq[k*b].
    The remaining offsets seq[::k] are factored the same way.
    """
    n = len(seq)
    if n == 1:
        return []
    longest = _run_length(seq)
    for k in range(min(longest, n), 1, -1):
        if n % k:
            continue
        blocks = seq.reshape(n // k, k)
        if not np.array_equal(blocks, blocks[:1, :] + blocks[:, :1]):
            continue
        rest = _factor(seq[::k])
        if rest is not None:
            return [(k, int(seq[1]))] + rest
    return None


def _factor_mode(seq: np.ndarray, what: str) -> Mode:
    mode = _factor(seq)
    if mode is None:
        run = _run_length(seq) if len(seq) > 1 else 1
        raise NotALayoutError(
            f"infer_layout: {what} has offsets {_preview(seq)}; they are not a "
            f"product of arithmetic runs: the first run (stride {int(seq[1])}) stops "
            f"at index {run} = {int(seq[run]) if run < len(seq) else 'end'}, and no "
            f"run length dividing {len(seq)} repeats consistently"
        )
    return _coalesce(mode)


def _coalesce(mode: Mode) -> Mode:
    # Adjacent runs (k1, d1), (k2, k1*d1) are one run; extent-1 runs carry nothing.
    out: Mode = []
    for k, d in mode:
        if k == 1:
            continue
        if out and d == out[-1][0] * out[-1][1]:
            out[-1] = (out[-1][0] * k, out[-1][1])
        else:
            out.append((k, d))
    return out or [(1, 0)]


def _preview(seq: np.ndarray, count: int = 16) -> str:
    head = ", ".join(str(int(x)) for x in seq[:count])
    return f"[{head}{', ...' if len(seq) > count else ''}] (length {len(seq)})"


def _make(modes: list[Mode]) -> Layout:
    def one(mode: Mode):
        if len(mode) == 1:
            return mode[0]
        return tuple(k for k, _ in mode), tuple(d for _, d in mode)

    parts = [one(m) for m in modes]
    if len(parts) == 1:
        return Layout(*parts[0])
    return Layout(tuple(s for s, _ in parts), tuple(d for _, d in parts))


def _mode_offsets(mode: Mode) -> np.ndarray:
    out = np.zeros(1, dtype=np.int64)
    for k, d in mode:  # colexicographic: the first run varies fastest
        out = (out[None, :] + d * np.arange(k, dtype=np.int64)[:, None]).reshape(-1)
    return out


def _verify(layout: Layout, arr: np.ndarray) -> None:
    # Evaluate the candidate from its own shape and stride, independently of how
    # it was found; a mismatch here would be a bug in the factoring.
    if arr.ndim == 1:
        got = _mode_offsets(_flat_pairs(layout.shape, layout.stride))
    else:
        (ts, vs), (td, vd) = layout.shape, layout.stride
        got = _mode_offsets(_flat_pairs(ts, td))[:, None] + _mode_offsets(_flat_pairs(vs, vd))
    bad = np.argwhere(got.reshape(arr.shape) != arr)
    if len(bad):
        raise NotALayoutError(
            f"infer_layout: candidate {layout} differs from the table at "
            f"{[tuple(map(int, b)) for b in bad[:5]]}"
        )


def _flat_pairs(shape, stride) -> Mode:
    if isinstance(shape, int):
        return [(shape, stride)]
    return [p for s, d in zip(shape, stride, strict=True) for p in _flat_pairs(s, d)]
