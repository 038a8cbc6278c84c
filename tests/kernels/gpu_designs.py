"""Random GEMM designs on the GPU (issue 20, acceptance 1 and 2; a script).

    python tests/kernels/gpu_designs.py OUT.json [COUNT] [--seed=S] [--shards=P] [--dry]
                                        [--seeds-only] [--extras]

COUNT (default 160) random designs that pass every rule of :mod:`cutemma.kernels.design`
on sm_90a, drawn with ``random.Random(seed)`` (default seed 20): both families;
sm80: an ``mma.sync`` atom of 16-bit, tf32, int8 or fp8 type, an atom layout of up to 8
warps (M- or N-major order), the seeds' kind of M permutation (rows of the atoms
interleaved) or none, a tile that is a multiple of the TiledMMA's, a swizzle of 32, 64 or
128 bytes for either operand's stage (which fixes its major), an ldmatrix atom or the
default, 2-4 stages; sm90: a GMMA SS atom of any N the tile allows (16-bit, tf32, fp8),
1-3 consumer warpgroups (or 2 side by side along N), a schedule. Designs breaking a rule are drawn again (counted).
Each design runs through ``cutemma.gemm(A, B, design=...)`` on 3 shapes (one of 1 x 1,
primes, non-multiples of the tile) with small-integer operands, so every product and sum
is exact in every type: pass = D equals the float64 reference exactly. Then every seed
TiledMMA the rules accept runs on 5 shapes. ``--dry``: draw and check the designs on the
CPU only (no torch). ``--seeds-only``: only the seed TiledMMAs (no random designs);
``--extras``: also :func:`extra_designs` on the seed shapes. Exits 1 if any case fails.
"""

from __future__ import annotations

import json
import random
import sys
import time
import traceback

from cutemma.kernels import GemmDesign, failed_rules
from cutemma.kernels.sm80.plan import ATOMS, ELEM_BYTES, smem_layout
from cutemma.kernels.sm90.config import ATOMS_SM90
from cutemma.layout import Layout
from cutemma.tiled import make_tiled_mma

SM80_TYPES = ["f16", "bf16", "tf32", "s8", "e4m3", "e5m2"]
HALF_K = {"f16": "SM80_16x8x8_F32F16F16F32_TN", "bf16": "SM80_16x8x8_F32BF16BF16F32_TN",
          "tf32": "SM80_16x8x4_F32TF32TF32F32_TN", "s8": "SM80_16x8x16_S32S8S8S32_TN"}  # fmt: skip
SM90_TYPES = ["bf16", "f16", "tf32", "e4m3", "e5m2"]
TORCH = {"f16": "float16", "bf16": "bfloat16", "tf32": "float32", "s8": "int8",
         "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}  # fmt: skip
OUT = {"s8": "int32"}  # others write float32 (exact for the integer operands)
SM80_SHAPES = [(1, 1, 16), (131, 97, 208), (257, 300, 80)]
SM90_SHAPES = [(1, 1, 64), (131, 97, 208), (257, 300, 528)]  # K: 16-byte TMA strides
SEED_SHAPES = [(1, 1, 16), (2, 3, 32), (131, 97, 208), (257, 300, 80), (509, 61, 144)]


def perm_m(atom_m: int, wm: int) -> Layout:
    """The seeds' kind of M permutation for ``wm`` atoms of ``atom_m`` rows: the 8-row
    halves of every atom interleaved across the atoms (a bijection of the atoms' rows)."""
    h = atom_m // 8
    return Layout((8, h, wm), (1, 8 * wm, 8))


def draw_sm80(rng: random.Random) -> tuple[GemmDesign, str, tuple[str, str]]:
    dtype = rng.choice(SM80_TYPES)
    eb = ELEM_BYTES[dtype]
    warps = rng.choice([(1, 1), (1, 2), (2, 1), (2, 2), (1, 4), (4, 1), (2, 4), (4, 2), (8, 1),
                        (1, 8)])  # fmt: skip
    wm, wn = warps
    layout = (
        Layout((wm, wn, 1), (1, wm, 0)) if rng.random() < 0.5 else Layout((wm, wn, 1), (wn, 1, 0))
    )
    perm = perm_m(16, wm) if rng.random() < 0.4 and wm > 1 else None
    atom = ATOMS[dtype] if rng.random() < 0.7 or dtype not in HALF_K else HALF_K[dtype]
    tiled = make_tiled_mma(atom, layout, (perm, None, None))
    tm, tn, tk = tiled.tile_size_mnk
    tile = (tm * rng.choice([1, 2, 4]), tn * rng.choice([1, 2, 4]), tk * rng.choice([1, 2, 4]))
    majors = ("K", "K") if eb != 2 else (rng.choice("KM"), rng.choice("KN"))
    smem = {}
    for which, major, ext in (("a", majors[0], tile[0]), ("b", majors[1], tile[1])):
        if rng.random() < 0.5:
            width = rng.choice([32, 64, 128])
            try:
                smem[f"smem_{which}"] = smem_layout(ext, tile[2], "K" if major == "K" else "MN",
                                                    width, eb)  # fmt: skip
            except Exception:  # a width the stage cannot take: leave it to the design
                pass
    copies = {}
    if rng.random() < 0.3:
        copies["copy_a"] = "SM75_U32x4_LDSM_N" if majors[0] == "K" else "SM75_U16x8_LDSM_T"
    stages = rng.choice([2, 3, 4])
    d = GemmDesign(tiled, tile, stages=stages, **smem, **copies)
    return d, dtype, majors


def draw_sm90(rng: random.Random) -> tuple[GemmDesign, str, tuple[str, str]]:
    dtype = rng.choice(SM90_TYPES)
    pattern, eb, any_major = ATOMS_SM90[dtype]
    c = rng.choice([1, 2, 3])
    n = rng.choice([n for n in range(16, 257, 16) if n % 16 == 0])
    # K-major operands: TMA needs 16-byte leading strides, so MN-major ones would take
    # shapes of multiples of 8 only (the shapes here have primes in M and N)
    majors = ("K", "K")
    name = pattern.format(n=n) + ("<K,K>" if any_major else "")
    schedule = rng.choice(["cooperative", "cooperative", "alternate", "pingpong"])
    if schedule == "pingpong":
        c = 1
    bk = 128 // eb * rng.choice([1, 1, 2])
    if schedule == "cooperative" and rng.random() < 0.25:
        # two warpgroups side by side along N (Sm90Config.consumers_n), 1-3 m64 rows each
        tiled = make_tiled_mma(name, (1, 2, 1))
        return GemmDesign(tiled, (64 * rng.choice([1, 2, 3]), 2 * n, bk)), dtype, majors
    tiled = make_tiled_mma(name, (c, 1, 1))
    tile = (64 * c * rng.choice([1, 2]), n, None)
    reps_n = rng.choice([1, 1, 2])  # wgmmas side by side along N (Sm90Config.wgmma_n)
    d = GemmDesign(tiled, (tile[0], n * reps_n, bk), schedule=schedule)
    return d, dtype, majors


def draw(count: int, seed: int) -> tuple[list[tuple], int]:
    """``count`` valid designs (half each family, sm80 first), and how many were redrawn."""
    rng = random.Random(seed)
    out, rejected = [], 0
    while len(out) < count:
        family = "sm80" if len(out) % 2 == 0 else "sm90"
        try:
            d, dtype, majors = (draw_sm80 if family == "sm80" else draw_sm90)(rng)
        except Exception:
            rejected += 1
            continue
        if failed_rules(d, "sm_90a"):
            rejected += 1
            continue
        out.append((d, dtype, majors))
    return out, rejected


def seed_designs() -> list[tuple[str, object, str, tuple[str, str]]]:
    """The TiledMMAs of the seeds (/work/shared/seeds), as designs, with what the rules say."""
    seeds = [
        # the SM70 GEMM tiles: bk 32 (cp.async moves 16-byte chunks of K); the lone atom's
        # warp (4 quadpairs) on a 16x16 block keeps its accumulators in registers
        ("SM70_8x8x4_F32F16F16F32_NT alone", "SM70_8x8x4_F32F16F16F32_NT", (16, 16, 32), "f16"),
        ("SM70 2x2 n-major, 32x32x4, M permutation (4,4,2):(1,8,4)",
         ("SM70_8x8x4_F32F16F16F32_NT", Layout((2, 2), (2, 1)), (Layout((4, 4, 2), (1, 8, 4)), 32, 4)),
         (32, 32, 32), "f16"),
        ("SM80_16x8x8_F32F16F16F32_TN", "SM80_16x8x8_F32F16F16F32_TN", (64, 64, 32), "f16"),
        ("SM80_16x8x8_F16F16F16F16_TN", "SM80_16x8x8_F16F16F16F16_TN", (64, 64, 32), "f16"),
        ("SM80_16x8x16_F32F16F16F32_TN 2x2", ("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1), None),
         (64, 64, 32), "f16"),
        ("SM80_16x8x16 2x2, seed-style M permutation",
         ("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1), (perm_m(16, 2), None, None)), (64, 64, 32), "f16"),
        ("SM90_64x128x16_F16F16F16_SS", "SM90_64x128x16_F16F16F16_SS<K,K>", None, "f16"),
        ("SM90_64x128x16_F32F16F16_SS", "SM90_64x128x16_F32F16F16_SS<K,K>", (128, 128, 64), "f16"),
        ("SM90_64x128x16_F32F16F16_RS", "SM90_64x128x16_F32F16F16_RS<K,K>", None, "f16"),
    ]  # fmt: skip
    out = []
    for label, spec, tile, dtype in seeds:
        try:
            tiled = make_tiled_mma(spec[0], spec[1], spec[2]) if isinstance(spec, tuple) else spec
            d = GemmDesign(tiled, tile)
            why = failed_rules(d, "sm_90a")
        except Exception as exc:  # refused while being built
            d, why = None, [f"{type(exc).__name__}: {exc}"]
        out.append((label, d, dtype, why))
    return out


def extra_designs() -> list[tuple[str, object, str, tuple[str, str]]]:
    """Designs beside the seeds that exercise this round's paths (kdesign2): UniversalCopy
    register loads on an sm80 atom, the F16-accumulating SM70 and SM80 atoms on M/N-major
    operands, GMMA RS over two consumer warpgroups (bf16, N-major B), F16-accumulating RS."""
    f16 = "SM80_16x8x16_F32F16F16F32_TN"
    specs = [
        ("UniversalCopy A and B, SM80 16x8x16 2x2", make_tiled_mma(f16, (2, 2, 1)), (64, 64, 32),
         {"copy_a": "UniversalCopy<uint32_t>", "copy_b": "UniversalCopy<uint32_t>"}, "f16", ("K", "N")),
        ("SM70 F16-accumulating TN 2x2", make_tiled_mma("SM70_8x8x4_F16F16F16F16_TN", (2, 2, 1)),
         (32, 32, 32), {}, "f16", ("K", "K")),
        ("SM70 2x2 seed TiledMMA, M/N-major operands",
         make_tiled_mma("SM70_8x8x4_F32F16F16F32_NT", Layout((2, 2), (2, 1)),
                        (Layout((4, 4, 2), (1, 8, 4)), 32, 4)), (64, 32, 32), {}, "f16", ("M", "N")),
        ("SM80 16x8x16 F16-accumulating, M permutation, M/N-major",
         make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", (2, 2, 1), (perm_m(16, 2), None, None)),
         (64, 64, 32), {}, "f16", ("M", "N")),
        ("GMMA RS bf16 64x64, 2 consumers", make_tiled_mma("SM90_64x64x16_F32BF16BF16_RS<K,MN>", (2, 1, 1)),
         (128, 64, 64), {}, "bf16", ("K", "K")),
        ("GMMA RS F16-accumulating 64x64", make_tiled_mma("SM90_64x64x16_F16F16F16_RS<K,K>", (1, 1, 1)),
         (128, 64, 64), {}, "f16", ("K", "K")),
        ("GMMA SS bf16 64x64, 5 along N (128x320)", make_tiled_mma("SM90_64x64x16_F32BF16BF16_SS<K,K>", (2, 1, 1)),
         (128, 320, 64), {}, "bf16", ("K", "K")),
    ]  # fmt: skip
    out = []
    for label, tiled, tile, kw, dtype, majors in specs:
        try:
            d = GemmDesign(tiled, tile, **kw)
            why = failed_rules(d, "sm_90a")
        except Exception as exc:
            d, why = None, [f"{type(exc).__name__}: {exc}"]
        out.append((label, d, dtype, why, majors))
    return out


def run_design(d: GemmDesign, dtype: str, majors: tuple, shapes: list, gen) -> list[dict]:
    import torch

    import cutemma

    rows = []
    for M, N, K in shapes:
        row = {"design": d.name, "family": d.family, "dtype": dtype, "majors": "".join(majors),
               "tile": list(d.tile), "atom": d.atom_name, "atom_layout": str(d.tiled_mma.atom_layout_mnk),
               "permutation": str(d.tiled_mma.permutation_mnk[0]), "shape": [M, N, K]}  # fmt: skip
        try:
            a = torch.randint(-3, 4, (M, K), generator=gen, device="cuda").double()
            b = torch.randint(-3, 4, (K, N), generator=gen, device="cuda").double()
            tdt = getattr(torch, TORCH[dtype])
            A = (a.t().contiguous().t() if majors[0] == "M" else a.contiguous()).to(tdt)
            B = (b.contiguous() if majors[1] == "N" else b.t().contiguous().t()).to(tdt)
            out = getattr(torch, OUT.get(dtype, "float32"))
            D = torch.full((M, N), 7777, dtype=out, device="cuda")
            cutemma.gemm(A, B, design=d, out=D)
            torch.cuda.synchronize()
            ref = a @ b
            row["max_abs_err"] = float((D.double() - ref).abs().max())
            row["ok"] = row["max_abs_err"] == 0.0
        except Exception as exc:
            row["ok"] = False
            row["error"] = f"{type(exc).__name__}: {exc}"[:500]
            row["trace"] = traceback.format_exc()[-1500:]
        rows.append(row)
    return rows


def main(argv: list[str]) -> int:
    opts = dict(
        a[2:].split("=", 1) if "=" in a else (a[2:], "1") for a in argv if a.startswith("--")
    )
    args = [a for a in argv if not a.startswith("--")]
    path = args[0]
    count = int(args[1]) if len(args) > 1 else 160
    seed = int(opts.get("seed", 20))
    t0 = time.time()
    if "seeds-only" in opts:
        count = 0
    designs, rejected = draw(count, seed)
    seeds = seed_designs()
    report = {"seed": seed, "count": count, "rejected_draws": rejected,
              "draw_seconds": round(time.time() - t0, 1),
              "seeds": [{"tiled_mma": lbl, "rules": why or [], "design": d.name if d else None}
                        for lbl, d, _, why in seeds]}  # fmt: skip
    if "dry" in opts:
        report["designs"] = [{"design": d.name, "family": d.family, "dtype": dt,
                              "tile": list(d.tile)} for d, dt, _ in designs]  # fmt: skip
        json.dump(report, open(path, "w"), indent=1)
        print(json.dumps({k: v for k, v in report.items() if k != "designs"}, indent=1))
        return 0
    shard, shards = (int(x) for x in opts.get("shard", "0/1").split("/"))
    if "shards" in opts and "shard" not in opts:
        return sharded(argv, path, int(opts["shards"]))
    import torch

    import cutemma

    gen = torch.Generator(device="cuda").manual_seed(seed + shard)
    rows = []
    for i, (d, dtype, majors) in enumerate(designs):
        if i % shards == shard:
            shapes = SM80_SHAPES if d.family == "sm80" else SM90_SHAPES
            rows += run_design(d, dtype, majors, shapes, gen)
    if shard == 0:
        for label, d, dtype, why in seeds:
            if d is not None and not why:
                for r in run_design(d, dtype, ("K", "K"), SEED_SHAPES, gen):
                    rows.append(r | {"seed_tiled_mma": label})
        if "extras" in opts:
            for label, d, dtype, why, majors in extra_designs():
                if d is not None and not why:
                    for r in run_design(d, dtype, majors, SEED_SHAPES, gen):
                        rows.append(r | {"extra_design": label})
                else:
                    rows.append({"extra_design": label, "ok": False, "error": "; ".join(why)})
    report["rows"] = rows
    report["device"] = torch.cuda.get_device_name(0)
    report["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    seed_rows = [r for r in rows if "seed_tiled_mma" in r]
    report["seeds_summary"] = {
        lbl: ("refused: " + "; ".join(why)) if why else
        f"{sum(r['ok'] for r in seed_rows if r['seed_tiled_mma'] == lbl)}/"
        f"{sum(1 for r in seed_rows if r['seed_tiled_mma'] == lbl)} shapes exact"
        for lbl, _, _, why in seeds
    }  # fmt: skip
    report["extras_summary"] = {
        lbl: f"{sum(r['ok'] for r in rows if r.get('extra_design') == lbl)}/"
        f"{sum(1 for r in rows if r.get('extra_design') == lbl)} shapes exact"
        for lbl in {r["extra_design"] for r in rows if "extra_design" in r}
    }
    print(json.dumps(report["seeds_summary"] | report["extras_summary"], indent=1))
    report["cutemma"] = cutemma.__file__
    json.dump(report, open(path, "w"), indent=1)
    return 0 if all(r["ok"] for r in rows) else 1


def sharded(argv: list[str], path: str, shards: int) -> int:
    """The designs in ``shards`` processes on the one GPU (NVRTC builds run in parallel)."""
    import subprocess

    parts = [f"{path}.{s}" for s in range(shards)]
    base = [a for a in argv if not a.startswith("--shards") and a != path]
    procs = [subprocess.Popen([sys.executable, __file__, parts[s], *base[0:], f"--shard={s}/{shards}"])
             for s in range(shards)]  # fmt: skip
    codes = [p.wait() for p in procs]
    merged = None
    for p in parts:
        try:
            r = json.load(open(p))
        except (OSError, ValueError):
            continue
        if merged is None:
            merged = r
        else:
            merged["rows"] += r["rows"]
    merged = merged or {"rows": []}
    merged["shard_exit_codes"] = codes
    rows = merged["rows"]
    designs = {r["design"] for r in rows if "seed_tiled_mma" not in r}
    ok_designs = {r["design"] for r in rows if "seed_tiled_mma" not in r} - {
        r["design"] for r in rows if not r["ok"] and "seed_tiled_mma" not in r
    }
    merged["summary"] = {
        "designs": len(designs), "designs_all_shapes_ok": len(ok_designs),
        "cases": len(rows), "cases_ok": sum(r["ok"] for r in rows),
        "by_family": {f: sum(1 for d in ok_designs if d in {r["design"] for r in rows if r["family"] == f})
                      for f in ("sm80", "sm90")},
        "by_dtype": {t: len({r["design"] for r in rows if r["dtype"] == t and r["design"] in ok_designs})
                     for t in sorted({r["dtype"] for r in rows})},
    }  # fmt: skip
    json.dump(merged, open(path, "w"), indent=1)
    print(json.dumps(merged["summary"], indent=1))
    return 0 if all(r["ok"] for r in rows) and not any(codes) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
