"""The seeded random algebra cases (tests/cute_cpp/cases.py) and the doc examples
(tests/cute_cpp/doc_cases.py) as CuTe DSL calls, and the DSL's answers as C++-style verdicts so
that tests/cute_cpp/compare.judge (and its defects: which answer is the definition) rules on
them exactly as it rules on C++'s."""

from __future__ import annotations

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
