"""Every catalog atom against the PTX ISA (issue 3, acceptance 1 and 2).

1. thr_id and tv_layout_A/B/C of every atom agree, at every (thread, value),
   with the tables ptx_spec builds from the Operation's PTX mnemonic alone.
2. infer_layout on those ISA tables alone gives layouts equal as functions to
   the catalog's, for every sm61-sm90 warp-level atom, and for the distinct
   GMMA accumulator and register-A fragments.

Instructions the ISA does not describe by per-thread fragments (tcgen05) are
listed, not silently passed.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from cutemma.mma.infer import infer_layout
from cutemma.mma.ptx_spec import tables_for

catalog = pytest.importorskip("cutemma.mma.catalog", reason="the MMA catalog is not importable yet")
from cutemma.mma import make_mma_atom, mma_ops, tv_table  # noqa: E402
from cutemma.mma.traits import mode_table  # noqa: E402

OPS = sorted(mma_ops(), key=lambda op: op.name)
# Operands the ISA documents only as tensor memory or descriptors (module docstring).
UNDOCUMENTED_HEADS = ("tcgen05",)


@functools.cache
def _isa(op):
    return tables_for(op)


def test_catalog_is_not_empty():
    assert len(OPS) > 50, f"only {len(OPS)} operations in the catalog"


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_atom_agrees_with_ptx_isa(op):
    tab = _isa(op)
    if tab is None:
        assert op.ptx.startswith(UNDOCUMENTED_HEADS), (
            f"{op.name} ({op.ptx}): ptx_spec has no tables"
        )
        pytest.skip(f"{op.ptx}: the ISA documents no per-thread fragments")
    atom = make_mma_atom(op)
    assert tuple(atom.shape_mnk) == tab.mnk
    threads = [atom.thr_id(t) for t in range(tab.threads.size)]
    assert threads == tab.threads.tolist(), f"thr_id {atom.thr_id}"
    for operand in "ABC":
        ref = getattr(tab, operand)
        if ref is None:
            assert tab.notes.get(operand), f"{op.name} {operand}: no table and no reason"
            continue
        _assert_same(op, operand, getattr(atom, f"tv_layout_{operand}"), ref, tab.kind[operand])


def _assert_same(op, operand, lay, ref, kind):
    t_off = mode_table(lay.shape[0], lay.stride[0])
    v_off = mode_table(lay.shape[1], lay.stride[1])
    assert (t_off.size, v_off.size) == ref.shape, (
        f"{op.name} {operand} {lay}: {(t_off.size, v_off.size)} (threads, values), ISA {ref.shape}"
    )
    if kind == "descriptor":  # every ISA row is the whole tile: compare the structure
        assert not t_off.any(), f"{op.name} {operand} {lay}: threads must all see offset 0"
        assert np.array_equal(v_off, ref[0]), (
            f"{op.name} {operand} {lay}: values must walk the tile"
        )
        return
    got = t_off[:, None] + v_off[None, :]
    bad = np.argwhere(got != ref)
    assert not len(bad), (
        f"{op.name} {operand} {lay}: (t,v)={bad[0].tolist()} gives {got[tuple(bad[0])]}, "
        f"the ISA {ref[tuple(bad[0])]}"
    )


def test_tables_are_the_layout_call():
    # The checks here read layouts through tv_table / mode_table (numpy, fast);
    # make sure those are what calling the Layout gives.
    for name in ("SM70_8x8x4_F32F16F16F32_NT", "SM80_16x8x256_S32U1U1S32_TN_XORPOPC"):
        for lay in (make_mma_atom(name).tv_layout_A, make_mma_atom(name).tv_layout_C):
            table = tv_table(lay)
            direct = [[lay(t, v) for v in range(table.shape[1])] for t in range(table.shape[0])]
            assert table.tolist() == direct
            outer = mode_table(lay.shape[0], lay.stride[0])[:, None] + mode_table(
                lay.shape[1], lay.stride[1]
            )
            assert outer.tolist() == direct


def _warp_level(op) -> bool:
    return 61 <= op.arch <= 90 and op.ptx.split(".")[0] in ("mma", "dp4a", "dp2a")


def _infer_cases():
    # Warp-level: every atom. Warpgroup: one per distinct (operand, table).
    seen, cases = set(), []
    for op in OPS:
        try:
            tab = _isa(op)
        except Exception:  # reported by test_atom_agrees_with_ptx_isa for this op
            continue
        if tab is None or not (61 <= op.arch <= 90):
            continue
        for operand in "ABC":
            ref = getattr(tab, operand)
            if ref is None or tab.kind[operand] != "fragment":
                continue
            if not _warp_level(op):  # equal tables infer equally: try each once
                key = (operand, ref.shape, ref.tobytes())
                if key in seen:
                    continue
                seen.add(key)
            cases.append(pytest.param(op, operand, id=f"{op.name}-{operand}"))
    return cases


@pytest.mark.parametrize(("op", "operand"), _infer_cases())
def test_infer_from_isa_equals_catalog_layout(op, operand):
    ref = getattr(_isa(op), operand)
    inferred = infer_layout(ref)
    catalog_layout = getattr(make_mma_atom(op), f"tv_layout_{operand}")
    assert np.array_equal(tv_table(inferred), tv_table(catalog_layout)), (
        f"{op.name} {operand}: inferred {inferred}, catalog {catalog_layout}"
    )


def test_every_warp_level_atom_is_inferred():
    warp = [op for op in OPS if _warp_level(op)]
    assert warp, "no sm61-sm90 warp-level atoms in the catalog"
    assert all(_isa(op) is not None for op in warp)
