"""The seeds' atoms exactly: seed 004 (SM70 8x8x4 traits, registers, the CLayout
walk-through) and seed 003 (SM80_16x8x8_F16F16F16F16_TN, SM80_16x8x8_F32F16F16F32_TN).

Witnesses are the seeds' own text: layouts are parsed from the C++ spelling the
seeds print, registers are the seeds' DRegisters..CRegisters, and the SM70 lane
formulas are PTX ISA 9.7.14.5.1 as quoted in seed 002.
"""

import numpy as np
import pytest

from cutemma.layout import Layout
from cutemma.mma import make_mma_atom, mma_op

P = Layout.parse

# seed 004: "SM70_QuadPair", "SM70_8x4_Row", "SM70_8x4_Col", "SM70_8x8_16b", "SM70_8x8_32b"
THR = P("Layout<Shape <_4, _2>, Stride<_1,_16>>")
ROW = P("Layout<Shape <_8,_4>, Stride<_1,_8>>")
COL = P("Layout<Shape <Shape <_4,_2>,_4>, Stride<Stride<_8,_4>,_1>>")
C16 = P("Layout<Shape <_8,_8>, Stride<_1,_8>>")
C32 = P(
    "Layout<Shape <Shape <_2, _2,_2>, Shape <_2,_2, _2>>, Stride<Stride<_1,_16,_4>, Stride<_8,_2,_32>>>"
)


@pytest.mark.parametrize(
    "name, a, b, c",
    [
        ("SM70_8x8x4_F32F16F16F32_TN", ROW, ROW, C32),
        ("SM70_8x8x4_F32F16F16F32_NT", COL, COL, C32),
        ("SM70_8x8x4_F32F16F16F32_NN", COL, ROW, C32),
        ("SM70_8x8x4_F32F16F16F32_TT", ROW, COL, C32),
        ("SM70_8x8x4_F16F16F16F16_TN", ROW, ROW, C16),
        ("SM70_8x8x4_F16F16F16F16_NT", COL, COL, C16),
        ("SM70_8x8x4_F16F16F16F16_NN", COL, ROW, C16),
        ("SM70_8x8x4_F16F16F16F16_TT", ROW, COL, C16),
    ],
)
def test_sm70_traits_as_seed_004(name, a, b, c):
    atom = make_mma_atom(name)
    assert atom.shape_mnk == (8, 8, 4)
    assert atom.thr_id == THR
    assert (atom.tv_layout_A, atom.tv_layout_B, atom.tv_layout_C) == (a, b, c)
    acc = "f32" if "F32F16" in name else "f16"
    assert (atom.val_type_D.name, atom.val_type_A.name, atom.val_type_B.name) == (acc, "f16", "f16")


def test_sm70_nt_registers_as_seed_004():
    op = mma_op("SM70_8x8x4_F32F16F16F32_NT")
    assert [str(r) for r in op.registers] == ["float[8]", "uint32_t[2]", "uint32_t[2]", "float[8]"]
    assert ".m8n8k4.col.row.f32.f16.f16.f32" in op.ptx


def test_sm70_clayout_walkthrough_of_seed_004():
    # "(T0,V0) at 0, (T1,V0) at 1, (T2,V0) at 16, ... (T7,V0) at 21" and the V0..V7 of T0.
    c = make_mma_atom("SM70_8x8x4_F32F16F16F32_NT").tv_layout_C
    assert [c(t, 0) for t in range(8)] == [0, 1, 16, 17, 4, 5, 20, 21]
    assert [c(0, v) for v in range(8)] == [0, 8, 2, 10, 32, 40, 34, 42]


def _lanes(thr):
    return [thr(t) for t in range(8)]


def test_sm70_f32_accumulator_matches_ptx_formula_of_seed_002():
    # row = X (+4 if lane >= 16), X = (lane & 1) + (i & 2); col = (i & 4) + (lane & 2) + (i & 1)
    atom = make_mma_atom("SM70_8x8x4_F32F16F16F32_TN")
    for t, lane in enumerate(_lanes(atom.thr_id)):
        for i in range(8):
            row = (lane & 1) + (i & 2) + (4 if lane >= 16 else 0)
            col = (i & 4) + (lane & 2) + (i & 1)
            assert atom.tv_layout_C(t, i) == row + 8 * col


def test_sm70_a_operand_matches_ptx_formula_of_seed_002():
    row_major = make_mma_atom("SM70_8x8x4_F16F16F16F16_TN").tv_layout_A
    col_major = make_mma_atom("SM70_8x8x4_F16F16F16F16_NT").tv_layout_A
    for t, lane in enumerate(_lanes(THR)):
        hi = 4 if lane >= 16 else 0
        for i in range(4):
            assert row_major(t, i) == (lane % 4 + hi) + 8 * i  # row = lane%4 (+4), col = i
            assert col_major(t, i) == (i % 4 + hi) + 8 * (lane % 4)  # row = i (+4), col = lane%4


# seed 003: SM80_16x8_Row and SM80_8x8_Row, C++ spelling.
SM80_16x8_ROW = P(
    "Layout<Shape <Shape < _4,_8>,Shape < _2,_2>>, Stride<Stride<_32,_1>,Stride<_16,_8>>>"
)
SM80_8x8_ROW = P("Layout<Shape <Shape < _4,_8>,_2>, Stride<Stride<_16,_1>,_8>>")


def test_sm80_16x8x8_f16_as_seed_003():
    atom = make_mma_atom("SM80_16x8x8_F16F16F16F16_TN")
    assert atom.shape_mnk == (16, 8, 8)
    assert atom.thr_id == Layout(32)
    assert atom.tv_layout_A == SM80_16x8_ROW
    assert atom.tv_layout_B == SM80_8x8_ROW
    assert atom.tv_layout_C == SM80_16x8_ROW
    assert {atom.val_type_D.cpp, atom.val_type_A.cpp} == {"half_t"}


def test_sm80_16x8x8_f32_registers_and_asm_as_seed_003():
    op = mma_op("SM80_16x8x8_F32F16F16F32_TN")
    assert [str(r) for r in op.registers] == ["float[4]", "uint32_t[2]", "uint32_t[1]", "float[4]"]
    assert op.ptx == "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"
    assert [r.constraint for r in op.registers] == ["f", "r", "r", "f"]
    assert op.operands == ("D", "A", "B", "C")


def test_seed_003_atom_emulates_one_instruction():
    atom = make_mma_atom("SM80_16x8x8_F32F16F16F32_TN")
    rng = np.random.default_rng(3)
    A, B, C = rng.normal(size=(16, 8)), rng.normal(size=(8, 8)), rng.normal(size=(16, 8))
    d = atom.emulate(atom.partition_A(A), atom.partition_B(B), atom.partition_C(C))
    ref = A.astype(np.float16).astype(float) @ B.astype(np.float16).astype(float).T + C
    np.testing.assert_allclose(atom.tile_C(d), ref.astype(np.float32), rtol=1e-6, atol=1e-6)
