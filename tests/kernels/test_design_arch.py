"""Designs against architectures (issues 32 and 34): one parser of architecture names for the
API and the CLI, the sm_100 / sm_120 limits, the warning for an atom the target runs as a
software routine, explain agreeing with check for every major, default tiles that pass their
own rules, and the majors a GMMA atom fixes."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_cuobjdump, needs_nvrtc  # noqa: E402

from cutemma.errors import ArchError, CutemmaError, DesignError, SoftwareAtomWarning  # noqa: E402
from cutemma.hardware import LIMITS, limits, parse_arch  # noqa: E402
from cutemma.kernels import GemmDesign, check, explain, failed_rules  # noqa: E402
from cutemma.kernels.design import (  # noqa: E402
    SM80_ATOMS,
    _call_majors,
    software_routine,
)
from cutemma.kernels.sm80.plan import ATOMS, smem_layout  # noqa: E402
from cutemma.layout import Layout  # noqa: E402
from cutemma.tiled import make_tiled_mma  # noqa: E402

F16 = "SM80_16x8x16_F32F16F16F32_TN"
SM70 = "SM70_8x8x4_F32F16F16F32_NT"
KB = 1024


# ---------------------------------------------------------------- a. limits of sm_100, sm_120
def test_blackwell_limits_are_the_programming_guides():
    """CUDA C++ Programming Guide, "Technical Specifications per Compute Capability": 10.0
    228 KB shared memory per SM, 227 KB per block (opt-in), 2048 threads per SM; 12.0 100 KB
    per SM, 99 KB per block, 1536 threads per SM; 64K registers per SM, 255 per thread."""
    for arch in ("sm_100", "sm_100a", "sm_103a"):
        lim = limits(arch)
        assert (lim.smem_per_sm, lim.smem_per_block, lim.threads_per_sm) == (
            228 * KB,
            227 * KB,
            2048,
        )
    for arch in ("sm_120", "sm_120a", "sm_121a"):
        lim = limits(arch)
        assert (lim.smem_per_sm, lim.smem_per_block, lim.threads_per_sm) == (
            100 * KB,
            99 * KB,
            1536,
        )
    assert {(lim.regs_per_sm, lim.regs_per_thread) for lim in LIMITS.values()} == {(65536, 255)}


def test_check_on_sm_120a_uses_its_smaller_shared_memory():
    # 4 stages of (128 + 128) x 64 f16: 128 KB, inside sm_90a's and sm_100a's 227 KB and
    # outside sm_120's 99 KB
    d = GemmDesign(make_tiled_mma(F16, (2, 2, 1)), (128, 128, 64), stages=4)
    assert d.smem_bytes() == 4 * 256 * 64 * 2
    assert failed_rules(d, "sm_90a") == []
    assert failed_rules(d, "sm_100a") == []
    assert failed_rules(d, "sm_120a") == ["smem_limit"]
    with pytest.raises(DesignError, match=f"the sm_120a limit is {99 * KB}"):
        check(d, "sm120a")


# ---------------------------------------------------------------- b. one arch parser
@pytest.mark.parametrize(
    ("text", "target"),
    [("sm_90a", "sm_90a"), ("sm90a", "sm_90a"), ("SM_90A", "sm_90a"), ("90a", "sm_90a"),
     ("sm_90", "sm_90"), ("sm90", "sm_90"), ("sm_80", "sm_80"), ("sm80", "sm_80"),
     ("sm_120a", "sm_120a"), ("sm120a", "sm_120a"), ("sm_100a", "sm_100a"), (" sm_89 ", "sm_89")],
)  # fmt: skip
def test_every_spelling_reads_as_the_compile_target(text, target):
    assert parse_arch(text) == target
    d = GemmDesign(F16, (64, 64, 32))
    assert check(d, text) is d and failed_rules(d, text) == []


@pytest.mark.parametrize("bad", [None, 90, 9.0, "", "sm_999", "sm_80a", "hopper", "sm_9O"])
def test_an_unknown_architecture_is_refused_naming_the_known_ones(bad):
    d = GemmDesign(F16, (64, 64, 32))
    for call in (lambda: check(d, bad), lambda: failed_rules(d, bad),
                 lambda: explain(d, bad, compile=False)):  # fmt: skip
        with pytest.raises(ArchError) as info:
            call()
        assert isinstance(info.value, CutemmaError)
        assert "sm_90a" in str(info.value) and "sm_120a" in str(info.value)
    with pytest.raises(ArchError):
        limits(bad)


def test_wgmma_needs_the_a_target():
    """wgmma is an sm_90a feature (PTX ISA: requires sm_90a): sm_90 and sm_100a are refused."""
    d = GemmDesign("SM90_64x128x16_F32BF16BF16_SS")
    assert failed_rules(d, "sm90a") == []
    assert failed_rules(d, "sm_90") == ["atom_arch"] and failed_rules(d, "sm_100a") == ["atom_arch"]


def test_the_cli_reads_arch_with_the_same_parser():
    import contextlib
    import io

    from cutemma.cli import main

    for spelling in ("sm_999", "sm_80a", "90b"):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            status = main(["gemm", "--sass", "--arch", spelling])
        err = err.getvalue()
        assert status == 2 and err.count("\n") == 1
        assert "--arch" in err and "sm_90a" in err and "sm_120a" in err, err
    from cutemma.cli.gemm import gemm_arch

    assert {gemm_arch(a, "bf16") for a in ("sm_90a", "sm90a", "SM_90A", "90a")} == {"sm_90a"}


# ---------------------------------------------------------------- c. software-routine atoms
def _warned(call) -> list[str]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in seen if issubclass(w.category, SoftwareAtomWarning)]


def test_sm70_atoms_on_sm_90a_warn_from_check_and_explain():
    d = GemmDesign(make_tiled_mma(SM70, Layout((2, 2), (2, 1))), (32, 32, 32))
    for call in (lambda: check(d, "sm_90a"), lambda: explain(d, "sm_90a", compile=False)):
        (msg,) = _warned(call)
        assert "SM70_8x8x4" in msg and "software routine" in msg and "sm_90a" in msg
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = explain(d, "sm_90a", compile=False)
    assert any("software routine" in n for n in report.notes)


def test_sm80_atoms_on_sm_90a_and_sm70_on_sm_70_do_not_warn():
    assert _warned(lambda: check(GemmDesign(make_tiled_mma(F16, (2, 2, 1)), (64, 64, 32)))) == []
    assert _warned(lambda: explain(GemmDesign(F16, (64, 64, 32)), compile=False)) == []
    assert software_routine(SM70, "sm_70") is None and software_routine(SM70, "sm_75") is None
    assert software_routine(F16, "sm_90a") is None
    # the sm80 family's kernel needs cp.async (sm_80): on sm_70 the design is refused by a
    # rule, with no warning about its atom
    d = GemmDesign(SM70, (16, 16, 32))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(DesignError, match="rule atom_arch: the sm80 family's cp.async"):
            check(d, "sm_70")
    assert not [w for w in seen if issubclass(w.category, SoftwareAtomWarning)]


# one f16 m8n8k4 written from the PTX ISA's syntax, not from cutemma's code generator
_M8N8K4 = r"""
extern "C" __global__ void m8n8k4(unsigned* p) {
  unsigned a0 = p[threadIdx.x], a1 = p[threadIdx.x + 32];
  unsigned b0 = p[threadIdx.x + 64], b1 = p[threadIdx.x + 96];
  float d[8];
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 "
               "{%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%12,%12,%12,%12,%12,%12,%12};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]),
                 "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7])
               : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "f"(0.f));
  for (int i = 0; i < 8; i++) ((float*)p)[threadIdx.x * 8 + i] = d[i];
}
"""


@needs_nvrtc
@needs_cuobjdump
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90a", "sm_120a"])
def test_the_table_agrees_with_the_compiled_sass(arch):
    """NATIVE_ON against the compiler: HMMA where the table says the tensor cores run
    m8n8k4, a CALL and no HMMA where it says a software routine does."""
    from cutemma.cuda import compile, count_instructions, sass

    counts = count_instructions(sass(compile(_M8N8K4, arch)))
    emulated = software_routine(SM70, arch) is not None
    assert (counts.get("HMMA", 0) == 0) == emulated, counts
    assert (counts.get("CALL", 0) > 0) == emulated, counts


# ---------------------------------------------------------------- d. explain for every major
def _major_designs():
    """16-bit sm80 designs fixing each operand's major through its smem layout or its
    ldmatrix atom (or leaving it to the call), as the issue built them."""
    t = make_tiled_mma(F16, (2, 2, 1))
    bm, bn, bk = 128, 128, 32
    ways_a = {
        "call": {},
        "smem K": {"smem_a": smem_layout(bm, bk, "K")},
        "smem MN": {"smem_a": smem_layout(bm, bk, "MN")},
        "ldsm N": {"copy_a": "SM75_U32x4_LDSM_N"},
        "ldsm T": {"copy_a": "SM75_U16x8_LDSM_T"},
    }
    ways_b = {
        "call": {},
        "smem K": {"smem_b": smem_layout(bn, bk, "K")},
        "smem MN": {"smem_b": smem_layout(bn, bk, "MN")},
        "ldsm N": {"copy_b": "SM75_U32x4_LDSM_N"},
        "ldsm T": {"copy_b": "SM75_U16x8_LDSM_T"},
    }
    for (na, a), (nb, b) in ((x, y) for x in ways_a.items() for y in ways_b.items()):
        yield f"A {na}, B {nb}", GemmDesign(t, (bm, bn, bk), **a, **b)  # fmt: skip


@pytest.mark.parametrize("name", [n for n, _ in _major_designs()])
def test_explain_agrees_with_check_for_every_major(name):
    d = dict(_major_designs())[name]
    if failed_rules(d):
        pytest.skip(f"check refuses it: {failed_rules(d)}")
    r = explain(check(d), compile=False)
    want_a = "M" if ("MN" in name.split(",")[0] or "ldsm T" in name.split(",")[0]) else None
    assert d.major("A") == (want_a or (None if "call" in name.split(",")[0] else "K"))
    assert set(r.conflicts) == {f"{w} {s}" for w in "AB"
                                for s in ("cp.async (global -> smem)", "ldmatrix (smem -> registers)")}  # fmt: skip


def test_the_issues_m_major_designs_explain():
    t = make_tiled_mma(F16, (2, 2, 1))
    for d in (GemmDesign(t, tile=(128, 128, 32), smem_a=smem_layout(128, 32, "MN")),
              GemmDesign(t, (128, 128, 32), copy_a="SM75_U16x8_LDSM_T")):  # fmt: skip
        r = explain(check(d), compile=False)
        assert d.major("A") == "M" and r.conflicts["A ldmatrix (smem -> registers)"] >= 1


# ---------------------------------------------------------------- e. default tiles
def _seeds():
    """The seeds' TiledMMAs (tests/kernels/test_design.py builds SM70 the same way)."""
    return {
        "SM70 8x8x4 (2,2)": make_tiled_mma(SM70, Layout((2, 2), (2, 1))),
        "SM70 8x8x4 (2,2) with its permutation tile": make_tiled_mma(
            SM70, Layout((2, 2), (2, 1)), (Layout((4, 4, 2), (1, 8, 4)), 32, 4)
        ),
        "SM80 16x8x16 (2,2,1)": make_tiled_mma(F16, (2, 2, 1)),
        "SM80 tf32 (2,1,1)": make_tiled_mma(ATOMS["tf32"], (2, 1, 1)),
        "GMMA 64x128 1 warpgroup": make_tiled_mma("SM90_64x128x16_F32BF16BF16_SS<K,K>"),
        "GMMA 64x256 2 warpgroups": make_tiled_mma("SM90_64x256x16_F32BF16BF16_SS<K,K>", (2, 1, 1)),
        "GMMA 64x128 RS 2 warpgroups": make_tiled_mma(
            "SM90_64x128x16_F32F16F16_RS<K,K>", (2, 1, 1)
        ),
    }


def _families():
    """One TiledMMA of each runnable atom family, 1 and several warps (warpgroups)."""
    out = {}
    for name in sorted(SM80_ATOMS):
        for layout in ((1, 1, 1), (2, 2, 1)):
            out[f"{name} {layout}"] = make_tiled_mma(name, layout)
    for atom in ("SM90_64x128x16_F32BF16BF16_SS<K,K>", "SM90_64x64x16_F32F16F16_SS<K,K>",
                 "SM90_64x128x8_F32TF32TF32_SS_TN", "SM90_64x128x32_F32E4M3E4M3_SS_TN",
                 "SM90_64x64x16_F32BF16BF16_RS<K,K>", "SM90_64x64x16_F16F16F16_SS<K,K>"):  # fmt: skip
        for wg in (1, 2):
            out[f"{atom} x{wg}"] = make_tiled_mma(atom, (wg, 1, 1))
    return out


@pytest.mark.parametrize("name", sorted(_seeds()))
def test_a_seeds_default_tile_passes_its_own_rules(name):
    t = _seeds()[name]
    d = GemmDesign(t)
    assert failed_rules(d, "sm_90a") == [], d.tile
    assert all(x % s == 0 for x, s in zip(d.tile, t.tile_size_mnk))


@pytest.mark.parametrize("name", sorted(_families()))
def test_every_runnable_familys_default_design_passes_check(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SoftwareAtomWarning)
        d = check(GemmDesign(_families()[name]), "sm_90a")
    assert all(x % s == 0 for x, s in zip(d.tile, d.tiled_mma.tile_size_mnk))


def test_the_default_is_the_largest_tile_that_passes():
    """SM70 (2,2) at 128x128x32 holds 8 x 8 quadpair atoms per thread, 512 f32 accumulators:
    past 255 registers. No multiple of its 16x16x4 tile with a larger M x N passes."""
    t = _seeds()["SM70 8x8x4 (2,2)"]
    d = GemmDesign(t)
    assert "registers" in failed_rules(GemmDesign(t, (128, 128, 32)))
    for bm in range(16, 129, 16):
        for bn in range(16, 129, 16):
            if bm * bn > d.tile[0] * d.tile[1]:
                assert failed_rules(GemmDesign(t, (bm, bn, d.tile[2]))), (bm, bn)
    # a TiledMMA whose built-in size passes keeps it
    assert failed_rules(GemmDesign(make_tiled_mma(F16, (2, 2, 1)), (128, 128, 32))) == []
    assert GemmDesign(make_tiled_mma(F16, (2, 2, 1))).tile == (128, 128, 32)


# ---------------------------------------------------------------- f. the majors a GMMA atom fixes
@pytest.mark.parametrize(
    ("atom", "majors"),
    [("SM90_64x64x16_F32F16F16_SS<MN,MN>", ("M", "N")), ("SM90_64x64x16_F32F16F16_SS<K,MN>", ("K", "N")),
     ("SM90_64x64x16_F32F16F16_SS<MN,K>", ("M", "K")), ("SM90_64x64x16_F32F16F16_SS<K,K>", (None, None)),
     ("SM90_64x64x8_F32TF32TF32_SS_TN", ("K", "K")), ("SM90_64x64x32_F32E4M3E4M3_SS_TN", ("K", "K"))],
)  # fmt: skip
def test_a_gmma_atoms_majors_are_the_designs(atom, majors):
    d = GemmDesign(make_tiled_mma(atom))
    assert (d.major("A"), d.major("B")) == majors
    a, b = majors
    assert _call_majors(d) == [(x, y) for x in ([a] if a else ["K", "M"])
                               for y in ([b] if b else ["K", "N"])]  # fmt: skip
    explain(check(d), compile=False)  # the plan of those majors builds


def test_major_takes_a_or_b():
    with pytest.raises(DesignError, match=re.escape("give 'A' or 'B'")):
        GemmDesign(F16, (64, 64, 32)).major("C")


# ---------------------------------------------------------------- g. arguments (issue 34)
@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [({"tile": {"a": 1}}, "tile"), ({"tile": [64, 64, [32]]}, "tile"), ({"tile": "64x64x32"}, "tile"),
     ({"epilogue": [["bias"]]}, "epilogue"), ({"epilogue": 42}, "epilogue"),
     ({"epilogue": ("bias", None)}, "epilogue")],
)  # fmt: skip
def test_design_arguments_of_the_wrong_kind_are_named(kwargs, fragment):
    with pytest.raises(DesignError, match=fragment):
        GemmDesign(F16, **kwargs)


def test_a_list_tile_and_epilogue_are_read_as_tuples():
    d = GemmDesign(F16, [64, 64, 32], epilogue=["bias", "relu"])
    assert d == GemmDesign(F16, (64, 64, 32), epilogue=("bias", "relu"))
    assert GemmDesign(F16, (64, 64, 32), epilogue="relu").epilogue == ("relu",)


@pytest.mark.parametrize("bad", ["no", 1, None, "False"])
def test_explain_compile_is_true_or_false(bad, monkeypatch):
    import importlib

    ex = importlib.import_module("cutemma.kernels.report")  # the package re-exports the function
    monkeypatch.setattr(ex, "_compiled_registers", lambda *a: pytest.fail("compiled"))
    with pytest.raises(DesignError, match="compile=.*True or False"):
        explain(GemmDesign(F16, (64, 64, 32)), compile=bad)


_SEED_DTYPES = {"SM70": "float16", "SM80 16x8x16": "float16", "SM80 tf32": "float32",
                "GMMA 64x128 1": "bfloat16", "GMMA 64x256": "bfloat16", "GMMA 64x128 RS": "float16"}  # fmt: skip


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(_seeds()))
def test_a_seed_tiled_mma_runs_with_no_other_argument(name):
    """Issue 32, acceptance 4: ``cutemma.gemm(A, B, tiled_mma=t)`` and nothing else, for each
    seed TiledMMA, on shapes that are and are not multiples of its default tile; exact on
    small integers (every product and sum representable in the atom's types)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    import cutemma

    dtype = getattr(torch, next(v for k, v in _SEED_DTYPES.items() if name.startswith(k)))
    t = _seeds()[name]
    gen = torch.Generator(device="cuda").manual_seed(7)
    for m, n, k in ((256, 256, 128), (131, 97, 72)):
        A = torch.randint(-1, 2, (m, k), device="cuda", generator=gen).to(dtype)  # |sum| <= K
        B = torch.randint(-1, 2, (k, n), device="cuda", generator=gen).to(dtype)  # exact in bf16
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SoftwareAtomWarning)  # SM70 on sm_90a: slow, right
            D = cutemma.gemm(A, B, tiled_mma=t)
        ref = A.double() @ B.double()
        assert torch.equal(D.double(), ref), (name, (m, n, k))


def test_the_explain_function_survives_its_module_being_imported():
    """cutemma.kernels.explain is the function even after its module is imported (a
    submodule of the same name, once imported, replaced the package's attribute)."""
    import importlib

    import cutemma.kernels as k

    importlib.import_module("cutemma.kernels.report")
    assert callable(k.explain) and k.explain.__name__ == "explain"
