"""GPU correctness and speed of the sm90 GEMM against torch (run as a script; torch first).

    python tests/kernels/gpu_sm90_checks.py OUT.json [--quick] [--batched] [--no-bench] [--only RE]

``--only RE``: the explicit configs whose names match RE alone (no cutemma.gemm calls,
no batched checks, no tf32), e.g. ``--only 'wn2|b128x1[14][24]'`` for a new tile's checks.
        [--no-precompile]

Correctness: fresh random inputs per check, the output poisoned with NaN before each run
and required fully written, ||D - ref|| / ||ref|| against float64 on the upcast inputs
within the output format's bound; every major pair, both configs, f16/bf16, f32 output,
alpha/beta with C, shapes with edges in M, N and K (TMA zero fill), a NaN in A reaching D.
Batched 3-D calls (gpu_sm90_batched.py: broadcast/shared operands, L = 1 and 3..7, every
dtype, through gemm_sm90 and cutemma.gemm, which must pick sm90) are part of the checks;
``--batched`` runs only those (and, unless ``--no-bench``, L = 8 2048^3 against torch.bmm
and, B shared, torch.matmul).
Speed: L2-flushed medians (triton.testing.do_bench) of cutemma sm90, cutemma sm80 and
torch.matmul (cuBLAS) on the same tensors in this process, reported as ratios.
Exits 1 if any check fails.
"""

from __future__ import annotations

import faulthandler
import json
import random
import re
import sys
import time
import traceback
from dataclasses import replace

import gpu_sm90_batched  # noqa: E402 - beside this script
import torch  # before cutemma's CUDA modules (see notes/CUDA.md)
from gpu_timing import rounds  # beside this script
from gpu_wave_sanitize import CONFIGS as WAVE_CONFIGS  # beside this script
from gpu_wave_sanitize import FP8_NARROW

from cutemma.kernels.dispatch import gemm as gemm_sm90
from cutemma.kernels.pick import NARROW_16
from cutemma.kernels.sm90.host import kernel_key
from cutemma.kernels.sm90.plan import Sm90Config
from cutemma.kernels.space import (
    SWAP_WIDE_SPLIT,
    WIDE_16,
    candidates,
    mid_swapped_kernel,
    swapped_kernel,
    token_pair,
)

BOUND = {torch.float32: 1e-5, torch.float16: 1.5e-3, torch.bfloat16: 1e-2}
TF32_BOUND = 3e-3  # tf32 keeps 10 mantissa bits of each fp32 input (truncated)
# fp8 wgmma accumulates with fewer bits than f32 (seen here: 3e-5 at K=16, 1.3e-3 at K=4096
# with f32 output); the bound of this "fast accumulation" (promote=False); promoted
# configs add each k tile's sums (128 k) into f32: run 10 measured 1.2-1.3e-4, the same as
# torch._scaled_mm's default (1.3e-4 at 4096^3; its fast accumulation 1.3e-3)
FP8_F32_BOUND = 3e-3
FP8_PROMOTED_F32_BOUND = 3e-4
FP8_CONFIGS = [Sm90Config(128, 128), Sm90Config(128, 128, cluster=2),
               Sm90Config(128, 256, promote=False), Sm90Config(128, 192),
               Sm90Config(192, 128, consumers=3), Sm90Config(64, 128, schedule="pingpong")]  # fmt: skip
CONFIGS = [
    Sm90Config(128, 128),
    Sm90Config(128, 256),
    Sm90Config(128, 256, epilogue="regs"),
    Sm90Config(128, 128, schedule="pingpong"),
    Sm90Config(128, 256, epilogue="tma2"),
    Sm90Config(128, 128, schedule="pingpong", epilogue="tma2"),
    Sm90Config(128, 192),
    Sm90Config(128, 64),
    NARROW_16,
    Sm90Config(128, 320, wgmma_n=64, epilogue="regs"),  # 5 wgmmas along N
    Sm90Config(128, 256, wgmma_n=128),  # 2 along N, the TMA-store epilogue
    # two warpgroups side by side along N, three m64 wgmmas each (SW64/SW32 staging tiles)
    Sm90Config(192, 192, consumers_n=2),
    Sm90Config(192, 160, consumers_n=2),
    Sm90Config(192, 128, consumers_n=2, epilogue="regs"),
    Sm90Config(192, 192, consumers_n=2, stream_k=True),
    WIDE_16,  # built-in 128x320: m64n256 + m64n64, half-width staging tile
    # one token tile's 128-row swapped tiles shared by stream-K (space.SWAP_WIDE_SPLIT; 192
    # tokens: every major pair of this harness tiles it; weights past the evict-first bound)
    replace(swapped_kernel(192, 65536, 8192, "bf16", 132, False, 128), split=SWAP_WIDE_SPLIT),
    # a 16-bit 128-row whole swapped tile with the ring as deep as fits (space.stream_stages)
    swapped_kernel(64, 28672, 4096, "bf16", 132, True),
    # an N-major B's 64-row whole swapped tiles, the deepest ring (space._n_major_whole; 64
    # tokens: every major pair of this harness tiles it)
    *[c for c in candidates(64, 20000, 2048, "bf16", b_major="N") if c.swap_ab and c.block_m == 64],
    # 64-row tiles as wide as fills a wave (space.wave_width) and the narrow ones
    # (space.narrow_kernels): widths off the 64-column grid
    *WAVE_CONFIGS,
    # 128-row tiles as wide as fills a wave (space.fitted_wave_width), whole and shared
    Sm90Config(128, 144),
    Sm90Config(128, 208),
    Sm90Config(128, 240, stream_k=True, split=8),
    # the TMA store in passes through two staging buffers (config.store_passes): 4 of 64,
    # 4 of 32, 6 of 32 and 7 (odd: the next tile's first pass takes the buffer of the last)
    Sm90Config(128, 256, epilogue="tmab"),
    Sm90Config(256, 128, epilogue="tmab"),
    Sm90Config(128, 192, epilogue="tmab"),
    Sm90Config(128, 224, epilogue="tmab"),
]  # fmt: skip (built-in 16-bit widths, and tiles wider than one wgmma)
CLUSTER_CONFIGS = [Sm90Config(128, 256, cluster=2), Sm90Config(128, 128, cluster=2),
                   Sm90Config(128, 256, cluster=2, multicast="A"),
                   # 2 x 2 clusters sharing both operands
                   Sm90Config(128, 128, cluster=4, multicast="AB"),
                   Sm90Config(128, 256, cluster=4, multicast="AB"),
                   Sm90Config(128, 128, cluster=4, multicast="AB", epilogue="regs")]  # fmt: skip
MAJORS = [("K", "K"), ("K", "N"), ("M", "K"), ("M", "N")]
# 16-bit calls past SWAP_MAX_M may run swapped, their tokens in tiles fitted to whole waves
# (space.swaps_call, space.wave_tokens): whole and stream-K, on calls of up to 16384 rows
# (D^T's many token tiles), each major pair whose swapped operands the tile takes
FEW_COLS_CONFIGS = [mid_swapped_kernel(224, "bf16", False),
                    replace(mid_swapped_kernel(232, "bf16", True), stream_k=True, split=16),
                    replace(mid_swapped_kernel(128, "bf16", False), stream_k=True, split=4),
                    token_pair(mid_swapped_kernel(224, "bf16", False)),
                    replace(token_pair(mid_swapped_kernel(128, "bf16", False)), cluster=4,
                            multicast="AB"),
                    # 256 weight rows, D^T through two staging buffers: 5 passes of 24
                    # tokens, 4 of 32 (bench/experiments/swap256_buffered.py's kernels)
                    Sm90Config(256, 120, epilogue="tmatb", swap_ab=True),
                    Sm90Config(256, 128, epilogue="tmatb", swap_ab=True),
                    # and calls of 257-2048 rows on wave_tokens' widths (MID_WAVE_TOKEN_TILES)
                    mid_swapped_kernel(120, "bf16", False),
                    replace(mid_swapped_kernel(72, "bf16", False), stream_k=True, split=16),
                    mid_swapped_kernel(168, "bf16", True)]  # fmt: skip
FEW_COLS_SHAPES = [(5800, 528, 2688), (16384, 1000, 520), (4104, 72, 136), (2056, 1024, 4104),
                   (6144, 2040, 1040), (1187, 1584, 1456), (300, 8192, 1032)]  # fmt: skip
# promoted fp8 with two wgmma sets and one batch in flight (kept apart from the list above)
FP8_CONFIGS = [*FP8_CONFIGS, Sm90Config(128, 128, promote="overlap"),
               Sm90Config(128, 192, promote="split"), Sm90Config(128, 128, promote="split"),
               Sm90Config(128, 192, promote="split", epilogue="tma2"),
               Sm90Config(128, 320, wgmma_n=160, promote=False, epilogue="regs"),
               Sm90Config(192, 128, consumers_n=2),  # promoted, warpgroups along N
               Sm90Config(128, 112, promote="overlap"), Sm90Config(128, 144, promote="split"),
               Sm90Config(128, 128, promote="overlap", cluster=4, multicast="AB"),
               Sm90Config(128, 192, cluster=4, multicast="AB"),
               replace(swapped_kernel(192, 65536, 8192, "e4m3", 132, False, 128),
                       split=SWAP_WIDE_SPLIT), *FP8_NARROW,
               # several token tiles wider than 128, whole: what the model picks for such fp8
               # calls since their rate is the plain tile's (cost.efficiency); promoted by
               # token halves (space.mid_swapped_kernel), 136 and 200 in parts of 72 + 64 and
               # 104 + 96 (config.split_widths), 200 shared by stream-K too
               mid_swapped_kernel(136, "e4m3", True), mid_swapped_kernel(176, "e4m3", False),
               replace(mid_swapped_kernel(200, "e4m3", True), stream_k=True, split=8),
               # a 128-row whole swapped tile over a full grid: the ring at its floor
               # (space.RING_FLOOR)
               swapped_kernel(64, 57344, 8192, "e4m3", 132, True),
               # a wide token tile whose 256-byte ring would sit under the floor: 128-byte
               # k tiles, twice the stages (the 192-token stream-K one above is such too)
               swapped_kernel(144, 16384, 2048, "e4m3", 132, True, 128),
               # pairs along the tokens sharing the weights (space.token_pair): odd and even
               # token tile counts, one tile, rows half a sector apart among the shapes
               token_pair(mid_swapped_kernel(136, "e4m3", True)),
               token_pair(mid_swapped_kernel(200, "e4m3", False)),
               # and in 2 x 2 clusters (space.token_quads: token tiles a multiple of 16)
               replace(token_pair(mid_swapped_kernel(144, "e4m3", False)), cluster=4,
                       multicast="AB"),
               # promoted by N halves, stored in passes through two buffers; swapped too
               Sm90Config(128, 192, promote="split", epilogue="tmab"),
               replace(mid_swapped_kernel(136, "e4m3", True), epilogue="tmatb")]  # fmt: skip


def operand(rows, cols, contiguous_rows, dtype, gen):
    """(rows, cols); rows contiguous (column-major) when contiguous_rows."""
    if contiguous_rows:
        return torch.randn((cols, rows), generator=gen, device="cuda").to(dtype).t()
    return torch.randn((rows, cols), generator=gen, device="cuda").to(dtype)


def shapes_for(am, bm, rng, count):
    """Random (M, N, K) whose TMA-contiguous extents are multiples of 8 (16-byte strides)."""
    fixed = [(1, 8, 8), (8, 8, 8), (13, 24, 72), (128, 128, 64), (129, 257, 136), (200, 72, 8),
             (1000, 1000, 1000), (256, 512, 4096), (777, 640, 264), (64, 1032, 520)]  # fmt: skip
    out = []
    for m, n, k in fixed + [
        (rng.randint(1, 2100), rng.randint(1, 2100), rng.randint(1, 1100)) for _ in range(count)
    ]:
        k = -(-k // 8) * 8  # A K-major or B K-major both need it; M/N-major need M/N
        if am == "M":
            m = -(-m // 8) * 8
        if bm == "N":
            n = -(-n // 8) * 8
        out.append((m, n, k))
    return out


def _bound(dtype, out_dtype, config=None) -> float:
    if dtype == torch.float32:
        return TF32_BOUND
    if dtype.itemsize == 1 and out_dtype == torch.float32:
        return (
            FP8_F32_BOUND if config is not None and not config.promote else FP8_PROMOTED_F32_BOUND
        )
    return BOUND[out_dtype]


def _swapped_builds(cfg, am, bm) -> bool:
    """Whether swapped ``cfg`` tiles a call's operands of majors (am, bm): its A is B^T
    (M-major where B is N-major), its B A^T (N-major where A is M-major)."""
    from cutemma.kernels.space import builds

    swapped = ("M" if bm == "N" else "K", "N" if am == "M" else "K")
    return builds(replace(cfg, swap_ab=False), "bf16", swapped)


def check(m, n, k, dtype, am, bm, config, gen, out_dtype=None, beta=0.0, alpha=1.0, nan=False,
          via_gemm=False):  # fmt: skip
    A = operand(m, k, am == "M", torch.float32, gen).to(dtype)
    B = operand(k, n, bm == "K", torch.float32, gen).to(dtype)
    out_dtype = out_dtype or (torch.bfloat16 if dtype.itemsize == 1 else dtype)
    C = torch.randn((m, n), generator=gen, device="cuda").to(out_dtype) if beta else None
    if nan:
        A[m // 2, k // 2] = float("nan")
    out = torch.full((m, n), float("nan"), dtype=out_dtype, device="cuda")
    if via_gemm:
        import cutemma

        cutemma.gemm(A, B, C, alpha=alpha, beta=beta, out=out)
    else:
        gemm_sm90(A, B, C, alpha=alpha, beta=beta, out=out, config=config)
    torch.cuda.synchronize()
    ref = alpha * (A.double() @ B.double())
    if C is not None:
        ref += beta * C.double()
    case = {"m": m, "n": n, "k": k, "dtype": str(dtype)[6:], "out": str(out_dtype)[6:],
            "majors": am + bm, "config": config.name if config else "cutemma.gemm", "alpha": alpha, "beta": beta}  # fmt: skip
    if nan:
        row_nan = bool(torch.isnan(out[m // 2]).all())
        others = torch.cat([out[: m // 2], out[m // 2 + 1 :]])
        ok = row_nan and bool(torch.isfinite(others).all())
        return {**case, "nan_row_propagates": row_nan, "ok": ok}
    written = bool(torch.isfinite(out.double()).all())
    err = float((out.double() - ref).norm() / ref.norm().clamp_min(1e-30))
    return {**case, "rel_err": err, "fully_written": written,
            "ok": written and err <= _bound(dtype, out_dtype, config)}  # fmt: skip


def correctness(quick: bool) -> list[dict]:
    rng = random.Random(12)
    gen = torch.Generator(device="cuda").manual_seed(12)
    rows = []
    for dtype in (torch.bfloat16, torch.float16):
        for am, bm in MAJORS:
            for cfg in CONFIGS:
                for m, n, k in shapes_for(am, bm, rng, 2 if quick else 8):
                    rows.append(check(m, n, k, dtype, am, bm, cfg, gen))
                m, n, k = shapes_for(am, bm, rng, 0)[4]
                rows.append(check(m, n, k, dtype, am, bm, cfg, gen, torch.float32, 0.5, 1.5))
                rows.append(check(m, n, k, dtype, am, bm, cfg, gen, dtype, -1.0, 0.75))
                rows.append(check(m, n, k, dtype, am, bm, cfg, gen, dtype, 0.0, -0.5))
                rows.append(check(m, n, k, dtype, am, bm, cfg, gen, nan=True))
    for dtype in (torch.bfloat16, torch.float16):
        for am, bm in MAJORS:
            for cfg in [c for c in FEW_COLS_CONFIGS if _swapped_builds(c, am, bm)]:
                for m, n, k in FEW_COLS_SHAPES:
                    rows.append(check(m, n, k, dtype, am, bm, cfg, gen))
                m, n, k = FEW_COLS_SHAPES[0]
                rows.append(check(m, n, k, dtype, am, bm, cfg, gen, torch.float32, 0.5, 1.5))
                rows.append(check(m, n, k, dtype, am, bm, cfg, gen, nan=True))
    # clusters of 2 CTAs sharing B (pairs along M) or A (along N) by multicast (odd tile
    # counts: a CTA past the edge)
    for dtype in (torch.bfloat16,):
        for am, bm in MAJORS:  # every major pair (the N-major-B bug is fixed, run 14)
            for cfg in CLUSTER_CONFIGS:
                for m, n, k in shapes_for(am, bm, rng, 2 if quick else 6):
                    rows.append(check(m, n, k, dtype, am, bm, cfg, gen))
                rows.append(check(136, 520, 200, dtype, am, bm, cfg, gen, torch.float32, 0.5, 1.5))
                rows.append(check(136, 520, 200, dtype, am, bm, cfg, gen, nan=True))
    # tf32 and fp8: K-major A and B (the only majors their GMMA reads)
    for dtype in (torch.float32, torch.float8_e4m3fn, torch.float8_e5m2)[1 if ONLY else 0 :]:
        outs = (torch.float32,) if dtype == torch.float32 else (torch.bfloat16, torch.float32)
        for cfg in CONFIGS[:2] if dtype == torch.float32 else FP8_CONFIGS:
            for m, n, k in shapes_for("K", "K", rng, 2 if quick else 6):
                if dtype.itemsize == 1:
                    k = -(-k // 16) * 16  # 16-byte rows of 1-byte elements
                for out_dtype in outs:
                    rows.append(check(m, n, k, dtype, "K", "K", cfg, gen, out_dtype))
            rows.append(check(300, 200, 512, dtype, "K", "K", cfg, gen, outs[-1], 0.5, 2.0))
    if ONLY:
        return rows
    # through cutemma.gemm: the dispatcher picks sm90 for aligned 2-D calls (fp8 too)
    for m, n, k in [(4096, 512, 4096), (333, 4104, 1008), (8192, 8200, 256)]:  # last: 128x192
        for dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            rows.append(check(m, n, k, dtype, "K", "K", None, gen, torch.float32, via_gemm=True))
    for dtype in (torch.bfloat16, torch.float16):
        for am, bm in MAJORS:
            for m, n, k in [(8192, 8192, 256), (333, 4104, 1000), (5, 8, 16), (5800, 528, 2688),
                            (16384, 1000, 520), (8064, 432, 2384)]:  # fmt: skip
                rows.append(check(m, n, k, dtype, am, bm, None, gen, via_gemm=True))
    rows += gpu_sm90_batched.correctness(quick)  # batched 3-D (rank-3 TMA maps)
    return rows


def bench(quick: bool) -> dict:
    import triton.testing as tt

    from cutemma.kernels.dispatch import gemm as gemm_sm80
    from cutemma.kernels.pick import BUILTIN_CONFIGS

    SM80_LARGE = BUILTIN_CONFIGS["large"]  # an sm80 config: cutemma.gemm keeps the sm80 kernel
    if not CONFIGS:  # (--only kept none of the square tiles this bench times)
        return {"skipped": f"--only {ONLY!r} keeps none of CONFIGS, the tiles this bench times"}

    def ms(fn):
        return tt.do_bench(fn, warmup=25, rep=100 if not quick else 40, return_mode="median")

    # noqa B023 below: each lambda is timed (called) before the loop variables move on

    out = {"rows": [], "ablation": []}
    gen = torch.Generator(device="cuda").manual_seed(1)
    sizes = [1024, 2048, 4096, 6144, 8192] if not quick else [4096, 8192]
    for s in sizes:
        for am, bm in (("K", "K"), ("K", "N")):
            A = operand(s, s, am == "M", torch.bfloat16, gen)
            B = operand(s, s, bm == "K", torch.bfloat16, gen)
            D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
            flop = 2.0 * s**3
            t_cublas = ms(lambda: torch.matmul(A, B, out=D))  # noqa: B023
            row = {"m": s, "n": s, "k": s, "dtype": "bf16", "majors": am + bm,
                   "cublas_tflops": flop / t_cublas / 1e9}  # fmt: skip
            for cfg in CONFIGS:
                t = ms(lambda cfg=cfg: gemm_sm90(A, B, out=D, config=cfg))  # noqa: B023
                row[f"sm90_{cfg.name}_tflops"] = flop / t / 1e9
            if s in (4096, 8192):
                t = ms(lambda: gemm_sm80(A, B, out=D, config=SM80_LARGE))  # noqa: B023
                row["sm80_default_tflops"] = flop / t / 1e9
            t2 = ms(lambda: torch.matmul(A, B, out=D))  # noqa: B023
            row["cublas_again_tflops"] = flop / t2 / 1e9
            best = max(v for k_, v in row.items() if k_.startswith("sm90_"))
            row["best_sm90_over_cublas"] = best / max(
                row["cublas_tflops"], row["cublas_again_tflops"]
            )
            out["rows"].append(row)
            print(json.dumps(row), flush=True)
    # ablation at 8192^3 bf16 KK: what each knob buys
    s = 8192
    A = operand(s, s, False, torch.bfloat16, gen)
    B = operand(s, s, True, torch.bfloat16, gen)
    D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
    flop = 2.0 * s**3
    variants = [
        ("128x256 persistent grouped(8) auto stages", Sm90Config(128, 256), True),
        ("128x256 raster group_m=1 (row-major tiles)", Sm90Config(128, 256, group_m=1), True),
        ("128x256 2 stages", Sm90Config(128, 256, stages=2), True),
        ("128x256 3 stages", Sm90Config(128, 256, stages=3), True),
        ("128x128 persistent auto stages", Sm90Config(128, 128), True),
        ("128x256 cluster 2x1, B multicast", Sm90Config(128, 256, cluster=2), True),
        ("128x128 1 consumer warpgroup (64x128 tiles)", Sm90Config(64, 128, consumers=1), True),
    ]
    t_cublas = ms(lambda: torch.matmul(A, B, out=D))  # noqa: B023
    out["ablation_cublas_tflops"] = flop / t_cublas / 1e9
    for what, cfg, _ in variants:
        try:
            t = ms(lambda cfg=cfg: gemm_sm90(A, B, out=D, config=cfg))
            r = {"variant": what, "config": cfg.name, "tflops": flop / t / 1e9}
        except Exception as exc:  # a variant that does not build is reported, not fatal
            r = {"variant": what, "config": cfg.name, "error": f"{type(exc).__name__}: {exc}"}
        out["ablation"].append(r)
        print(json.dumps(r), flush=True)
    return out


def summarize(r: dict) -> dict:
    import statistics

    return {k: {"median": statistics.median(v), "max": max(v), "min": min(v)} for k, v in r.items()}


def bench2() -> dict:
    """Interleaved rounds (the figures to quote), transformer shapes, fp8, tf32, host cost."""
    import cutemma
    from cutemma.kernels.dispatch import gemm as gemm_any

    gen = torch.Generator(device="cuda").manual_seed(3)
    res = {}
    for s, bm in ((4096, "N"), (8192, "N"), (4096, "K"), (8192, "K")):
        A = operand(s, s, False, torch.bfloat16, gen)
        B = operand(s, s, bm == "K", torch.bfloat16, gen)  # N: the usual torch layout
        D = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
        cases = {"cublas": lambda A=A, B=B, D=D: torch.matmul(A, B, out=D)}
        cfgs = [Sm90Config(128, 256), Sm90Config(128, 256, stages=3), Sm90Config(128, 128)]
        if bm == "K":
            cfgs = [Sm90Config(128, 256), Sm90Config(128, 256, cluster=2),
                    Sm90Config(128, 128), Sm90Config(128, 128, cluster=2)]  # fmt: skip
        for cfg in cfgs:
            cases[cfg.name] = lambda cfg=cfg, A=A, B=B, D=D: gemm_sm90(A, B, out=D, config=cfg)
        if s == 8192 and bm == "N":
            for cfg in (Sm90Config(128, 256, group_m=16), Sm90Config(128, 256, group_m=4)):
                cases[f"{cfg.name}_g{cfg.group_m}"] = lambda cfg=cfg, A=A, B=B, D=D: gemm_sm90(
                    A, B, out=D, config=cfg
                )
        r = summarize(rounds(cases, 2.0 * s**3))
        res[f"bf16_{s}_K{bm}"] = r
        print(s, json.dumps({k: round(v["median"], 1) for k, v in r.items()}), flush=True)
    # transformer shapes (bench/gemm.py's list), A row-major, B row-major, cutemma.gemm
    rows = []
    for m, n, k in [(16, 4096, 4096), (128, 4096, 4096), (1024, 4096, 4096), (4096, 4096, 14336),
                    (4096, 14336, 4096), (8192, 4096, 4096), (16384, 4096, 4096),
                    (16384, 14336, 4096)]:  # fmt: skip
        A = operand(m, k, False, torch.bfloat16, gen)
        B = operand(k, n, False, torch.bfloat16, gen)
        D = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
        cases = {
            "cublas": lambda A=A, B=B, D=D: torch.matmul(A, B, out=D),
            "cutemma": lambda A=A, B=B, D=D: gemm_any(A, B, out=D),
        }
        r = summarize(rounds(cases, 2.0 * m * n * k, 3))
        rows.append({"m": m, "n": n, "k": k, **r})
        print(m, n, k, json.dumps({k_: round(v["median"], 1) for k_, v in r.items()}), flush=True)
    res["transformer_bf16_KN"] = rows
    # fp8 e4m3 8192^3 vs torch._scaled_mm (per-tensor scales), tf32 vs cuBLAS tf32
    s = 8192
    A8 = operand(s, s, False, torch.float32, gen).to(torch.float8_e4m3fn)
    B8 = operand(s, s, True, torch.float32, gen).to(torch.float8_e4m3fn)
    D8 = torch.empty((s, s), dtype=torch.bfloat16, device="cuda")
    one = torch.tensor(1.0, device="cuda")
    cases = {
        "torch_scaled_mm": lambda: torch._scaled_mm(A8, B8, one, one, out_dtype=torch.bfloat16),
        "cutemma_sm90": lambda: gemm_sm90(A8, B8, out=D8),
        "cutemma_gemm_sm80": lambda: cutemma.gemm(A8, B8, out=D8),
    }
    try:
        res["e4m3_8192"] = summarize(rounds(cases, 2.0 * s**3, 3))
    except Exception as exc:
        res["e4m3_8192"] = {"error": f"{type(exc).__name__}: {exc}"}
    print("e4m3", res["e4m3_8192"], flush=True)
    torch.backends.cuda.matmul.allow_tf32 = True
    Af = operand(s, s, False, torch.float32, gen)
    Bf = operand(s, s, True, torch.float32, gen)
    Df = torch.empty((s, s), dtype=torch.float32, device="cuda")
    cases = {
        "cublas_tf32": lambda: torch.matmul(Af, Bf, out=Df),
        "cutemma": lambda: cutemma.gemm(Af, Bf, out=Df),
    }
    res["tf32_8192"] = summarize(rounds(cases, 2.0 * s**3, 3))
    print("tf32", res["tf32_8192"], flush=True)
    # host time per call: a 128^3 call repeated (GPU work ~ nothing), vs torch.matmul
    A = operand(128, 128, False, torch.bfloat16, gen)
    B = operand(128, 128, False, torch.bfloat16, gen)
    D = torch.empty((128, 128), dtype=torch.bfloat16, device="cuda")
    host = {}
    for name, fn in (("cutemma.gemm", lambda: gemm_any(A, B, out=D)),
                     ("gemm_sm90", lambda: gemm_sm90(A, B, out=D)),
                     ("torch.matmul", lambda: torch.matmul(A, B, out=D))):  # fmt: skip
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(2000):
            fn()
        host[name] = (time.perf_counter() - t) / 2000 * 1e6
        torch.cuda.synchronize()
    res["host_us_per_call"] = host
    print("host us/call", host, flush=True)
    return res


def variants_2d() -> set:
    """Every (kernel key, arch) the 2-D checks compile, a superset
    (precompile: NVRTC in forked workers, ~1 s a variant, instead of one by one)."""
    got = set()
    for dt in ("bf16", "f16"):
        for am, bm in MAJORS:
            for cfg in CONFIGS + FEW_COLS_CONFIGS + (CLUSTER_CONFIGS if dt == "bf16" else []):
                for o in (dt, "f32"):
                    got.add((kernel_key(cfg, dt, am, bm, o, o), "sm_90a"))
    for cfg in [] if ONLY else CONFIGS[:2]:
        got.add((kernel_key(cfg, "tf32", "K", "K", "f32", "f32"), "sm_90a"))
    for dt in ("e4m3", "e5m2"):
        for cfg in FP8_CONFIGS + ([] if ONLY else [Sm90Config(128, 192)]):
            for o in ("bf16", "f32"):
                got.add((kernel_key(cfg, dt, "K", "K", o, o), "sm_90a"))
    return got


def precompile_2d(processes: int = 14) -> dict:
    """Compile :func:`variants_2d` and the batched checks' kernels in forked workers,
    before this process touches CUDA."""
    import multiprocessing as mp

    vs = sorted(variants_2d(), key=str)
    t = time.perf_counter()
    with mp.get_context("fork").Pool(processes) as pool:
        res = pool.map(gpu_sm90_batched._build, vs, chunksize=1)
    bad = [f"{v}: {r}" for v, r in zip(vs, res) if r != "ok"]
    return {"variants": len(vs), "seconds": round(time.perf_counter() - t, 1), "failed": bad}


ONLY = ""  # --only: a regex of config names; the other configs and calls are skipped


def _only(pattern: str) -> None:
    global ONLY, CONFIGS, CLUSTER_CONFIGS, FP8_CONFIGS, FEW_COLS_CONFIGS
    ONLY = pattern
    keep = re.compile(pattern).search
    CONFIGS = [c for c in CONFIGS if keep(c.name)]
    FEW_COLS_CONFIGS = [c for c in FEW_COLS_CONFIGS if keep(c.name)]
    CLUSTER_CONFIGS = [c for c in CLUSTER_CONFIGS if keep(c.name)]
    FP8_CONFIGS = [c for c in FP8_CONFIGS if keep(c.name)]


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "gpu_sm90.json"
    if "--only" in sys.argv:
        _only(sys.argv[sys.argv.index("--only") + 1])
    quick = "--quick" in sys.argv
    faulthandler.dump_traceback_later(420, exit=True)  # a hung kernel: say where, then stop
    t = time.perf_counter()
    pre = None
    if "--batched" in sys.argv:  # only the batched checks (and their timing); compile
        # their kernels in forked workers before this process touches CUDA
        pre = gpu_sm90_batched.precompile(gpu_sm90_batched.cases(quick))
        print("precompile", json.dumps(pre)[:600], flush=True)
    elif "--no-precompile" not in sys.argv:
        pre = precompile_2d()
        if not ONLY:
            pre["batched"] = gpu_sm90_batched.precompile(gpu_sm90_batched.cases(quick))
        print("precompile", json.dumps(pre)[:600], flush=True)
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "precompile": pre}
    try:
        rows = (
            gpu_sm90_batched.correctness(quick) if "--batched" in sys.argv else correctness(quick)
        )
    except Exception:
        traceback.print_exc()
        rows = [{"ok": False, "error": traceback.format_exc()}]
    result["correctness_s"] = time.perf_counter() - t
    bad = [r for r in rows if not r["ok"]]
    result["checks"], result["failed"] = len(rows), bad
    print(
        f"correctness: {len(rows) - len(bad)}/{len(rows)} pass in {result['correctness_s']:.1f} s"
    )
    for r in bad[:10]:
        print("FAIL", json.dumps(r)[:400])
    json.dump(result, open(path, "w"), indent=1)
    benches = (("bench2", bench2), ("bench", lambda: bench(quick)))
    if "--batched" in sys.argv:
        benches = (("bench_batched", gpu_sm90_batched.bench),
                   ("bench_batched_shared_b", lambda: gpu_sm90_batched.bench(shared_b=True)))  # fmt: skip
    if not bad and "--no-bench" not in sys.argv:
        for name, fn in benches:
            try:
                result[name] = fn()
            except Exception:
                traceback.print_exc()
                result[name] = {"error": traceback.format_exc()}
            json.dump(result, open(path, "w"), indent=1)
    result["all_checks"] = rows
    json.dump(result, open(path, "w"), indent=1)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
