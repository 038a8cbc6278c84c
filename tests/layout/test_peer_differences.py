"""Issue 22, acceptance 5: where pycute's and tensor-layouts' own tests found cutemma apart
from CuTe, cutemma now answers as CuTe C++ does.

Each value below is what CuTe C++ (the ``nvidia-cutlass`` 4.2 headers compiled by g++ through
``tests/cute_cpp/harness.py``) printed for the same call; ``test_live_against_cpp`` asks C++
again when g++ and the headers are installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.errors import LayoutError
from cutemma.layout import ComposedLayout, Layout, Swizzle, composition, slice_and_offset
from cutemma.layout.int_tuple import product_each
from cutemma.tensor import make_identity_tensor, make_tensor

P = Layout.parse

# (layout, index or coordinate, what C++'s layout(i) gave): past the size, C++ decomposes an
# int by every mode but the last and hands the rest to the last one (crd2idx)
EXTENDED = [
    ("(4,2):(1,4)", 9, 9),
    ("(4,2):(2,1)", 8, 2),  # (0, 2): the last mode's stride 1, twice
    ("(4,2):(2,1)", 13, 5),  # (1, 3)
    ("(4,(2,3)):(1,(8,2))", 30, 16),  # (2, (1, 3)): the last sub-mode of the last mode
    ("((2,2),2):((1,4),2)", 11, 9),  # ((1, 1), 2)
    ("8:3", 10, 30),
    ("(4,2):(1,4)", (5, 0), 5),  # one int per mode: each is evaluated, as C++ does
    ("(4,2):(1,4)", (1, 3), 13),
]


@pytest.mark.parametrize("text,crd,cpp", EXTENDED)
def test_layout_past_its_size_extends_the_last_mode(text, crd, cpp):
    L = P(text)
    assert (L(*crd) if isinstance(crd, tuple) else L(crd)) == cpp


def test_extension_is_the_linear_continuation():
    # independent of C++: along the last mode, L(i + size) - L(i) is the last stride * extent
    L = P("(4,(2,3)):(1,(8,2))")
    step = 3 * 2 * 4  # one more round of the last sub-mode (stride 2) moves 4*2*3 indices
    assert all(L(i + step) - L(i) == 2 * (step // 8) for i in range(24))


def test_strict_refuses_what_extension_accepts():
    L = P("(4,2):(1,4)")
    for args in [(8,), (4, 0), (0, 2)]:
        with pytest.raises(LayoutError, match="out of range"):
            L(*args, strict=True)
    assert L(7, strict=True) == 7
    with pytest.raises(LayoutError, match=">= 0"):
        L(-1)


def test_composition_relies_on_the_extension():
    # 4:1 o 8:1 needs A(4..7): A is extended, so the composite is 8:1
    assert str(composition(P("4:1"), P("8:1"))) == "8:1"


def test_a_composed_layout_extends_its_inner_layout():
    c = ComposedLayout(Swizzle(1, 0, 1), 0, P("4:1"))
    assert c(5) == Swizzle(1, 0, 1)(5)
    with pytest.raises(LayoutError, match="out of range"):
        c(5, strict=True)


def test_tensor_reads_stay_strict():
    t = make_tensor(np.arange(16), P("(4,2):(1,4)"))
    with pytest.raises(LayoutError, match="out of range"):
        t(8)


def test_tensor_element_assignment():
    data = np.zeros(8, dtype=np.int64)
    t = make_tensor(data, P("(4,2):(2,1)"))
    t[1, 1] = 5
    t[3] = 9  # linear index 3 = (3, 0) -> offset 6
    t[(2, 1)] = 4
    assert t.data.tolist() == CPP_TENSOR_AFTER
    assert t(1, 1) == 5 and t[3] == 9


CPP_TENSOR_AFTER = [0, 0, 0, 5, 0, 4, 9, 0]


def test_tensor_slice_assignment():
    t = make_tensor(np.zeros(6, dtype=int), Layout((2, 3)))
    t[None, 1] = 7
    t[1, None] = [1, 2, 3]
    assert t.data.tolist() == [0, 1, 7, 2, 0, 3]
    with pytest.raises(LayoutError, match="3 elements but 2"):
        t[1, None] = [1, 2]
    with pytest.raises(LayoutError, match="out of range"):
        t[2, 0] = 1
    with pytest.raises(LayoutError, match="identity tensor"):
        make_identity_tensor((2, 2))[0, 0] = 1


SW = ComposedLayout(Swizzle(2, 0, 2), 0, P("(4,4):(4,1)"))


def test_slice_and_offset_of_a_composed_layout():
    sub, off = slice_and_offset((None, None), SW)
    assert (str(sub), off) == ("Sw<2,0,2> o 0 o (4,4):(4,1)", 0)  # C++: (Sw<2,0,2> o _0 o ..., _0)
    for r in range(4):
        sub, off = slice_and_offset((r, None), SW)
        assert [sub(j) + off for j in range(4)] == [SW(r, j) for j in range(4)]
        sub, off = slice_and_offset((None, r), SW)
        assert [sub(j) + off for j in range(4)] == [SW(j, r) for j in range(4)]


def test_product_each_of_an_int_is_a_one_tuple():
    assert product_each(16) == (16,)  # C++ prints (_16)
    assert product_each((2, (3, 4))) == (2, 12)


# ---------------------------------------------------------------------------
# live: the same values asked of CuTe C++
# ---------------------------------------------------------------------------


def _cpp_int_tuple(t) -> str:
    if isinstance(t, tuple):
        return "make_shape(" + ",".join(_cpp_int_tuple(x) for x in t) + ")"
    return str(t)


def _cpp_layout(text: str) -> str:
    L = P(text)
    return f"make_layout({_cpp_int_tuple(L.shape)}, {_cpp_int_tuple(L.stride)})"


@pytest.fixture(scope="module")
def harness():
    from cute_cpp import harness as h

    reason = h.unavailable_reason()
    if reason:
        pytest.skip(reason)
    return h


def test_live_against_cpp(harness):
    cases = {}
    for i, (text, crd, _) in enumerate(EXTENDED):
        arg = ", ".join(map(str, crd)) if isinstance(crd, tuple) else str(crd)
        cases[f"e{i}"] = f'CASE("e{i}", {_cpp_layout(text)}({arg}));'
    sw = (
        "auto sw = make_composed_layout(Swizzle<2,0,2>{}, Int<0>{}, "
        "make_layout(make_shape(Int<4>{},Int<4>{}), make_stride(Int<4>{},Int<1>{})));"
    )
    cases["s0"] = f'{sw} CASE("s0", slice_and_offset(make_coord(_,_), sw));'
    for r in range(4):
        cases[f"s{r + 1}"] = (
            f"{sw} auto so = slice_and_offset(make_coord({r},_), sw); "
            f'for (int j = 0; j < 4; ++j) CASE("s{r + 1}", get<0>(so)(j) + get<1>(so));'
        )
    cases["p"] = 'CASE("p", product_each(Int<16>{}));'
    cases["t"] = (
        "long buf[8] = {0}; auto t = make_tensor(&buf[0], make_layout(make_shape(4,2), "
        "make_stride(2,1))); t(1,1) = 5; t(3) = 9; t(make_coord(2,1)) = 4; "
        'for (int i = 0; i < 8; ++i) CASE("t", buf[i]);'
    )
    got = {k: v.replace("_", "") for k, v in harness.run_cases(cases).items()}
    for i, (_, _, cpp) in enumerate(EXTENDED):
        assert got[f"e{i}"] == str(cpp), EXTENDED[i]
    assert got["s0"] == "(Sw<2,0,2> o 0 o (4,4):(4,1),0)"
    for r in range(4):
        assert got[f"s{r + 1}"].split("\n") == [str(SW(r, j)) for j in range(4)]
    assert got["p"] == "(16)"
    assert got["t"].split("\n") == [str(v) for v in CPP_TENSOR_AFTER]
