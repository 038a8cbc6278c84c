"""The verify sweep catches wrong layouts (issue 7, acceptance 3) and reports what it saw."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from cuda_skips import needs_cuobjdump, needs_nvrtc

from cutemma.layout import Layout
from cutemma.mma import make_mma_atom, mma_op
from cutemma.mma.atom import MmaAtom

ROOT = Path(__file__).resolve().parents[2]
ATOM = "SM80_16x8x16_F16F16F16F16_TN"


def swapped_atom(name: str = ATOM, operand: str = "A") -> MmaAtom:
    """The atom with the first two value strides of one operand's layout swapped."""
    atom = make_mma_atom(name)
    lay = getattr(atom.traits, f"tv_layout_{operand}")
    (t_shape, v_shape), (t_stride, v_stride) = lay.shape, lay.stride
    v_stride = (v_stride[1], v_stride[0], *v_stride[2:])
    wrong = Layout((t_shape, v_shape), (t_stride, v_stride))
    return MmaAtom(atom.op, replace(atom.traits, **{f"tv_layout_{operand}": wrong}))


def test_swapped_strides_fail_the_layout_check():
    from cutemma.cuda.verify import layout_problem

    atom = swapped_atom()
    assert str(atom.tv_layout_A) == "((4,8),(2,2,2)):((32,1),(8,16,128))"
    assert layout_problem(make_mma_atom(ATOM)) is None
    problem = layout_problem(atom)
    assert problem is not None and problem.startswith("tv_layout_A ((4,8),(2,2,2))")


@needs_nvrtc
@needs_cuobjdump
def test_verify_reports_the_layout_failure():
    from cutemma.cuda.verify import verify

    report = verify([swapped_atom(), mma_op("SM61_DP4A")], progress=False)
    bad, good = report.atoms
    assert (bad.status, bad.stages["layout"]) == ("fail", "fail")
    assert bad.detail.startswith("layout: tv_layout_A")
    assert good.status == "pass"
    assert (report.passed, report.failed, report.skipped) == (1, 1, 0)
    table = report.table()
    assert "sm80.f16" in table and f"FAIL {ATOM}: layout" in table
    record = report.to_json()
    assert set(record) >= {"device", "commit", "date", "passed", "failed", "skipped", "wall_s"}
    assert record["atoms"][0]["name"] == ATOM and record["atoms"][0]["status"] == "fail"


@needs_nvrtc
@needs_cuobjdump
def test_compile_batch_isolates_a_broken_probe():
    from cutemma.cuda.batch_compile import compile_batch
    from cutemma.cuda.probe import probe_for

    good = [probe_for(mma_op(n)) for n in ("SM61_DP4A", "SM61_DP2A", "SM80_8x8x4_F64F64F64F64_TN")]
    broken = replace(
        good[0], kernel_name="broken", source='extern "C" __global__ void broken() { x; }'
    )
    results = compile_batch([good[0], broken, good[1], good[2]], "sm_80")
    assert [r.problem is None for r in results] == [True, False, True, True]
    assert "compile error" in results[1].problem


@pytest.mark.parametrize("name", ["f16", "bf16", "e4m3", "e2m1", "s4", "b1", "tf32", "c64", "s16"])
def test_containers_round_trip(name):
    from cutemma.cuda.tile_values import from_container, random_values, to_container
    from cutemma.mma.types import numeric_type

    t = numeric_type(name)
    x = random_values(t, (4, 6), np.random.default_rng(1))
    back = from_container(t, to_container(t, x), 4, 6)
    want = t.quantize(x)
    if t.kind == "int" and not t.signed:
        want = want & ((1 << t.bits) - 1)
    if t.kind == "int" and t.bits < 8:  # sub-byte ints come back as their low bits
        back = np.asarray(back).astype(np.int64) & ((1 << t.bits) - 1)
        want = np.asarray(want).astype(np.int64) & ((1 << t.bits) - 1)
    np.testing.assert_array_equal(np.asarray(back).astype(want.dtype), want)


def test_integer_atoms_compare_exactly_and_floats_within_tolerance():
    from cutemma.cuda.tile_values import compare, tolerance

    atom = make_mma_atom("SM80_16x8x32_S32S8S8S32_TN")
    A, B, C = np.ones((16, 32)), np.ones((8, 32)), np.zeros((16, 8))
    want = atom.emulate_tiles(A, B, C)
    assert tolerance(atom, A, B, C) is None
    assert compare(atom, want, want, None) == (True, 0.0)
    assert compare(atom, want + 1, want, None) == (False, 1.0)
    f32 = make_mma_atom("SM80_16x8x16_F32F16F16F32_TN")
    A, B, C = np.ones((16, 16)), np.ones((8, 16)), np.zeros((16, 8))
    tol = tolerance(f32, A, B, C)
    want = f32.emulate_tiles(A, B, C)
    assert compare(f32, want + tol / 2, want, tol)[0]
    assert not compare(f32, want + 1, want, tol)[0]


_GPU_CHECK = """
import torch  # first: see notes/CUDA.md
import json, sys
sys.path.insert(0, {root!r})
from test_verify import swapped_atom, ATOM
from cutemma.mma import make_mma_atom
from cutemma.cuda.verify import verify, layout_problem
import cutemma.cuda.verify as v
# Keep the wrong atom's probe but skip the layout stage, so the hardware must catch it.
v.layout_problem = lambda atom: None
out = {{}}
GMMA = "SM90_64x16x16_F32BF16BF16_RS"
for label, atom in (("right", make_mma_atom(ATOM)), ("wrong_A", swapped_atom()),
                    ("wrong_C", swapped_atom(operand="C")),
                    ("gmma_right", make_mma_atom(GMMA)),
                    ("gmma_wrong_A", swapped_atom(GMMA)),
                    ("gmma_wrong_C", swapped_atom(GMMA, operand="C"))):
    r = verify([atom], hardware=True, progress=False).atoms[0]
    out[label] = [r.status, r.stages.get("hardware"), r.detail]
print(json.dumps(out))
"""


@pytest.mark.gpu
@needs_nvrtc
def test_hardware_catches_swapped_strides():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", _GPU_CHECK.format(root=str(ROOT / "tests" / "cuda"))],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["right"][:2] == ["pass", "pass"], out
    assert out["wrong_A"][:2] == ["fail", "fail"], out
    assert "differs from emulate_tiles" in out["wrong_A"][2]
    assert out["wrong_C"][:2] == ["fail", "fail"], out
    assert out["gmma_right"][:2] == ["pass", "pass"], out
    assert out["gmma_wrong_A"][:2] == ["fail", "fail"], out
    assert out["gmma_wrong_C"][:2] == ["fail", "fail"], out


@pytest.mark.parametrize("name", [ATOM, "SM90_64x16x16_F32BF16BF16_RS"])
def test_the_probe_is_built_from_the_atom_given(name):
    # The hardware can only refute a wrong layout if the kernel is built from it.
    from cutemma.cuda.probe import probe_for

    op = mma_op(name)
    assert probe_for(op, make_mma_atom(name)).source == probe_for(op).source
    assert probe_for(op, swapped_atom(name, "C")).source != probe_for(op).source


def test_with_majors_adds_only_allowed_mn_variants():
    from cutemma.cuda.verify import with_majors

    names = [op.name for op in with_majors([mma_op("SM90_64x16x16_F32BF16BF16_SS")])]
    assert names == [
        "SM90_64x16x16_F32BF16BF16_SS",
        "SM90_64x16x16_F32BF16BF16_SS<K,MN>",
        "SM90_64x16x16_F32BF16BF16_SS<MN,K>",
        "SM90_64x16x16_F32BF16BF16_SS<MN,MN>",
    ]
    assert len(with_majors([mma_op("SM90_64x16x32_S32S8S8_SS_TN")])) == 1  # 8-bit: K-major only
    assert len(with_majors([mma_op("SM80_16x8x8_F16F16F16F16_TN")])) == 1


_UNGUARDED_SCRIPT = """
import sys, types
sys.modules.setdefault("torch", types.ModuleType("torch"))  # what makes workers forkserver
from cutemma.cuda.batch_compile import compile_probes
from cutemma.cuda.probe import probe_for
from cutemma.mma import mma_op
done = compile_probes([probe_for(mma_op(n)) for n in ("SM61_DP4A", "SM61_DP2A")], workers=2)
print([c.problem for c in done])
"""


@needs_nvrtc
@needs_cuobjdump
def test_compile_workers_do_not_rerun_an_unguarded_main_script(tmp_path):
    # A forkserver worker re-runs the parent's main file unless told there is none.
    script = tmp_path / "plain_script.py"
    script.write_text(_UNGUARDED_SCRIPT)
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "[None, None]"


def test_submodules_are_not_shadowed_by_functions():
    # `import cutemma.cuda.verify as v` must give the module (the GPU check patches it).
    import importlib
    import inspect

    for name in ("cutemma.cuda.verify", "cutemma.cuda.probe", "cutemma.kernels.tune"):
        mod = importlib.import_module(name)
        parent, _, leaf = name.rpartition(".")
        assert inspect.ismodule(getattr(importlib.import_module(parent), leaf)), name
        assert getattr(importlib.import_module(parent), leaf) is mod
