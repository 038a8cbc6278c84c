"""C text of the values a plan computes: a per-thread value as the expression of its
Layout over ``tid`` (then its swizzle), a swizzle applied to an expression, and the check of
the output types a kernel writes.

>>> swizzle_expr(Swizzle(2, 3, 3), "x")
'x ^ ((x >> 3) & 24)'
"""

from __future__ import annotations

from cutemma.cuda.source import constant_table
from cutemma.errors import TiledMmaError
from cutemma.kernels.common.partition import ThreadValue, layout_terms
from cutemma.kernels.common.types import OUT_TYPES
from cutemma.layout import Swizzle


def check_outs(who: str, out: object, c_type: object) -> None:
    """A TiledMmaError unless the output and C types are ones the kernels write.

    >>> check_outs("x", "f64", "f32")
    Traceback (most recent call last):
    ...
    cutemma.errors.TiledMmaError: x: out='f64'; choose one of f32, f16, bf16, s32
    """
    for what, t in (("out", out), ("c_type", c_type)):
        if not isinstance(t, str) or t not in OUT_TYPES:
            raise TiledMmaError(f"{who}: {what}={t!r}; choose one of {', '.join(OUT_TYPES)}")


def thread_expr(name: str, value: ThreadValue, tables: list[str]) -> str:
    """``const int name = ...;`` for a per-thread value: its layout over tid, then its swizzle.

    A value no layout reproduces reads a __constant__ table (appended to ``tables``).

    >>> print(thread_expr("x", ThreadValue.of([0, 32, 8, 40]), []))
    // x: layout (2,2):(32,8) over tid
    const int x = (tid % 2) * 32 + (tid / 2) * 8;
    """
    if value.layout is None:
        tables.append(constant_table("int", f"{name}_table", value.table))
        return f"const int {name} = {name}_table[tid];  // no layout reproduces it"
    terms = []
    for div, ext, stride in layout_terms(value.layout):
        idx = "tid" if div == 1 else f"(tid / {div})"
        if div * ext < len(value.table):
            idx = f"({idx[1:-1] if idx.startswith('(') else idx} % {ext})"
        terms.append(idx if stride == 1 else f"{idx} * {stride}")
    expr = " + ".join(terms) or "0"
    note = f"// {name}: layout {value.layout} over tid"
    if value.swizzle is not None:
        expr = swizzle_expr(value.swizzle, f"({expr})")
        note += f", then {value.swizzle}"
    return f"{note}\nconst int {name} = {expr};"


def swizzle_expr(sw: Swizzle, x: str) -> str:
    """C text of ``Swizzle(bits, base, shift)`` applied to ``x`` (shift > 0).

    >>> swizzle_expr(Swizzle(3, 3, 3), "x")
    'x ^ ((x >> 3) & 56)'
    """
    return f"{x} ^ (({x} >> {sw.shift}) & {sw.zzz_mask})"
