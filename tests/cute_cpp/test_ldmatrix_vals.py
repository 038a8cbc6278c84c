"""Which ldmatrix copy atoms CuTe C++ builds over an sm80 TiledMMA's A and B fragments, and
that the sm80 family takes exactly those (issue 32, acceptance 3).

The witness: ``make_tiled_copy_A/B(Copy_Atom<ldmatrix>, mma)``, ``partition_S`` of a shared
tile, ``retile_D`` of the MMA fragment and ``copy`` of one k block, compiled by g++ against
the pip CuTe headers. An atom of more matrices than one atom's fragment registers fails
CuTe's static assertion "TiledCopy uses too few vals for selected CopyAtom"; any that splits
them compiles (more instructions of fewer matrices). bench/design_acceptance.py draws only
the atoms CuTe builds; the family accepts every one of them.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from cute_cpp import harness
from cutemma.errors import TiledMmaError
from cutemma.kernels.sm80.plan import a_ldmatrix_num, b_ldmatrix_num, ldmatrix_num
from cutemma.mma import make_mma_atom

REASON = harness.unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

MMAS = ("SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x8_F32F16F16F32_TN")
LDSM = ("SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x1_LDSM_N")
# 5 atoms along N: a row of B atoms no x4 splits into pairs, the case the random designs drew
BODY = """
  auto mma = make_tiled_mma({mma}{{}}, Layout<Shape<_1,_1,_1>>{{}});
  auto cpy = make_tiled_copy_{X}(Copy_Atom<{ldsm}, half_t>{{}}, mma);
  static half_t buf[{ext} * 32];
  Tensor s = make_tensor(make_smem_ptr(buf), make_layout(make_shape(Int<{ext}>{{}}, _32{{}}), LayoutRight{{}}));
  Tensor frag = mma.get_slice(0).partition_fragment_{X}(s);
  auto thr = cpy.get_slice(0);
  Tensor src = thr.partition_S(s);
  Tensor dst = thr.retile_D(frag);
  if (buf[0] == half_t(1)) copy(cpy, src(_, _, 0), dst(_, _, 0));  // instantiated, not run
"""


def _cute_builds(mma: str, which: str, ldsm: str) -> bool:
    ext = 16 if which == "A" else 40
    return harness.compiles(BODY.format(mma=mma, X=which, ldsm=ldsm, ext=ext))


def _cutemma_takes(mma: str, which: str, ldsm: str) -> bool:
    op = make_mma_atom(mma).op
    try:
        if which == "A":
            a_ldmatrix_num(op.a.count, ldsm)
        else:
            b_ldmatrix_num(5, op.b.count, ldsm)
    except TiledMmaError:
        return False
    return True


@pytest.mark.parametrize("mma", MMAS)
@pytest.mark.parametrize("which", "AB")
def test_cute_builds_the_ldmatrix_atoms_that_split_a_fragment(mma, which):
    op = make_mma_atom(mma).op
    regs = op.a.count if which == "A" else op.b.count
    built = {ldsm for ldsm in LDSM if _cute_builds(mma, which, ldsm)}
    # the rule read off CuTe: an atom of at most (and dividing) one atom's registers
    assert built == {ldsm for ldsm in LDSM if regs % ldmatrix_num(ldsm) == 0}
    assert all(_cutemma_takes(mma, which, ldsm) for ldsm in built)
    assert set(_bench().ldmatrix_atoms(mma, which, "K")) == built


def _bench():
    path = Path(__file__).parents[2] / "bench" / "design_acceptance.py"
    spec = importlib.util.spec_from_file_location("design_acceptance_ldsm", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
