"""Where CuTe DSL 4.8 and cutemma differ on the seeded algebra cases, each kind with the rule
that recognises it and which answer is the definition (docs/dsl_defects.md tells the story).

``kind(case, printed, outcome)`` names the kind of a mismatch, or None for one no rule explains
(a test failure: a new divergence to study)."""

from __future__ import annotations

from cutemma.errors import LayoutError
from cutemma.layout import ComposedLayout, Layout

# kind -> (who is right, one line); docs/dsl_defects.md has the long form
KINDS = {
    "dsl_api_composed": (
        "cutemma",
        "the DSL's right_inverse, left_inverse, max_common_*, and composition with a composed "
        "right operand or a nested composed left operand take no ComposedLayout (TypeError / "
        "'must be a Value'); C++ computes them and cutemma equals C++",
    ),
    "dsl_api_tiler_product": (
        "cutemma",
        "the DSL's zipped/tiled/flat_product take a Layout tiler only, not a tuple of Layouts "
        "(C++ takes a Tile); cutemma equals C++",
    ),
    "dsl_nullspace_rank1": (
        "cutemma",
        "cute.nullspace of a layout with an int (rank-0) shape fails in the DSL's own Python "
        "(\"object of type 'int' has no len()\"); a defect of the DSL",
    ),
    "dsl_swizzle_recast_wrap": (
        "cutemma",
        "cute.recast_layout upcasting a swizzled layout whose swizzle base is below the ratio "
        "prints S<1,4294...: the base wraps around as an unsigned int; C++ and cutemma give "
        "the identity swizzle Sw<0,..>",
    ),
    "dsl_other_form": (
        "cutemma (C++'s form)",
        "the same function (every value equal) in another mode structure: the DSL drops "
        "rank-1 parentheses ((4),4,2) -> (4,4,2), coalesces raked_product's and divide's "
        "size-1 modes, gives size-1 results other strides; cutemma prints what C++ prints",
    ),
    "dsl_computes_undefined": (
        "cutemma",
        "inputs outside the operation's definition (complement of a non-injective layout, "
        "upcast/downcast across strides that do not divide, tile_to_shape to a non-multiple, "
        "products whose complement does not exist): the DSL returns a layout (e.g. extents 0), "
        "cutemma raises LayoutError as docs/cpp_defects.md explains for C++",
    ),
    "left_inverse_non_injective": (
        "neither (no left inverse exists)",
        "left_inverse of a non-injective layout such as 2:0: the DSL gives 1:0, C++ and "
        "cutemma 2:0; no layout is a left inverse of it",
    ),
}


def _composed(case) -> bool:
    return any(isinstance(a, ComposedLayout) for a in case.args)


def kind(case, printed: dict, outcome) -> str | None:
    err = printed.get("error", "")
    text = printed.get("x", "")
    if (
        err
        and _composed(case)
        and any(
            s in err
            for s in ("must be a Value", "Expected input of type Layout", "has no attribute")
        )
    ):
        return "dsl_api_composed"
    if err and case.fn in ("zipped_product", "tiled_product", "flat_product"):
        if "must be a Value" in err and isinstance(case.args[1], tuple):
            return "dsl_api_tiler_product"
    if err and case.fn == "nullspace" and "has no len()" in err:
        return "dsl_nullspace_rank1"
    if "S<" in text and "4294" in text:
        return "dsl_swizzle_recast_wrap"
    if not err and isinstance(outcome.error, LayoutError):
        return "dsl_computes_undefined"
    if not err and outcome.error is None and outcome.values is not None:
        from emit_dsl.algebra import verdict

        v = verdict(printed)
        if v.values is not None and v.values == outcome.values:
            return "dsl_other_form"
        if case.fn == "left_inverse" and isinstance(case.args[0], Layout):
            L = case.args[0]
            if len(set(L(i) for i in range(L.size()))) < L.size():
                return "left_inverse_non_injective"
    return None
