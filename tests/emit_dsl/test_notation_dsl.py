"""``Layout.parse`` reads what CuTe DSL 4.8 prints (texts captured from its ``print`` in a
``@cute.jit`` function; tests/emit_dsl's live tests read thousands more when the DSL is here)."""

from __future__ import annotations

import pytest

from cutemma.errors import LayoutParseError
from cutemma.layout import ComposedLayout, Layout, Swizzle
from cutemma.layout.basis import BasisLayout


def test_dsl_swizzle_S():
    c = Layout.parse("S<3,4,3> o 0 o (8,64):(64,1)")  # make_smem_layout_atom(K_SW128, f16)
    assert isinstance(c, ComposedLayout)
    assert (c.outer.bits, c.outer.base, c.outer.shift, c.offset) == (3, 4, 3, 0)
    assert (c.inner.shape, c.inner.stride) == ((8, 64), (64, 1))


def test_dsl_swizzle_with_offset():
    c = Layout.parse("S<2,3,3> o 5 o (8,32):(32,1)")
    assert c.offset == 5 and c(0) == Swizzle(2, 3, 3)(5)


def test_dsl_negative_shift_without_closing_bracket():
    # the DSL prints make_swizzle(2, 1, -2) as S<2,1,-2 (no '>')
    c = Layout.parse("S<2,1,-2 o 0 o (4,8):(8,1)")
    assert (c.outer.bits, c.outer.base, c.outer.shift) == (2, 1, -2)


def test_dsl_nested_composition_in_parentheses():
    c = Layout.parse("(S<1,1,2> o 0 o (8,1,1):(2,16,16) o 0 o 5:1)")
    assert isinstance(c, ComposedLayout) and isinstance(c.outer, ComposedLayout)
    assert (c.inner.shape, c.inner.stride) == (5, 1)
    assert str(c) == "Sw<1,1,2> o 0 o (8,1,1):(2,16,16) o 0 o 5:1"


def test_dsl_basis_strides_and_small_layouts():
    b = Layout.parse("(4,8):(1@0,1@1)")  # cute.make_identity_layout((4, 8))
    assert isinstance(b, BasisLayout) and b(5) == (1, 1)
    assert Layout.parse("1:0").shape == 1 and Layout.parse("():()").shape == ()


def test_dsl_mma_tv_layout():
    L = Layout.parse("((4,8),(2,2,2)):((32,1),(16,8,128))")  # MmaF16BF16Op 16x8x16, A
    assert L.shape == ((4, 8), (2, 2, 2)) and L(1) == 32


def test_dynamic_values_are_refused():
    # a dynamic extent prints as '?' in the DSL; it has no static cutemma layout
    with pytest.raises(LayoutParseError, match="integer"):
        Layout.parse("(4,?):(1,4)")
