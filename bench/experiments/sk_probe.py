"""Where mid-size stream-K loses, and what a stream of B can reach at the decode sizes
(issue 21), on the GPU, in one process:

    python bench/experiments/sk_probe.py OUT.json

Part 1 (the default), for mid-size shapes whose tiles leave a partial last wave: one tile
shape run as the built-in kernel, the same tile as a plain kernel, and the stream-K kernel
as its policy picks, with no shared tiles, with the last partial wave shared over the
grid, and with each tile of it cut into 2, 3, 4 or 6 aligned chunks, each against the
peer (interleaved L2-flushed medians).

Part 5 (``--part5-only``): M = 128 and 256, the built-in tile and the same as stream-K.

Part 3: rows under 0.97 with other tiles, clusters, promotions (``--part3-only``).

Part 2 (``--part2-only``), the streaming ceiling of item 2: for the bytes of each decode shape's B, a
device-to-device copy of that many bytes (read + written over its time), a Triton kernel
that only reads them and a CUDA one (grid-stride 16-byte non-coherent loads, several in
flight per thread, over a grid of 1-4 CTAs per SM), beside a 1 GiB copy.
"""

# ruff: noqa: B023 -- each loop iteration times its own lambdas before the next rebinds them
from __future__ import annotations

import sys as _sys  # the GPU checks' helpers (gpu_timing) live in tests/kernels
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests" / "kernels"))
_sys.path.insert(0, str(_Path(__file__).resolve().parent))
import datetime
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from gemm import interleaved_ms, median_ms  # noqa: E402
from read_ceiling import READ_SHAPES, READ_SOURCE  # noqa: E402

import cutemma  # noqa: E402
from cutemma.kernels import policy as streamk  # noqa: E402  (the policy computes stream-K's work)
from cutemma.kernels.dispatch import gemm as gemm_sm90  # noqa: E402
from cutemma.kernels.sm90 import host  # noqa: E402
from cutemma.kernels.sm90.config import Sm90Config  # noqa: E402

BF, E4 = torch.bfloat16, torch.float8_e4m3fn
GRID = 132
# (dtype, m, n, k, tile config): tiles leave 1.2-5.2 waves
CASES = [
    (BF, 512, 10240, 8192, dict(block_m=128, block_n=256)),
    (BF, 512, 10240, 8192, dict(block_m=128, block_n=192)),
    (BF, 1024, 10240, 8192, dict(block_m=128, block_n=256)),
    (BF, 512, 8192, 8192, dict(block_m=128, block_n=192)),
    (E4, 512, 8192, 28672, dict(block_m=128, block_n=128)),
    (E4, 2048, 8192, 28672, dict(block_m=128, block_n=192, promote="split")),
    (E4, 1024, 8192, 8192, dict(block_m=128, block_n=192, promote="split")),
    (BF, 2048, 8192, 8192, dict(block_m=128, block_n=256)),
    (BF, 1024, 57344, 8192, dict(block_m=128, block_n=256)),
]


def make(r, c, col, dtype):
    t = torch.randn(c, r, device="cuda") if col else torch.randn(r, c, device="cuda")
    t = t.to(dtype)
    return t.t() if col else t


def peer_call(fp8: bool, A, B, out):
    """The peer of one row: torch._scaled_mm (per-tensor scales of 1) or torch.matmul."""
    if fp8:
        one = torch.ones((), device="cuda")
        return lambda: torch._scaled_mm(A, B, one, one, out_dtype=BF)
    return lambda: torch.matmul(A, B, out=out)


def timed(cands: dict, peer, row: dict) -> dict:
    """Each candidate's time ratio (peer / ours, interleaved medians) into ``row["ratio"]``
    (an exception's name and message where it fails), the peer's time once."""
    for name, fn in cands.items():
        try:
            fn()
            torch.cuda.synchronize()
            ours, theirs = interleaved_ms(fn, peer, 10, 50, 3)
            row["ratio"][name] = round(theirs / ours, 4)
            row.setdefault("peer_us", round(theirs * 1e3, 2))
        except Exception as exc:  # noqa: BLE001
            row["ratio"][name] = f"{type(exc).__name__}: {exc}"[:200]
    return row


def forced(fn, value: int | None = None, ctas: int = GRID, sk_first: bool = False):
    """``fn`` whose stream-K launch is prepared with ``value`` shared tiles among ``ctas``
    CTAs (None: the policy's), from a kernel that walks its share before its whole tiles
    (``sk_first``, the order before run 6) or after, then reused."""
    import tempfile

    from cutemma.kernels.sm90 import source

    saved, env = dict(host._PREPARED), os.environ.get("CUTEMMA_CACHE_DIR")
    host._PREPARED.clear()
    real, real_helpers = streamk.sk_split, source.HELPERS_STREAMK
    if value is not None:
        streamk.sk_split = lambda *a: (value, ctas)
    if sk_first:  # the share's branch of sk_next ahead of the whole tiles' branch
        dp = real_helpers.index("  if (u.dp < tiles) {")
        share = real_helpers.index("  if (u.it < u.end) {")
        end = real_helpers.index("  return false;", share)
        source.HELPERS_STREAMK = (real_helpers[:dp] + real_helpers[share:end]
                                  + real_helpers[dp:share] + real_helpers[end:])  # fmt: skip
        os.environ["CUTEMMA_CACHE_DIR"] = tempfile.mkdtemp(prefix="skfirst")
        host.compiled_sm90.cache_clear()
    try:
        fn()
        mine = dict(host._PREPARED)
    finally:
        streamk.sk_split, source.HELPERS_STREAMK = real, real_helpers
        if sk_first:
            host.compiled_sm90.cache_clear()
            if env is None:
                os.environ.pop("CUTEMMA_CACHE_DIR", None)
            else:
                os.environ["CUTEMMA_CACHE_DIR"] = env
        host._PREPARED.clear()
        host._PREPARED.update(saved)

    def call():
        keep = {k: host._PREPARED.get(k) for k in mine}
        host._PREPARED.update(mine)
        try:
            fn()
        finally:
            for k, v in keep.items():
                if v is None:
                    host._PREPARED.pop(k, None)
                else:
                    host._PREPARED[k] = v

    return call


def _compile(case) -> str:
    from cutemma.cuda import compile
    from cutemma.kernels.sm90.source import gemm_sm90_source

    cfg, dt, am, bm = case
    try:
        compile(gemm_sm90_source(cfg, dt, am, bm, "bf16", "bf16"), "sm_90a")
        return "ok"
    except Exception as exc:  # noqa: BLE001
        return f"{cfg.name}: {exc}"[:300]


def variants(kw):
    return {
        "plain": Sm90Config(**kw),
        "sk": Sm90Config(**kw, stream_k=True),
    }


def prewarm() -> None:
    cases = []
    for dtype, _m, _n, _k, kw in CASES:
        dt, bmaj = ("e4m3", "K") if dtype == E4 else ("bf16", "N")
        cases += [(c, dt, "K", bmaj) for c in variants(kw).values()]
    for dtype, kws in TABLE_CANDIDATES.items():
        dt, bmaj = ("e4m3", "K") if dtype == E4 else ("bf16", "N")
        cases += [(Sm90Config(**kw), dt, "K", bmaj) for kw in kws]
    with ProcessPoolExecutor(16) as ex:
        bad = [r for r in ex.map(_compile, list(dict.fromkeys(cases))) if r != "ok"]
    print(f"prewarmed {len(cases)}; failed {bad}", flush=True)


def part1(result: dict) -> None:
    from cutemma.kernels.pick import builtin_sm90_config

    for dtype, m, n, k, kw in CASES:
        fp8 = dtype == E4
        A, B = make(m, k, False, dtype), make(k, n, fp8, dtype)
        out = torch.empty(m, n, device="cuda", dtype=BF)
        peer = peer_call(fp8, A, B, out)
        v = variants(kw)
        tiles = -(-m // kw["block_m"]) * -(-n // kw["block_n"])
        r = tiles % GRID
        cands = {
            "default": lambda: cutemma.gemm(A, B, out=out),
            "plain": lambda: gemm_sm90(A, B, out=out, config=v["plain"]),
        }
        sk = lambda: gemm_sm90(A, B, out=out, config=v["sk"])  # noqa: E731
        cands["sk_picked"] = sk  # streamk.sk_split's choice, whole tiles first
        cands["sk_picked_share_first"] = forced(sk, sk_first=True)
        for label, val, ctas in (("sk0", 0, GRID), ("sk_r", r, GRID), ("split2", r, 2 * r),
                                 ("split3", r, 3 * r), ("split4", r, 4 * r), ("split6", r, 6 * r)):  # fmt: skip
            if 0 < ctas <= GRID and val <= tiles and not (label != "sk0" and val == 0):
                cands[label] = forced(sk, val, ctas)
        row = {"dtype": str(dtype)[6:], "m": m, "n": n, "k": k, "tile": v["plain"].name,
               "tiles": tiles, "builtin": builtin_sm90_config(m, n, k, "e4m3" if fp8 else "bf16",
                                                              sms=GRID).name, "ratio": {}}  # fmt: skip
        timed(cands, peer, row)
        result["part1"].append(row)
        print(json.dumps(row), flush=True)


# rows under 0.97 (inference-h100.json) and the candidates tried on them
TABLE_M = (64, 128, 256, 512, 1024, 2048, 4096)
TABLE_ROWS = {
    E4: [(m, n, k) for n, k in [(10240, 8192), (8192, 28672), (57344, 8192), (8192, 8192)]
         for m in TABLE_M],
    BF: [(m, 10240, 8192) for m in (64, 128, 512, 1024)] + [(512, 8192, 8192)],
}  # fmt: skip
TABLE_CANDIDATES = {
    E4: [dict(block_n=128, promote="overlap"), dict(block_n=128, promote="overlap", cluster=2)],
    BF: [dict(block_n=192, cluster=2), dict(block_n=256, cluster=2), dict(block_n=128, cluster=2),
         dict(block_n=256, epilogue="tma2"), dict(block_n=128), dict(block_n=64)],
}  # fmt: skip


def part3(result: dict) -> None:
    for dtype, rows in TABLE_ROWS.items():
        fp8 = dtype == E4
        for m, n, k in rows:
            A, B = make(m, k, False, dtype), make(k, n, fp8, dtype)
            out = torch.empty(m, n, device="cuda", dtype=BF)
            peer = peer_call(fp8, A, B, out)
            cands = {"default": lambda: cutemma.gemm(A, B, out=out)}
            for kw in TABLE_CANDIDATES[dtype]:
                c = Sm90Config(**kw)
                cands[c.name] = lambda c=c: gemm_sm90(A, B, out=out, config=c)
            row = {"dtype": str(dtype)[6:], "m": m, "n": n, "k": k, "ratio": {}}
            timed(cands, peer, row)
            result["part3"].append(row)
            print(json.dumps(row), flush=True)
            A = B = out = None
            torch.cuda.empty_cache()


def read_kernels(x) -> dict:
    """Median ms of reading ``x``'s bytes with the CUDA read kernel in each of
    :data:`READ_SHAPES` (grid a multiple of the SMs)."""
    from cutemma.cuda import compile
    from cutemma.cuda.launch import load_kernel

    cubin = compile(READ_SOURCE, "sm_90a")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = torch.zeros(1, dtype=torch.int32, device="cuda")
    words = np.int64(x.numel() * x.element_size() // 16)  # a long long parameter
    times = {}
    for blocks, threads, unroll in READ_SHAPES:
        kern = load_kernel(cubin, f"read_u{unroll}")
        fn = lambda kern=kern, g=blocks * sms, t=threads: kern(x, words, out, grid=g, block=t)  # noqa: E731
        fn()
        torch.cuda.synchronize()
        times[(blocks, threads, unroll)] = median_ms(fn, 5, 20)
    return times


def part2(result: dict) -> None:
    import triton
    import triton.language as tl

    @triton.jit
    def read_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0)
        tl.store(out_ptr + pid, tl.sum(x, axis=0))

    big = 1 << 30
    src = torch.empty(big, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src), 5, 20)
    result["copy_1gib_tbps"] = round(2 * big / ms / 1e9, 3)
    src = dst = None
    for n, k in [(10240, 8192), (8192, 28672), (57344, 8192), (8192, 8192)]:
        for esize in (2, 1):
            nbytes = n * k * esize
            x = torch.empty(nbytes // 4, dtype=torch.int32, device="cuda").random_(0, 100)
            y = torch.empty_like(x)
            row = {"n": n, "k": k, "bytes": nbytes}
            ms = median_ms(lambda x=x, y=y: y.copy_(x), 5, 20)
            row["copy_same_bytes_tbps"] = round(2 * nbytes / ms / 1e9, 3)
            best = 0.0
            for block in (2048, 4096, 8192, 16384):
                grid = (-(-x.numel() // block),)
                part = torch.empty(grid[0], dtype=torch.int32, device="cuda")
                fn = lambda x=x, part=part, block=block, grid=grid: read_sum[grid](  # noqa: E731
                    x, part, x.numel(), BLOCK=block
                )
                fn()
                ms = median_ms(fn, 5, 20)
                best = max(best, nbytes / ms / 1e9)
                row[f"read_tbps_block{block}"] = round(nbytes / ms / 1e9, 3)
            for (blocks, threads, unroll), ms in read_kernels(x).items():
                row[f"read_tbps_cuda_g{blocks}_t{threads}_u{unroll}"] = round(nbytes / ms / 1e9, 3)
                best = max(best, nbytes / ms / 1e9)
            row["read_best_tbps"] = round(best, 3)
            row["read_best_of_1gib_copy"] = round(best / result["copy_1gib_tbps"], 3)
            result["part2"].append(row)
            print(json.dumps(row), flush=True)
            x = y = None
            torch.cuda.empty_cache()


def part5(result: dict) -> None:
    """Under one wave (M = 128 or 256): the built-in tile against the same tile as stream-K
    (every tile shared over the grid: 64-80 tiles leave half the SMs idle otherwise)."""
    from cutemma.kernels.pick import builtin_sm90_config

    for dtype in (BF, E4):
        fp8 = dtype == E4
        for n, k in [(10240, 8192), (8192, 28672), (57344, 8192), (8192, 8192)]:
            B = make(k, n, fp8, dtype)
            for m in (128, 256):
                A = make(m, k, False, dtype)
                out = torch.empty(m, n, device="cuda", dtype=BF)
                peer = peer_call(fp8, A, B, out)
                cfg = builtin_sm90_config(m, n, k, "e4m3" if fp8 else "bf16", sms=GRID)
                sk = Sm90Config(**{**cfg.__dict__, "stream_k": True})
                cands = {
                    "default": lambda: cutemma.gemm(A, B, out=out),
                    sk.name: lambda sk=sk: gemm_sm90(A, B, out=out, config=sk),
                }
                row = {"dtype": str(dtype)[6:], "m": m, "n": n, "k": k, "ratio": {}}
                timed(cands, peer, row)
                result["part5"].append(row)
                print(json.dumps(row), flush=True)
            B = None
            torch.cuda.empty_cache()


WAIT = "while (ld_acquire_u64(sk_flags + peer) != sk_epoch) {}"
FIX_VARIANTS = {  # the fix-up as built, without its flag wait, and with no fix-up at all
    "real": lambda text: text,
    "nowait": lambda text: text.replace(WAIT, ""),
    "nofix": lambda text: "",
}
P4_CASES = [
    (BF, 512, 10240, 8192, dict(block_m=128, block_n=256)),
    (E4, 512, 8192, 28672, dict(block_m=128, block_n=128)),
]


def part4(result: dict) -> None:
    """The stream-K kernel rebuilt without parts of its fix-up (wrong sums where pieces
    are shared: timing only), to see which part costs the time."""
    import tempfile

    from cutemma.kernels.sm90 import source

    real_fixup = source.fixup
    for dtype, m, n, k, kw in P4_CASES:
        fp8 = dtype == E4
        A, B = make(m, k, False, dtype), make(k, n, fp8, dtype)
        out = torch.empty(m, n, device="cuda", dtype=BF)
        peer = peer_call(fp8, A, B, out)
        cfg = Sm90Config(**kw, stream_k=True)
        tiles = -(-m // kw["block_m"]) * -(-n // kw["block_n"])
        row = {"dtype": str(dtype)[6:], "m": m, "n": n, "k": k, "tile": cfg.name, "ratio": {}}
        cands = {}
        for vname, edit in FIX_VARIANTS.items():
            source.fixup = lambda *a, edit=edit: edit(real_fixup(*a))
            os.environ["CUTEMMA_CACHE_DIR"] = tempfile.mkdtemp(prefix=vname)
            host.compiled_sm90.cache_clear()
            host._PREPARED.clear()
            sk = lambda: gemm_sm90(A, B, out=out, config=cfg)  # noqa: E731
            for label, val in (("sk0", 0), ("sk_r", tiles % GRID), ("sk_all", tiles)):
                try:
                    cands[f"{vname}_{label}"] = forced(sk, val)
                except Exception as exc:  # noqa: BLE001
                    row["ratio"][f"{vname}_{label}"] = f"{type(exc).__name__}: {exc}"[:200]
        source.fixup = real_fixup
        timed(cands, peer, row)
        result["part4"].append(row)
        print(json.dumps(row), flush=True)


def main() -> None:
    path = sys.argv[1]
    result = {"device": torch.cuda.get_device_name(), "date": datetime.datetime.now(
        datetime.timezone.utc).isoformat(timespec="seconds"), "part1": [], "part2": [], "part3": [], "part4": [], "part5": []}  # fmt: skip
    if "--part4-only" in sys.argv:
        part4(result)
    elif "--part5-only" in sys.argv:
        part5(result)
    elif "--part3-only" in sys.argv:
        prewarm()
        part3(result)
    elif "--part2-only" not in sys.argv:
        prewarm()
        part1(result)
    else:
        part2(result)
    with open(path, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
