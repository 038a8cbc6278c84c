"""``composition``: CuTe's ``a o b`` for every operand the algebra takes.

Tuple tilers go mode by mode; a Swizzle or ComposedLayout right operand is moved past
the left one (:func:`layout_after_swizzled`); a Tensor composes its layout. The core of one Layout after
another is :func:`cutemma.layout.compose_impl.compose_layouts`.

>>> str(composition(Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1))))
'((2,2),3):((24,2),8)'
"""

from __future__ import annotations

from cutemma.errors import LayoutError
from cutemma.layout import checks as ck
from cutemma.layout.compose_impl import compose_layouts
from cutemma.layout.int_tuple import is_int, is_tuple
from cutemma.layout.layout import (
    Layout,
    as_layout,
)
from cutemma.layout.swizzle import (
    Swizzle,
    _apply,
    compose_functions,
    swizzle_after_layout,
)
from cutemma.layout.tiler import _by_mode, _is_composed


def composition(a, b):
    """``a o b``: the layout ``i -> a(b(i))`` on ``b``'s domain.

    ``b`` may be a Layout, an int ``n`` (the first ``n`` offsets of ``a``), a ComposedLayout,
    or a tuple tiler applied mode by mode (modes of ``a`` the tiler does not reach are
    dropped, as in CuTe). A Swizzle or ComposedLayout ``a`` gives a ComposedLayout; a Tensor
    ``a`` gives the tensor over the composed layout.

    >>> str(composition(Layout((10, 2), (16, 4)), Layout((5, 4), (1, 5))))
    '(5,(2,2)):(16,(80,4))'
    """
    if type(a) is Layout and type(b) is Layout:  # the common case first
        return _compose_checked(a, b)
    b = b if b is None else ck.tiler_arg(b, "composition", a)
    if _is_composed(a):  # a swizzled layout: composition acts on its inner layout
        return a.with_inner(composition(a.inner, b))
    if hasattr(a, "layout") and hasattr(a, "data"):  # a Tensor: compose its layout
        return type(a)(a.data, composition(a.layout, b), a.offset)
    if not isinstance(a, Layout):
        if isinstance(a, Swizzle):
            return compose_functions(a, 0, as_layout(b))
        raise LayoutError(f"composition: left operand {a!r} is not a Layout or Swizzle")
    if b is None:
        return a
    if is_tuple(b) and not isinstance(b, Layout):
        return _by_mode(composition, a, b, "composition", keep_rest=False)
    if is_int(b):
        b = Layout._raw(b, 1)
    if not isinstance(b, Layout):
        if _is_composed(b) or isinstance(b, Swizzle):
            return layout_after_swizzled(a, b)
        raise LayoutError(f"composition({a}, {b!r}): right operand must be a Layout, int or tuple")
    return _compose_checked(a, b)


def _compose_checked(a: Layout, b: Layout) -> Layout:
    try:
        return compose_layouts(a, b)
    except LayoutError as e:
        if str(b) in str(e):
            raise
        raise LayoutError(f"composition({a}, {b}) is not defined: {e}") from None


def layout_after_swizzled(a: Layout, b):
    """``a o b`` for a Layout ``a`` and a Swizzle or swizzled ComposedLayout ``b`` (CuTe:
    ``composition(composition(a, b.outer), b.inner)``, which needs offset 0).

    >>> from cutemma.layout import ComposedLayout
    >>> str(layout_after_swizzled(Layout(32, 2), ComposedLayout(Swizzle(2, 1, 3), 0, Layout(32))))
    'Sw<2,2,3> o 0 o 32:2'
    """
    if isinstance(b, Swizzle):
        return swizzle_after_layout(a, b)
    if b.offset != 0:
        raise LayoutError(
            f"composition({a}, {b}): the right operand's offset must be 0 (CuTe: 'Require "
            "offset == 0.')"
        )
    result = composition(composition(a, b.outer), b.inner)
    _check_moved_swizzle(a, b, result)
    return result


def _check_moved_swizzle(a: Layout, b, result) -> None:
    """Raise unless ``result(i) == a(b(i))`` on ``b``'s domain.

    CuTe moves the swizzle past ``a`` by mapping its bit masks through ``a`` (swizzle_layout.hpp:
    "Works in simple cases"); that is ``a o b`` only when ``a`` sends each swizzled bit to one bit
    with no carries. Where it is not, C++ returns a wrong layout (docs/cpp_defects.md #3).
    """
    inner = b.inner
    n = inner.size() if isinstance(inner, Layout) else 0
    for i in range(min(n, 1 << 16)):
        want = _apply(a, _apply(b, i))
        got = _apply(result, i)
        if got != want:
            raise LayoutError(
                f"composition({a}, {b}) is not defined as a swizzled layout: moving the swizzle "
                f"past {a} (CuTe maps its bit masks through the layout) gives {result}, which at "
                f"i={i} is {got} but {a}({b}({i})) = {want}; {a} does not map the swizzle's bits "
                "to single bits (a CuTe C++ defect, docs/cpp_defects.md #3). Compose with a "
                "layout whose strides are powers of two on the swizzled bits, or compose the "
                "inner layout first"
            )
