"""``explain(design)``: what a GEMM design will cost before it runs: shared memory, registers
per thread (estimated, and counted in the compiled cubin when NVRTC is there), bank
conflicts of every shared-memory access (:mod:`cutemma.tiled.copy_analysis` over the
design's own copies and layouts), vector widths and the occupancy they allow.

>>> from cutemma.kernels.design import GemmDesign
>>> r = explain(GemmDesign("SM80_16x8x16_F32F16F16F32_TN", (64, 64, 32)), compile=False)
>>> r.smem_bytes, r.blocks_per_sm, r.conflicts["A ldmatrix (smem -> registers)"]
(32768, 7, 1)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

from cutemma.errors import CutemmaError, DesignError, SoftwareAtomWarning
from cutemma.hardware import limits, parse_arch
from cutemma.kernels.design import GemmDesign, checked, family_plan
from cutemma.kernels.sm80.plan import cp_async_copy
from cutemma.kernels.sm90.config import REGISTER_SPLIT
from cutemma.tiled.copy_analysis import bank_conflicts, vector_bits


@dataclass
class DesignReport:
    """The numbers of :func:`explain`; ``str()`` says them in words."""

    design: GemmDesign
    arch: str
    smem_bytes: int
    registers_estimate: int
    registers_compiled: int | None
    conflicts: dict[str, int] = field(default_factory=dict)  # access -> worst n-way
    vectors: dict[str, int] = field(default_factory=dict)  # access -> bits per thread
    blocks_per_sm: int = 1
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        d, lim = self.design, limits(self.arch)
        bm, bn, bk = d.tile
        regs = f"{self.registers_estimate} estimated"
        if self.registers_compiled is not None:
            regs += f", {self.registers_compiled} in the compiled cubin"
        lines = [
            f"design {d.name}: {d.family} family, {d.atom_name} x {d.tiled_mma.atom_layout_mnk}"
            f" (TiledMMA tile {d.tiled_mma.tile_size_mnk}, {d.threads} threads), block tile "
            f"{bm}x{bn}x{bk}",
            f"shared memory: {self.smem_bytes} bytes per block (limit {lim.smem_per_block} on "
            f"{self.arch})",
            f"registers per thread: {regs}",
        ]
        widths = getattr(getattr(d, "_config", None), "wgmma_columns", ())
        if len(widths) > 1:  # wgmmas side by side along N (Sm90Config.wgmma_n)
            lines.append("wgmmas along N per 64 rows: " + " + ".join(f"n{w}" for _, w in widths))
        for what, n in self.conflicts.items():
            lines.append(
                f"{what}: " + ("conflict-free" if n == 1 else f"{n}-way bank conflicts")
                + (f", {self.vectors[what]}-bit vectors" if what in self.vectors else "")
            )  # fmt: skip
        warps = self.blocks_per_sm * d.threads // 32
        lines.append(
            f"occupancy: {self.blocks_per_sm} block(s) per SM, {warps} warps "
            f"({warps * 32 * 100 // lim.threads_per_sm}% of {lim.threads_per_sm} threads)"
        )
        return "\n".join(lines + self.notes)


def explain(design: GemmDesign, arch: str = "sm_90a", compile: bool = True) -> DesignReport:
    """The report of ``design`` on ``arch`` (checked first: a DesignError names a broken
    rule; an atom ``arch`` runs as a software routine gives a SoftwareAtomWarning and a note).
    The accesses are those of the majors the design fixes (:meth:`GemmDesign.major`), K where
    the call decides. ``compile`` (True or False): also count the registers of the compiled
    kernel (NVRTC, no GPU; skipped without it).

    >>> from cutemma.kernels.design import GemmDesign
    >>> from cutemma.tiled import make_tiled_mma
    >>> t = make_tiled_mma("SM80_16x8x16_F32BF16BF16F32_TN", (2, 2, 1))
    >>> print(explain(GemmDesign(t, (128, 128, 32)), compile=False))  # doctest: +ELLIPSIS
    design d_SM80_16x8x16_b128x128x32_...: sm80 family, SM80_16x8x16_F32BF16BF16F32_TN x (2,2,1):(1,2,0) ...
    shared memory: 65536 bytes per block (limit 232448 on sm_90a)
    registers per thread: 232 estimated
    ...
    """
    if not isinstance(compile, bool):
        raise DesignError(f"explain: compile={compile!r}; give True or False")
    note = checked(design, arch, "explain")
    arch = parse_arch(arch)
    if note:
        warnings.warn(note, SoftwareAtomWarning, stacklevel=2)
    lim = limits(arch)
    report = DesignReport(design, arch, design.smem_bytes(), design.registers_estimate(), None)
    if design.family == "sm80":
        _sm80_accesses(design, report)
    else:
        _sm90_accesses(design, report)
    a, b = _majors(design)
    free = [w for w in "AB" if design.major(w) is None]
    report.notes.append(
        f"majors: A {a}-major, B {b}-major"
        + (f" (the call's own for {' and '.join(free)}; K shown)" if free else " (the design's)")
    )
    if note:
        report.notes.append(note)
    if compile:
        report.registers_compiled = _compiled_registers(design, arch)
    regs = report.registers_compiled or report.registers_estimate
    if design.family == "sm90":
        report.blocks_per_sm = 1  # persistent: one CTA per SM, setmaxnreg splits the file
    else:
        by_regs = lim.regs_per_sm // max(1, -(-regs // 8) * 8 * design.threads)
        by_smem = lim.smem_per_sm // max(1, report.smem_bytes)
        by_threads = lim.threads_per_sm // design.threads
        report.blocks_per_sm = max(0, min(by_regs, by_smem, by_threads))
    return report


def _majors(design: GemmDesign) -> tuple[str, str]:
    """The (A, B) majors the report describes: the design's own, K where the call decides."""
    return design.major("A") or "K", design.major("B") or "K"


def _sm80_accesses(design: GemmDesign, report: DesignReport) -> None:
    """cp.async writes and ldmatrix reads of each operand's stage, in the majors the design
    fixes (K where the call decides: what 8/32-bit types always use)."""
    plan = family_plan(design, *_majors(design))
    for which in "AB":
        smem = plan.smem_A if which == "A" else plan.smem_B
        cp = plan.copy(which)
        cpr = cp.thr_layout.shape[0]
        tc = cp_async_copy(cp.k_contiguous, cpr, cp.rows_per_pass, cp.vec, cp.chunk_bytes)
        key = f"{which} cp.async (global -> smem)"
        report.conflicts[key] = bank_conflicts(tc, smem, side="D").worst
        report.vectors[key] = vector_bits(tc, smem, side="D")
        if plan.universal[which]:
            key = f"{which} plain loads (smem -> registers)"
            report.conflicts[key] = _plain_load_conflicts(plan, which)
            report.vectors[key] = 32 if all(plan.regload_wide(which)) else 8 * plan.elem_bytes
            continue
        key = f"{which} ldmatrix (smem -> registers)"
        ld = plan.ldmatrix_copy(which)
        report.conflicts[key] = bank_conflicts(ld, smem, side="S").worst
        report.vectors[key] = 128  # ldmatrix: one 16-byte row per lane
    report.notes.append("epilogue: registers -> global (no shared memory)")


def _plain_load_conflicts(plan: Any, which: str) -> int:
    """Worst distinct 4-byte words one bank serves in a warp's plain shared load (UniversalCopy
    reads; 32 banks of 4 bytes, words of one bank serialise, equal words broadcast)."""
    split, eb, worst = plan.regload(which), plan.elem_bytes, 1
    for w in range(plan.threads // 32):
        for i in range(len(split.consts)):
            words: dict[int, set[int]] = {}
            for t in range(32 * w, 32 * w + 32):
                word = split.at(t, i) * eb // 4
                words.setdefault(word % 32, set()).add(word)
            worst = max(worst, max(len(v) for v in words.values()))
    return worst


def _sm90_accesses(design: GemmDesign, report: DesignReport) -> None:
    """TMA writes and wgmma reads go through the hardware swizzle of the GMMA layout atoms
    (conflict-free by construction); the staging tile's register writes are the one access
    threads make."""
    plan = family_plan(design, *_majors(design), "bf16")
    for which in "AB":
        box = plan.tma[which]
        report.notes.append(
            f"{which}: TMA box {box.box} x {len(box.copies)} ({box.swizzle}), wgmma descriptors "
            "read the same swizzle: no bank conflicts by construction"
        )
    prod, cons = REGISTER_SPLIT[plan.config.consumers]
    report.notes.append(f"setmaxnreg: producer {prod}, consumers {cons} registers per thread")


def _compiled_registers(design: GemmDesign, arch: str) -> int | None:
    """Registers per thread of the compiled kernel (the majors of :func:`_majors`), None
    without NVRTC."""
    try:
        from cutemma.cuda import compile, resource_usage
        from cutemma.cuda.compile import unavailable_reason

        if unavailable_reason() is not None:
            return None
        if design.family == "sm90":
            from cutemma.kernels.sm90.source import gemm_sm90_source

            src = gemm_sm90_source(design.config, design.dtype, *_majors(design), "bf16")
        else:
            from cutemma.kernels.sm80.source import gemm_source

            out = "s32" if design.dtype == "s8" else "f32"
            custom = design if design.custom else None
            src = gemm_source(design.config, design.dtype, *_majors(design), out, design=custom)
        usage = next(iter(resource_usage(compile(src, arch)).values()))
        return int(usage.get("REG", 0)) or None
    except CutemmaError:
        return None
