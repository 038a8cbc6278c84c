"""Probe kernels: one instruction of one atom, run once on a whole tile.

A :class:`Probe` is the CUDA C++ text of a kernel that loads the atom's A, B and
C tiles into place (registers through the traits layouts, or shared memory in a
canonical layout plus a descriptor for GMMA/UMMA), executes the instruction
once, and stores D through the C layout. The verify sweep compiles many probes
in one NVRTC program and launches each on the GPU that can run it.

Kernel signature contract, shared by every probe::

    extern "C" __global__ void NAME(const A_T* A, const B_T* B, const C_T* C, D_T* D)

A is the atom's M x K tile at offset ``m + k*M``, B the N x K tile at
``n + k*N``, C and D the M x N tile at ``m + n*M`` (CuTe's coordinate orders).
Element containers have the value type's width: 16-bit floats as ``uint16_t``
bits, fp8 / int8 as ``uint8_t``, tf32 / f32 as ``float``, f64 as ``double``, s32
as ``int32_t``, complex f64 as two ``double`` (re, im). Sub-byte types (s4/u4,
e2m1 ...) travel one element per ``uint8_t`` (the low bits); b1 travels one bit
per ``uint8_t`` too — the probe packs them into registers as the register
arrays need (see :func:`element_container`).

>>> from cutemma.mma import mma_op
>>> p = probe_for(mma_op('SM80_16x8x16_F32F16F16F32_TN'))
>>> p.arch, p.sass_kinds, p.threads
('sm_80', ('HMMA',), 32)
"""

from __future__ import annotations

import importlib

from cutemma.cuda.probe_kernel import Probe, ProbeUnavailable
from cutemma.mma.operation import Operation

__all__ = ["Probe", "ProbeUnavailable", "check_ptx_isa", "probe_for"]


def probe_for(op: Operation, atom=None) -> Probe:
    """The probe kernel of ``op``: warp-level here, GMMA / tcgen05 in their modules.

    ``atom`` (an MmaAtom of ``op``) overrides the catalog's traits, so a deliberately
    altered layout reaches the kernel and the hardware can refute it.

    >>> from cutemma.mma import mma_op
    >>> probe_for(mma_op('SM61_DP4A')).sass_kinds
    ('IDP',)
    """
    if not isinstance(op, Operation):
        from cutemma.errors import AtomError

        raise AtomError(f"probe_for: expected an Operation (cutemma.mma_op(name)), got {op!r}")
    check_ptx_isa(op)
    if op.ptx.startswith("wgmma"):
        return _delegate("cutemma.cuda.probe_gmma", op, atom)
    if op.ptx.startswith("tcgen05"):
        return _delegate("cutemma.cuda.probe_umma", op, atom)
    from cutemma.cuda.codegen import warp_probe

    return warp_probe(op, atom)


def check_ptx_isa(op: Operation) -> None:
    """Raise :class:`ProbeUnavailable` if ``op`` needs a newer PTX ISA than NVRTC reads.

    >>> from cutemma.mma import mma_op
    >>> check_ptx_isa(mma_op('SM80_16x8x16_F32F16F16F32_TN')) is None
    True
    """
    if op.ptx_isa is None:
        return
    from cutemma.cuda.compile import nvrtc_version, ptx_isa_version

    have = ptx_isa_version()
    if have < op.ptx_isa:
        need = ".".join(map(str, op.ptx_isa))
        raise ProbeUnavailable(
            f"{op.name}: `{op.ptx}` needs PTX ISA {need} (NVRTC {op.ptx_isa[0] + 4}."
            f"{op.ptx_isa[1]} or newer); this NVRTC {'.'.join(map(str, nvrtc_version()))} "
            f"reads PTX ISA {'.'.join(map(str, have))}"
        )


def _delegate(module: str, op: Operation, atom) -> Probe:
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:
            raise
        raise ProbeUnavailable(
            f"{op.name}: its probe is built by {module}.make_probe, and {module} is not "
            f"installed in this checkout; only register-sourced atoms "
            f"(mma.sync, dp4a/dp2a, fma) have probes here"
        ) from None
    return mod.make_probe(op, atom)
