"""Bad copy names, value types and TiledCopy constructions raise CopyError saying what would work."""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.copy import copy_op, copy_traits, is_copy_name, make_copy_atom, parse_copy_name
from cutemma.errors import CopyError
from cutemma.layout import Layout
from cutemma.tiled import make_tiled_copy, make_tiled_copy_A, make_tiled_mma


@pytest.mark.parametrize(
    "name, words",
    [
        ("SM80_U32x4_LDSM_N", "write SM75_U32x4_LDSM_N"),
        ("SM75_U32x4_STSM_N", "arch too old: SM90_U32x4_STSM_N first appears on sm90"),
        ("SM75_U32x3_LDSM_N", "no copy family takes this name"),
        ("SM80_CP_ASYNC_CACHEGLOBAL<uint32_t>", "copies (128,) bits, not 32"),
        ("SM80_CP_ASYNC_CACHEALWAYS", "give the copied type as a template argument"),
        ("SM80_CP_ASYNC_CACHEALWAYS<uint16_t>", "cp.async.ca copies (32, 64, 128) bits, not 16"),
        ("SM80_CP_ASYNC_CACHEALWAYS<foo>", "unknown template type"),
        ("UniversalCopy<uint4b_t>", "at least 8 bits"),
        ("UniversalCopy<>", "write UniversalCopy<S>"),
        ("AutoVectorizingCopyWithAssumedAlignment<24>", "one of 8, 16, 32, 64, 128"),
        ("SM100_TMEM_LOAD_16dp256b64x", "no copy family takes this name"),
        ("SM42_FOO", "no copy families for sm42"),
        ("LDSM", "must start with SM<arch>"),
    ],
)
def test_bad_names(name, words):
    with pytest.raises(CopyError) as err:
        copy_op(name)
    assert words in str(err.value)
    assert not is_copy_name(name)


def test_not_a_string():
    with pytest.raises(CopyError, match="is a string"):
        parse_copy_name(42)


@pytest.mark.parametrize(
    "name, dtype, most",
    [
        ("SM75_U32x4_LDSM_N", "f64", 32),  # a lane's register holds 32 bits
        ("SM75_U16x8_LDSM_T", "f32", 16),  # .trans moves 16-bit elements
        ("SM90_U32x4_STSM_N", "f64", 32),
        ("SM100_TMEM_LOAD_32dp32b1x", "f64", 32),
    ],
)
def test_value_type_too_wide(name, dtype, most):
    with pytest.raises(CopyError) as err:
        make_copy_atom(name, dtype)
    assert f"at most {most} bits" in str(err.value)


def test_unknown_value_type():
    with pytest.raises(CopyError, match="give a numeric type"):
        make_copy_atom("SM75_U32x4_LDSM_N", "float17")


def test_traits_of_op_object():
    op = copy_op("SM90_U32x1_STSM_N")
    assert copy_traits(op) is copy_traits("SM90_U32x1_STSM_N")


def test_tiled_copy_too_few_values():
    mma = make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN")
    with pytest.raises(CopyError, match="values per thread is not a multiple of the atom's 8"):
        make_tiled_copy_A(
            make_copy_atom("SM75_U32x4_LDSM_N", "f16"),
            make_tiled_mma("SM80_16x8x8_F16F16F16F16_TN"),
        )
    with pytest.raises(CopyError, match="needs a TiledMMA"):
        make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), "not a mma")
    assert mma.size == 32


def test_tiled_copy_too_few_threads():
    with pytest.raises(CopyError, match="not a multiple of the atom's 32"):
        make_tiled_copy(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), Layout(16), Layout(8))


def test_partition_wrong_tensor():
    tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "f32"), Layout(32))
    from cutemma.tensor import make_identity_tensor, make_tensor

    # data is refused; an identity tensor is padded (its coordinates past 47 are predicated)
    with pytest.raises(CopyError, match="not a multiple of the TiledCopy tile 32"):
        tc.get_slice(0).partition_S(make_tensor(np.zeros(48), 48))
    assert tc.get_slice(20).partition_S(make_identity_tensor(48)).tolist() == [20, 52]
    with pytest.raises(CopyError, match="expects a cutemma Tensor"):
        tc.get_slice(0).partition_D([1, 2, 3])
    with pytest.raises(CopyError, match="is not a thread of this TiledCopy"):
        tc.get_slice(32)
    with pytest.raises(CopyError, match="give its value type"):
        make_tiled_copy("UniversalCopy<uint32_t>", Layout(32))
