"""An operand's major as both families read it: which of its last two modes is contiguous.

A is (M, K): 'K'-major when its rows are contiguous, else 'M'. B is (K, N): 'N'-major when
its rows are contiguous, else 'K'. A mode of extent 1 has no stride that matters.

>>> class T:  # a (64, 32) A with contiguous rows
...     shape = (64, 32)
...     def stride(self): return (32, 1)
>>> major(T(), "A")[1:]
('K', 32)
"""

from __future__ import annotations

from typing import Any

NAMES = {"A": ("K", "M"), "B": ("K", "N")}  # (the K-contiguous major, the other)


def major(t: Any, what: str) -> tuple[Any, str, int]:
    """(tensor, major, leading stride) of the last two modes of operand ``what``; neither
    mode contiguous: the operand is copied (a 3-D one as a whole)."""
    r, c = t.shape[-2:]
    s0, s1 = t.stride()[-2:]
    inner, outer = NAMES[what]
    if s1 == 1 or c == 1:
        return t, (inner if what == "A" else outer), s0 if r > 1 else max(c, 1)
    if s0 == 1 or r == 1:
        return t, (outer if what == "A" else inner), s1 if c > 1 else max(r, 1)
    return major(t.contiguous(), what)
