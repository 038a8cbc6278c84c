"""The seeded random algebra cases (tests/cute_cpp/cases.py) and the doc examples
(tests/cute_cpp/doc_cases.py) as CuTe DSL calls, and the DSL's answers as C++-style verdicts so
that tests/cute_cpp/compare.judge (and its defects: which answer is the definition) rules on
them exactly as it rules on C++'s."""

from __future__ import annotations

import re

from cute_cpp.batch import Verdict
from cute_cpp.cpp_text import Shape

from cutemma.emit.dsl import to_cute_dsl
from cutemma.errors import CutemmaError, EmitError
from cutemma.layout import ComposedLayout, Layout
from cutemma.layout.notation import parse_layout
from emit_dsl.dsl_run import DslCase

# cutemma function -> how the DSL spells the call ({0}, {1}, ... are the arguments)
DSL_CALLS = {
    "coalesce": {1: "cute.coalesce({0})", 2: "cute.coalesce({0}, target_profile={1})"},
    "filter": {1: "cute.filter({0})"},
    "composition": {2: "cute.composition({0}, {1})"},
    # CuTe's complement(L) is complement(L, cosize(L)); the DSL's takes the cotarget always
    "complement": {1: "cute.complement({0}, cute.cosize({0}))", 2: "cute.complement({0}, {1})"},
    "right_inverse": {1: "cute.right_inverse({0})"},
    "left_inverse": {1: "cute.left_inverse({0})"},
    "nullspace": {1: "cute.nullspace({0})"},
    "max_common_vector": {2: "cute.max_common_vector({0}, {1})"},
    "max_common_layout": {2: "cute.max_common_layout({0}, {1})"},
    "tile_to_shape": {3: "cute.tile_to_shape({0}, {1}, {2})"},
    # upcast<N>/downcast<N> are what recast_layout does for a ratio N of widths (C++ recast)
    "upcast": {2: "cute.recast_layout({1}, 1, {0})"},
    "downcast": {2: "cute.recast_layout(1, {1}, {0})"},
}
for _fn in (
    "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
    "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product",
):  # fmt: skip
    DSL_CALLS[_fn] = {2: f"cute.{_fn}({{0}}, {{1}})"}


def _arg(a) -> str:
    if isinstance(a, Shape):
        return _shape(tuple(a))
    if isinstance(a, Layout | ComposedLayout) or isinstance(a, tuple):
        return to_cute_dsl(a)
    return str(int(a))


def _shape(t) -> str:
    if isinstance(t, tuple):
        return "(" + ", ".join(_shape(x) for x in t) + ("," if len(t) == 1 else "") + ")"
    return str(int(t))


def dsl_case(case) -> DslCase | None:
    """The DSL call of an algebra case (None: the DSL has no such call or form for it)."""
    spell = DSL_CALLS.get(case.fn, {}).get(len(case.args))
    if spell is None:
        return None
    if case.fn == "tile_to_shape" and len(case.args) == 2:
        return None
    try:
        args = [_arg(a) for a in case.args]
    except EmitError:
        return None  # an argument the DSL cannot build (an empty mode): not a case for it
    return DslCase(f"alg/{case.key}", spell.format(*args))


def verdict(printed: dict) -> Verdict:
    """The DSL's answer as a Verdict: its refusal, or its print read back with its values."""
    if "error" in printed:
        return Verdict(refused=printed["error"])
    text = printed["x"]
    if ":" not in text and " o " not in text:  # an int (max_common_vector) or an int-tuple
        return Verdict(text=text.replace(" ", ""))
    try:
        got = parse_layout(text)
    except CutemmaError:
        return Verdict(text=text.replace(" ", ""))  # an int or a tuple: compared as text
    values = tuple(int(got(i)) for i in range(got.size()))
    return Verdict(text=str(got), values=values)


def _split_top(text: str) -> list[str]:
    """``a,(b,c),d`` -> ``['a', '(b,c)', 'd']``: the top-level comma-separated parts."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "(<" and 1 or ch in ")>" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _py_tuple(cpp: str) -> str:
    """A C++ static int-tuple or coordinate (``Shape<Int<3>,Int<2>>{}``, ``make_coord(_,5)``) as
    Python text (``(3,2)``, ``(None,5)``: the DSL's slice marker is None)."""
    t = re.sub(r"(?:I_|Int)<(-?\d+)>(\{\})?", r"\1", cpp)
    t = re.sub(r"\b(?:Shape|Stride)<", "(", t).replace("make_coord(", "(")
    t = t.replace(">{}", ")").replace(">", ")")
    return re.sub(r"(?<![\w])_(?![\w])", "None", t)


def doc_dsl_case(case) -> DslCase | None:
    """The DSL call of a doc example written as C++ text: ``idx2crd``, ``shape_div``,
    ``crd2idx`` and ``slice_and_offset`` (None for the rest)."""
    e = case.expr
    m = re.fullmatch(r"idx2crd\((.*)\)", e)
    if m:
        i, shape = _split_top(m[1])
        return DslCase(f"doc/{case.key}", f"cute.idx2crd({_py_tuple(i)}, {_py_tuple(shape)})")
    m = re.fullmatch(r"shape_div\((.*)\)", e)
    if m:
        a, b = _split_top(m[1])
        return DslCase(f"doc/{case.key}", f"cute.shape_div({_py_tuple(a)}, {_py_tuple(b)})")
    m = re.fullmatch(r"crd2idx\((.*)\)", e)
    if m:
        c, shape, stride = _split_top(m[1])
        lay = f"cute.make_layout({_py_tuple(shape)}, stride={_py_tuple(stride)})"
        return DslCase(f"doc/{case.key}", f"cute.crd2idx({_py_tuple(c)}, {lay})")
    m = re.fullmatch(r"get<(\d)>\(slice_and_offset\((.*), Layout<(.*)>\{\}\)\)", e)
    if m:
        shape, stride = _split_top(m[3])
        lay = f"cute.make_layout({_py_tuple(shape)}, stride={_py_tuple(stride)})"
        call = f"cute.slice_and_offset({_py_tuple(m[2])}, {lay})[{m[1]}]"
        return DslCase(f"doc/{case.key}", call)
    return None
