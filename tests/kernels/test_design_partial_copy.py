"""sm80 designs whose cp.async copy runs on only some of the block's threads (issue 32, "What
to build" 2): a small tile under many warps has fewer 16-byte chunks per pass than threads,
so the first ``CopyPlan.threads`` move the tile and the rest skip the copy (they still
commit, wait and reach the barriers). Also designs of 8-row atoms, k4 tiles and one-chunk
(16-byte, unswizzled) smem rows, which the config's 16-row rule or the 32-byte swizzle row
refused before.

Witnesses: the rules accept the designs; the plan's own tables put every element of each
stage under exactly one chunk, at the offset the smem layout gives its coordinate, over
many (threads, tile) pairs; the CPU model of the generated kernel (gemm_sim: it reads the
copy's thread guard from the text and counts each element's writes) computes A @ B; NVRTC
compiles them to tensor-core SASS without local memory; a GPU test for the device.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gemm_sim import simulate

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_cuobjdump, needs_nvrtc  # noqa: E402

from cutemma.kernels import GemmDesign, check, gemm_source
from cutemma.kernels.sm80.plan import ATOMS, CopyPlan, GemmPlan, smem_layout
from cutemma.tiled import make_tiled_mma

F16 = ATOMS["f16"]

# (label) -> (atom, atom layout, tile, dtype, A major, B major); each was refused on main
# at 9ccbe83 by rule `plan` (cp.async tiling, GemmConfig's 16-row or k8 rule, or the
# 32-byte swizzle row)
DESIGNS = {
    "8 warps (2,4) on 32x32x16, chunks for 64 of 256 threads": (
        F16, (2, 4, 1), (32, 32, 16), "f16", "K", "K"),
    "8 warps (2,4) on 32x32x16, M/N-major": (F16, (2, 4, 1), (32, 32, 16), "f16", "M", "N"),
    "8 warps (1,8), A 16x16: 32 chunks for 256 threads": (
        F16, (1, 8, 1), (16, 64, 16), "f16", "K", "N"),
    "fp8 (1,8) on 32x256x32 (the issue's refusal)": (
        ATOMS["e4m3"], (1, 8, 1), (32, 256, 32), "e4m3", "K", "K"),
    "int8 (8,1), B 8x32: 16 chunks for 256 threads": (
        ATOMS["s8"], (8, 1, 1), (128, 8, 32), "s8", "K", "K"),
    "tf32 (4,2) on 64x16x8: 128 of 256 threads": (
        ATOMS["tf32"], (4, 2, 1), (64, 16, 8), "tf32", "K", "K"),
    "tf32 k4 atom, block_k 4 (one chunk a row)": (
        "SM80_16x8x4_F32TF32TF32F32_TN", (2, 1, 1), (32, 16, 4), "tf32", "K", "K"),
    "SM70 (2,2) on 16x16x32: 16 rows, 2 atoms of 8 along M": (
        "SM70_8x8x4_F32F16F16F32_NT", (2, 2, 1), (16, 16, 32), "f16", "K", "K"),
    "SM70 (2,1) on 32x8x32, N-major B of 8 columns (16-byte rows)": (
        "SM70_8x8x4_F32F16F16F32_NT", (2, 1, 1), (32, 8, 32), "f16", "K", "N"),
    "k8 atom, block_k 8: 16-byte K rows, unswizzled": (
        "SM80_16x8x8_F32F16F16F32_TN", (2, 2, 1), (64, 32, 8), "f16", "K", "K"),
    "a given unswizzled smem B, 16-byte rows (GemmConfig swizzle_bytes 16)": (
        F16, (1, 1, 1), (16, 8, 32), "f16", "M", "N", {"smem_b": lambda: smem_layout(8, 32, "MN", 32)}),
}  # fmt: skip


def _design(label: str) -> tuple[GemmDesign, str, str, str]:
    atom, lay, tile, dtype, am, bm, *kw = DESIGNS[label]
    smem = {k: make() for k, make in (kw[0] if kw else {}).items()}
    return GemmDesign(make_tiled_mma(atom, lay), tile, **smem), dtype, am, bm


def _eb(dtype: str) -> int:
    return {"f16": 2, "tf32": 4}.get(dtype, 1)


def _full_thread_copy_tiles(threads: int, rows: int, contiguous: int, vec: int) -> bool:
    """The old rule: every thread moves one chunk per pass and passes are whole."""
    cpr = contiguous // vec
    return threads % cpr == 0 and rows % (threads // cpr) == 0


@pytest.mark.parametrize("label", sorted(DESIGNS))
def test_designs_refused_before_pass_check(label):
    d, dtype, am, bm = _design(label)
    assert check(d) is d
    plan = GemmPlan(d.config, dtype, am, bm, d)
    assert 0 < plan.copy("A").threads <= plan.threads
    assert 0 < plan.copy("B").threads <= plan.threads


def test_the_partial_designs_needed_it():
    """The copy cases really are outside the old all-threads tiling (arithmetic on the tile,
    not the plan), and their plans use fewer threads than the block."""
    for label in [k for k in DESIGNS if "threads" in k]:
        d, dtype, am, bm = _design(label)
        plan = GemmPlan(d.config, dtype, am, bm, d)
        vec, (bm_, bn_, bk) = 16 // _eb(dtype), d.tile
        old_ok = [
            _full_thread_copy_tiles(plan.threads, *((ext, bk) if major == "K" else (bk, ext)), vec)
            for ext, major in ((bm_, am), (bn_, bm))
        ]
        assert not all(old_ok), label
        assert min(plan.copy("A").threads, plan.copy("B").threads) < plan.threads, label


def _combine(split, t: int, i: int) -> int:
    b, c = split.thread(t), split.consts[i]
    return b + c if split.op == "+" else b ^ c


# block threads (3 warps too), stage tiles, majors and element bytes; MN-major only for 16-bit
# types (the kernel reads 8- and 32-bit ones K-major) and power-of-2 contiguous extents (a
# 96-byte swizzled row's offsets do not split into thread part and constants at all)
PAIRS = [
    (threads, ext, bk, major, eb)
    for threads in (32, 64, 96, 128, 256, 512)
    for ext, bk in ((8, 32), (16, 16), (32, 16), (48, 32), (64, 64), (128, 32), (16, 128))
    for major in ("K", "MN")
    for eb in (1, 2, 4)
    if major == "K" or (eb == 2 and ext != 48)
]


@pytest.mark.parametrize("threads,ext,bk,major,eb", PAIRS)
def test_copy_tables_write_every_element_once(threads, ext, bk, major, eb):
    """From the plan's own tables: thread t < cp.threads, chunk i starts at the smem offset
    of tile coordinate (c, o) = ((t % cpr) * vec, t // cpr + i * rows_per_pass) (contiguous,
    other); its vec elements are consecutive there; over all threads and chunks every element
    of the stage is covered exactly once."""
    vec = 16 // eb
    contiguous, other = (bk, ext) if major == "K" else (ext, bk)
    if contiguous % vec or contiguous // vec > threads:
        pytest.skip("a row wider than the block's threads or not whole chunks")
    try:
        lay = smem_layout(ext, bk, major, 128, eb)
    except Exception:
        pytest.skip("no swizzled layout of this tile")
    tab = np.array([[lay(m, k) for k in range(bk)] for m in range(ext)])  # [mn, k] -> offset
    cp = CopyPlan.make("A", ext, bk, major == "K", lay.outer, tab, threads, vec)
    cpr, rpp = cp.thr_layout.shape
    assert cpr == contiguous // vec and cp.threads == cpr * rpp <= threads
    assert other % rpp == 0 and cp.iters == other // rpp
    writes = np.zeros(ext * bk, dtype=int)
    for t in range(cp.threads):
        for i in range(cp.iters):
            c, o = (t % cpr) * vec, t // cpr + i * rpp
            mn, k = (o, c) if major == "K" else (c, o)
            off = _combine(cp.smem, t, i)
            assert off == tab[mn, k]
            run = [tab[mn, k + j] if major == "K" else tab[mn + j, k] for j in range(vec)]
            assert run == list(range(off, off + vec))
            writes[off : off + vec] += 1
    assert (writes == 1).all()
    if threads % cpr == 0 and other % (threads // cpr) == 0 and threads & (threads - 1) == 0:
        assert cp.threads == threads  # a tile the whole block tiles keeps the whole block


SIM = [
    "8 warps (2,4) on 32x32x16, chunks for 64 of 256 threads",
    "8 warps (2,4) on 32x32x16, M/N-major",
    "int8 (8,1), B 8x32: 16 chunks for 256 threads",
    "tf32 (4,2) on 64x16x8: 128 of 256 threads",
    "tf32 k4 atom, block_k 4 (one chunk a row)",
    "SM70 (2,2) on 16x16x32: 16 rows, 2 atoms of 8 along M",
    "SM70 (2,1) on 32x8x32, N-major B of 8 columns (16-byte rows)",
    "k8 atom, block_k 8: 16-byte K rows, unswizzled",
    "a given unswizzled smem B, 16-byte rows (GemmConfig swizzle_bytes 16)",
]


def _simulate(label: str, source_edit=None):
    d, dtype, am, bm = _design(label)
    plan = GemmPlan(d.config, dtype, am, bm, d)
    src = gemm_source(d.config, dtype, am, bm, "s32" if dtype == "s8" else "f32", design=d)
    if source_edit:
        src = source_edit(src)
    rng = np.random.default_rng(11)
    M, N, K = 45, 37, 50  # two block rows or more, edges in every mode, a K tail
    A = rng.integers(-3, 4, (M, K)).astype(float)
    B = rng.integers(-3, 4, (K, N)).astype(float)
    return simulate(plan, src, A, B), A @ B


@pytest.mark.parametrize("label", SIM)
def test_simulated_kernel_computes_a_times_b(label):
    """The model copies with the threads the kernel text guards, asserts each stage element
    is written exactly once, then runs ldmatrix/mma/epilogue as the text says."""
    D, want = _simulate(label)
    np.testing.assert_array_equal(D, want)


def test_the_model_catches_a_copy_without_its_guard():
    """The kernel text is what makes the idle threads idle: without the guard every thread
    of the block copies, at offsets past its copy's layout, and the model refuses."""

    guard = "if (tid < 64) {  // A: threads 64.. idle"
    seen = []

    def drop_guard(src: str) -> str:
        seen.append(src.count(guard))
        return src.replace(guard, "if (true) {  // A: every thread")

    label = "8 warps (2,4) on 32x32x16, chunks for 64 of 256 threads"
    with pytest.raises(AssertionError, match="A chunk outside|A elements written"):
        _simulate(label, drop_guard)
    assert seen[0] >= 2  # the edge copy and the unpredicated one


@needs_nvrtc
@needs_cuobjdump
def test_partial_copy_kernels_compile_to_tensor_core_sass_without_local_memory():
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass

    for label in (
        "8 warps (2,4) on 32x32x16, M/N-major",
        "int8 (8,1), B 8x32: 16 chunks for 256 threads",
        "tf32 (4,2) on 64x16x8: 128 of 256 threads",
        "k8 atom, block_k 8: 16-byte K rows, unswizzled",
    ):
        d, dtype, am, bm = _design(label)
        src = gemm_source(d.config, dtype, am, bm, "s32" if dtype == "s8" else "f32", design=d)
        assert "if (tid < " in src or "k8 atom" in label
        cubin = compile(src, "sm_90a")
        counts = count_instructions(sass(cubin))
        assert counts.get("IMMA" if dtype == "s8" else "HMMA", 0) > 0, (label, counts)
        assert counts.get("LDGSTS", 0) > 0, (label, counts)  # cp.async
        use = local_memory_use(cubin)
        assert not use.local_bytes and not use.stack_bytes, label


GPU_SCRIPT = r"""
import sys
import torch
sys.path.insert(0, sys.argv[1])
import cutemma
from test_design_partial_copy import DESIGNS, _design
TORCH = {"f16": torch.float16, "s8": torch.int8, "tf32": torch.float32, "e4m3": torch.float8_e4m3fn}
bad = []
for label in sys.argv[2:]:
    d, dtype, am, bm = _design(label)
    for M, N, K in ((1, 1, 16), (45, 37, 64), (131, 97, 208)):
        g = torch.Generator(device="cuda").manual_seed(M)
        a = torch.randint(-3, 4, (M, K), generator=g, device="cuda").double()
        b = torch.randint(-3, 4, (K, N), generator=g, device="cuda").double()
        A = (a.t().contiguous().t() if am == "M" else a.contiguous()).to(TORCH[dtype])
        B = (b.contiguous() if bm == "N" else b.t().contiguous().t()).to(TORCH[dtype])
        D = cutemma.gemm(A, B, design=d)
        ref = torch.matmul(a, b)  # small integers: exact in every type
        if not torch.equal(D.double(), ref):
            bad.append((label, (M, N, K), float((D.double() - ref).abs().max())))
print(bad)
sys.exit(1 if bad else 0)
"""


@pytest.mark.gpu
def test_partial_copy_designs_match_torch_matmul_on_the_gpu():
    """cutemma.gemm(A, B, design=d) of partial-copy designs against torch.matmul (in a child
    process, torch imported first as the other GPU tests do)."""
    pytest.importorskip("torch")
    labels = [
        "8 warps (2,4) on 32x32x16, chunks for 64 of 256 threads",
        "8 warps (2,4) on 32x32x16, M/N-major",
        "int8 (8,1), B 8x32: 16 chunks for 256 threads",
        "tf32 (4,2) on 64x16x8: 128 of 256 threads",
    ]
    here = str(Path(__file__).parent)
    proc = subprocess.run(
        [sys.executable, "-c", GPU_SCRIPT, here, *labels],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
