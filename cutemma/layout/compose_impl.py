"""CuTe's ``composition_impl`` for one pair of layouts, and the check of its answer.

C++ (``include/cute/layout.hpp``) coalesces the left operand, then walks it once per integral
mode of the right operand, splitting that mode across the left one's modes. Its divisibility
checks are the *weak* ones, so a few inputs get an answer that is not ``i -> a(b(i))``;
``_Walk`` notes when that can happen and ``check_function`` then compares the two functions
(docs/cpp_defects.md lists the kinds).

>>> str(compose_layouts(Layout((4, 6, 8, 10), (2, 3, 5, 7)), Layout(6, 12)))
'(2,3):(9,5)'
"""

from __future__ import annotations

from cutemma.errors import LayoutError
from cutemma.layout.layout import Layout, _push


def _cmod(a: int, b: int) -> int:
    """C++'s ``%`` (the sign of the dividend): CuTe's static checks are written with it."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _coalesce_x(a: Layout) -> tuple[list, list]:
    """The flat modes of ``a`` merged where contiguous, keeping ``a``'s function past its domain.

    CuTe's ``detail::coalesce_x``: like coalesce, but a trailing extent-1 mode keeps its
    stride (as if it had extent 2), since composition extends ``a`` along its last mode.
    """
    shapes, strides = a.flat()
    out_s: list[int] = []
    out_d: list[int] = []
    last = len(shapes) - 1
    for i, (s, d) in enumerate(zip(shapes, strides)):
        _push(out_s, out_d, 2 if i == last and s == 1 else s, d)
    return out_s, out_d


class _Walk:
    """State of one composition ``a o b``: ``a``'s coalesced modes and what the leaves used.

    ``digits[i]`` sums, over the leaves of ``b``, the largest index step each places inside
    mode ``i`` of ``a``; when two leaves together overflow a mode, ``a`` is not additive over
    ``b``'s modes and CuTe's by-mode answer must be checked. ``exact`` turns False when a leaf
    crosses a mode boundary with a stride that does not divide the extent (CuTe's weak
    divisibility check lets that through).
    """

    __slots__ = ("shapes", "strides", "digits", "exact", "signs")

    def __init__(self, shapes, strides, track: bool):
        self.shapes = shapes
        self.strides = strides
        self.digits = [0] * len(shapes) if track else None
        self.exact = True
        self.signs = 0  # bit 0: a leaf with a positive stride, bit 1: a negative one

    def leaf(self, a: Layout, s: int, d: int):
        """CuTe's ``composition_impl`` for one integral mode ``s:d`` of the right operand."""
        shapes, strides = self.shapes, self.strides
        if d == 0:  # a broadcast mode stays a broadcast mode
            return s, 0
        self.signs |= 2 if d < 0 else 1
        if len(shapes) == 1:
            return s, d * strides[0]
        out_s: list[int] = []
        out_d: list[int] = []
        rest_s, rest_d = s, d
        for i in range(len(shapes) - 1):
            c = shapes[i]
            if c == 0:
                raise LayoutError(
                    f"composition({a}, {s}:{d}) is not defined: mode {i} of {a} has extent 0 "
                    "and cannot be stepped over"
                )
            # CuTe's weak stride divisibility: rest_d % c == 0 or rest_d < c (C++ %)
            if _cmod(rest_d, c) != 0 and not rest_d < c:
                raise LayoutError(
                    f"composition({a}, {s}:{d}) is not defined: stride {rest_d} and extent {c} "
                    f"of {a}: {c} must divide {rest_d} (CuTe's stride divisibility condition)"
                )
            step = abs(rest_d)
            next_s = -(-c // step)
            next_d = -(-step // c) * (1 if rest_d > 0 else -1)
            if rest_s != 1 and step % c and c % step and (step >= c or next_s < rest_s):
                self.exact = False  # steps off the end of mode i at a non-multiple of its extent
            if next_s == 1 or rest_s == 1:
                rest_d = next_d
                continue
            new_s = min(next_s, rest_s)
            if new_s == 0 or rest_s % new_s:
                raise LayoutError(
                    f"composition({a}, {s}:{d}) is not defined: {rest_s} elements do not split "
                    f"into whole runs of {new_s} in mode {i} of {a} (CuTe's shape divisibility "
                    "condition)"
                )
            out_s.append(new_s)
            out_d.append(rest_d * strides[i])
            if self.digits is not None:
                self.digits[i] += step * (new_s - 1)
            rest_s //= new_s
            rest_d = next_d
        if not out_s:
            return rest_s, rest_d * strides[-1]
        if rest_s != 1:
            out_s.append(rest_s)
            out_d.append(rest_d * strides[-1])
        if len(out_s) == 1:
            return out_s[0], out_d[0]
        return tuple(out_s), tuple(out_d)

    def overflows(self) -> bool:
        """Leaves may carry into each other (or, of both signs, borrow from each other)."""
        d, s = self.digits, self.shapes
        if d is None:
            return False
        return self.signs == 3 or any(d[i] > s[i] - 1 for i in range(len(s) - 1))


def _extended(shapes, strides, x: int) -> int:
    """``a(x)`` for any integer: the last mode absorbs what is past ``a``'s domain; odd for x < 0."""
    if x < 0:
        return -_extended(shapes, strides, -x)
    total = 0
    for c, d in zip(shapes[:-1], strides[:-1]):
        total += (x % c) * d
        x //= c
    return total + x * strides[-1]


# The check walks b's domain in chunks (memory: a few arrays of CHECK_CHUNK int64) and stops
# at the first wrong index; past CHECK_LIMIT offsets with none wrong it refuses, naming the
# limit, rather than spend minutes and gigabytes proving a rare kind of input right.
CHECK_CHUNK = 1 << 18
CHECK_LIMIT = 1 << 24


def _flat_offsets(shapes, strides, idx):
    """Offsets of the flat layout ``shapes:strides`` at the indices ``idx`` (numpy, int64)."""
    off = idx * 0
    for s, d in zip(shapes, strides):
        off += (idx % s) * d
        idx = idx // s
    return off


def _first_wrong(a_modes, b: Layout, result: Layout):
    """(index, b(index), result(index)) of the first index where result is not a o b, or None;
    raises past CHECK_LIMIT indices."""
    import numpy as np

    from cutemma.layout.layout import size

    total = size(b)
    (bs_s, bs_d), (rs_s, rs_d) = b.flat(), result.flat()
    start, chunk = 0, min(1 << 12, CHECK_CHUNK)  # small first: a wrong answer shows early
    while start < total:
        if start >= CHECK_LIMIT:
            raise LayoutError(
                f"composition({a_modes[2]}, {b}): CuTe's by-mode answer {result} must be checked "
                f"against a o b at every index of b (these inputs can make it wrong), and b has "
                f"{total} indices, more than the check's limit of {CHECK_LIMIT} "
                "(cutemma.layout.compose_impl.CHECK_LIMIT); the first "
                f"{CHECK_LIMIT} agree. Compose smaller tiles, or coalesce the left operand so "
                "that its modes do not overlap"
            )
        idx = np.arange(start, min(total, start + chunk), dtype=np.int64)
        bv, rv = _flat_offsets(bs_s, bs_d, idx), _flat_offsets(rs_s, rs_d, idx)
        x = np.abs(bv)
        want = _flat_offsets(a_modes[0][:-1], a_modes[1][:-1], x)
        for c in a_modes[0][:-1]:
            x = x // c
        want = np.where(bv < 0, -1, 1) * (want + x * a_modes[1][-1])
        wrong = np.flatnonzero(want != rv)
        if wrong.size:
            i = int(wrong[0])
            return start + i, int(bv[i]), int(rv[i])
        start += len(idx)
        chunk = min(chunk * 4, CHECK_CHUNK)
    return None


def check_function(a: Layout, b: Layout, result: Layout, walk: _Walk) -> None:
    """Raise if CuTe's by-mode answer is not ``i -> a(b(i))`` (CuTe accepts a few such inputs)."""
    found = _first_wrong((walk.shapes, walk.strides, a), b, result)
    if found is not None:
        i, b_i, r_i = found
        if not walk.exact:
            why = (
                "a mode of the right operand steps over an extent of the left one that its "
                "stride does not divide"
            )
        elif walk.signs == 3:
            why = (
                "the right operand's modes have strides of both signs, so their offsets borrow "
                "across the left one's modes"
            )
        else:
            why = (
                "the right operand's modes overlap inside one mode of the left one, so the "
                "left one is not additive over them"
            )
        raise LayoutError(
            f"composition({a}, {b}): CuTe's algorithm gives {result}, which is not {a} o {b}: "
            f"at index {i} it gives {r_i}, but b({i}) = {b_i} and a({b_i}) = "
            f"{_extended(walk.shapes, walk.strides, b_i)} ({why}; C++ accepts this "
            "input because its divisibility check is the weak one)"
        )


def compose_layouts(a: Layout, b: Layout) -> Layout:
    """``a o b`` as C++ computes it; LayoutError where C++ refuses or answers wrongly."""
    shapes, strides = _coalesce_x(a)
    if not shapes:
        raise LayoutError(f"composition({a}, {b}): the left operand has no modes")
    walk = _Walk(shapes, strides, track=len(shapes) > 1)
    leaf = walk.leaf

    def go(s, d):
        if isinstance(s, tuple):
            out_s, out_d = [], []
            for x, y in zip(s, d):
                rs, rd = go(x, y) if isinstance(x, tuple) else leaf(a, x, y)
                out_s.append(rs)
                out_d.append(rd)
            return tuple(out_s), tuple(out_d)
        return leaf(a, s, d)

    result = Layout._raw(*go(b.shape, b.stride))
    if not walk.exact or walk.overflows():
        check_function(a, b, result, walk)
    return result
