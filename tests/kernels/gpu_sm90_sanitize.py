"""A few edge-shape sm90 GEMMs for compute-sanitizer (memcheck, racecheck, synccheck).

compute-sanitizer --tool memcheck python tests/kernels/gpu_sm90_sanitize.py [fp8 | cluster | quad | buffered | --batched]

``fp8``: only the promoted fp8 configs (128x128, 3 consumers 192x128, 128x192; the
last two also with schedule "alternate"; 128x192 also promoted by N halves) and the
pingpong ones (bf16 128x128, fp8 64x128),
with one shape of more tiles than SMs so both pingpong warpgroups run several tiles and
hand over through the order barrier (and fp8's 2 x 2 clusters). ``cluster``: only
clusters (of 2, and of 2 x 2 sharing both operands), both A and both B majors. ``quad``:
only the 2 x 2 clusters, then fp8's. ``--batched``: only batched 3-D calls (rank-3 maps for A and B, a shared A, a
shared B, the TMA-store and register epilogues, a cluster of 2, a beta with a shared C).
``swap``: the swapped kernels' "tmat" epilogue (D^T through an MN-major staging tile: one
token tile whole and shared by stream-K, several token tiles whole and stream-K) and the
widths fitted to a few columns, bf16 and e4m3, each stream-K config run twice (the same
bits every run); ``swap few``: those alone for 16-bit calls of few columns past
SWAP_MAX_M (their tokens in tiles fitted to whole waves) and a mid-size one on such
tiles; ``swap pairs``: mid-size swapped kernels in pairs along the tokens sharing the
weights (``space.token_pair``) and in 2 x 2 clusters (``space.token_quads``). ``fused``:
the pingpong tiles a fused 16-bit call may take (``space.fused_pingpong``) and cooperative
tiles (``FUSED_COOPERATIVE``; ``fused cooperative``: those alone), with bias + gelu_tanh,
a scale_col + bias + silu chain and a residual, through both epilogues (registers for f32
out, the TMA store for bf16), with shapes of one tile, edge tiles and more tiles than SMs
(both warpgroups hand over).
``kcluster``: split-K in a cluster (``Sm90Config(kcluster=2 | 4 | 8)``) over edge shapes,
bf16 and e4m3, f32 and bf16 out, with beta and C and with a fused epilogue, each run twice
(the same bits every run); and the swapped kernels as kcluster kernels
(``space.kcluster_kernels(..., swap=True)``); ``kcluster pairs``: the same calls on
clusters of kcluster pairs that multicast A or B (``Sm90Config(cluster=2, kcluster=S)``).
``buffered``: the TMA store in passes through two staging buffers ("tmab", "tmatb"), bf16
and e4m3, unswapped and swapped (256 weight rows), on edge shapes and on shapes of more
tiles than SMs (a CTA's next tile reuses the buffers while its last stores may drain).
``chunks``: stream-K shares of whole tiles' k chunks, taken chunk-major, through the
serial fix-up and the one that adds the partials together (``chunks small``: bf16 on the
calls of few tiles alone, for racecheck).
"""

from __future__ import annotations

import sys
from dataclasses import replace

import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

from cutemma.kernels.dispatch import gemm as gemm_sm90
from cutemma.kernels.pick import NARROW_16
from cutemma.kernels.sm90.plan import Sm90Config
from cutemma.kernels.space import WIDE_16

CONFIGS = [Sm90Config(128, 128), Sm90Config(128, 256), Sm90Config(128, 256, cluster=2),
           Sm90Config(128, 256, epilogue="tma2"), Sm90Config(128, 192), Sm90Config(128, 64),
           NARROW_16, replace(NARROW_16, evict_first="B"),
           Sm90Config(128, 320, wgmma_n=64, epilogue="regs"), Sm90Config(128, 256, wgmma_n=128),
           WIDE_16]  # fmt: skip
# clusters of 2 x 2 sharing both operands (`python gpu_sm90_sanitize.py quad`: these alone,
# both A and both B majors, then fp8's)
QUAD_CONFIGS = [
    Sm90Config(128, 128, cluster=4, multicast="AB"),
    Sm90Config(128, 256, cluster=4, multicast="AB"),
]
FP8_QUADS = [
    Sm90Config(128, 128, promote="overlap", cluster=4, multicast="AB"),
    Sm90Config(128, 192, cluster=4, multicast="AB"),
]
# `python gpu_sm90_sanitize.py cluster`: only clusters, both A and both B majors
CLUSTER_CONFIGS = [
    Sm90Config(128, 256, cluster=2),
    Sm90Config(128, 128, cluster=2),
    Sm90Config(128, 256, cluster=2, multicast="A"),
    *QUAD_CONFIGS,
]
FP8_CONFIGS = [
    Sm90Config(128, 128),
    Sm90Config(192, 128, consumers=3),
    Sm90Config(128, 192),
    Sm90Config(64, 128, schedule="pingpong"),
    Sm90Config(128, 192, schedule="alternate"),
    Sm90Config(192, 128, consumers=3, schedule="alternate"),
    Sm90Config(128, 128, promote="overlap"),  # two wgmma sets, one batch in flight
    Sm90Config(128, 192, promote="split"),  # fp8's default: N halves, one in flight
    Sm90Config(128, 192, promote="split", epilogue="tma2"),  # two TMA-store passes
    *FP8_QUADS,
]
PINGPONG_BF16 = [Sm90Config(128, 128, schedule="pingpong"),
                 Sm90Config(128, 128, schedule="pingpong", epilogue="tma2")]  # fmt: skip


def fp8_main() -> None:
    torch.manual_seed(0)
    worst = 0.0
    e4m3 = torch.float8_e4m3fn
    for cfg in FP8_CONFIGS:
        for m, n, k in [(1, 8, 16), (136, 264, 208), (400, 256, 144), (2048, 2056, 256)]:
            A = torch.randn(m, k).cuda().to(e4m3)
            B = torch.randn(n, k).cuda().to(e4m3).t()
            ref = A.double() @ B.double()
            for out_dtype in (torch.float32, torch.bfloat16):
                D = gemm_sm90(A, B, out_dtype=out_dtype, config=cfg)
                worst = max(worst, float((D.double() - ref).norm() / ref.norm()))
    for cfg in PINGPONG_BF16:
        for m, n, k in [(1, 8, 8), (136, 264, 200), (2048, 2056, 136)]:
            A = torch.randn(m, k).bfloat16().cuda()
            B = torch.randn(k, n).bfloat16().cuda()
            ref = A.double() @ B.double()
            for out_dtype in (torch.float32, torch.bfloat16):
                D = gemm_sm90(A, B, out_dtype=out_dtype, config=cfg)
                worst = max(worst, float((D.double() - ref).norm() / ref.norm()))
    torch.cuda.synchronize()
    print(f"sm90 fp8/pingpong sanitize run done; worst rel err {worst:.2e}")


def swap_cases() -> list:
    """(m, n, k, config, dtype) of the swapped and fitted-width schedules (issue 33);
    ``swap wide``: one token tile's 128-row tiles shared by stream-K alone."""
    from cutemma.kernels.space import (
        SWAP_WIDE_SPLIT,
        builds,
        fits,
        mid_swapped_kernel,
        swapped_kernel,
        token_tiles,
    )

    cases = []
    if "few" in sys.argv[2:]:  # 16-bit few columns past SWAP_MAX_M (space.wave_tokens)
        return _few_cols_cases()
    if "pairs" in sys.argv[2:]:  # pairs of CTAs along the tokens (space.token_pair)
        return _pair_cases()
    for dtype in ("bf16", "e4m3"):
        # one token tile, 128-row tiles shared by stream-K (space.SWAP_WIDE_SPLIT), at 168
        # tokens (its ring shallower than the rule beside the staging tile) and 232
        for tokens in (168, 232):  # (e4m3's promoted sums of 232 tokens do not fit: not kept)
            wide = swapped_kernel(tokens, 4096, 8192, dtype, 132, False, 128)
            if fits(wide, dtype) and builds(wide, dtype):
                cases.append((tokens, 512, 1024, replace(wide, split=SWAP_WIDE_SPLIT), dtype))
        if "wide" in sys.argv[2:]:
            continue
        shared = replace(swapped_kernel(16, 512, 1024, dtype, 132, False), split=4)
        cases += [
            (16, 512, 1024, shared, dtype),
            (40, 1024, 512, swapped_kernel(40, 1024, 512, dtype, 132, True), dtype),
        ]
        # rings one or more stages shallower than the in-flight rule: a wide token tile's
        # staging tile takes the room (space._shallower_if_needed)
        wide = (168, swapped_kernel(168, 4096, 8192, dtype, 132, False))
        wide = (
            (200, swapped_kernel(200, 14336, 8192, dtype, 132, True)) if dtype == "bf16" else wide
        )
        cases.append((wide[0], 512, 1024, wide[1], dtype))
        mid = mid_swapped_kernel(token_tiles(300, dtype)[0], dtype, False)
        cases += [(300, 512, 1024, c, dtype) for c in (mid, replace(mid, stream_k=True, split=4),
                                                       replace(mid, stream_k=True))]  # fmt: skip
        fitted = Sm90Config(128, 144, promote=True) if dtype == "e4m3" else Sm90Config(128, 144)
        cases += [
            (300, 288, 1024, c, dtype) for c in (fitted, replace(fitted, stream_k=True, split=4))
        ]
    return cases


def _pair_cases() -> list:
    """(m, n, k, config, dtype): mid-size swapped kernels in pairs along the tokens sharing
    the weights (space.token_pair) and in 2 x 2 clusters (space.token_quads), bf16 and
    e4m3, on token tiles of an odd count (the last pair's second CTA past the edge), an
    even count, and one tile; K an odd multiple of 16 bytes for e4m3 (rows half a sector
    apart) and weights past the last tile's edge."""
    from cutemma.kernels.space import mid_swapped_kernel, token_pair

    cases = []
    for dtype in ("bf16", "e4m3"):
        pair = token_pair(mid_swapped_kernel(136, dtype, False))
        tokens = 144 if dtype == "e4m3" else 128  # (16-bit halves: whole MN-major atoms too)
        quad = replace(
            token_pair(mid_swapped_kernel(tokens, dtype, False)), cluster=4, multicast="AB"
        )
        cases += [(m, n, k, cfg, dtype) for cfg in (pair, quad)
                  for m, n, k in ((300, 520, 1040), (272, 1000, 496), (545, 384, 2064),
                                  (100, 264, 512))]  # fmt: skip
    return cases


def _few_cols_cases() -> list:
    """(m, n, k, config, dtype): 16-bit calls of few columns past SWAP_MAX_M, and one of
    257-2048 rows (space.MID_WAVE_TOKEN_TILES: ten token tiles of 120 by thirteen weight
    tiles), on their wave-fitted token tiles (space.wave_tokens), whole and stream-K split
    16 and 4."""
    from cutemma.kernels.space import mid_swapped_kernel, wave_tokens

    cases = []
    for m, n, k in ((2600, 528, 1040), (4100, 72, 264), (1187, 1584, 1040)):
        whole = mid_swapped_kernel(wave_tokens(m, n, "bf16")[0], "bf16", False)
        shared = [replace(whole, stream_k=True, split=split) for split in (16, 4)]
        cases += [(m, n, k, cfg, "bf16") for cfg in (whole, *shared)]
    return cases


def swap_main() -> None:
    torch.manual_seed(0)
    worst, same = 0.0, True
    for m, n, k, cfg, dtype in swap_cases():
        A, B = torch.randn(m, k).cuda(), torch.randn(n, k).cuda().t()  # B K-major (nn.Linear)
        if dtype == "e4m3":
            A, B = A.to(torch.float8_e4m3fn), B.to(torch.float8_e4m3fn)
        else:
            A, B = A.bfloat16(), B.bfloat16()
        ref = A.double() @ B.double()
        for out_dtype in (torch.float32, torch.bfloat16):  # registers / the TMA store
            D = gemm_sm90(A, B, out_dtype=out_dtype, config=cfg)
            worst = max(worst, float((D.double() - ref).norm() / ref.norm()))
            if cfg.stream_k:
                same &= bool(torch.equal(D, gemm_sm90(A, B, out_dtype=out_dtype, config=cfg)))
        if cfg.cluster > 1:  # (pairs: a fused call may take them too; its ops run on D^T)
            bias = torch.randn(n).bfloat16().cuda()
            fused = torch.nn.functional.gelu(ref + bias.double(), approximate="tanh")
            D = gemm_sm90(A, B, out_dtype=torch.bfloat16, config=cfg,
                          epilogue=("bias", "gelu_tanh"), bias=bias)  # fmt: skip
            worst = max(worst, float((D.double() - fused).norm() / fused.norm()))
    torch.cuda.synchronize()
    print(
        f"sm90 swap/fitted sanitize run done; worst rel err {worst:.2e}; stream-K same bits: {same}"
    )


# cooperative tiles, their epilogue after each tile's mainloop: one staging pass, two, a
# cluster, one consumer warpgroup, passes through two buffers (4 of 64 and 4 of 32 columns)
FUSED_COOPERATIVE = (Sm90Config(128, 256), Sm90Config(128, 256, epilogue="tma2"),
                     Sm90Config(128, 128, cluster=2), NARROW_16,
                     Sm90Config(128, 256, epilogue="tmab"),
                     Sm90Config(256, 128, epilogue="tmab"))  # fmt: skip


def fused_main() -> None:
    from cutemma.kernels.space import fused_pingpong

    torch.manual_seed(0)
    worst = 0.0
    chains = (("bias", "gelu_tanh"), ("scale_col", "bias", "silu"), ("residual", "relu"))
    # (`fused cooperative`: those alone)
    coop = "cooperative" in sys.argv[2:]
    for cfg in FUSED_COOPERATIVE if coop else fused_pingpong("bf16") + FUSED_COOPERATIVE:
        for m, n, k in [(1, 8, 16), (136, 264, 200), (2048, 2056, 136)]:
            A = torch.randn(m, k).bfloat16().cuda()
            W = torch.randn(n, k).bfloat16().cuda()
            vecs = {"bias": torch.randn(n).bfloat16().cuda(),
                    "scale_col": torch.rand(n).bfloat16().cuda() + 0.5,
                    "residual": torch.randn(m, n).bfloat16().cuda()}  # fmt: skip
            for ops in chains:
                ref = A.double() @ W.double().t()
                if "scale_col" in ops:
                    ref = ref * vecs["scale_col"].double()
                if "bias" in ops:
                    ref = ref + vecs["bias"].double()
                if "residual" in ops:
                    ref = ref + vecs["residual"].double()
                act = {"gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
                       "silu": torch.nn.functional.silu, "relu": torch.relu}[ops[-1]]  # fmt: skip
                ref = act(ref)
                kw = {op: vecs[op] for op in ops if op in vecs}
                for out_dtype in (torch.float32, torch.bfloat16):
                    D = gemm_sm90(A, W.t(), out_dtype=out_dtype, config=cfg, epilogue=ops, **kw)
                    err = float((D.double() - ref).norm() / ref.norm())
                    worst = max(worst, err)
    torch.cuda.synchronize()
    print(f"sm90 fused sanitize run done; worst rel err {worst:.2e}")


def _operands(m: int, n: int, k: int, dtype: str) -> tuple:
    """A (m, k) and W (n, k) of ``dtype`` (nn.Linear's weights; the call takes W.t())."""
    A, W = torch.randn(m, k).cuda(), torch.randn(n, k).cuda()
    if dtype == "e4m3":
        return A.to(torch.float8_e4m3fn), W.to(torch.float8_e4m3fn)
    return A.bfloat16(), W.bfloat16()


def _checked(A, W, cfg, **kw) -> tuple[float, bool]:
    """The call's relative error to float64 at both outputs, and whether a second run of
    each gave the same bits."""
    ref = A.double() @ W.double().t()
    worst, same = 0.0, True
    for out_dtype in (torch.float32, torch.bfloat16):
        D = gemm_sm90(A, W.t(), out_dtype=out_dtype, config=cfg, **kw)
        worst = max(worst, float((D.double() - ref).norm() / ref.norm()))
        same &= bool(torch.equal(D, gemm_sm90(A, W.t(), out_dtype=out_dtype, config=cfg, **kw)))
    return worst, same


def kcluster_main() -> None:
    from cutemma.kernels.space import kcluster_kernels

    torch.manual_seed(0)
    worst, same = 0.0, True
    configs = [Sm90Config(128, 128, kcluster=2), Sm90Config(128, 256, kcluster=4),
               Sm90Config(64, 128, consumers=1, kcluster=8), Sm90Config(128, 64, kcluster=4)]  # fmt: skip
    fp8 = [Sm90Config(128, 192, promote="split", kcluster=4), Sm90Config(128, 128, kcluster=2)]
    pairs = "pairs" in sys.argv[2:]
    if pairs:  # clusters of kcluster pairs that multicast B (along M) or A (along N)
        configs = [Sm90Config(128, 128, cluster=2, kcluster=2),
                   Sm90Config(64, 128, consumers=1, cluster=2, multicast="A", kcluster=4),
                   Sm90Config(128, 64, cluster=2, multicast="A", kcluster=2)]  # fmt: skip
        fp8 = [
            Sm90Config(128, 128, cluster=2, kcluster=2),
            Sm90Config(128, 64, cluster=2, multicast="A", kcluster=4, promote="overlap"),
        ]
    cases = [(dtype, cfg, m, n, k) for dtype, cfgs in (("bf16", configs), ("e4m3", fp8))
             for cfg in cfgs
             for m, n, k in [(1, 8, 1040), (136, 264, 528), (300, 200, 2000), (17, 1000, 4096)]]  # fmt: skip
    # the swapped kernels as kcluster kernels (tokens as the kernel's N, D^T through "tmat")
    cases += [(dtype, cfg, m, n, k) for dtype in ("bf16", "e4m3")
              for m, n, k in [(1, 1024, 4096), (40, 576, 2048), (100, 200, 1040)]
              for cfg in kcluster_kernels(m, n, k, dtype, swap=True) if not pairs]  # fmt: skip
    for dtype, cfg, m, n, k in cases:
        A, W = _operands(m, n, k, dtype)
        err, ok = _checked(A, W, cfg)
        worst, same = max(worst, err), same and ok
        if dtype == "bf16" and not cfg.swap_ab:
            ref = A.double() @ W.double().t()
            C = torch.randn(m, n).bfloat16().cuda()
            D = gemm_sm90(A, W.t(), C, alpha=0.5, beta=2.0, config=cfg)
            r2 = 0.5 * ref + 2.0 * C.double()
            worst = max(worst, float((D.double() - r2).norm() / r2.norm()))
            b = torch.randn(n).bfloat16().cuda()
            D = gemm_sm90(A, W.t(), out_dtype=torch.bfloat16, config=cfg,
                          epilogue=("bias", "gelu_tanh"), bias=b)  # fmt: skip
            r3 = torch.nn.functional.gelu(ref + b.double(), approximate="tanh")
            worst = max(worst, float((D.double() - r3).norm() / r3.norm()))
    torch.cuda.synchronize()
    print(f"sm90 kcluster sanitize run done; worst rel err {worst:.2e}; same bits: {same}")


def chunks_main() -> None:
    """Stream-K shares of whole tiles' k chunks, taken chunk-major (streamk.sk_block): the
    serial fix-up (4 CTAs a tile) and the one that adds the partials together (8 and 16),
    on calls of few tiles (every tile shared) and of more tiles than SMs (whole tiles, then
    the last wave's shared), bf16 and e4m3, each run twice (the same bits)."""
    torch.manual_seed(0)
    worst, same = 0.0, True
    small = "small" in sys.argv[2:]  # (racecheck: the two calls of few tiles, bf16)
    cases = [(cfg, m, n, k, dtype)
             for dtype, fp8 in (("bf16", {}), ("e4m3", {"promote": "split"}))[: 1 if small else 2]
             for cfg in (Sm90Config(128, 128, stream_k=True, split=s, **fp8) for s in (4, 8, 16))
             for m, n, k in [(200, 300, 4160), (8, 136, 2064), (1100, 2000, 1040)][: 2 if small else 3]]  # fmt: skip
    for cfg, m, n, k, dtype in cases:
        err, ok = _checked(*_operands(m, n, k, dtype), cfg)
        worst, same = max(worst, err), same and ok
    torch.cuda.synchronize()
    print(f"sm90 stream-K chunks sanitize run done; worst rel err {worst:.2e}; same bits: {same}")


def batched() -> float:
    """Small batched calls (L = 3): every map kind and both epilogues; worst rel. error."""
    worst = 0.0
    for cfg in CONFIGS:
        for m, n, k in [(136, 264, 200), (1, 8, 8)]:
            A3 = torch.randn(3, m, k).bfloat16().cuda()
            B3 = torch.randn(3, n, k).bfloat16().cuda().transpose(-1, -2)  # K-major (clusters)
            A2, B2 = A3[0], B3[1]
            pairs = ((A3, B3), (A2, B3), (A3, B2), (A3[:1].expand(3, m, k), B3))
            for A, B in pairs if m > 1 else pairs[:1]:
                ref = torch.matmul(A.double(), B.double())
                for out_dtype in (torch.float32, torch.bfloat16):
                    D = gemm_sm90(A, B, out_dtype=out_dtype, config=cfg)
                    worst = max(worst, float((D.double() - ref).norm() / ref.norm()))
            C = torch.randn(m, n).bfloat16().cuda()
            D = gemm_sm90(A3, B3, C, alpha=0.5, beta=2.0, config=cfg)
            ref = 0.5 * torch.matmul(A3.double(), B3.double()) + 2.0 * C.double()
            worst = max(worst, float((D.double() - ref).norm() / ref.norm()))
    return worst


BUFFERED = [(Sm90Config(128, 256, epilogue="tmab"), "bf16"),
            (Sm90Config(256, 128, epilogue="tmab"), "bf16"),
            (Sm90Config(128, 224, epilogue="tmab"), "bf16"),
            (Sm90Config(128, 192, promote="split", epilogue="tmab"), "e4m3"),
            (Sm90Config(256, 120, epilogue="tmatb", swap_ab=True), "bf16"),
            (Sm90Config(128, 136, promote="split", epilogue="tmatb", swap_ab=True), "e4m3")]  # fmt: skip


def buffered_main() -> None:
    torch.manual_seed(0)
    worst = 0.0
    for cfg, dtype in BUFFERED:
        for m, n, k in [(1, 8, 16), (136, 264, 208), (2304, 2056, 144)]:
            A, B = torch.randn(m, k).cuda(), torch.randn(n, k).cuda().t()  # B K-major
            cast = torch.float8_e4m3fn if dtype == "e4m3" else torch.bfloat16
            A, B = A.to(cast), B.to(cast)
            ref = A.double() @ B.double()
            for out_dtype in (torch.float32, torch.bfloat16):  # registers / the TMA store
                D = gemm_sm90(A, B, out_dtype=out_dtype, config=cfg)
                worst = max(worst, float((D.double() - ref).norm() / ref.norm()))
    torch.cuda.synchronize()
    print(f"sm90 buffered-store sanitize run done; worst rel err {worst:.2e}")


def main() -> None:
    torch.manual_seed(0)
    if "--batched" in sys.argv:
        worst = batched()
        torch.cuda.synchronize()
        print(f"sm90 batched sanitize run done; worst rel err {worst:.2e}")
        return
    worst = 0.0
    quad = "quad" in sys.argv[1:]
    cluster = "cluster" in sys.argv[1:] or quad
    majors = [(a, b) for a in (False, True) for b in (False, True)] if cluster else None
    for cfg in QUAD_CONFIGS if quad else CLUSTER_CONFIGS if cluster else CONFIGS:
        for m, n, k in (
            [(8, 8, 8), (136, 264, 200)]
            if cluster
            else [(1, 8, 8), (136, 264, 200), (304, 128, 72)]
        ):
            for a_col, b_col in majors or ((False, True), (True, True)):
                A = (
                    torch.randn(k, m).bfloat16().cuda().t()
                    if a_col
                    else torch.randn(m, k).bfloat16().cuda()
                )
                B = (
                    torch.randn(n, k).bfloat16().cuda().t()
                    if b_col
                    else torch.randn(k, n).bfloat16().cuda()
                )
                ref = A.double() @ B.double()
                for out_dtype in (torch.float32, torch.bfloat16):  # regs / TMA-store epilogue
                    D = gemm_sm90(A, B, out_dtype=out_dtype, config=cfg)
                    worst = max(worst, float((D.double() - ref).norm() / ref.norm()))
    for cfg in FP8_QUADS if quad else ():
        for m, n, k in [(8, 8, 16), (400, 264, 144)]:
            A = torch.randn(m, k).cuda().to(torch.float8_e4m3fn)
            B = torch.randn(n, k).cuda().to(torch.float8_e4m3fn).t()
            ref = A.double() @ B.double()
            D = gemm_sm90(A, B, out_dtype=torch.float32, config=cfg)
            worst = max(worst, float((D.double() - ref).norm() / ref.norm()))
    torch.cuda.synchronize()
    print(f"sm90 sanitize run done; worst rel err {worst:.2e}")


if __name__ == "__main__":
    modes = {"fp8": fp8_main, "swap": swap_main, "fused": fused_main, "kcluster": kcluster_main,
             "chunks": chunks_main, "buffered": buffered_main}  # fmt: skip
    modes.get(sys.argv[1] if sys.argv[1:] else "", main)()
