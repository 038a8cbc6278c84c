"""The verification sweep: every atom's layouts against the ISA, compiled, and run on the GPU.

Three stages per atom (issue 7):

1. ``layout`` — thr_id and tv_layout_A/B/C equal, at every (thread, value), the
   tables :func:`cutemma.mma.ptx_spec.tables_for` builds from the PTX mnemonic
   alone (tcgen05: the ISA gives no per-thread fragments, so this stage skips).
2. ``compile`` — the atom's probe (:func:`cutemma.cuda.probe.probe_for`), batched
   many per NVRTC program, compiles; its SASS contains one of the expected
   tensor-core kinds and touches no local memory.
3. ``hardware`` (``hardware=True``) — on the present GPU, each probe whose
   ``runnable_on`` includes the device's target runs once on random A, B, C
   quantized to the atom's formats; D must equal ``atom.emulate_tiles`` (exactly
   for integers, within the accumulator format's rounding otherwise).

>>> from cutemma.mma import mma_ops
>>> report = verify(list(mma_ops(family='sm61.dp')), progress=False)
>>> report.passed, report.failed
(2, 0)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from cutemma.cuda.batch_compile import CompiledProbe, compile_probes
from cutemma.cuda.probe import ProbeUnavailable
from cutemma.cuda.report import AtomResult, Progress, Report
from cutemma.cuda.tile_values import (
    compare,
    from_container,
    parts,
    random_values,
    to_container,
    tolerance,
)
from cutemma.errors import CutemmaError
from cutemma.mma import make_mma_atom
from cutemma.mma.atom import MmaAtom
from cutemma.mma.operation import Operation
from cutemma.mma.ptx_spec import tables_for
from cutemma.mma.sparse import random_pattern, sparse_operands
from cutemma.mma.traits import mode_table

__all__ = ["Report", "layout_problem", "run_on_gpu", "verify", "with_majors"]

# --- stage 1: layouts against the ISA ------------------------------------------------------------


def layout_problem(atom: MmaAtom) -> str | None:
    """Where ``atom``'s thr_id / tv layouts differ from the PTX ISA tables; None if nowhere.

    Returns ``'undocumented'`` for instructions the ISA describes without
    per-thread fragments (tcgen05).

    >>> layout_problem(make_mma_atom('SM80_16x8x16_F32F16F16F32_TN')) is None
    True
    """
    tab = tables_for(atom.op)
    if tab is None:
        return "undocumented" if atom.op.ptx.startswith("tcgen05") else "ptx_spec has no tables"
    if tuple(atom.shape_mnk) != tab.mnk:
        return f"shape_mnk {atom.shape_mnk}, ISA {tab.mnk}"
    threads = [int(atom.thr_id(t)) for t in range(tab.threads.size)]
    if threads != tab.threads.tolist():
        return (
            f"thr_id {atom.thr_id} gives threads {threads[:8]}..., ISA {tab.threads[:8].tolist()}"
        )
    for operand in "ABC":
        ref = getattr(tab, operand)
        if ref is None:
            continue
        problem = _compare(getattr(atom, f"tv_layout_{operand}"), ref, tab.kind[operand])
        if problem:
            return f"tv_layout_{operand} {problem}"
    return None


def _compare(layout, ref: np.ndarray, kind: str) -> str | None:
    t_off = mode_table(layout.shape[0], layout.stride[0]).reshape(-1)
    v_off = mode_table(layout.shape[1], layout.stride[1]).reshape(-1)
    if (t_off.size, v_off.size) != ref.shape:
        return f"{layout}: {(t_off.size, v_off.size)} (threads, values), ISA {ref.shape}"
    if kind == "descriptor":  # the ISA row of every thread is the whole tile
        if t_off.any() or not np.array_equal(v_off, ref[0]):
            return f"{layout}: a descriptor operand maps every thread to the whole tile"
        return None
    got = t_off[:, None] + v_off[None, :]
    bad = np.argwhere(got != ref)
    if len(bad):
        t, v = bad[0].tolist()
        return f"{layout}: (t,v)=({t},{v}) gives {got[t, v]}, the ISA {ref[t, v]}"
    return None


# --- stage 2: compile, SASS kinds, no local memory -----------------------------------------------


@dataclass
class _Case:
    atom: MmaAtom
    compiled: CompiledProbe
    tiles: tuple
    buffers: tuple = ()


def _inputs(atom: MmaAtom, rng: np.random.Generator) -> tuple:
    m, n, k = atom.shape_mnk
    A = random_values(atom.val_type_A, (m, k), rng)
    if atom.sparsity is not None:  # a dense A with the 2:4 (tf32 1:2) pattern it encodes
        A = random_pattern(A, atom.sparsity, rng)
    B = random_values(atom.val_type_B, (n, k), rng)
    C = random_values(atom.val_type_C, (m, n), rng)
    return A, B, C


def _torch_tensor(torch, array: np.ndarray, device: str):
    # The launcher lets an unsigned 'bits' pointer take any dtype of its width, and
    # torch's uint16 support is thin: move 16-bit containers as int16.
    if array.dtype == np.uint16:
        array = array.view(np.int16)
    return torch.from_numpy(np.ascontiguousarray(array)).to(device)


def run_on_gpu(cases: Sequence[_Case], progress: Progress | None, device: int = 0) -> list:
    """Launch every case once, then compare; returns [(ok, max_err, why)] in order.

    Needs torch and a GPU; :func:`verify` with ``hardware=True`` builds the cases:

    >>> from cutemma.mma import mma_ops
    >>> ops = list(mma_ops(family='sm80.f16'))
    >>> report = verify(ops, hardware=True, progress=False)  # doctest: +SKIP
    >>> report.failed  # doctest: +SKIP
    0
    """
    import torch  # before cutemma touches the driver (notes/CUDA.md)

    from cutemma.cuda.launch import load_kernel

    dev = f"cuda:{device}"
    pending = []
    for case in cases:
        A, B, C = case.tiles
        at = case.atom
        ins = [
            to_container(t, x)
            for t, x in zip((at.val_type_A, at.val_type_B, at.val_type_C), (A, B, C), strict=True)
        ]
        m, n, _ = at.shape_mnk
        d_host = np.zeros(
            m * n * parts(at.val_type_D), dtype=to_container(at.val_type_D, np.zeros((m, n))).dtype
        )
        extra = []
        if at.sparsity is not None:  # the probe reads packed A and the sp-meta words
            packed, meta = sparse_operands(at, A)
            ins[0] = to_container(at.val_type_A, packed)
            extra.append(meta.view(np.int32))
        tensors = [_torch_tensor(torch, x, dev) for x in (*ins, d_host, *extra)]
        probe = case.compiled.probe
        try:
            kernel = load_kernel(case.compiled.cubin, probe.kernel_name)
            kernel(*tensors, grid=1, block=probe.threads, shared_mem=probe.shared_bytes)
            pending.append((case, tensors[3], None))
        except CutemmaError as err:
            pending.append((case, None, f"launch: {err}"))
    torch.cuda.synchronize()
    results = []
    for case, d_tensor, why in pending:
        if why is None:
            results.append(_check_case(case, d_tensor))
        else:
            results.append((False, math.nan, why))
        if progress:
            progress.advance()
    return results


def _check_case(case: _Case, d_tensor) -> tuple[bool, float, str]:
    at = case.atom
    m, n, _ = at.shape_mnk
    raw = d_tensor.cpu().numpy()
    if raw.dtype == np.int16:
        raw = raw.view(np.uint16)
    got = from_container(at.val_type_D, raw, m, n)
    A, B, C = case.tiles
    want = at.emulate_tiles(A, B, C)
    tol = tolerance(at, A, B, C)
    ok, max_err = compare(at, got, want, tol)
    if ok:
        return ok, max_err, ""
    where = wrong_entries(got, want, tol) if at.val_type_D.kind != "gauss" else ""
    return ok, max_err, f"D differs from emulate_tiles (max |error| {max_err:.3g}){where}"


def wrong_entries(got, want, tol) -> str:
    """Where a D tile is wrong, for the failure message: count, rows, columns, first (m, n).

    >>> wrong_entries(np.eye(3), np.zeros((3, 3)), None)
    '; wrong at 3 of 9 (m, n): rows [0, 1, 2], columns [0, 1, 2], first (0, 0)'
    """
    got, want = np.asarray(got), np.asarray(want)
    if tol is None:
        bad = got.astype(np.int64) != want.astype(np.int64)
    else:
        err = np.abs(np.asarray(got, np.complex128) - np.asarray(want, np.complex128))
        bad = ~(np.where(np.isnan(got) & np.isnan(want), 0.0, err) <= tol)
    pos = np.argwhere(bad)
    if not len(pos):
        return ""
    rows, cols = sorted({int(r) for r in pos[:, 0]}), sorted({int(c) for c in pos[:, 1]})
    return (
        f"; wrong at {len(pos)} of {bad.size} (m, n): rows {rows}, columns {cols}, "
        f"first {tuple(int(x) for x in pos[0])}"
    )


# --- the sweep ----------------------------------------------------------------------------------


def with_majors(ops: Iterable[Operation]) -> list[Operation]:
    """``ops`` plus, for each GMMA op, its MN-major variants the catalog accepts.

    The catalog lists each GMMA name once, K-major (its default parameters); A in
    shared memory and B may also be MN-major where the type allows (PTX ISA
    9.7.15.5.1: transposes only for .f16/.bf16). A variant the catalog refuses
    (AtomError: type K-major only, or A in registers) is left out.

    >>> from cutemma.mma import mma_op
    >>> [op.name for op in with_majors([mma_op('SM90_64x8x16_F16F16F16_RS')])]
    ['SM90_64x8x16_F16F16F16_RS', 'SM90_64x8x16_F16F16F16_RS<K,MN>']
    """
    from cutemma.errors import AtomError
    from cutemma.mma import mma_op

    out = []
    for op in ops:
        out.append(op)
        if op.param("a_major") is None or op.ptx.startswith("tcgen05"):
            continue
        base = op.name.split("<", 1)[0]
        for a_major, b_major in (("K", "MN"), ("MN", "K"), ("MN", "MN")):
            if (a_major, b_major) == (op.param("a_major"), op.param("b_major")):
                continue
            try:
                variant = mma_op(base, a_major=a_major, b_major=b_major)
            except AtomError:
                continue
            if variant.name != op.name:
                out.append(variant)
    return out


def _atoms(items: Iterable) -> list[MmaAtom]:
    out = []
    for x in items:
        out.append(x if isinstance(x, MmaAtom) else make_mma_atom(x))
    return out


def _probe(atom: MmaAtom):
    from cutemma.cuda.probe import probe_for

    return probe_for(atom.op, atom)  # honours a caller's (possibly altered) traits


def verify(
    ops: Iterable[Operation | MmaAtom],
    hardware: bool = False,
    progress: bool = True,
    device: int = 0,
    seed: int = 0,
    on_stage: Callable[[str], None] | None = None,
    compile: bool = True,
) -> Report:
    """Check layouts and compiled probes of ``ops`` (Operations or atoms); with ``hardware``, run them.

    >>> from cutemma.mma import mma_op
    >>> r = verify([mma_op('SM80_16x8x8_F32TF32TF32F32_TN')], progress=False)
    >>> r.atoms[0].stages
    {'layout': 'pass', 'compile': 'pass'}

    ``compile=False`` runs the layout stage alone (for a machine without NVRTC):

    >>> verify([mma_op('SM61_DP4A')], progress=False, compile=False).stages_run
    ('layout',)
    """
    start = time.perf_counter()
    clock = _StageClock()
    atoms = _atoms(ops)
    results = {a.name: AtomResult(a.name, a.op.family) for a in atoms}
    for atom in atoms:
        problem = layout_problem(atom)
        res = results[atom.name]
        if problem == "undocumented":
            res.stages["layout"] = "skip"
        elif problem:
            res.fail("layout", problem)
        else:
            res.stages["layout"] = "pass"
    clock.lap("layout")
    if not compile:  # layouts only (no NVRTC here): the other stages are not run at all
        for res in results.values():
            if res.stages.get("layout") == "skip":  # nothing at all was checked
                res.status, res.detail = "skip", "layout: the PTX ISA gives no fragments"
        report = Report(list(results.values()), stages_run=("layout",))
        report.wall_s = time.perf_counter() - start
        report.stage_s = clock.laps
        return report
    probes = {}
    for atom in atoms:
        try:
            probes[atom.name] = _probe(atom)
        except ProbeUnavailable as err:
            results[atom.name].skip("compile", str(err))
        except CutemmaError as err:
            results[atom.name].fail("compile", f"no probe: {err}")
    bar = Progress(len(probes), "compile", progress)
    for c in compile_probes(list(probes.values()), progress=bar):
        res = results[c.probe.op.name]
        if c.problem:
            res.fail("compile", c.problem)
        else:
            res.stages["compile"] = "pass"
    clock.lap("compile")
    report = Report(list(results.values()))
    if hardware:
        _hardware_stage(atoms, probes, results, progress, device, seed, clock)
        report.hardware = True
        report.device = _device_name(device)
    report.wall_s = time.perf_counter() - start
    report.stage_s = clock.laps
    return report


class _StageClock:
    """Seconds spent in each stage, for the report."""

    def __init__(self):
        self.laps: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.laps[stage] = self.laps.get(stage, 0.0) + now - self._t
        self._t = now


def _device_name(device: int) -> str:
    try:
        import torch

        return f"{torch.cuda.get_device_name(device)} ({_device_arch(device)})"
    except Exception:  # noqa: BLE001 - a name is only decoration
        return _device_arch(device)


def _device_arch(device: int) -> str:
    from cutemma.cuda.launch import device_arch

    return device_arch(device)


def _hardware_stage(atoms, probes, results, progress, device, seed, clock) -> None:
    arch = _device_arch(device)
    by_name = {a.name: a for a in atoms}
    runnable = []
    for name, probe in probes.items():
        res = results[name]
        if res.status == "fail":
            continue
        if arch not in probe.runnable_on:
            res.skip(
                "hardware",
                f"not runnable on {arch} (runs on {probe.runnable_on or 'none: compile-only'})",
            )
            continue
        runnable.append(probe)
    # The same source lowers differently per target (sm_89's fp8 mma.sync is F2FP + HMMA on
    # sm_90a), so for the GPU present only "no local memory" is checked, not the SASS kind.
    runnable = [p if p.arch == arch else replace(p, sass_kinds=()) for p in runnable]
    bar = Progress(len(runnable), "build", progress)
    compiled = compile_probes(runnable, arch=arch, progress=bar)
    clock.lap("build")
    rng = np.random.default_rng(seed)
    cases = []
    for c in compiled:
        res = results[c.probe.op.name]
        if c.problem:
            res.fail("hardware", f"compile for {arch}: {c.problem}")
            continue
        atom = by_name[c.probe.op.name]
        cases.append(_Case(atom, c, _inputs(atom, rng)))
    bar = Progress(len(cases), "run", progress)
    for case, (ok, max_err, why) in zip(cases, run_on_gpu(cases, bar, device), strict=True):
        res = results[case.atom.name]
        res.max_err = None if math.isnan(max_err) else max_err
        clock.lap("run")
        if ok:
            res.stages["hardware"] = "pass"
        else:
            res.fail("hardware", why)
