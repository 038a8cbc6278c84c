"""Issue 34, tensor and algebra: bad values are refused by name, never stored or wrapped."""

from __future__ import annotations

import time

import numpy as np
import pytest

import cutemma as cm
from cutemma.errors import CutemmaError, LayoutError, TiledMmaError
from cutemma.layout import int_tuple as it

# --- t[c] = v --------------------------------------------------------------------------------

NOT_NUMBERS = ["x", [1, 2], 10**400, {1}, iter([1]), None, b"1", {"a": 1}, 1 + 2j]


@pytest.mark.parametrize("value", NOT_NUMBERS, ids=[repr(v)[:20] for v in NOT_NUMBERS])
def test_assigning_what_is_not_one_number_is_refused_and_nothing_is_written(value):
    data = np.zeros(4)
    t = cm.make_tensor(data, cm.Layout(4))
    with pytest.raises(LayoutError, match=r"t\[1\] ="):
        t[1] = value
    assert t.data.tolist() == [0.0] * 4  # None would have been stored as NaN


def test_a_read_only_array_is_named():
    data = np.zeros(4)
    data.flags.writeable = False
    t = cm.make_tensor(data, cm.Layout(4))
    with pytest.raises(LayoutError, match="read-only"):
        t[1] = 1.0


@pytest.mark.parametrize(
    ("dtype", "value"),
    [(np.int8, 1000), (np.int8, 128), (np.int8, 1.5), (np.uint8, -1), (np.int64, 2**63),
     (np.int32, float("nan")), (np.float16, 1e6)],
)  # fmt: skip
def test_a_value_the_dtype_cannot_hold_is_refused(dtype, value):
    t = cm.make_tensor(np.zeros(4, dtype), cm.Layout(4))
    with pytest.raises(LayoutError, match=np.dtype(dtype).name):
        t[2] = value
    assert t.data.tolist() == [0] * 4


def test_values_the_dtype_holds_are_written_as_before():
    t = cm.make_tensor(np.zeros(4, np.int8), cm.Layout(4))
    t[0], t[1], t[2] = -128, 127, 7.0  # the int8 range's ends, and a float that is whole
    t[None] = t.data.tolist()  # a slice takes one value per element
    assert t.data.tolist() == [-128, 127, 7, 0]
    f = cm.make_tensor(np.zeros(2), cm.Layout(2))
    f[None] = [0.5, np.float32(2)]
    assert f.data.tolist() == [0.5, 2.0]


def test_a_slice_refuses_non_numbers():
    t = cm.make_tensor(np.zeros(4), cm.Layout((2, 2)))
    for bad in ("ab", [1, [2]], [None, 1]):
        with pytest.raises(LayoutError):
            t[None, 0] = bad
    assert t.data.tolist() == [0.0] * 4


# --- int-tuples --------------------------------------------------------------------------------


def test_product_each_refuses_a_non_int_leaf():
    # 3 * 'x' is 'xxx' in Python: the old answer (2, 'xxx') multiplied a str
    with pytest.raises(LayoutError, match="'x'"):
        it.product_each((2, (3, "x")))


def _nested(depth: int):
    t = 1
    for _ in range(depth):
        t = (t,)
    return t


@pytest.mark.parametrize("name", ["product", "flatten", "tuple_depth", "prefix_product"])
def test_a_3000_deep_tuple_is_refused_by_name(name):
    with pytest.raises(LayoutError, match="nested more than"):
        getattr(cm, name)(_nested(3000))
    with pytest.raises(LayoutError, match="nested more than"):
        it.product_each(_nested(3000))


def test_a_shallow_tuple_is_still_accepted():
    assert cm.product(_nested(it.MAX_DEPTH)) == 1
    assert it.product_each(((2, 3), _nested(10))) == (6, 1)


def test_size_of_a_million_modes_is_not_quadratic():
    # a left-to-right product multiplies a growing 2**k a million times (about 30 s here);
    # the answer is 2**n, known without multiplying
    n = 10**6
    layout = cm.Layout((2,) * n, (0,) * n)
    start = time.perf_counter()
    assert layout.size() == 1 << n
    assert time.perf_counter() - start < 5.0


# --- basis-stride layouts ------------------------------------------------------------------------


def test_a_basis_layout_extends_a_mode_as_cute_does():
    L = cm.Layout.parse("(_64,_64):(_1@0,_1@1)")
    # the coordinate times the stride: 64 * (1@0) + 0 * (1@1) = (64, 0); CuTe (g++) agrees
    assert L(64, 0, strict=False) == (64, 0)
    assert L((3, 70), strict=False) == (3, 70)
    with pytest.raises(LayoutError, match="out of range"):
        L(64, 0)  # strict, the default: outside the shape is refused, not wrapped
    assert L(3, 4) == (3, 4) and L(64 + 3) == (3, 1)  # inside, as before


@pytest.mark.parametrize("strict", ["x", None, 0, 1, [1]])
def test_strict_takes_true_or_false_only(strict):
    # a truthy 'x' was read as strict=True, a None or 0 as False, silently
    for layout in (cm.Layout((4, 2)), cm.Layout.parse("(_64,_64):(_1@0,_1@1)")):
        with pytest.raises(LayoutError, match="strict="):
            layout(1, strict=strict)


# --- rounded_reference on integer atoms ----------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "c", "match"),
    [(200, None, "200"), (1.5, None, "1.5"), (1, 2**40, str(2**40)), (-129, None, "-129")],
)
def test_rounded_reference_refuses_what_s8_and_s32_cannot_hold(a, c, match):
    t = cm.make_tiled_mma("SM80_16x8x32_S32S8S8S32_TN")
    A, B = np.full((16, 32), a, dtype=float), np.ones((8, 32))
    C = None if c is None else np.full((16, 8), float(c))
    for f in (cm.emulate.rounded_reference, cm.emulate.gemm):
        with pytest.raises(TiledMmaError, match=match):
            f(t, A, B, C)


def test_rounded_reference_of_integers_in_range():
    t = cm.make_tiled_mma("SM80_16x8x32_S32S8S8S32_TN")
    A, B = np.full((16, 32), -128.0), np.full((8, 32), 127)
    D = cm.emulate.rounded_reference(t, A, B, np.full((16, 8), 5))
    assert int(D[0, 0]) == 32 * -128 * 127 + 5  # computed by hand, no wrap
    assert issubclass(TiledMmaError, CutemmaError)
