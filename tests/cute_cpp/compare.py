"""Compare cutemma with C++ case by case; collect every mismatch of a group into one report.

Outcomes that agree:
- C++ prints a result: cutemma prints the same text (C++'s static-int underscores stripped)
  and computes the same 1-D function (``L(i)`` for every ``i < size``).
- C++ refuses (does not compile, or crashes): cutemma raises a named cutemma error.
- C++ prints a result that ``defects.cpp_defect`` shows to be wrong: cutemma raises a
  ``LayoutError``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cute_cpp import defects
from cute_cpp.batch import Verdict
from cutemma.errors import CutemmaError, LayoutError
from cutemma.layout import ComposedLayout, Layout

_STATIC = re.compile(r"_(?=-?\d)")


def normalise(cpp_text: str) -> str:
    """C++'s print without the underscores of static ints: ``(_4,_2):(_1,_4)`` -> ``(4,2):(1,4)``."""
    return _STATIC.sub("", cpp_text)


@dataclass(frozen=True)
class Outcome:
    text: str | None = None
    values: tuple | None = None
    error: BaseException | None = None


def cutemma_outcome(case) -> Outcome:
    try:
        r = case.call()
    except Exception as e:  # noqa: BLE001 - every exception is an outcome to compare
        return Outcome(error=e)
    if isinstance(r, (Layout, ComposedLayout)):
        try:
            values = tuple(int(r(i)) for i in range(r.size()))
        except Exception as e:  # noqa: BLE001
            return Outcome(error=e)
        return Outcome(str(r), values)
    if isinstance(r, tuple):
        return Outcome(_fmt(r))
    return Outcome(str(r))


def _fmt(x) -> str:
    return "(" + ",".join(_fmt(v) for v in x) + ")" if isinstance(x, tuple) else str(x)


def _err(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e)[:160]}"


def judge(case, cpp: Verdict, got: Outcome | None = None) -> str | None:
    """None when cutemma agrees with C++ on ``case``, else one line saying how they differ.

    ``got`` is cutemma's outcome when already computed.
    """
    got = got or cutemma_outcome(case)
    if cpp.refused is not None:
        if isinstance(got.error, CutemmaError):
            return None
        if got.error is not None:
            return f"C++ refuses; cutemma raises {_err(got.error)} (not a named cutemma error)"
        return f"C++ refuses ({cpp.refused[:120]}); cutemma returns {got.text}"
    want = normalise(cpp.text)
    defect = defects.cpp_defect(case, want, cpp.values)
    if defect is not None:
        if isinstance(got.error, LayoutError):
            return None
        shown = _err(got.error) if got.error is not None else got.text
        return f"C++ gives {want}, which is wrong ({defect}); cutemma should raise LayoutError, gives {shown}"
    if got.error is not None:
        return f"C++ gives {want}; cutemma raises {_err(got.error)}"
    if got.text != want:
        return f"C++ gives {want}; cutemma gives {got.text}"
    if cpp.values is not None and got.values != cpp.values:
        diff = (
            next(i for i, (a, b) in enumerate(zip(got.values, cpp.values)) if a != b)
            if len(got.values) == len(cpp.values)
            else "size"
        )
        return f"same text {want} but the function differs (first at i={diff})"
    return None


def report(mismatches: list[tuple[object, str]], limit: int = 60) -> str:
    """A compact list: ``fn(args)  ->  how it differs``, one line per case."""
    lines = [f"{len(mismatches)} case(s) differ from CuTe C++:"]
    for case, why in mismatches[:limit]:
        lines.append(f"  [{case.key}] {case}\n      {why}")
    if len(mismatches) > limit:
        lines.append(f"  ... and {len(mismatches) - limit} more")
    return "\n".join(lines)
