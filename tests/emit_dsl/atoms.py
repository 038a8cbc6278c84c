"""Every catalog atom emitted for CuTe DSL: the DSL cases of those it has an op for, the
EmitError of the rest (shared by the tests and notes/dsl_atoms.md's generator)."""

from __future__ import annotations

from functools import cache

from cutemma.copy import catalog as copy_catalog
from cutemma.copy import make_copy_atom
from cutemma.emit.dsl import dsl_arch, to_cute_dsl
from cutemma.errors import EmitError
from cutemma.mma import catalog
from emit_dsl.dsl_run import DslCase

MMA_FIELDS = ("x.thr_id", "x.shape_mnk", "x.tv_layout_A", "x.tv_layout_B", "x.tv_layout_C")
COPY_FIELDS = ("x.thr_id", "x.layout_src_tv", "x.layout_dst_tv")

# the value type each copy family is emitted with (one its atoms all take)
COPY_DTYPE = {
    "sm75.ldsm": "f16",
    "sm90.stsm": "f16",
    "sm80.cp_async": "f16",
    "sm100.tmem_load": "f32",
    "sm100.tmem_store": "f32",
    "sm100.ldsm8": "u8",
    "sm100.stsm8": "u8",
    "sm100.utccp": "f32",
    "sm100.global256": "f32",
}


def copy_dtype(op) -> str:
    if op.family == "universal":
        return {8: "uint8_t", 16: "f16"}.get(dict(op.params).get("bits", 16), "f32")
    return COPY_DTYPE.get(op.family, "f16")


@cache
def mma_atoms() -> dict:
    """name -> (atom, DslCase or EmitError)."""
    out = {}
    for op in catalog.mma_ops():
        atom = catalog.make_mma_atom(op)
        key = f"mma/{op.name}"
        try:
            out[key] = (atom, DslCase(key, to_cute_dsl(atom), MMA_FIELDS, dsl_arch(atom)))
        except EmitError as e:
            out[key] = (atom, e)
    return out


@cache
def copy_atoms() -> dict:
    out = {}
    for op in copy_catalog.copy_ops():
        key = f"copy/{op.name}"
        try:
            atom = make_copy_atom(op.name, copy_dtype(op))
        except Exception as e:  # noqa: BLE001 - an atom that takes no such dtype: listed as such
            out[key] = (None, e)
            continue
        try:
            out[key] = (atom, DslCase(key, to_cute_dsl(atom), COPY_FIELDS, dsl_arch(atom)))
        except EmitError as e:
            out[key] = (atom, e)
    return out
