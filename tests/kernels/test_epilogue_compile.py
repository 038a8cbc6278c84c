"""Fused epilogues in both families' generated source (no GPU): every op and two
compositions compile with NVRTC for sm_90a without local memory; each accumulator value
reads the epilogue's tensors at the (m, n) its partition_C gives; the sm90 kernel keeps its
TMA-store epilogue; and a kernel without an epilogue is byte for byte what it was (sha256
of 21 variants' sources, recorded from the generator before epilogues existed)."""

from __future__ import annotations

import hashlib
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_cuobjdump, needs_nvrtc  # noqa: E402

from cutemma.kernels.epilogue import OPS, Epilogue  # noqa: E402
from cutemma.kernels.sm80.plan import GemmConfig, GemmPlan  # noqa: E402
from cutemma.kernels.sm80.source import gemm_source  # noqa: E402
from cutemma.kernels.sm90.plan import Sm90Config, Sm90Plan  # noqa: E402
from cutemma.kernels.sm90.source import gemm_sm90_source  # noqa: E402
from cutemma.kernels.space import (  # noqa: E402
    cluster_kernels,
    fitted_kernels,
    fused_kernels,
    fused_pingpong,
    mid_swapped_kernel,
    swapped_kernel,
    tile_kernels,
)

# every op at least once: one chain of all vector ops per activation, plus two compositions
# people use (Linear + GELU; fp8 dequantisation + bias + SiLU + residual)
_VECTORS = ("scale_row", "scale_col", "bias", "bias_row")
CHAINS = [
    Epilogue((*_VECTORS, "relu", "residual", "cast"), ("f32", "f32", "bf16", "f16", "", "bf16", "")),
    Epilogue((*_VECTORS, "gelu"), ("f16", "f32", "f32", "bf16", "")),
    Epilogue(("bias", "gelu_tanh"), ("bf16", "")),
    Epilogue(("scale_row", "scale_col", "bias", "silu", "residual"), ("f32", "f32", "bf16", "", "f32")),
]  # fmt: skip
SM80 = (GemmConfig(64, 64, 32), "bf16", "K", "N", "bf16")
SM90 = (Sm90Config(128, 128), "bf16", "K", "N", "bf16")  # TMA-store and register epilogues
# fp8 with an epilogue: every tile of the fused space (space.fused_kernels: promoted with
# one batch of sums, at most 160 wide; 128x192 by N halves spilled 80 bytes), whole and
# shared by stream-K, with the longest chain
FUSED_FP8 = [c for c in fused_kernels(tile_kernels("e4m3"), "e4m3") if c.split in (None, 8)]
FUSED_FP8 += fused_kernels(cluster_kernels("e4m3"), "e4m3")[-2:]  # the widest pairs, each way
CASES = [("sm80", SM80, e) for e in CHAINS] + [("sm90", SM90, e) for e in CHAINS]
CASES += [("sm90", (c, "e4m3", "K", "K", "bf16"), CHAINS[3]) for c in FUSED_FP8]
# the bench's fused call (bias + GELU) on the wide 16-bit tiles the built-in pick takes
CASES += [("sm90", (Sm90Config(128, bn), "bf16", "K", "K", "bf16"), CHAINS[2]) for bn in (192, 256)]
# the widths fitted to few columns (240 and 160 here) with the bench's chain: whole, and 160
# shared (stream-K tiles 224 wide or more spill one 8-byte register under this chain, the
# space's own 128x256 as well: compiled here)
CASES += [("sm90", (c, "bf16", "K", "K", "bf16"), CHAINS[2])
          for c in fitted_kernels(4096, 464, 8192, "bf16")
          if c.split in (None, 8) and (not c.stream_k or c.block_n <= 192)]  # fmt: skip
# the pingpong tiles a fused 16-bit call may take (space.fused_pingpong), with the bench's chain
CASES += [("sm90", (c, "bf16", "K", "K", "bf16"), CHAINS[2]) for c in fused_pingpong("bf16")]
# swapped kernels (D^T = B^T A^T, the "tmat" epilogue: TMA store of D^T, registers for f32)
# with chains as D^T's (epilogue.transposed); several token tiles, the widest
_SWAPPED = [(swapped_kernel(16, 8192, 8192, "bf16", 132, False), "bf16"),
            (swapped_kernel(24, 10240, 8192, "bf16", 132, True), "bf16"),
            (swapped_kernel(32, 8192, 8192, "e4m3", 132, False), "e4m3"),
            (mid_swapped_kernel(256, "bf16", True), "bf16"),
            (replace(mid_swapped_kernel(200, "e4m3", False), stream_k=True, split=8), "e4m3"),
            # whole and wider than 160: fused fp8 calls of 129-2048 rows take them (their rate
            # is the plain tile's, cost.efficiency), past the unswapped fused space's 160
            (mid_swapped_kernel(192, "e4m3", True), "e4m3")]  # fmt: skip
CASES += [
    ("sm90", (replace(c, swap_ab=False), dt, "K", "K", "bf16"), e)
    for c, dt in _SWAPPED
    for e in (Epilogue(("bias_row", "gelu_tanh"), ("bf16", "")),
              Epilogue(("scale_col", "scale_row", "bias_row", "silu"), ("f32", "f32", "bf16", "")))
]  # fmt: skip


def _source(family, args, epilogue):
    if family == "sm80":
        return gemm_source(*args, epilogue=epilogue)
    return gemm_sm90_source(*args, epilogue=epilogue)


def test_the_chains_cover_every_op():
    assert {n for e in CHAINS for n in e.ops} == set(OPS)


_CUBINS: dict = {}


def _compile_all():
    from cutemma.cuda import compile

    sources = {case: _source(*case) for case in CASES}  # generation is not thread-safe

    def one(case):
        try:
            return case, compile(sources[case], "sm_90a")
        except Exception as exc:  # reported by the case's own test
            return case, exc

    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:  # NVRTC releases the GIL
        _CUBINS.update(pool.map(one, CASES))


@needs_nvrtc
@needs_cuobjdump
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1][1]}{c[2].suffix}")
def test_epilogue_kernels_compile_without_local_memory(case):
    from cutemma.cuda import count_instructions, local_memory_use, sass

    if not _CUBINS:
        _compile_all()
    cubin = _CUBINS[case]
    if isinstance(cubin, Exception):
        raise cubin
    local = local_memory_use(cubin)
    assert (local.local_bytes or 0) + (local.stack_bytes or 0) == 0, local
    counts = count_instructions(sass(cubin))
    if case[0] == "sm90" and Sm90Plan(*case[1]).tma_store:
        assert counts.get("UTMASTG", 0) > 0  # the epilogue kept the TMA store


@pytest.mark.parametrize("epilogue", CHAINS[2:], ids=lambda e: e.suffix)
def test_each_value_reads_its_partition_c_coordinates(epilogue):
    """sm80: one read per accumulator value at the (m, n) of partition_C's constants
    (the same m, n the store uses); sm90: the register epilogue likewise, the TMA-store
    epilogue at those coordinates clamped into the matrix."""
    plan = GemmPlan(*SM80[:4])
    src = gemm_source(*SM80, epilogue=epilogue)
    _, _, consts = plan.epilogue
    assert src.count("__ldg(&epl_bias[n])") == len(consts)
    for _, dm, dn in consts:
        assert f"const int m = m0 + C_m + {dm}, n = n0 + C_n + {dn};" in src
    p90 = Sm90Plan(*SM90)
    src = gemm_sm90_source(*SM90, epilogue=epilogue)
    _, _, consts = p90.epilogue
    regs = re.findall(r"__ldg\(&epl_bias\[([^\]]*)\]\)", src.split("} else {")[-1])
    assert len(regs) >= len(consts) and set(regs) == {"n + 0", "n + 1"}  # pairs: n, n + 1
    for _, dm, dn in consts:
        if dn % 2 == 0:  # a block per n pair: its second value is n + 1
            assert f"{{ const long long m = m0 + C_m + {dm}; const int n = n0 + C_n + {dn};" in src
        assert f"__ldg(&epl_bias[min(n0 + C_n + {dn}, N - 1)])" in src  # TMA store: clamped


def test_tma_store_reads_a_16_bit_column_vector_a_word_per_column_pair():
    """sm90's TMA-store epilogue, where N is even and the vector 4-byte aligned (a runtime
    flag): one 32-bit read per pair of columns, at the pair's first (even) column clamped
    to the last word, its halves the two columns' values; else, and in the register
    epilogue, a value at a time. A float vector or a row vector reads values."""
    epilogue = Epilogue(("bias", "gelu_tanh"), ("bf16", ""))
    plan = Sm90Plan(*SM90)
    src = gemm_sm90_source(*SM90, epilogue=epilogue)
    _, n_t, consts = plan.epilogue
    assert all(v % 2 == 0 for v in n_t.table)  # each thread's first column is even
    assert "const bool epi_pairs = N % 2 == 0 && (((unsigned long long)epl_bias) & 3) == 0;" in src
    paired, values = src.split("if (epi_pairs) {")[1].split("} else {", 1)
    pairs = sorted({dn for _, _, dn in consts[::2]})
    assert all(dn % 2 == 0 for dn in pairs)
    words = re.findall(r"const uint32_t epw_bias_(\d+) = __ldg\(reinterpret_cast<const uint32_t\*>"
                       r"\(epl_bias \+ min\(n0 \+ C_n \+ (\d+), N - 2\)\)\);", paired)  # fmt: skip
    assert sorted(int(a) for a, b in words) == pairs and all(a == b for a, b in words)
    for dn in pairs:  # the low half is column dn's value, the high half dn + 1's
        assert f"bf16_to_f32((uint16_t)(epw_bias_{dn}))" in paired
        assert f"bf16_to_f32((uint16_t)(epw_bias_{dn} >> 16))" in paired
    assert "epl_bias[" not in paired and "epw_" not in values.split("fence_async_smem")[0]
    assert f"__ldg(&epl_bias[min(n0 + C_n + {pairs[0] + 1}, N - 1)])" in values
    for chain in (Epilogue(("bias",), ("f32",)), Epilogue(("bias_row",), ("bf16",))):
        assert "epi_pairs" not in gemm_sm90_source(*SM90, epilogue=chain)


def test_a_vector_is_asked_into_l1_at_each_tiles_start():
    """Each vector an epilogue reads: the 128-byte lines of the tile's span (plus one, the
    span being unaligned), one thread each, in the tile loop before the mainloop; a chain
    without vectors (or no epilogue) asks for nothing."""
    src = gemm_sm90_source(*SM90, epilogue=Epilogue(("scale_row", "bias"), ("f32", "bf16")))
    loop = src.split("for (int tile = blockIdx.x;")[-1]
    rows, cols = SM90[0].block_m, SM90[0].block_n
    want_m = (
        f"if (tid < {rows * 4 // 128 + 1}) prefetch_l1(ep_scale_row + min(m0 + tid * 32, M - 1));"
    )
    want_n = f"if (tid < {cols * 2 // 128 + 1}) prefetch_l1(ep_bias + min(n0 + tid * 64, N - 1));"
    assert want_m in loop and want_n in loop
    assert loop.index(want_n) < loop.index("wgmma_fence()")
    for chain in (Epilogue(("relu",), ("",)), Epilogue()):
        assert "prefetch_l1" not in gemm_sm90_source(*SM90, epilogue=chain)


@needs_nvrtc
@needs_cuobjdump
def test_paired_column_reads_halve_the_loads_of_the_tma_store_epilogue():
    """SASS: a bias-only 128x256 kernel (64 columns a thread) holds 32 32-bit loads (no
    width suffix: the paired pass, one per column pair; the value-at-a-time pass loads
    16 bits, LDG.E.U16) and the prefetches (CCTL.E.PF1)."""
    from cutemma.cuda import compile, sass

    cfg = Sm90Config(128, 256)
    epilogue = Epilogue(("bias",), ("bf16",))
    text = sass(
        compile(gemm_sm90_source(cfg, "bf16", "K", "K", "bf16", epilogue=epilogue), "sm_90a")
    )
    words = len(re.findall(r"LDG\.E\.CONSTANT ", text))  # (32-bit loads: the pairs)
    assert words == 256 // 8
    assert "CCTL.E.PF1" in text


def test_batched_and_int8_kernels_refuse_an_epilogue():
    from cutemma.errors import TiledMmaError

    with pytest.raises(TiledMmaError, match="2-D kernels"):
        gemm_sm90_source(*SM90, batched=True, epilogue=CHAINS[2])
    with pytest.raises(TiledMmaError, match="int8 writes s32"):
        gemm_source(GemmConfig(), "s8", "K", "K", "s32", epilogue=CHAINS[2])


# sha256 of sources generated before epilogues existed (main at b8ee820): a kernel without
# an epilogue must not change by one byte
_V80 = [
    (GemmConfig(), "bf16", "K", "N", "bf16", None, True, True),
    (GemmConfig(64, 64, 32), "f16", "M", "K", "f32", "f32", True, False),
    (GemmConfig(128, 256, 32, (2, 4), 3), "bf16", "M", "N", "bf16", "bf16", False, True),
    (GemmConfig(32, 32, 64), "tf32", "K", "K", "f32", None, True, True),
    (GemmConfig(), "s8", "K", "K", "s32", None, True, True),
    (GemmConfig(128, 128, 32, (4, 2), 4), "e4m3", "K", "K", "bf16", None, True, True),
    (GemmConfig(128, 128, 32, (4, 2), 4), "e4m3_e5m2", "K", "K", "f16", "f16", False, False),
    (GemmConfig(64, 64, 32), "f16", "K", "N", "f16", None, False, False),
    (GemmConfig(256, 128, 32, (4, 2), 4), "bf16", "K", "K", "f32", None, True, True),
]
_V90 = [
    (Sm90Config(), "bf16", "K", "N", "bf16", None, False),
    (Sm90Config(128, 256), "bf16", "K", "K", "bf16", None, False),
    (Sm90Config(128, 256), "f16", "M", "N", "f32", None, False),
    (Sm90Config(128, 192, promote="split"), "e4m3", "K", "K", "bf16", None, False),
    (Sm90Config(128, 128), "e4m3", "K", "K", "f32", None, False),
    (Sm90Config(128, 64), "bf16", "K", "N", "bf16", None, False),
    (Sm90Config(128, 128, schedule="pingpong"), "bf16", "K", "N", "bf16", None, False),
    (Sm90Config(128, 256, cluster=2), "bf16", "K", "N", "bf16", None, False),
    (Sm90Config(128, 128), "tf32", "K", "K", "f32", None, False),
    (Sm90Config(), "bf16", "K", "N", "bf16", None, True),
    (Sm90Config(128, 256), "bf16", "M", "N", "f32", "f32", True),
    (Sm90Config(128, 256, epilogue="tma2"), "bf16", "K", "N", "bf16", None, False),
]
_SHA = [
    "388cee246ca42911047815d95ac82ae066d2881ca69a187695dda73f348a6353",
    "b4e3dc946e85d40e19ee6c5b161f035c77b6288cd06fc95777fe79bdcc98aaa9",
    "da49a88bfdefea4b3ed96e7dd7e639c99a17ef2c7805880950610181c82445d9",
    "7de1733f57ea32fbc32e188f5a0f400178ef03dd9238d9ffe64b9a5c32b89e1a",
    "1f4c36b9d250fb7df04dda316325e1a3f857e14d3d61e50593794e40566b319c",
    "ec40569e214b8ba4d702481c0b4f8dcabe078ef6223d5a460e67f751c90735cd",
    "8143024d301c2a097521745ddb1acab6c6a6e9a8d8101eae8b62aafe7adbfe54",
    "a105f98f6f78aebd109b6de6f300f83f7bb8fd88e066ddb94a4df40a1c2cb322",
    "bf67a860e45192388e8fcd69d81df2fc6f3dd72b1db612bc43c3af383765efc2",
    "483b6a39e6984411e910ef8b657673db212a98592688726c8301bc76531e498e",
    "20e16e8eb224bbee7fbc6e164cc0f33f1677b49c71225ba583e4e433ff4aa50e",
    "fbac1bb2afbbea5468350ac335f298ff643e6ffd38176a12284aaf2c637bf6aa",
    "b3b93fcfb19718ef892c4d4e0abf91fd4d566c4c3984b29d2ea6d0e5005923c9",
    "6fa43c42a280180aa040c2ed579b213b47644c510503cb72a79485a73faa8bcc",
    "e0f6ac25de73a5cdf5b0d450bec56d10737d64d568552a68b144e2606ecaf4a2",
    "68e24ac7b0429b3af4c52e0f99c9ee2c8ce5a80017e02889f88c4ad2c8fb1401",
    "8c98745acbb8a59b14985a623c931fa18bdbc21e28b9ce45d704d0b7f656a6fb",
    "3bda7efd459200341970aee449d50a6b2807e357b3528e9ca8ec6be71f4e5042",
    "1dab14e47113a32e54474ab92e027cf5bb4af9a66426ec7c8b3b87f9861c2aa5",
    "a36e843c845af5b65611c0d96b804940f5579c330b44f5d4c851904bc915c21b",
    "52966b1421f93115b8326a778a6d8dcfedd4a54c711d1e0e85ab0594e9adb39f",
]


def test_kernels_without_an_epilogue_are_unchanged():
    got = [hashlib.sha256(gemm_source(*v).encode()).hexdigest() for v in _V80]
    got += [hashlib.sha256(gemm_sm90_source(*v).encode()).hexdigest() for v in _V90]
    assert got == _SHA


def test_a_fused_fp8_call_keeps_the_models_schedule():
    """An fp8 call with an epilogue takes the cost model's pick of the fused space (its
    tile, stream-K split and hints, promoted with one batch of sums), not one fixed tile:
    where the plain call's pick is a narrow stream-K kernel, so is the fused one's."""
    from cutemma.kernels.pick import builtin

    plain, _ = builtin(126, 368, 41392, 1, "e4m3", 132, "h200", False)
    fused, _ = builtin(126, 368, 41392, 1, "e4m3", 132, "h200", False, fused=True)
    assert plain.stream_k and fused.stream_k and fused.promote is True
    assert (fused.block_m, fused.block_n) == (plain.block_m, plain.block_n)
    wide, _ = builtin(8192, 8192, 8192, 1, "e4m3", 132, "h200", False, fused=True)
    assert wide.block_n <= 160 and wide.promote is True
    same, _ = builtin(8192, 8192, 8192, 1, "bf16", 132, "h200", False, fused=True)
    assert same == builtin(8192, 8192, 8192, 1, "bf16", 132, "h200", False)[0]


@needs_nvrtc
@needs_cuobjdump
def test_activations_compile_to_straight_line_code():
    """Each activation adds no branch and no call per value over relu's kernel: an IEEE
    reciprocal in silu called a slow-path subroutine per value (a fused scale_col + bias +
    silu ran 2-3.8x the plain call at short K, bench/results/raw/epilogue-cost-h200.json)."""
    from cutemma.cuda import compile, count_instructions, sass

    cfg = Sm90Config(64, 128, consumers=1)
    acts = [op for op, spec in OPS.items() if spec.kind == "activation"]
    counts = {}
    for op in acts:
        src = gemm_sm90_source(cfg, "bf16", "K", "K", "bf16", epilogue=Epilogue((op,), ("",)))
        counts[op] = count_instructions(sass(compile(src, "sm_90a")))
    for op in acts:
        assert counts[op].get("CALL", 0) == 0, op
        assert counts[op].get("BRA", 0) == counts["relu"].get("BRA", 0), op


@needs_nvrtc
@needs_cuobjdump
def test_gelu_tanh_costs_five_float_ops_and_one_tanh_per_value():
    """The fused GELU is most of a short-K call's epilogue (raw/epilogue-schedules-h200.json:
    a fused bias + gelu_tanh at K = 352 ran 1.5x the plain call): x (a + b x^2) and h + h t
    take 5 float instructions beside MUFU.TANH per value (the textbook form compiled to 7)."""
    from cutemma.cuda import compile, count_instructions, sass

    cfg = Sm90Config(64, 128, consumers=1)
    counts = {
        op: count_instructions(sass(compile(gemm_sm90_source(
            cfg, "bf16", "K", "K", "bf16", epilogue=Epilogue((op,), ("",))), "sm_90a")))
        for op in ("relu", "gelu_tanh")
    }  # fmt: skip
    values = counts["gelu_tanh"]["MUFU"] - counts["relu"].get("MUFU", 0)  # one tanh each
    assert values % Sm90Plan(cfg, "bf16", "K", "K", "bf16").acc_per_thread == 0 < values

    def flops(c: dict) -> int:
        return sum(c.get(k, 0) for k in ("FMUL", "FFMA", "FADD"))

    assert flops(counts["gelu_tanh"]) - flops(counts["relu"]) <= 5 * values
