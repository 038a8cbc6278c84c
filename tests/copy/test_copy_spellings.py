"""make_copy_atom takes the spellings a user has at hand (issue 22): numpy / ml_dtypes / torch
dtypes and their names, any case of a type name, and a copy name in another case."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import cutemma as cm

LDSM = "SM75_U32x4_LDSM_N"


@pytest.mark.parametrize(
    "dtype,name",
    [
        ("float16", "f16"),
        (np.float16, "f16"),
        (np.dtype("float16"), "f16"),
        ("FLOAT16", "f16"),
        ("bfloat16", "bf16"),
        (ml_dtypes.bfloat16, "bf16"),
        ("HALF_T", "f16"),
        ("Bf16", "bf16"),
    ],
)
def test_value_type_spellings(dtype, name):
    atom = cm.make_copy_atom(LDSM, dtype)
    assert atom == cm.make_copy_atom(LDSM, name)


@pytest.mark.parametrize(
    "dtype,name",
    [("float32", "f32"), (np.float32, "f32"), (np.int8, "s8"), ("uint8", "u8"),
     (ml_dtypes.float8_e4m3fn, "e4m3"), ("float8_e5m2", "e5m2")],
)  # fmt: skip
def test_numpy_names_of_other_widths(dtype, name):
    assert cm.make_copy_atom("UniversalCopy<uint32_t>", dtype).val_type.name == name


def test_torch_dtypes():
    torch = pytest.importorskip("torch")
    assert cm.make_copy_atom(LDSM, torch.float16) == cm.make_copy_atom(LDSM, "f16")
    assert cm.make_copy_atom(LDSM, torch.bfloat16) == cm.make_copy_atom(LDSM, "bf16")


@pytest.mark.parametrize(
    "spelling,name",
    [("sm75_u32x4_ldsm_n", LDSM), ("SM75_U32X4_LDSM_N", LDSM),
     ("universalcopy<uint32_t>", "UniversalCopy<uint32_t>"),
     ("sm80_cp_async_cacheglobal<uint128_t>", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>")],
)  # fmt: skip
def test_copy_names_in_any_case(spelling, name):
    atom = cm.make_copy_atom(spelling, "f16")
    assert atom.name == name and atom == cm.make_copy_atom(name, "f16")


def test_unknown_spellings_still_refused():
    with pytest.raises(cm.CopyError, match="value type"):
        cm.make_copy_atom(LDSM, "float17")
    with pytest.raises(cm.CopyError, match="value type"):
        cm.make_copy_atom(LDSM, object())
    with pytest.raises(cm.CopyError, match="write SM75_U32x4_LDSM_N"):
        cm.make_copy_atom("SM80_U32x4_LDSM_N", "f16")  # a wrong arch is still named
