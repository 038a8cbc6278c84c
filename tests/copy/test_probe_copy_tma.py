"""TMA / bulk-copy probes: every kind of the sm90.tma family probed, outputs from emulate.tma, SASS."""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.copy import copy_ops
from cutemma.cuda.probe_copy_tma import expected, probe_buffers, tma_probes


def test_every_tma_kind_of_the_catalog_has_a_probe():
    kinds = {
        op.name.split("<")[0].removeprefix("SM90_").removeprefix("TMA_")
        for op in copy_ops(family="sm90.tma")
    }
    kinds.discard("BULK_COPY_AUTO")  # CuTe's placeholder: no instruction of its own
    assert kinds == {p.kind for p in tma_probes()}


def test_multicast_writes_the_same_box_into_both_ctas_and_loads_zero_fill():
    p = next(q for q in tma_probes() if q.kind == "LOAD_MULTICAST")
    x, o = probe_buffers(p)
    out = expected(p, x, o).reshape(p.grid, p.box_bytes)
    assert (out[0] == out[1]).all() and (out[2] == out[3]).all()
    # the second box (64, 16) of a 100 x 20 bf16 tensor: columns 64..99 of rows 16..19 only
    vals = out[2].view(np.uint16)
    assert np.count_nonzero(vals) == 36 * 4


def test_store_leaves_global_memory_outside_the_boxes_alone():
    p = next(q for q in tma_probes() if q.kind == "STORE" and q.dtype == "u8")
    x, o = probe_buffers(p)
    got = expected(p, x, o)
    g = got[: 64 * 4].reshape(4, 64)
    assert (g[:, 48:] == o[: 64 * 4].reshape(4, 64)[:, 48:]).all()  # past dim 0 = 48
    assert (g[3] == o[192:256]).all()  # row 3: between the boxes (rows 0-2 and 4)
    assert (g[0, :48] == x[:48]).all()  # box (0, 0) row 0 = shared bytes 0..47 (no swizzle)


@pytest.mark.parametrize("kind, sass", [("STORE", "UTMASTG"), ("BULK_COPY_S2G", "UBLKCP")])
def test_probe_compiles_to_its_sass(kind, sass):
    compile_mod = pytest.importorskip("cutemma.cuda.compile")
    if compile_mod.unavailable_reason():
        pytest.skip(compile_mod.unavailable_reason())
    from cutemma.cuda.verify_copy import _check_compiled

    p = next(q for q in tma_probes() if q.kind == kind)
    r = _check_compiled(p)
    assert r["compiled"] and r["sass_ok"] and r["sass"].get(sass, 0) >= 1, r.get("why")
