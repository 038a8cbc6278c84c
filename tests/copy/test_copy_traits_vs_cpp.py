"""Every copy atom's bit layouts equal CuTe's Copy_Traits, and its element layouts CuTe's Copy_Atom.

The expected text is what CuTe C++ prints for ``Copy_Traits<Op>::ThrID/SrcLayout/DstLayout/
RefLayout`` (and ``ValID`` for tensor-memory atoms) and for ``Copy_Atom<Op, T>::ValLayoutSrc/
Dst/Ref``, compiled from the nvidia-cutlass wheel's headers.
"""

from __future__ import annotations

from functools import cache

import pytest
from cpp_copy import cpp_name, cute_text, run

from cutemma.copy import copy_ops, copy_traits, make_copy_atom
from cutemma.emit.cpp_atoms import NOT_IN_CUTE

# Atoms of newer CUTLASS than the wheel's 4.2 headers (no struct to compile against; the one
# list is cutemma.emit's): their traits are checked against the PTX ISA in test_tmem_stat.py.
NEWER_THAN_HEADERS = {n for n in NOT_IN_CUTE if n.startswith("SM100_TMEM_LOAD_STAT")}
OPS = [op.name for op in copy_ops() if op.name not in NEWER_THAN_HEADERS]
FIELDS = ("ThrID", "SrcLayout", "DstLayout", "RefLayout")


def _traits_case(name: str) -> str:
    t = f"Copy_Traits<{cpp_name(name)}>"
    lines = [f'CASE("{name}", {t}::{f}{{}});' for f in FIELDS]
    if copy_traits(name).val_id is not None:
        lines.append(f'CASE("{name}", {t}::ValID{{}});')
    return " ".join(lines)


@cache
def _cpp_traits() -> dict[str, str]:
    return run({n: _traits_case(n) for n in OPS})


@pytest.mark.parametrize("name", OPS)
def test_traits_equal_cute(name):
    got = _cpp_traits()[name].split("\n")
    t = copy_traits(name)
    mine = [t.thr_id, t.src_layout, t.dst_layout, t.ref_layout]
    if t.val_id is not None:
        mine.append(t.val_id)
    assert [str(x) for x in mine] == [cute_text(g) for g in got]


def test_catalog_size():
    # cute/arch/copy_sm100.hpp declares 173 structs: 2 global 256-bit, 2 + 6 8-bit LDSM,
    # 3 8-bit STSM, 12 UTCCP and 148 TMEM load/store (5 shapes x 6, 7, 8, 8, 8 repetitions
    # x plain/16b x load/store). Besides them: 7 neutral copies (5 UniversalCopy widths,
    # AutoVectorizingCopy, DefaultCopy), 2 shuffles, 6 LDSM + 1 MOVM, 8 cp.async, 6 STSM.
    # and 7 sm90 TMA/bulk copies (one bit count each here; the family takes any).
    assert len(OPS) == 173 + 7 + 2 + 7 + 8 + 6 + 7
    assert len(copy_ops()) == len(OPS) + len(NEWER_THAN_HEADERS)


# One natural element type per atom (the widths CuTe kernels use them with).
def _dtype(name: str) -> str:
    if "U8" in name or "DU8" in name or "uint8" in name:
        return "uint8_t"
    if "TMEM" in name or "UTCCP" in name or "Shuffle" in name or "MOVM" in name:
        return "float"
    if "uint32" in name or "uint64" in name or "uint128" in name or "256bit" in name:
        return "float"
    if name in ("AutoVectorizingCopy", "DefaultCopy"):
        return "uint8_t"
    return "half_t"


_CPP_T = {"half_t": "half_t", "float": "float", "uint8_t": "uint8_t"}
_MINE_T = {"half_t": "f16", "float": "f32", "uint8_t": "u8"}


@cache
def _cpp_atoms() -> dict[str, str]:
    cases = {}
    for n in OPS:
        a = f"Copy_Atom<Copy_Traits<{cpp_name(n)}>, {_CPP_T[_dtype(n)]}>"
        cases[n] = " ".join(f'CASE("{n}", {a}::ValLayout{w}{{}});' for w in ("Src", "Dst", "Ref"))
    return run(cases)


def cpp_prefetch() -> None:
    """The C++ this file's tests compile, for tests/cute_cpp/prefetch.py (same calls, cached)."""
    _cpp_traits()
    _cpp_atoms()


@pytest.mark.parametrize("name", OPS)
def test_atom_layouts_equal_cute(name):
    atom = make_copy_atom(name, _MINE_T[_dtype(name)])
    mine = [atom.layout_src_tv, atom.layout_dst_tv, atom.layout_ref_tv]
    assert [str(x) for x in mine] == [cute_text(g) for g in _cpp_atoms()[name].split("\n")]
