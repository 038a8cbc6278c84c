"""The sm90 GEMM compiles with NVRTC for sm_90a to HGMMA + UTMALDG + SYNCS, no local memory.

Counts expected from the plan (independent of the generator): one HGMMA per k block per
M and N repeat (the k-tile loop is not unrolled), one UTMALDG per TMA box of A and B, and
register reconfiguration (USETMAXREG) that ptxas did not drop (no C7508 warning).
"""

from __future__ import annotations

import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_cuobjdump, needs_nvrtc  # noqa: E402
from cute_cpp.prefetch import one_at_a_time  # noqa: E402

from cutemma.kernels.pick import DEFAULT_SM90, NARROW_16, SMALL_SM90  # noqa: E402
from cutemma.kernels.sm90.plan import Sm90Config, Sm90Plan  # noqa: E402
from cutemma.kernels.sm90.source import gemm_sm90_source  # noqa: E402

CASES = [
    (DEFAULT_SM90, "bf16", "K", "K", "bf16"),
    (DEFAULT_SM90, "f16", "M", "N", "f32"),
    (SMALL_SM90, "e4m3", "K", "K", "bf16"),  # promoted accumulation
    (Sm90Config(128, 256, promote=False), "e4m3", "K", "K", "f32"),
    (Sm90Config(192, 128, consumers=3), "e4m3", "K", "K", "bf16"),  # 3 consumers, 24/160 regs
    (Sm90Config(128, 256, cluster=2), "bf16", "M", "K", "bf16"),
    (Sm90Config(128, 128, cluster=2), "bf16", "K", "N", "bf16"),  # N-major B multicast
    (Sm90Config(128, 256, cluster=2, multicast="A"), "bf16", "M", "N", "bf16"),  # A multicast
    (Sm90Config(128, 192), "e4m3", "K", "K", "bf16"),  # fp8's default: 2 x 96 accumulators
    (Sm90Config(128, 128, schedule="pingpong"), "bf16", "K", "N", "bf16"),
    (Sm90Config(64, 192, schedule="pingpong"), "e4m3", "K", "K", "f32"),  # promoted, regs epi.
    (Sm90Config(128, 192, schedule="alternate"), "e4m3", "K", "K", "bf16"),  # turns per k tile
    (Sm90Config(128, 128, promote="overlap"), "e4m3", "K", "K", "bf16"),  # 3 sets, 1 in flight
    (Sm90Config(128, 128, promote="overlap", cluster=2), "e5m2", "K", "K", "f32"),
    (Sm90Config(128, 128, swizzle=("SW64", "SW32")), "bf16", "K", "N", "bf16"),  # a design's smem
    (Sm90Config(128, 192, promote="split"), "e4m3", "K", "K", "bf16"),  # fp8's default
    (Sm90Config(128, 128, promote="split"), "e5m2", "K", "K", "f32"),
    (Sm90Config(128, 192, promote="split", epilogue="tma2"), "e4m3", "K", "K", "f16"),
    (Sm90Config(128, 256, epilogue="tma2"), "bf16", "M", "N", "bf16"),  # 4 stages, 2 passes
    # "tmab" / "tmatb": passes through two staging buffers in turn (4 stages each, where the
    # whole staging tile leaves 3): 4 of 64 and 4 of 32 columns; the swapped 256-row tile's
    # column-major D in 5 passes of 24 tokens
    (Sm90Config(128, 256, epilogue="tmab"), "bf16", "K", "K", "bf16"),
    (Sm90Config(256, 128, epilogue="tmab"), "f16", "M", "N", "f16"),
    (Sm90Config(256, 120, epilogue="tmatb", swap_ab=True), "bf16", "K", "K", "bf16"),
    (NARROW_16, "bf16", "K", "N", "bf16"),  # the built-in narrow 16-bit tile, one warpgroup
    (replace(NARROW_16, evict_first="B"), "f16", "M", "K", "f32"),
    # tiles wider than one wgmma: 5 x m64n64 (N-major B, one SW128 atom each), 2 x m64n160
    # (K-major B: TMA boxes of 160 rows); 160 accumulators a thread, stored from registers
    (Sm90Config(128, 320, wgmma_n=64, epilogue="regs"), "bf16", "K", "N", "bf16"),
    (Sm90Config(128, 320, wgmma_n=160, promote=False, epilogue="regs"), "e4m3", "K", "K", "bf16"),
    (Sm90Config(128, 256, wgmma_n=128, stream_k=True), "f16", "M", "K", "f32"),
    (Sm90Config(128, 320, wgmma_n=(256, 64), epilogue="regs"), "bf16", "K", "N", "bf16"),
    # "tmat" (the swapped kernels' column-major D^T): an MN-major staging tile, two 16-bit
    # STS per acc pair; widest tokens with stream-K, a decode fp8 ring, a 64-row share
    (
        Sm90Config(128, 256, epilogue="tmat", stream_k=True, split=2, swap_ab=True),
        "bf16",
        "M",
        "K",
        "bf16",
    ),
    (
        Sm90Config(128, 104, 256, stages=3, promote=True, epilogue="tmat", swap_ab=True),
        "e4m3",
        "K",
        "K",
        "bf16",
    ),
    # two warpgroups side by side along N: three m64 wgmmas each per k block (12 HGMMA a k
    # tile); B and the staging tile at SW32 so that an atom starts at each one's 80 columns
    (Sm90Config(192, 160, consumers_n=2), "f16", "K", "N", "bf16"),
    (Sm90Config(192, 192, consumers_n=2, epilogue="regs", stream_k=True), "bf16", "M", "K", "f32"),
    (
        Sm90Config(64, 40, consumers=1, epilogue="tmat", stream_k=True, swap_ab=True),
        "f16",
        "K",
        "K",
        "f16",
    ),
]


@pytest.fixture(scope="module", autouse=True)
def _compiled_two_at_a_time():
    """NVRTC releases the GIL, so every case compiles up front on as many threads as there
    are cores (a cold CI run on 2 cores spends ~2 s per kernel); the tests then read
    :func:`cutemma.cuda.compile`'s disk cache. A case that fails to build fails in its test."""
    with one_at_a_time("sm90_compile"):  # waits for tests/cute_cpp/prefetch.py doing it
        _compile_all()


def cpp_prefetch() -> None:
    """The same ahead of the tests, for tests/cute_cpp/prefetch.py (unless they started)."""
    with one_at_a_time("sm90_compile", wait=False) as mine:
        if mine:
            _compile_all()


def _compile_all() -> None:
    from cutemma.cuda.compile import unavailable_reason

    if unavailable_reason() is not None:
        return

    def build(case):
        from cutemma.cuda import compile

        try:
            compile(gemm_sm90_source(*case), "sm_90a")
        except Exception:  # noqa: BLE001 - reported by the case's own test
            pass

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(build, CASES))


@needs_nvrtc
@needs_cuobjdump
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].name}-{c[1]}-{c[2]}{c[3]}-{c[4]}")
def test_sm90_sass(case):
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass
    from cutemma.cuda.sass import instructions

    config, dtype, am, bm, out = case
    plan = Sm90Plan(config, dtype, am, bm, out)
    cubin = compile(gemm_sm90_source(config, dtype, am, bm, out), "sm_90a")
    counts = count_instructions(sass(cubin))
    kind = "QGMMA" if dtype in ("e4m3", "e5m2") else "HGMMA"  # fp8 wgmma's SASS name
    # promote="overlap": the k-tile loop unrolled by 2 (one batch per set) after k tile 0's
    batches = 3 if plan.overlap else 1
    if plan.split_n:  # half batches: k tile 0's lo, then two k tiles' hi + lo (unrolled by 2)
        assert counts.get(kind, 0) % plan.k_blocks == 0
        assert counts.get(kind, 0) >= 5 * plan.k_blocks
    else:
        assert counts.get(kind, 0) == batches * plan.k_blocks * plan.mma_m * plan.mma_n
    assert counts.get("UTMALDG", 0) == len(plan.tma["A"].copies) + len(plan.tma["B"].copies)
    assert counts.get("SYNCS", 0) > 0 and counts.get("USETMAXREG", 0) == 2
    assert counts.get("HMMA", 0) == 0  # no fallback to mma.sync
    # 16-bit outputs: one TMA store per box of the staging tile, one 32-bit STS per acc pair
    # (column-major D, "tmat": one 16-bit STS per accumulator)
    stores = len(plan.tma_D.copies) * plan.d_passes if plan.tma_store else 0
    assert counts.get("UTMASTG", 0) == stores
    per_sts = 1 if plan.d_major == "MN" else 2
    assert counts.get("STS", 0) == (plan.acc_per_thread // per_sts if stores else 0)
    if config.cluster > 1:  # B multicast to the pair; cluster barriers at start and end
        ops = instructions(sass(cubin))
        assert sum(op.startswith("UTMALDG.2D.MULTICAST") for op in ops) == len(
            plan.tma[config.multicast].copies
        )
        assert counts.get("UCGABAR_ARV", 0) == 2
        # the shared base is (CTA rank in the cluster << 24) + 0x400: the rank sits above the
        # descriptors' 18-bit window (test_gemm_sm90_plan's per-CTA model assumes this)
        text = sass(cubin)
        assert "SR_CgaCtaId" in text and re.search(r"\bU?LEA \w+, \w+, \w+, 0x18 ;", text)
    if config.schedule != "cooperative":  # order barrier / turns: a wait, then a hand-over
        ops = instructions(sass(cubin))
        assert sum(op.startswith("BAR.ARV") for op in ops) == 1
        # __syncthreads, the turn wait, the epilogue's two (TMA store)
        assert sum(op.startswith("BAR.SYNC") for op in ops) == 2 + (2 if stores else 0)
    assert not local_memory_use(cubin), local_memory_use(cubin)
    assert "C7508" not in cubin.log and "C7510" not in cubin.log  # setmaxnreg / wgmma kept
    assert "C7514" not in cubin.log  # wgmma not serialised (non-wgmma reads of accumulators)
    # the batch of a k tile is issued back to back: no wait between its wgmmas (a
    # serialised pipeline waits after each); fp8 promotion waits once per k tile
    waits = sass(cubin).count("WARPGROUP.DEPBAR.LE gsb0, 0x0")
    assert waits <= 2, waits


@needs_nvrtc
@needs_cuobjdump
def test_sass_summary():
    from cutemma.kernels.sm90.source import sass_summary

    s = sass_summary(DEFAULT_SM90, "bf16", "K", "K", "bf16")
    assert s["HGMMA"] == 4 and s["UTMALDG"] == 2 and s["local_bytes"] == 0
    assert s["USETMAXREG"] == 2 and 0 < s["registers"] <= 255


@needs_nvrtc
def test_source_follows_the_ring():
    """The loops wait with the ring's parities: producer phase ^ 1 on empty, consumers phase."""
    src = gemm_sm90_source(SMALL_SM90, "bf16", "K", "K", "bf16")
    assert "mbar_wait(empty, phase ^ 1)" in src and "mbar_wait(full, phase ^ 0)" in src
    assert "wgmma_wait<1>()" in src and "if (kt > 0 && signals) mbar_arrive(prev_empty);" in src
    # promoted fp8: release lag 0, the stage read is released right after wait_group 0
    fp8 = gemm_sm90_source(Sm90Config(128, 192), "e4m3", "K", "K", "bf16")
    assert "prev_empty" not in fp8
    at = fp8.index("wgmma_wait<0>();  // this k tile's sums")
    assert fp8[at:].split("\n")[1].strip().startswith("if (signals) mbar_arrive(empty);")
    # promote="overlap": lag 1 like the plain loop (wait_group 1, then the previous k
    # tile's stage); each exit drains and releases the stage of the batch it retires
    ovl = gemm_sm90_source(Sm90Config(128, 128, promote="overlap"), "e4m3", "K", "K", "bf16")
    lines = [t.strip() for t in ovl.splitlines()]
    ones = [i for i, t in enumerate(lines) if t.startswith("wgmma_wait<1>();")]
    zeros = [i for i, t in enumerate(lines) if t.startswith("wgmma_wait<0>();")]
    assert len(ones) == 2 and len(zeros) == 2
    assert all(lines[i + 1].startswith("if (signals) mbar_arrive(prev_empty);") for i in ones)
    assert all(lines[i + 1] == "if (signals) mbar_arrive(cur_empty);" for i in zeros)


@needs_nvrtc
@needs_cuobjdump
def test_overlap_keeps_a_batch_in_flight():
    """promote="overlap": one wait that keeps a batch in flight (``DEPBAR.LE gsb0, 0x1``) per
    half of the unrolled loop, full drains (0x0) only at the two exits; the FADDs of the
    promotion run between the wait and the next batch; still no C7514, no local memory.
    The drain-every-k-tile loop (promote=True) has no 0x1 wait at all."""
    from cutemma.cuda import compile, local_memory_use, sass

    def build(promote):
        cubin = compile(
            gemm_sm90_source(Sm90Config(128, 128, promote=promote), "e4m3", "K", "K", "bf16"),
            "sm_90a",
        )
        return cubin, sass(cubin)

    cubin, text = build("overlap")
    assert "C7514" not in cubin.log and not local_memory_use(cubin)
    assert text.count("WARPGROUP.DEPBAR.LE gsb0, 0x1") == 2
    assert text.count("WARPGROUP.DEPBAR.LE gsb0, 0x0") == 2  # the loop's two exits
    lines = text.splitlines()
    waits = [i for i, t in enumerate(lines) if "DEPBAR.LE gsb0, 0x1" in t]
    for w in waits:  # between this wait and the next QGMMA or branch: the retired set's FADDs
        nxt = next(i for i in range(w, len(lines)) if "QGMMA" in lines[i] or " BRA " in lines[i])
        assert sum(" FADD " in t for t in lines[w:nxt]) >= 64
    _, drained = build(True)
    assert drained.count("WARPGROUP.DEPBAR.LE gsb0, 0x1") == 0


@needs_nvrtc
@needs_cuobjdump
def test_split_keeps_a_half_batch_in_flight():
    """promote="split": every wgmma is half the tile's width (QGMMA 64x96 for 128x192), the
    loop waits with one half batch in flight (``DEPBAR.LE gsb0, 0x1``) and adds the other
    half's 48 sums right after each such wait; full drains (0x0) only at the loop's two
    exits; no C7514 (ptxas did serialise a rolled version), no local memory."""
    from cutemma.cuda import compile, local_memory_use, sass

    cubin = compile(
        gemm_sm90_source(Sm90Config(128, 192, promote="split"), "e4m3", "K", "K", "bf16"),
        "sm_90a",
    )
    text = sass(cubin)
    assert "C7514" not in cubin.log and not local_memory_use(cubin)
    widths = set(re.findall(r"QGMMA\.64x(\d+)x32", text))
    assert widths == {"96"}, widths
    assert text.count("WARPGROUP.DEPBAR.LE gsb0, 0x1") >= 4  # two per k tile, 2 k tiles
    assert text.count("WARPGROUP.DEPBAR.LE gsb0, 0x0") == 2
    lines = text.splitlines()
    for w in [i for i, t in enumerate(lines) if "DEPBAR.LE gsb0, 0x1" in t]:
        nxt = next(i for i in range(w, len(lines)) if "QGMMA" in lines[i] or " BRA " in lines[i])
        assert sum(" FADD " in t for t in lines[w:nxt]) >= 48


@needs_nvrtc
@needs_cuobjdump
def test_wide_16_spills_one_register_outside_the_k_loop():
    """space.WIDE_16 (128x320 as m64n256 + m64n64, 160 accumulators a thread beside the
    TMA-store epilogue's addresses): ptxas keeps one 4-byte value on the stack, stored once
    before the tile loop and loaded once per tile after the epilogue's store; no local
    access lies between the k loop's first and last HGMMA."""
    from cutemma.cuda import compile, local_memory_use, sass
    from cutemma.kernels.space import WIDE_16

    for dtype, am, bm in (("bf16", "K", "N"), ("f16", "M", "K")):
        cubin = compile(gemm_sm90_source(WIDE_16, dtype, am, bm, dtype), "sm_90a")
        use = local_memory_use(cubin)
        got = (use.loads, use.stores, use.stack_bytes, use.local_bytes)
        assert all(g <= most for g, most in zip(got, (1, 1, 8, 0))), use
        lines = sass(cubin).splitlines()
        hgmma = [i for i, line in enumerate(lines) if "HGMMA" in line]
        local = [i for i, line in enumerate(lines) if re.search(r"\b(LDL|STL)\b", line)]
        plan = Sm90Plan(WIDE_16, dtype, am, bm, dtype)
        assert len(hgmma) == plan.k_blocks * plan.mma_m * plan.mma_n == 4
        assert not [i for i in local if hgmma[0] < i < hgmma[-1]], (local, hgmma)
