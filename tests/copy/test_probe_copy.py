"""Copy probes: generated from the atoms' layouts, expected outputs from the ISA, compiled with SASS kinds."""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.cuda.probe_copy import PROBED, copy_probe, copy_probes


def test_ldsm_expectation_is_the_isa_fragment():
    p = copy_probe("SM75_U32x1_LDSM_N")
    x = p.inputs()
    out = p.expect(x).reshape(32, 2)
    for t in range(32):  # lane t: row t/4, elements 2(t%4), 2(t%4)+1 of the 8x8 matrix
        assert out[t].tolist() == [x[8 * (t // 4) + 2 * (t % 4) + h] for h in range(2)]


def test_stsm_and_cp_async_expectations():
    p = copy_probe("SM90_U16x8_STSM_T")
    x = p.inputs()
    assert (p.expect(x) == x).all()
    z = copy_probe("SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint64_t>")
    y = z.expect(z.inputs()).reshape(32, 2)
    assert (y[0] == 0).all() and (y[3] == 0).all() and (y[1] != 0).all()


def test_shuffle_expectation():
    p = copy_probe("SM50_Shuffle_U32_2x2Trans_XOR4")
    x = p.inputs()
    out = p.expect(x).reshape(32, 2)
    # lanes 0 and 4 swap: lane 0 ends with (its r0, lane 4's r0), lane 4 with (lane 0's r1, its r1)
    assert out[0].tolist() == [x[0], x[8]] and out[4].tolist() == [x[1], x[9]]


def test_every_probe_family_is_covered():
    names = [p.name for p in copy_probes()]
    assert len(names) == 22 and {copy_probe(n).sass_kind for n in names} == {
        k for k, _ in PROBED.values()
    }


@pytest.mark.parametrize(
    "name",
    [
        "SM75_U16x8_LDSM_T",
        "SM90_U32x2_STSM_N",
        "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>",
        "SM50_Shuffle_U32_2x2Trans_XOR1",
    ],
)
def test_probe_compiles_to_its_sass(name):
    compile_mod = pytest.importorskip("cutemma.cuda.compile")
    if compile_mod.unavailable_reason():
        pytest.skip(compile_mod.unavailable_reason())
    from cutemma.cuda.verify_copy import _check_compiled

    r = _check_compiled(copy_probe(name))
    assert r["compiled"] and r["sass_ok"], r.get("why")
    assert np.sum(list(r["sass"].values())) >= 1


def test_sm100_sources_and_one_family_compiles():
    from cutemma.cuda.probe_copy_sm100 import check_family, family_source

    src, kernels = family_source("sm100.tmem_load")
    assert len(kernels) == 74
    # 16x32bx2 carries immHalfSplitoff = R (the second half R columns on, as CuTe's layouts)
    assert "tcgen05.ld.sync.aligned.16x32bx2.x8.b32" in src and "[%8], 8;" in src
    compile_mod = pytest.importorskip("cutemma.cuda.compile")
    if compile_mod.unavailable_reason():
        pytest.skip(compile_mod.unavailable_reason())
    results = check_family("sm100.utccp")
    assert len(results) == 12 and all(r["ok"] and r["sass"]["UTCCP"] >= 1 for r in results)
