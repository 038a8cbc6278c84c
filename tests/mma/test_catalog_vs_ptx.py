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


def _key(op) -> tuple:
    """What tables_for reads: the mnemonic, the operand sources, the name's MxNxK."""
    return (op.ptx, op.a_source, op.b_source, op.name.split("_")[1])


_TABLES: dict = {}


def _isa(op):
    key = _key(op)
    if key not in _TABLES:
        _TABLES[key] = tables_for(op)
    return _TABLES[key]


def test_catalog_is_not_empty():
    assert len(OPS) > 50, f"only {len(OPS)} operations in the catalog"


FAMILIES = sorted({op.family for op in OPS})


@pytest.mark.parametrize("family", FAMILIES)
def test_atoms_agree_with_ptx_isa(family):
    # One test per family (thousands of GMMA members would make per-op tests slow);
    # every member is checked and the first disagreements are reported by name.
    failures, skipped = [], []
    for op in (o for o in OPS if o.family == family):
        try:
            problem = _disagreement(op)
        except Exception as err:  # noqa: BLE001 - report which op broke and how
            problem = f"{type(err).__name__}: {err}"
        if problem == "undocumented":
            skipped.append(op.name)
        elif problem:
            failures.append(f"{op.name} [{op.ptx}]: {problem}")
    assert not failures, f"{len(failures)} disagree, first: " + "\n".join(failures[:5])
    if skipped:
        pytest.skip(f"{len(skipped)} ops the ISA documents without fragments, e.g. {skipped[0]}")


def _disagreement(op) -> str | None:
    tab = _isa(op)
    if tab is None:
        if op.ptx.startswith(UNDOCUMENTED_HEADS):
            return "undocumented"
        return "ptx_spec has no tables"
    atom = make_mma_atom(op)
    if tuple(atom.shape_mnk) != tab.mnk:
        return f"shape_mnk {atom.shape_mnk}, ISA {tab.mnk}"
    threads = [atom.thr_id(t) for t in range(tab.threads.size)]
    if threads != tab.threads.tolist():
        return f"thr_id {atom.thr_id} gives {threads[:8]}..., ISA {tab.threads[:8].tolist()}..."
    for operand in "ABC":
        ref = getattr(tab, operand)
        if ref is None:
            if not tab.notes.get(operand):
                return f"{operand}: no ISA table and no reason"
            continue
        lay = getattr(atom, f"tv_layout_{operand}")
        memo = (lay, _key(op), operand)  # equal layouts vs the same ISA table: check once
        if memo not in _COMPARED:
            _COMPARED[memo] = _compare(lay, ref, tab.kind[operand])
        problem = _COMPARED[memo]
        if problem:
            return f"{operand} {problem}"
    return None


_COMPARED: dict = {}


def _compare(lay, ref, kind) -> str | None:
    t_off = mode_table(lay.shape[0], lay.stride[0])
    v_off = mode_table(lay.shape[1], lay.stride[1])
    if (t_off.size, v_off.size) != ref.shape:
        return f"{lay}: {(t_off.size, v_off.size)} (threads, values), ISA {ref.shape}"
    if kind == "descriptor":  # every ISA row is the whole tile: compare the structure
        if t_off.any() or not np.array_equal(v_off, ref[0]):
            return f"{lay}: a descriptor operand maps every thread to the whole tile"
        return None
    got = t_off[:, None] + v_off[None, :]
    bad = np.argwhere(got != ref)
    if len(bad):
        t, v = bad[0].tolist()
        return f"{lay}: (t,v)=({t},{v}) gives {got[t, v]}, the ISA {ref[t, v]}"
    return None


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
