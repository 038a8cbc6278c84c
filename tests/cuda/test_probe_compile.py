"""Every atom's probe kernel compiles, with the expected SASS and no local memory (issue 7, acceptance 1).

One sweep (``verify`` without hardware: layouts vs the ISA, then all probes
compiled many per NVRTC program) runs once per module; the tests read its
results per family. Needs NVRTC and cuobjdump from the ``cuda`` extra.
"""

from __future__ import annotations

import pytest
from cuda_skips import needs_cuobjdump, needs_nvrtc
from cute_cpp.prefetch import one_at_a_time

pytestmark = [needs_nvrtc, needs_cuobjdump]

from cutemma.cuda.codegen import mma_asm, warp_probe  # noqa: E402
from cutemma.cuda.probe import Probe, ProbeUnavailable, probe_for  # noqa: E402
from cutemma.cuda.sass import count_instructions, tensor_core_counts  # noqa: E402
from cutemma.mma import families, mma_op, mma_ops  # noqa: E402

FAMILIES = sorted(f.name for f in families())


@pytest.fixture(scope="module")
def sweep():
    from cutemma.cuda.verify import verify

    with one_at_a_time("probe_sweep"):  # the prefetch's sweep fills the cubin cache
        report = verify(mma_ops(), progress=False)
    return {a.name: a for a in report.atoms}


def cpp_prefetch() -> None:
    """The sweep's NVRTC programs into the cubin cache, for tests/cute_cpp/prefetch.py: the
    programs ``verify`` will compile (its probes, batched as ``compile_probes`` batches them),
    compiled on every core; the sweep itself then compiles nothing and checks every probe's
    SASS. (Batched otherwise, the sweep compiles its own: slower, never wrong.)"""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    from cutemma.cuda import verify as sweep_module
    from cutemma.cuda.batch_compile import BATCH, _program
    from cutemma.cuda.compile import unavailable_reason

    with one_at_a_time("probe_sweep", wait=False) as mine:
        if not mine or unavailable_reason() is not None:
            return
        by_arch: dict[str, list] = {}
        for atom in sweep_module._atoms(mma_ops()):
            try:
                probe = sweep_module._probe(atom)
            except Exception:  # noqa: BLE001 - no probe: the sweep reports it
                continue
            by_arch.setdefault(probe.arch, []).append(probe)
        jobs = [
            (_program(ps[i : i + BATCH]), arch)
            for arch, ps in by_arch.items()
            for i in range(0, len(ps), BATCH)
        ]
        # NVRTC holds the GIL: processes (forked: this prefetch process has no other threads)
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(os.cpu_count() or 1, mp_context=ctx) as pool:
            list(pool.map(_compile_quietly, jobs))


def _compile_quietly(job: tuple[str, str]) -> None:
    from cutemma.cuda.compile import compile as nvrtc_compile

    try:
        nvrtc_compile(*job)
    except Exception:  # noqa: BLE001 - the sweep compiles it again and reports it
        pass


def test_every_family_has_atoms():
    assert len(FAMILIES) >= 20, FAMILIES
    for arch in (61, 70, 75, 80, 89, 90, 100, 120):
        assert any(f.startswith(f"sm{arch}.") for f in FAMILIES), arch


@pytest.mark.parametrize("family", FAMILIES)
def test_family_compiles(sweep, family):
    ops = mma_ops(family=family)
    unavailable, failures = [], []
    for op in ops:
        res = sweep[op.name]
        if res.stages.get("compile") == "skip":
            unavailable.append(f"{op.name}: {res.detail}")
        elif res.stages.get("compile") != "pass":
            failures.append(f"{op.name}: {res.detail}")
        if res.stages.get("layout") == "fail":
            failures.append(f"{op.name}: {res.detail}")
    assert not failures, f"{len(failures)} of {len(ops)} fail, first: " + "\n".join(failures[:5])
    if len(unavailable) == len(ops):
        pytest.skip(f"no probe of {family} is built here, e.g. {unavailable[0]}")


def test_newer_ptx_isa_is_refused_by_name_not_by_ptxas():
    # .kind::mxf4nvf4.scale_vec::4X with .ue8m0 came in PTX ISA 9.1 (CUDA 13.1);
    # NVRTC 13.0's ptxas calls it an illegal modifier.
    from cutemma.cuda.compile import ptx_isa_version

    op = mma_op("SM120_16x8x64_F32E2M1E2M1F32UE8M0_TN_VS16")
    assert op.ptx_isa == (9, 1)
    if ptx_isa_version() >= (9, 1):
        assert probe_for(op).arch == "sm_120a"
        return
    with pytest.raises(ProbeUnavailable, match=r"needs PTX ISA 9\.1 .* reads PTX ISA 9\.0"):
        probe_for(op)


def _kernel_sass(probe: Probe) -> str:
    from cutemma.cuda.batch_compile import split_sass
    from cutemma.cuda.compile import compile as nvrtc_compile
    from cutemma.cuda.sass import sass
    from cutemma.cuda.source import FIXED_WIDTH_TYPES

    cubin = nvrtc_compile(FIXED_WIDTH_TYPES + "\n" + probe.source, probe.arch)
    return split_sass(sass(cubin))[probe.kernel_name]


def test_sm70_quadpair_is_emulated_on_sm80():
    # NVRTC 13 has no sm_70; on sm_80 ptxas emulates mma.m8n8k4 (no tensor-core kind).
    probe = probe_for(mma_op("SM70_8x8x4_F32F16F16F32_TN"))
    assert (probe.arch, probe.sass_kinds) == ("sm_80", ())
    counts = count_instructions(_kernel_sass(probe))
    assert tensor_core_counts(_kernel_sass(probe)) == {}, counts
    assert counts.get("SHFL", 0) > 0 and counts.get("FFMA", 0) > 0, counts


@pytest.mark.parametrize(
    "name, kind",
    [
        ("SM80_16x8x16_F32BF16BF16F32_TN", "HMMA"),
        ("SM80_16x8x64_S32S4S4S32_TN", "IMMA"),
        ("SM80_16x8x256_S32U1U1S32_TN_XORPOPC", "BMMA"),
        ("SM90_16x8x16_F64F64F64F64_TN", "DMMA"),
        ("SM89_16x8x32_F32E4M3E5M2F32_TN", "QMMA"),
        ("SM61_DP2A", "IDP"),
        ("SM100_1x2x1_F32F32F32F32", "FFMA2"),
    ],
)
def test_probe_sass_kind(name, kind):
    probe = probe_for(mma_op(name))
    assert kind in probe.sass_kinds
    assert count_instructions(_kernel_sass(probe)).get(kind, 0) >= 1


def test_probe_reads_offsets_of_the_layouts():
    # The thread table of A is the T mode of tv_layout_A; value offsets are constants.
    from cutemma.mma import make_mma_atom
    from cutemma.mma.traits import mode_table

    atom = make_mma_atom("SM80_16x8x16_F16F16F16F16_TN")
    probe = warp_probe(atom.op)
    thr = mode_table(atom.tv_layout_A.shape[0], atom.tv_layout_A.stride[0]).reshape(-1)
    table = f"probe_{atom.name}_a[32] = {{{', '.join(map(str, thr))}}};"
    assert table in probe.source
    val = mode_table(atom.tv_layout_A.shape[1], atom.tv_layout_A.stride[1]).reshape(-1)
    assert f"A[a_base + {val[1]}] << 16" in probe.source


def test_mma_asm_counts_registers():
    from cutemma.errors import CompileError

    op = mma_op("SM80_16x8x8_F16F16F16F16_TN")
    with pytest.raises(CompileError, match="operand A is uint32_t\\[2\\] per thread; got 1"):
        mma_asm(op, ["d0", "d1"], ["a0"], ["b0"], ["c0", "c1"])


def test_mma_asm_wgmma_predicate_and_immediates():
    op = mma_op("SM90_64x8x16_F16F16F16_SS")
    text = mma_asm(op, c=["c0", "c1"], a=["da"], b=["db"], extras={"scale_D": "flag"})
    assert "{%0, %1}, %2, %3, p_scale_D, 1, 1, 0, 0;" in text
    assert '"+r"(c0)' in text and '"l"(da)' in text and '"r"(flag)' in text


def test_probe_for_reports_missing_module(monkeypatch):
    import importlib

    real = importlib.import_module

    def fake(name, *args):
        if name == "cutemma.cuda.probe_umma":
            raise ModuleNotFoundError(name=name)
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", fake)
    op = next(o for o in mma_ops(arch=100) if o.ptx.startswith("tcgen05"))
    with pytest.raises(ProbeUnavailable, match="cutemma.cuda.probe_umma"):
        probe_for(op)


@pytest.mark.parametrize("name", ["codegen", "probe", "verify"])
def test_docstring_examples(name):
    import doctest
    import importlib

    module = importlib.import_module(f"cutemma.cuda.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0, (module.__name__, result)


def test_mma_asm_tensor_memory_operands_are_addresses():
    op = next(o for o in mma_ops(arch=100) if o.a_source == "tmem")
    extras = {e.name: "x" if "[" not in e.cpp else ["x"] * 4 for e in op.extras}
    text = mma_asm(op, a=["ta"], b=["db"], c=["td"], extras=extras)
    assert f"{op.ptx} [%2], [%0], %1," in text
