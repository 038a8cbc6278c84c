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
import multiprocessing
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from cutemma.cuda.probe import ProbeUnavailable
from cutemma.errors import CompileError, CutemmaError
from cutemma.mma import make_mma_atom
from cutemma.mma.atom import MmaAtom
from cutemma.mma.operation import Operation
from cutemma.mma.ptx_spec import tables_for
from cutemma.mma.traits import mode_table
from cutemma.mma.types import NumericType

BATCH = 48  # probes per NVRTC program: big enough to amortise NVRTC start-up, small to bisect


@dataclass
class AtomResult:
    """One atom's outcome: ``status`` is 'pass', 'fail' or 'skip'; ``detail`` says why."""

    name: str
    family: str
    status: str = "pass"
    stages: dict = field(default_factory=dict)
    max_err: float | None = None
    detail: str = ""

    def fail(self, stage: str, why: str) -> None:
        self.stages[stage] = "fail"
        self.status = "fail"
        self.detail = self.detail or f"{stage}: {why}"

    def skip(self, stage: str, why: str) -> None:
        self.stages[stage] = "skip"
        if self.status == "pass" and stage in ("hardware", "compile"):
            self.status = "skip"
            self.detail = self.detail or f"{stage}: {why}"


@dataclass
class Report:
    """The sweep's results, counts and the per-family table.

    >>> r = Report([AtomResult('X', 'f'), AtomResult('Y', 'f', status='fail')], wall_s=1.0)
    >>> r.passed, r.failed, r.skipped
    (1, 1, 0)
    """

    atoms: list[AtomResult]
    wall_s: float = 0.0
    device: str = "cpu (no hardware stage)"
    hardware: bool = False
    stage_s: dict = field(default_factory=dict)

    def _count(self, status: str) -> int:
        return sum(a.status == status for a in self.atoms)

    @property
    def passed(self) -> int:
        return self._count("pass")

    @property
    def failed(self) -> int:
        return self._count("fail")

    @property
    def skipped(self) -> int:
        return self._count("skip")

    def table(self) -> str:
        """Pass / fail / skip per family, failures named below the table."""
        fams: dict[str, Counter] = {}
        for a in self.atoms:
            fams.setdefault(a.family, Counter())[a.status] += 1
        width = max([len(f) for f in fams] + [6])
        lines = [f"{'family':<{width}}  pass  fail  skip"]
        for fam in sorted(fams):
            c = fams[fam]
            lines.append(f"{fam:<{width}}  {c['pass']:4d}  {c['fail']:4d}  {c['skip']:4d}")
        lines.append(
            f"{'total':<{width}}  {self.passed:4d}  {self.failed:4d}  {self.skipped:4d}"
            f"   ({self.wall_s:.1f} s)"
        )
        failures = [a for a in self.atoms if a.status == "fail"]
        lines += [f"FAIL {a.name}: {a.detail}" for a in failures[:50]]
        if len(failures) > 50:
            lines.append(f"... and {len(failures) - 50} more failures")
        return "\n".join(lines)

    def to_json(self) -> dict:
        """The JSON record: device, commit, date, counts, wall time, one entry per atom."""
        return {
            "device": self.device,
            "commit": _commit(),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "hardware": self.hardware,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "wall_s": round(self.wall_s, 2),
            "stage_s": {k: round(v, 2) for k, v in self.stage_s.items()},
            "atoms": [
                {
                    "name": a.name,
                    "family": a.family,
                    "status": a.status,
                    "max_err": a.max_err,
                    "stages": a.stages,
                    **({"detail": a.detail} if a.detail else {}),
                }
                for a in self.atoms
            ],
        }


def _commit() -> str:
    """HEAD's short hash; $CUTEMMA_COMMIT wins (a copied tree without .git, e.g. the GPU machine)."""
    if env := os.environ.get("CUTEMMA_COMMIT"):
        return env
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parent,
            timeout=10,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


class Progress:
    """A one-line progress bar on stderr (silent when ``enabled`` is False)."""

    def __init__(self, total: int, label: str, enabled: bool = True):
        self.total, self.label, self.enabled, self.done = max(total, 1), label, enabled, 0

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.enabled:
            filled = int(30 * self.done / self.total)
            bar = "#" * filled + "." * (30 - filled)
            sys.stderr.write(f"\r{self.label:<9} [{bar}] {self.done}/{self.total}")
            if self.done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


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

_FUNCTION = re.compile(r"^\s*Function : (\S+)", re.M)


def split_sass(sass_text: str) -> dict[str, str]:
    """The SASS of each kernel of a cubin, by kernel name (cuobjdump's ``Function :`` headers).

    >>> split_sass("Function : k1\\n /*0000*/ EXIT ;\\nFunction : k2\\n /*0000*/ NOP ;")['k2']
    ' /*0000*/ NOP ;'
    """
    parts = _FUNCTION.split(sass_text)
    return {parts[i]: parts[i + 1].strip("\n") for i in range(1, len(parts) - 1, 2)}


@dataclass(frozen=True)
class CompiledProbe:
    """A probe's compile outcome: the cubin holding it (None on failure), kinds seen, problem."""

    probe: object
    cubin: object | None
    kinds: dict
    problem: str | None


def _program(probes: Sequence) -> str:
    from cutemma.cuda.source import FIXED_WIDTH_TYPES

    return "\n\n".join([FIXED_WIDTH_TYPES, *(p.source for p in probes)]) + "\n"


def _check_kernel(probe, kernel_sass: str | None, usage: dict) -> tuple[dict, str | None]:
    from cutemma.cuda.sass import count_instructions

    if kernel_sass is None:
        return {}, f"kernel {probe.kernel_name} not found in the cubin's SASS"
    counts = count_instructions(kernel_sass)
    kinds = {k: n for k, n in counts.items() if k.endswith("MMA") or k in probe.sass_kinds}
    local = counts.get("LDL", 0) + counts.get("STL", 0) + usage.get("STACK", 0)
    local += usage.get("LOCAL", 0)
    if probe.sass_kinds and not any(k in counts for k in probe.sass_kinds):
        return (
            kinds,
            f"SASS has none of {probe.sass_kinds} (tensor-core kinds seen: {kinds or 'none'})",
        )
    if local:
        return kinds, (
            f"local memory used (LDL/STL {counts.get('LDL', 0)}/{counts.get('STL', 0)}, "
            f"stack {usage.get('STACK', 0)} B)"
        )
    return kinds, None


def compile_batch(probes: Sequence, arch: str) -> list[CompiledProbe]:
    """Compile ``probes`` as one NVRTC program for ``arch``; bisect to find any that fail.

    >>> from cutemma.cuda.probe import probe_for
    >>> from cutemma.mma import mma_op
    >>> [c.problem for c in compile_batch([probe_for(mma_op('SM61_DP4A'))], 'sm_80')]
    [None]
    """
    from cutemma.cuda.compile import compile as nvrtc_compile
    from cutemma.cuda.sass import resource_usage, sass

    try:
        cubin = nvrtc_compile(_program(probes), arch)
    except CompileError as err:
        if len(probes) == 1:
            first = str(err).splitlines()
            return [CompiledProbe(probes[0], None, {}, "compile error: " + " | ".join(first[:4]))]
        half = len(probes) // 2
        return compile_batch(probes[:half], arch) + compile_batch(probes[half:], arch)
    per_kernel = split_sass(sass(cubin))
    usage = resource_usage(cubin)
    out = []
    for p in probes:
        kinds, problem = _check_kernel(
            p, per_kernel.get(p.kernel_name), usage.get(p.kernel_name, {})
        )
        out.append(CompiledProbe(p, cubin, kinds, problem))
    return out


def _compile_job(job: tuple[str, list]) -> list[CompiledProbe]:
    return compile_batch(job[1], job[0])


def compile_probes(
    probes: Sequence, arch: str | None = None, progress: Progress | None = None, workers: int = 0
) -> list[CompiledProbe]:
    """Compile probes in batches of :data:`BATCH` per program, grouped by target, in parallel.

    ``arch`` overrides every probe's own target (the hardware stage compiles for
    the GPU present). Results come back in the order of ``probes``.
    """
    groups: dict[str, list] = {}
    for p in probes:
        groups.setdefault(arch or p.arch, []).append(p)
    jobs = [
        (target, ps[i : i + BATCH])
        for target, ps in groups.items()
        for i in range(0, len(ps), BATCH)
    ]
    results: dict[str, CompiledProbe] = {}
    # NVRTC holds the GIL, so batches compile in worker processes. Forked where safe;
    # once torch is loaded (its threads make fork risky) from a fresh forkserver.
    n = workers or min(16, os.cpu_count() or 1, len(jobs) or 1)
    ctx = multiprocessing.get_context("forkserver" if "torch" in sys.modules else "fork")
    with ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
        for batch_result in pool.map(_compile_job, jobs):
            for r in batch_result:
                results[r.probe.kernel_name] = r
            if progress:
                progress.advance(len(batch_result))
    return [results[p.kernel_name] for p in probes]


# --- stage 3: hardware ---------------------------------------------------------------------------


def _random_values(t: NumericType, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random values of format ``t``: full range for integers, a spread of magnitudes for floats."""
    if t.kind == "bits":
        return rng.integers(0, 2, shape)
    if t.kind == "int":
        hi = min(int(t.max), 2**20) if t.bits == 32 else int(t.max)
        lo = max(int(t.min), -(2**20)) if t.bits == 32 else int(t.min)
        return rng.integers(lo, hi + 1, shape)
    if t.kind == "complex":
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if t.kind == "gauss":
        out = np.zeros(shape, dtype=t.host)
        for part in ("t0", "t1", "t2"):
            out[part] = rng.standard_normal(shape)
        return out
    scale = 2.0 if t.bits <= 8 else 1.0
    return t.quantize(np.clip(rng.standard_normal(shape) * scale, t.min, t.max))


def to_container(t: NumericType, values: np.ndarray) -> np.ndarray:
    """Tile values of ``t`` as the flat array a probe reads (m + k*M order, container dtype).

    >>> from cutemma.mma.types import numeric_type
    >>> to_container(numeric_type('f16'), np.array([[1.0, 2.0]])).dtype
    dtype('uint16')
    """
    flat = np.asarray(values).reshape(-1, order="F")
    if t.kind in ("complex", "gauss"):
        host = np.ascontiguousarray(flat.astype(t.host))
        return host.view(np.float64)
    q = t.quantize(flat)
    if t.name in ("f64",):
        return q.astype(np.float64)
    if t.name in ("f32", "tf32"):
        return q.astype(np.float32)
    if t.kind in ("int", "bits"):
        if t.bits == 32:
            return q.astype(np.int32)
        if t.bits == 16:
            return q.astype(np.int64).astype(np.uint16)
        return (q.astype(np.int64) & ((1 << t.bits) - 1)).astype(np.uint8)
    host = np.ascontiguousarray(t.to_host(q))
    return host.view(np.uint16 if t.bits == 16 else np.uint8)


def from_container(t: NumericType, data: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The inverse of :func:`to_container` for a D tile: values in ``t``'s compute dtype."""
    data = np.asarray(data)
    if t.kind in ("complex", "gauss"):
        vals = np.ascontiguousarray(data.astype(np.float64)).view(t.host)
    elif t.name in ("f64", "f32", "tf32") or (t.kind == "int" and t.bits == 32):
        vals = data
    else:
        vals = np.ascontiguousarray(data).view(t.host)
    return vals.reshape((rows, cols), order="F")


# Unit roundoff of each accumulator format (2**-mantissa_bits). Atoms with 8-bit-or-narrower
# float inputs and f32 D get 2**-13: tensor cores are not promised to accumulate those in full
# f32 (a loose bound chosen here, not an ISA figure; observed errors are in verify-h100.json).
_EPS = {"f16": 2.0**-10, "bf16": 2.0**-7, "f32": 2.0**-23, "f64": 2.0**-52, "c64": 2.0**-52}
_FP8 = {"e4m3", "e5m2", "e3m2", "e2m3", "e2m1"}


def tolerance(atom: MmaAtom, A, B, C) -> np.ndarray | None:
    """Elementwise bound on |D_gpu - D_ref|; None where D must be exact (integer D).

    Each product and each partial sum may round once in D's format, so the bound
    is ``4 * K * eps * (sum_k |a b| + |c|)`` plus a subnormal floor.
    """
    d = atom.val_type_D
    if d.kind in ("int", "bits"):
        return None
    eps = _EPS.get(d.name, 2.0**-23)
    if atom.val_type_A.name in _FP8 and d.name == "f32":
        eps = 2.0**-13
    mag = _magnitude(atom, A, B, C)
    k = atom.shape_mnk[2]
    return 4 * k * eps * mag + 2.0**-100


def _magnitude(atom: MmaAtom, A, B, C) -> np.ndarray:
    def absval(x, t):
        x = np.asarray(x)
        if t.kind == "gauss":
            return np.abs(x["t0"]) + np.abs(x["t1"]) + np.abs(x["t2"])
        return np.abs(x).astype(np.float64)

    a, b = absval(A, atom.val_type_A), absval(B, atom.val_type_B)
    c = absval(C, atom.val_type_C)
    if atom.val_type_A.kind == "complex":
        a, b = 2 * a, 2 * b  # |re| + |im| bounds
    return a @ b.T + c


def compare(atom: MmaAtom, got, want, tol) -> tuple[bool, float]:
    """(ok, max abs error) of a GPU D tile against the reference."""
    if atom.val_type_D.kind == "gauss":
        diffs = [np.abs(got[p] - want[p]) for p in ("t0", "t1", "t2")]
        err = np.maximum.reduce(diffs)
    elif atom.val_type_D.kind in ("int", "bits"):
        err = np.abs(got.astype(np.int64) - want.astype(np.int64)).astype(np.float64)
    else:
        err = np.abs(np.asarray(got, dtype=np.complex128) - np.asarray(want, dtype=np.complex128))
        err = np.where(np.isnan(got) & np.isnan(want), 0.0, err)
    max_err = float(np.nanmax(err)) if err.size else 0.0
    if tol is None:
        return bool(max_err == 0), max_err
    return bool(np.all(err <= tol)), max_err


@dataclass
class _Case:
    atom: MmaAtom
    compiled: CompiledProbe
    tiles: tuple
    buffers: tuple = ()


def _inputs(atom: MmaAtom, rng: np.random.Generator) -> tuple:
    m, n, k = atom.shape_mnk
    A = _random_values(atom.val_type_A, (m, k), rng)
    B = _random_values(atom.val_type_B, (n, k), rng)
    C = _random_values(atom.val_type_C, (m, n), rng)
    return A, B, C


def _torch_tensor(torch, array: np.ndarray, device: str):
    # The launcher lets an unsigned 'bits' pointer take any dtype of its width, and
    # torch's uint16 support is thin: move 16-bit containers as int16.
    if array.dtype == np.uint16:
        array = array.view(np.int16)
    return torch.from_numpy(np.ascontiguousarray(array)).to(device)


def run_on_gpu(cases: Sequence[_Case], progress: Progress | None, device: int = 0) -> list:
    """Launch every case once, then compare; returns [(ok, max_err, why)] in order."""
    import torch  # before cuda.core touches the driver (notes/CUDA.md)

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
            m * n * _parts(at.val_type_D), dtype=to_container(at.val_type_D, np.zeros((m, n))).dtype
        )
        tensors = [_torch_tensor(torch, x, dev) for x in (*ins, d_host)]
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


def _parts(t: NumericType) -> int:
    return {"complex": 2, "gauss": 3}.get(t.kind, 1)


def _check_case(case: _Case, d_tensor) -> tuple[bool, float, str]:
    at = case.atom
    m, n, _ = at.shape_mnk
    raw = d_tensor.cpu().numpy()
    if raw.dtype == np.int16:
        raw = raw.view(np.uint16)
    got = from_container(at.val_type_D, raw, m, n)
    A, B, C = case.tiles
    want = at.emulate_tiles(A, B, C)
    ok, max_err = compare(at, got, want, tolerance(at, A, B, C))
    return ok, max_err, "" if ok else f"D differs from emulate_tiles (max |error| {max_err:.3g})"


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
    from cutemma.cuda.codegen import warp_probe
    from cutemma.cuda.probe import probe_for

    if atom.op.a_source == "reg" and atom.op.b_source == "reg":
        return warp_probe(atom.op, atom)  # honours a caller's (possibly altered) traits
    return probe_for(atom.op)


def verify(
    ops: Iterable[Operation | MmaAtom],
    hardware: bool = False,
    progress: bool = True,
    device: int = 0,
    seed: int = 0,
    on_stage: Callable[[str], None] | None = None,
) -> Report:
    """Check layouts and compiled probes of ``ops`` (Operations or atoms); with ``hardware``, run them.

    >>> from cutemma.mma import mma_op
    >>> r = verify([mma_op('SM80_16x8x8_F32TF32TF32F32_TN')], progress=False)
    >>> r.atoms[0].stages
    {'layout': 'pass', 'compile': 'pass'}
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
