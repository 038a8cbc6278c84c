"""Correctness sweep of cutemma.gemm over random shapes (issue 12, acceptance 1; a script).

    python tests/kernels/gpu_sweep.py OUT.json [COUNT] [--shards=S]

COUNT (default 1200) random cases through ``cutemma.gemm`` with its own dispatch (sm90
where its rules hold, sm80 elsewhere; each row records which): M, N, K drawn from 1,
primes, tile sizes +-1 and uniform 1..2500; bf16, f16, fp8 e4m3 and e5m2, f32 (tf32);
either major for each operand; a quarter decode-sized (M <= 64: swap-AB on stream-K
when the swapped operands meet the sm90 rules); a third alpha/beta with a C; a sixth batched
(3-D A and/or B, broadcast batches); 5% with a NaN or an Inf planted in A. Each row's
``family`` is the family that ran it (observed: gemm_sm90 entered or an sm90 prepared
launch reused), ``sm90_refusal`` (which_kernel(A, B).why) why not sm90 (None: it must have been sm90, else the
case fails). The output is
poisoned with NaN first; the reference is float64 on the upcast inputs; pass =
every element written (finite where the reference is) and ||D - ref|| / ||ref|| under
the output format's bound; with a planted NaN/Inf, its row of D is non-finite and every
other row finite. Exits 1 if any case fails.
"""

from __future__ import annotations

import json
import random
import sys
import time
import traceback

import torch  # before cutemma's CUDA modules (see notes/CUDA.md)
from gpu_sm90_batched import install_family_probe, ran_family  # noqa: E402 - beside this

import cutemma
from cutemma.kernels.dispatch import which_kernel

PRIMES = [2, 3, 5, 7, 11, 13, 17, 31, 61, 67, 97, 127, 131, 251, 257, 509, 521, 1021, 2039]
TILES = [8, 16, 32, 64, 128, 192, 256, 384, 512, 1024]
DTYPES = [torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e5m2, torch.float32]
# rel. error bound by output format (inputs are exact in float64; the rounding of the
# output dominates, tf32 drops 13 mantissa bits of each input)
BOUND = {torch.bfloat16: 1e-2, torch.float16: 1.5e-3, torch.float32: 1e-4}
TF32_BOUND = 3e-3


def dim(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.08:
        return 1
    if r < 0.3:
        return rng.choice(PRIMES)
    if r < 0.55:
        return max(1, rng.choice(TILES) + rng.choice((-1, 0, 1)))
    return rng.randint(1, 2500)


def operand(shape, contiguous_rows, dtype, gen):
    """A tensor of ``shape`` (..., rows, cols); rows contiguous (column-major) if asked."""
    *b, r, c = shape
    if contiguous_rows:
        t = torch.randn((*b, c, r), generator=gen, device="cuda").transpose(-1, -2)
    else:
        t = torch.randn((*b, r, c), generator=gen, device="cuda")
    return t.to(dtype)


def draw(i: int, rng: random.Random) -> dict:
    """Case i's parameters: every draw from ``rng`` (none from the GPU generator), so a
    shard that skips a case draws the same later cases as the whole sweep."""
    dtype = rng.choice(DTYPES)
    m, n, k = dim(rng), dim(rng), dim(rng)
    if rng.random() < 0.25:  # decode-sized: the swap-AB + stream-K path (issue 21)
        m = rng.choice([1, 2, 3, 5, 8, 13, 16, 31, 32, 48, 63, 64])
    if rng.random() < 0.15:  # keep a few large ones cheap: cap the volume
        m, n, k = rng.choice([(4096, 4096, 512), (2048, 8192, 256), (8192, 264, 1032)])
    a_col, b_col = rng.random() < 0.4, rng.random() < 0.5
    if rng.random() < 0.6:  # TMA-aligned leading dimensions (16 bytes), so sm90 runs it
        up = lambda x: -(-x // 16) * 16  # noqa: E731
        k = up(k)
        m, n = (up(m) if a_col else m), (up(n) if not b_col else n)
    batch = None
    if rng.random() < 1 / 6:
        batch = rng.choice([2, 3, 5])
        m, n, k = min(m, 700), min(n, 700), min(k, 700)
    a_shape = (batch, m, k) if batch and rng.random() < 0.8 else (m, k)
    b_shape = (batch, k, n) if batch and (len(a_shape) == 2 or rng.random() < 0.6) else (k, n)
    with_c = rng.random() < 1 / 3
    alpha = rng.choice([1.0, 0.5, -1.25, 2.0]) if with_c or rng.random() < 0.2 else 1.0
    beta = rng.choice([0.0, 1.0, -0.5]) if with_c else 0.0
    planted = None
    if rng.random() < 0.05 and m > 1 and k > 0:
        planted = (m // 2, k // 2, rng.choice([float("nan"), float("inf")]))
    return {"i": i, "dtype": dtype, "m": m, "n": n, "k": k, "a_col": a_col, "b_col": b_col,
            "batch": batch, "a_shape": a_shape, "b_shape": b_shape, "with_c": with_c,
            "alpha": alpha, "beta": beta, "planted": planted}  # fmt: skip


def one_case(p: dict, gen) -> dict:
    i, dtype, m, n, k, batch = (p[f] for f in ("i", "dtype", "m", "n", "k", "batch"))
    a_col, b_col, a_shape, b_shape = p["a_col"], p["b_col"], p["a_shape"], p["b_shape"]
    with_c, alpha, beta, planted = p["with_c"], p["alpha"], p["beta"], p["planted"]
    A = operand(a_shape, a_col, dtype, gen)
    B = operand(b_shape, b_col, dtype, gen)
    out_dtype = torch.bfloat16 if dtype.itemsize == 1 else dtype
    bm = len(a_shape) == 3 or len(b_shape) == 3
    shape = ((batch,) if bm else ()) + (m, n)
    C = operand(shape, False, out_dtype, gen) if with_c else None
    if planted is not None:
        A[..., planted[0], planted[1]] = planted[2]
    out = torch.full(shape, float("nan"), dtype=out_dtype, device="cuda")
    why = which_kernel(A, B).why
    case = {"i": i, "m": m, "n": n, "k": k, "dtype": str(dtype)[6:], "batch": batch,
            "a_shape": list(a_shape), "b_shape": list(b_shape), "a_major": "M" if a_col else "K",
            "b_major": "K" if b_col else "N", "alpha": alpha, "beta": beta, "C": with_c,
            "planted": None if planted is None else str(planted[2]), "sm90_refusal": why}  # fmt: skip
    _, family = ran_family(lambda: cutemma.gemm(A, B, C, alpha=alpha, beta=beta, out=out))
    case["family"] = family
    right_family = family == ("sm90" if why is None else "sm80")
    torch.cuda.synchronize()
    Ad, Bd = A.double(), B.double()
    ref = alpha * torch.matmul(Ad, Bd)
    if C is not None and beta != 0:
        ref = ref + beta * C.double()
    got = out.double()
    if planted is not None:
        row = got[..., planted[0], :]
        rest = torch.cat([got[..., : planted[0], :], got[..., planted[0] + 1 :, :]], dim=-2)
        ok = bool((~torch.isfinite(row)).all()) and bool(torch.isfinite(rest).all())
        return {
            **case,
            "ok": ok and right_family,
            "planted_row_nonfinite": bool((~torch.isfinite(row)).all()),
        }
    written = bool(torch.isfinite(got).all())
    err = float((got - ref).norm() / ref.norm().clamp_min(1e-30))
    bound = TF32_BOUND if dtype == torch.float32 else BOUND[out_dtype]
    ok = written and err <= bound and right_family
    return {**case, "rel_err": err, "fully_written": written, "ok": ok}


def run_shard(count: int, shard: int = 0, shards: int = 1) -> list[dict]:
    """Cases i with i % shards == shard (the GPU generator seeded per shard)."""
    rng = random.Random(1212)
    gen = torch.Generator(device="cuda").manual_seed(1212 + shard)
    install_family_probe()
    rows = []
    for i in range(count):
        p = draw(i, rng)
        if i % shards != shard:
            continue
        try:
            rows.append(one_case(p, gen))
        except Exception as exc:
            rows.append({"i": i, "ok": False, "error": f"{type(exc).__name__}: {exc}",
                         "trace": traceback.format_exc()[-800:]})  # fmt: skip
    return rows


def sharded(path: str, count: int, shards: int) -> list[dict]:
    """The sweep in ``shards`` processes on the one GPU (NVRTC builds of new kernels run on
    that many CPU cores at once); each writes PATH.shardN, merged here in case order."""
    import subprocess

    procs = [subprocess.Popen([sys.executable, __file__, f"{path}.shard{s}", str(count),
                               f"--shard={s}/{shards}"]) for s in range(shards)]  # fmt: skip
    rows = []
    for s, pr in enumerate(procs):
        pr.wait()
        try:
            rows += json.load(open(f"{path}.shard{s}"))
        except (OSError, ValueError) as exc:
            rows.append({"i": -1, "ok": False, "error": f"shard {s}: rc {pr.returncode}, {exc}"})
    return sorted(rows, key=lambda r: r["i"])


def main() -> None:
    path = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 1200
    opts = dict(a.lstrip("-").split("=", 1) for a in sys.argv[2:] if "=" in a)
    t = time.perf_counter()
    if "shard" in opts:  # a worker of --shards: its rows only
        s, n = map(int, opts["shard"].split("/"))
        json.dump(run_shard(count, s, n), open(path, "w"))
        return
    shards = int(opts.get("shards", 1))
    rows = sharded(path, count, shards) if shards > 1 else run_shard(count)
    bad = [r for r in rows if not r["ok"]]
    fam = {f: sum(r.get("family") == f for r in rows) for f in ("sm90", "sm80")}
    summary = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cases": len(rows),
        "failed": len(bad),
        "seconds": round(time.perf_counter() - t, 1),
        "shards": shards,
        "by_family": fam,
        "by_dtype": {str(d)[6:]: sum(r.get("dtype") == str(d)[6:] for r in rows) for d in DTYPES},
        "batched": sum(bool(r.get("batch")) for r in rows),
        "batched_by_family": {
            f: sum(bool(r.get("batch")) and r.get("family") == f for r in rows)
            for f in ("sm90", "sm80")
        },
        "with_C": sum(bool(r.get("C")) for r in rows),
        "planted_nan_inf": sum(r.get("planted") is not None for r in rows),
        "max_rel_err_by_dtype": {
            str(d)[6:]: max(
                (r["rel_err"] for r in rows if r.get("dtype") == str(d)[6:] and "rel_err" in r),
                default=None,
            )
            for d in DTYPES
        },  # fmt: skip
    }
    json.dump({"summary": summary, "failed": bad, "cases": rows}, open(path, "w"), indent=0)
    print(json.dumps(summary))
    for r in bad[:10]:
        print("FAIL", json.dumps(r)[:500])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
