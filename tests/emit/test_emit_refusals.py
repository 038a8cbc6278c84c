"""Issue 34, emit: what C++ or the DSL cannot hold is refused by name, and what to_cpp writes
reads back."""

from __future__ import annotations

import contextlib
import io
import re
import shlex

import numpy as np
import pytest

import cutemma as cm
from cutemma.emit import to_cpp
from cutemma.emit.dsl import to_cute_dsl
from cutemma.errors import EmitError
from cutemma.layout import ComposedLayout, Layout, Swizzle

# CuTe's Int<n> is an int: the 32-bit range, the DSL's static range too
OUT_OF_INT = [Layout(2**31), Layout(4, -(2**31) - 1), Layout(2**40), (2**31, 4)]


@pytest.mark.parametrize("obj", OUT_OF_INT, ids=str)
def test_values_outside_int32_are_refused_by_both_emitters(obj):
    with pytest.raises(EmitError, match="32-bit"):
        to_cpp(obj)
    with pytest.raises(EmitError, match="32-bit"):
        to_cute_dsl(obj)


def test_the_ends_of_the_int32_range_are_written():
    assert to_cpp(Layout(2**31 - 1, -(2**31))) == "Layout<Int<2147483647>,Int<-2147483648>>{}"
    assert to_cute_dsl(Layout(2**31 - 1)) == "cute.make_layout(2147483647, stride=1)"


@pytest.mark.parametrize("obj", [Layout(10**5000), (10**5000,), 10**5000], ids=["L", "t", "n"])
def test_a_5001_digit_int_is_refused_by_name(obj):
    # str() of such an int raises Python's ValueError: the message gives its size instead
    for f in (to_cpp, to_cute_dsl):
        with pytest.raises(EmitError, match="16610-bit integer"):
            f(obj)


def test_a_deeply_nested_tiler_is_refused_by_name():
    t = 4
    for _ in range(3000):
        t = (t,)
    for f in (to_cpp, to_cute_dsl):
        with pytest.raises(EmitError, match="nested too deeply"):
            f(t)


class _Dsl:
    """Enough of ``cute`` to evaluate what to_cute_dsl writes for layouts, as cutemma values."""

    @staticmethod
    def make_layout(shape, stride):
        return Layout(shape, stride)

    @staticmethod
    def make_swizzle(b, m, s):
        return Swizzle(b, m, s)

    @staticmethod
    def make_composed_layout(inner, offset, outer):
        # the DSL refuses a non-affine last argument: "expects the outer ... layout to be an
        # affine layout" (CuTe DSL 4.8.1, checked by hand)
        assert type(outer) is Layout, f"the DSL refuses {outer} last"
        return ComposedLayout(inner, offset, outer)


def test_a_nested_composed_layout_is_written_as_the_dsl_takes_it():
    nested = ComposedLayout(Swizzle(1, 1, 2), 0, ComposedLayout(Layout(8, 2), 1, Layout(4, 1)))
    text = to_cute_dsl(nested)
    built = eval(text, {"cute": _Dsl})  # noqa: S307 - our own text
    # the same function: every index maps to the same offset (associativity of composition)
    assert [built(i) for i in range(4)] == [nested(i) for i in range(4)]


def test_a_composed_layout_ending_in_a_swizzle_is_refused_for_the_dsl_only():
    obj = ComposedLayout(Layout(4, 2), 1, ComposedLayout(Swizzle(1, 1, 2), 0, Layout(4, 1)))
    with pytest.raises(EmitError, match="affine Layout"):
        to_cute_dsl(obj)
    assert Layout.parse(to_cpp(obj)) == obj  # C++ takes it


def test_a_thr_mma_or_a_tensor_is_named_not_printed():
    thr = cm.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN").get_slice(0)
    tensor = cm.make_tensor(np.zeros(4), Layout(4))
    for obj, name in ((thr, "ThrMma"), (tensor, "Tensor")):
        for f in (to_cpp, to_cute_dsl):
            with pytest.raises(EmitError, match=name) as info:
                f(obj)
            assert "\n" not in str(info.value) and len(str(info.value)) < 400


ROUND_TRIP = [
    Layout((4, 2), (2, 1)),
    Layout(0),
    Layout.parse("(_64,(_4,_64)):(_1@0,(_1@1@1,_4@0))"),
    Layout.parse("Sw<3,4,3> o 0 o (8,64):(64,1)"),
    Layout.parse("Sw<1,1,2> o 0 o (8,2):(2,16) o 0 o 16:1"),
    ComposedLayout(Layout(4, 2), 3, Layout(4)),
]


@pytest.mark.parametrize("obj", ROUND_TRIP, ids=str)
@pytest.mark.parametrize("type_", [False, True])
def test_layout_parse_reads_what_to_cpp_writes(obj, type_):
    back = Layout.parse(to_cpp(obj, type=type_))
    assert back == obj and str(back) == str(obj)


# --- cutemma emit ----------------------------------------------------------------------------


def _cli(argv: str) -> tuple[int, str, str]:
    from cutemma.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(shlex.split(argv))
    return status, out.getvalue().strip(), err.getvalue().strip()


def test_emit_a_swizzle():
    assert _cli("emit cpp 'Sw<3,3,3>'")[:2] == (0, to_cpp(Swizzle(3, 3, 3)))
    assert _cli("emit dsl 'Swizzle<3,4,3>{}'")[:2] == (0, to_cute_dsl(Swizzle(3, 4, 3)))


@pytest.mark.parametrize(
    "argv",
    [
        "emit cpp SM75_U32x4_LDSM_N -p dtype=f16 -p dtype=f32",
        "emit cpp SM80_16x8x8_F32TF32TF32F32_TN -p a_major=K -p a_major=K",
        "emit cpp desc -p major=K -p major=MN -p swizzle=128 -p dtype=bf16 -p tile=64x64",
    ],
)
def test_a_parameter_given_twice_is_refused(argv):
    status, _, err = _cli(argv)
    assert status == 2 and "given twice" in err


def test_emit_a_descriptor_as_cutemma_desc_builds_it():
    status, out, _ = _cli("emit cpp desc -p major=K -p swizzle=128 -p dtype=bf16 -p tile=64x64")
    assert status == 0
    _, shown, _ = _cli("desc --major K --swizzle 128 --dtype bf16 --tile 64x64")
    raw = re.search(r"raw: (0x[0-9a-f]+)", shown).group(1)
    assert out.startswith("GmmaDescriptor") and int(
        re.search(r"0x[0-9a-f]+", out).group(0), 16
    ) == int(raw, 16)
    status, _, err = _cli("emit cpp desc -p major=K")
    assert status == 2 and "swizzle" in err and "tile" in err


def test_emit_help_documents_the_tiled_copy_and_descriptor_options():
    status, out, _ = _cli("emit --help")
    assert status == 0
    for text in ("thr=", "val=", "desc -p major=", "CUTE_DSL_ARCH=sm_90a", "dsl_arch"):
        assert text in out, text
