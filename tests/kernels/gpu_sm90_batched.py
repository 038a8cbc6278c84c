"""Batched 3-D GEMM on the sm90 family, on the GPU (imported by gpu_sm90_checks.py; a script too).

    python tests/kernels/gpu_sm90_batched.py OUT.json [--bench]

Every check draws fresh random inputs, poisons the output with NaN, and compares with
torch.matmul in float64 on the upcast inputs (torch's broadcasting is the reference for
what a shared operand means): ||D - ref|| / ||ref|| within the output format's bound and
every element written. Operands come in five kinds: '3d' (L matrices), 'pad' (L matrices
with a padded batch stride), 'bcast' (one matrix expanded: batch stride 0), 'one' (a
batch of 1) and '2d'. Cases: bf16/f16 in every major pair, tf32 and fp8 e4m3 K-major,
alpha/beta with a 3-D or a shared C, L = 1 and 3..7, dims 1, primes and non-multiples of
the tile, f32 and 16-bit outputs (register and TMA-store epilogues), a cluster of 2, a NaN
in one problem; through ``gemm_sm90`` with a config and through ``cutemma.gemm`` (which
must choose sm90: recorded per case), repeated calls (the fast path) and a 2-D call after
a batched one on the same storage; refusals (an unaligned batch stride) fall back to sm80
in cutemma.gemm and raise a named error in gemm_sm90. ``--bench``: L = 8, 2048^3 bf16
against torch.bmm (and with B shared, against torch.matmul) in interleaved do_bench rounds.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time

import gpu_timing  # beside this script
import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

import cutemma
from cutemma.errors import LaunchError
from cutemma.kernels import pick
from cutemma.kernels.dispatch import which_kernel
from cutemma.kernels.sm90 import host as d90
from cutemma.kernels.sm90.launch import PreparedLaunch
from cutemma.kernels.sm90.plan import Sm90Config

BOUND = {torch.float32: 1e-5, torch.float16: 1.5e-3, torch.bfloat16: 1e-2}
TF32_BOUND = 3e-3
FP8_PROMOTED_F32_BOUND = 3e-4  # gpu_sm90_checks.py: promoted fp8 (run 10: 1.2-1.3e-4)
MAJORS = [("K", "K"), ("K", "N"), ("M", "K"), ("M", "N")]
KINDS = [("3d", "3d"), ("bcast", "3d"), ("3d", "bcast"), ("2d", "3d"), ("3d", "2d"),
         ("one", "3d"), ("pad", "pad"), ("3d", "one")]  # fmt: skip
PRIMES = [1, 3, 13, 61, 127, 131, 257, 521]
KD = {
    torch.bfloat16: "bf16",
    torch.float16: "f16",
    torch.float32: "tf32",
    torch.float8_e4m3fn: "e4m3",
    torch.float8_e5m2: "e5m2",
}  # torch dtype -> kernel's

# which family cutemma.gemm ran: an sm90 prepared launch launched
SEEN = {"sm90": 0}


def install_family_probe() -> None:
    """Count sm90 runs of cutemma.gemm: every sm90 launch, checked or repeated, is a
    PreparedLaunch's (the sm80 family's Sm80Launch is not)."""
    if getattr(PreparedLaunch.launch, "_probe", False):
        return
    launch = PreparedLaunch.launch

    def counted_launch(self):
        SEEN["sm90"] += 1
        return launch(self)

    counted_launch._probe = True
    PreparedLaunch.launch = counted_launch


def ran_family(fn) -> tuple:
    """(fn's result, 'sm90' or 'sm80': the family that ran it)."""
    before = SEEN["sm90"]
    r = fn()
    return r, "sm90" if SEEN["sm90"] > before else "sm80"


def matrix(rows, cols, contiguous_rows, dtype, gen, lead=()):
    """(*lead, rows, cols); rows contiguous (column-major per matrix) when asked."""
    if contiguous_rows:
        t = torch.randn((*lead, cols, rows), generator=gen, device="cuda").transpose(-1, -2)
    else:
        t = torch.randn((*lead, rows, cols), generator=gen, device="cuda")
    return t.to(dtype)


def operand(kind, L, rows, cols, contiguous_rows, dtype, gen):
    if kind == "2d":
        return matrix(rows, cols, contiguous_rows, dtype, gen)
    if kind == "one":
        return matrix(rows, cols, contiguous_rows, dtype, gen, (1,))
    if kind == "bcast":  # one matrix, batch stride 0
        return matrix(rows, cols, contiguous_rows, dtype, gen).expand(L, rows, cols)
    if kind == "pad":  # a batch stride past the matrix (by 64 elements: 16-byte multiple)
        big = matrix(rows * cols + 64, 1, False, dtype, gen, (L,)).reshape(L, -1)
        t = big[:, : rows * cols]
        if contiguous_rows:
            return t.view(L, cols, rows).transpose(-1, -2)
        return t.view(L, rows, cols)
    return matrix(rows, cols, contiguous_rows, dtype, gen, (L,))


def aligned(m, n, k, am, bm, eb):
    """Round the extents TMA reads contiguously up to 16 bytes."""
    v = 16 // eb
    up = lambda x: -(-x // v) * v  # noqa: E731
    return (up(m) if am == "M" else m), (up(n) if bm == "N" else n), up(k)


def check(L, m, n, k, dtype, am, bm, kinds, config, gen, out_dtype=None, alpha=1.0, beta=0.0,
          c_kind="3d", nan=False, via_gemm=False) -> dict:  # fmt: skip
    A = operand(kinds[0], L, m, k, am == "M", dtype, gen)
    B = operand(kinds[1], L, k, n, bm == "K", dtype, gen)
    out_dtype = out_dtype or (torch.bfloat16 if dtype.itemsize == 1 else dtype)
    C = None
    if beta:
        C = torch.randn((L, m, n) if c_kind == "3d" else (m, n), generator=gen, device="cuda")
        C = C.to(out_dtype)
    if nan:  # one problem's row of A (the last problem; a shared A: every problem)
        if A.dim() == 3 and A.stride(0) != 0:
            A[-1, m // 2, k // 2] = float("nan")
        else:
            (A[0] if A.dim() == 3 else A)[m // 2, k // 2] = float("nan")
    out = torch.full((L, m, n), float("nan"), dtype=out_dtype, device="cuda")
    kw = {"alpha": alpha, "beta": beta, "out": out}
    if via_gemm:
        _, family = ran_family(lambda: cutemma.gemm(A, B, C, **kw))
    else:  # the sm90 kernel: its config, else the built-in sm90 pick
        config = config or pick.pick_sm90_config(m, n, A.shape[-1], KD[A.dtype], L).config
        _, family = ran_family(lambda: cutemma.gemm(A, B, C, config=config, **kw))
    torch.cuda.synchronize()
    ref = alpha * torch.matmul(A.double(), B.double())
    if C is not None:
        ref = ref + beta * C.double()
    ref = ref.expand(L, m, n)
    case = {"L": L, "m": m, "n": n, "k": k, "dtype": str(dtype)[6:], "out": str(out_dtype)[6:],
            "majors": am + bm, "kinds": "/".join(kinds), "config": config.name if config else
            "cutemma.gemm", "alpha": alpha, "beta": beta, "c_kind": c_kind if beta else None,
            "family": family, "batched": True}  # fmt: skip
    if nan:
        got = out.double()
        bad_rows = (~torch.isfinite(got)).all(-1)  # [L, m]
        want = torch.zeros_like(bad_rows)
        want[:, m // 2] = True
        if A.dim() == 3 and A.stride(0) != 0:
            want[:-1] = False  # only the last problem saw the NaN
        ok = bool((bad_rows == want).all()) and bool(torch.isfinite(got[~want]).all())
        return {**case, "nan": True, "ok": ok and (family == "sm90" or not via_gemm)}
    written = bool(torch.isfinite(out.double()).all())
    err = float((out.double() - ref).norm() / ref.norm().clamp_min(1e-30))
    if dtype == torch.float32:
        bound = TF32_BOUND
    elif dtype.itemsize == 1 and out_dtype == torch.float32:
        bound = FP8_PROMOTED_F32_BOUND
    else:
        bound = BOUND[out_dtype]
    ok = written and err <= bound and (family == "sm90" or not via_gemm)
    return {**case, "rel_err": err, "fully_written": written, "ok": ok}


def cases(quick: bool) -> list[tuple]:
    """(args, kwargs) of every check (no GPU work: precompile reads the variants from it)."""
    rng = random.Random(1212)
    out = []

    def dim():
        r = rng.random()
        if r < 0.25:
            return rng.choice(PRIMES)
        if r < 0.5:
            return rng.choice([64, 128, 192, 256, 384]) + rng.choice((-1, 1))
        return rng.randint(1, 700)

    for dtype in (torch.bfloat16, torch.float16):
        for am, bm in MAJORS:
            for cfg in (Sm90Config(128, 128), Sm90Config(128, 256)):
                for kinds in KINDS if not quick else KINDS[:3]:
                    L = rng.choice([3, 4, 5, 6, 7])
                    m, n, k = aligned(dim(), dim(), dim(), am, bm, 2)
                    out.append(((L, m, n, k, dtype, am, bm, kinds, cfg), {}))
                # alpha/beta with a 3-D C and a shared C; f32 out (register epilogue)
                m, n, k = aligned(200, 136, 72, am, bm, 2)
                out.append(((5, m, n, k, dtype, am, bm, ("3d", "bcast"), cfg),
                            {"alpha": 1.5, "beta": 0.5}))  # fmt: skip
                out.append(((3, m, n, k, dtype, am, bm, ("2d", "3d"), cfg),
                            {"alpha": -1.0, "beta": 0.75, "c_kind": "2d"}))  # fmt: skip
                out.append(((4, m, n, k, dtype, am, bm, ("3d", "3d"), cfg),
                            {"out_dtype": torch.float32, "alpha": 0.5}))  # fmt: skip
                out.append(((6, m, n, k, dtype, am, bm, ("3d", "3d"), cfg), {"nan": True}))
            # L = 1 (the 2-D kernel on the views) and cutemma.gemm's own choice
            m, n, k = aligned(257, 131, 136, am, bm, 2)
            out.append(((1, m, n, k, dtype, am, bm, ("one", "one"), None), {"via_gemm": True}))
            out.append(((1, m, n, k, dtype, am, bm, ("one", "2d"), None), {"via_gemm": True}))
            for kinds in KINDS[:6]:
                L = rng.choice([3, 5, 7])
                m, n, k = aligned(dim(), dim(), dim(), am, bm, 2)
                out.append(((L, m, n, k, dtype, am, bm, kinds, None), {"via_gemm": True}))
    # tf32 and fp8: K-major
    for dtype, cfgs in ((torch.float32, [Sm90Config(128, 128), None]),
                        (torch.float8_e4m3fn, [Sm90Config(128, 128), None])):  # fmt: skip
        eb = dtype.itemsize
        for cfg in cfgs:
            for kinds in KINDS[:5]:
                L = rng.choice([3, 4, 7])
                m, n, k = aligned(dim(), dim(), dim(), "K", "K", eb)
                outs = (None, torch.float32) if eb == 1 else (None,)
                for o in outs:
                    out.append(((L, m, n, k, dtype, "K", "K", kinds, cfg),
                                {"out_dtype": o, "via_gemm": cfg is None}))  # fmt: skip
    # a cluster of 2 along M (B K-major), odd tile rows; dims 1
    for kinds in (("3d", "3d"), ("bcast", "3d"), ("3d", "2d")):
        out.append(((3, 200, 264, 136, torch.bfloat16, "K", "K", kinds,
                     Sm90Config(128, 128, cluster=2)), {}))  # fmt: skip
    for m, n, k in ((1, 8, 8), (1, 1, 8), (7, 1, 16), (1, 264, 1000)):
        out.append(((4, m, n, k, torch.bfloat16, "K", "K", ("3d", "3d"), Sm90Config(128, 128)), {}))
    return out


def variants(case_list) -> set:
    """The (config, dtype, majors, out, c_type, batched) each case compiles (precompile)."""
    kd = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "tf32",
          torch.float8_e4m3fn: "e4m3"}  # fmt: skip
    od = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}
    got = set()
    for (L, m, n, k, dtype, am, bm, _kinds, cfg), kw in case_list:
        o = kw.get("out_dtype") or (torch.bfloat16 if dtype.itemsize == 1 else dtype)
        cfg = cfg or pick.pick_sm90_config(m, n, k, kd[dtype], L).config
        got.add((d90.kernel_key(cfg, kd[dtype], am, bm, od[o], od[o], L > 1), "sm_90a"))
    return got


def _build(v) -> str:
    try:
        d90.compiled_sm90(*v)
        return "ok"
    except Exception as exc:  # reported, the check itself then fails by name
        return f"{type(exc).__name__}: {exc}"


def precompile(case_list, processes: int = 12) -> dict:
    """Compile every variant in forked workers (before this process touches CUDA)."""
    import multiprocessing as mp

    vs = sorted(variants(case_list), key=str)
    t = time.perf_counter()
    with mp.get_context("fork").Pool(processes) as pool:
        res = pool.map(_build, vs, chunksize=1)
    bad = [f"{v}: {r}" for v, r in zip(vs, res) if r != "ok"]
    return {"variants": len(vs), "seconds": round(time.perf_counter() - t, 1), "failed": bad}


def extra_checks(gen) -> list[dict]:
    """Fast path, 2-D after batched on one storage, refusals, named errors."""
    rows = []
    L, m, n, k = 5, 264, 136, 200
    A = matrix(m, k, False, torch.bfloat16, gen, (L,))
    B = matrix(k, n, False, torch.bfloat16, gen, (L,))
    ref = torch.matmul(A.double(), B.double())
    fams = []
    for i in range(3):  # repeats: the prepared launch (fast path), a new output each time
        D, fam = ran_family(lambda: cutemma.gemm(A, B))
        fams.append(fam)
        torch.cuda.synchronize()
        err = float((D.double() - ref).norm() / ref.norm())
        rows.append({"what": f"cutemma.gemm repeat {i}", "family": fam, "rel_err": err,
                     "ok": err < 1e-2 and fam == "sm90"})  # fmt: skip
    D2 = cutemma.gemm(A[2], B[2])  # 2-D on one problem's storage: not the batched launch
    torch.cuda.synchronize()
    err = float((D2.double() - ref[2]).norm() / ref[2].norm())
    rows.append({"what": "2-D after batched", "shape": list(D2.shape), "rel_err": err,
                 "ok": err < 1e-2 and tuple(D2.shape) == (m, n)})  # fmt: skip
    D3 = cutemma.gemm(A, B)  # and batched again
    torch.cuda.synchronize()
    err = float((D3.double() - ref).norm() / ref.norm())
    rows.append({"what": "batched after 2-D", "rel_err": err, "ok": err < 1e-2})
    # a batch stride TMA cannot walk (2 bytes past a 16-byte multiple): sm80, still right
    big = matrix(m * k + 1, 1, False, torch.bfloat16, gen, (L,)).reshape(L, -1)
    Au = big[:, : m * k].view(L, m, k)
    why = which_kernel(Au, B).why
    Du, fam = ran_family(lambda: cutemma.gemm(Au, B))
    torch.cuda.synchronize()
    refu = torch.matmul(Au.double(), B.double())
    err = float((Du.double() - refu).norm() / refu.norm())
    rows.append({"what": "unaligned batch stride -> sm80", "refusal": why, "family": fam,
                 "rel_err": err, "ok": fam == "sm80" and why is not None and err < 1e-2})  # fmt: skip
    for what, fn, pattern in (
        ("gemm_sm90 unaligned batch", lambda: cutemma.gemm(Au, B, config=Sm90Config()), "batch stride"),
        ("config=Sm90Config unaligned", lambda: cutemma.gemm(Au, B, config=Sm90Config()),
         "is an sm90 config, but operand A"),
        ("out batch stride 0", lambda: cutemma.gemm(A, B, out=torch.empty(
            (m, n), dtype=torch.bfloat16, device="cuda").expand(L, m, n)), "batch stride 0"),
    ):  # fmt: skip
        try:
            fn()
            rows.append({"what": what, "ok": False, "error": "no error"})
        except LaunchError as exc:
            rows.append({"what": what, "error": str(exc), "ok": pattern in str(exc)})
    # cutemma.gemm(config=Sm90Config) batched
    D4 = cutemma.gemm(A, B, config=Sm90Config(128, 128))
    torch.cuda.synchronize()
    err = float((D4.double() - ref).norm() / ref.norm())
    rows.append({"what": "cutemma.gemm config=Sm90Config batched", "rel_err": err,
                 "ok": err < 1e-2})  # fmt: skip
    return rows


def correctness(quick: bool = False, precompiled: bool = False) -> list[dict]:
    install_family_probe()
    gen = torch.Generator(device="cuda").manual_seed(7)
    rows = []
    for args, kw in cases(quick):
        try:
            rows.append(check(*args, gen, **kw))
        except Exception as exc:
            rows.append({"case": repr(args)[:300], "kw": repr(kw), "ok": False,
                         "error": f"{type(exc).__name__}: {exc}"})  # fmt: skip
    try:
        rows += extra_checks(gen)
    except Exception as exc:
        rows.append({"what": "extra checks", "ok": False, "error": f"{type(exc).__name__}: {exc}"})
    return rows


def bench(L: int = 8, s: int = 2048, rounds: int = 5, shared_b: bool = False) -> dict:
    """L x s^3 bf16 (A row-major, B row-major): cutemma.gemm (sm90, batched), gemm_sm90 with
    128x256 and 128x128, L separate 2-D cutemma.gemm calls, and torch (torch.bmm; with
    ``shared_b`` B is one 2-D matrix and torch.matmul runs one (L*s, s) x (s, s) GEMM);
    interleaved rounds of do_bench medians, TFLOP/s and the ratio to torch."""

    gen = torch.Generator(device="cuda").manual_seed(5)
    A = matrix(s, s, False, torch.bfloat16, gen, (L,))
    B = matrix(s, s, False, torch.bfloat16, gen, () if shared_b else (L,))
    D = torch.empty((L, s, s), dtype=torch.bfloat16, device="cuda")
    Bi = (lambda i: B) if shared_b else (lambda i: B[i])  # noqa: E731
    fns = {
        "torch": (lambda: torch.matmul(A, B, out=D)) if shared_b else (
            lambda: torch.bmm(A, B, out=D)),
        "cutemma.gemm": lambda: cutemma.gemm(A, B, out=D),
        "sm90_128x256": lambda: cutemma.gemm(A, B, out=D, config=Sm90Config(128, 256)),
        "sm90_128x128": lambda: cutemma.gemm(A, B, out=D, config=Sm90Config(128, 128)),
        "2d_loop": lambda: [cutemma.gemm(A[i], Bi(i), out=D[i]) for i in range(L)],
    }  # fmt: skip
    flop = 2.0 * L * s**3
    res = gpu_timing.rounds(fns, flop, rounds)
    out = {k: {"median_tflops": statistics.median(v), "all": v} for k, v in res.items()}
    base = out["torch"]["median_tflops"]
    for v in out.values():
        v["over_torch"] = v["median_tflops"] / base
    torch_fn = "torch.matmul (B 2-D)" if shared_b else "torch.bmm"
    return {"L": L, "s": s, "dtype": "bf16", "majors": "KN", "torch_is": torch_fn, **out}


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "gpu_sm90_batched.json"
    t = time.perf_counter()
    result = {"precompile": precompile(cases(False))}
    result["device"] = torch.cuda.get_device_name()
    rows = correctness()
    bad = [r for r in rows if not r["ok"]]
    result.update(checks=len(rows), failed=bad, seconds=round(time.perf_counter() - t, 1))
    result["by_family"] = {f: sum(r.get("family") == f for r in rows) for f in ("sm90", "sm80")}
    print(f"batched: {len(rows) - len(bad)}/{len(rows)} pass; {json.dumps(result['precompile'])}")
    for r in bad[:10]:
        print("FAIL", json.dumps(r)[:400])
    if "--bench" in sys.argv and not bad:
        result["bench"] = [bench(), bench(shared_b=True)]
        print(json.dumps(result["bench"])[:1500])
    result["all_checks"] = rows
    json.dump(result, open(path, "w"), indent=1)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
