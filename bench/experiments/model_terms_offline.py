"""Offline (CPU): would one more term in the cost model move its choices among the timed
kernels of the H200 calibration sets (bench/results/raw/calibrate-h200-*.json) up? The
model's price (cutemma/kernels/cost.py ``price``) with one term added at a time:

- ``l2``: all SMs' operand loads together capped (GB/s), where A and B are more than
  ``big`` bytes (the long-K lead of notes/kernels-journal.md, eighth session); ``l2split``:
  the same cap on split-K kernels alone (stream-K sharing tiles, kcluster), whose CTAs
  read distinct k slices (raw/ncu-splitk-h200.csv: ~6-8 TB/s of L2 slice traffic);
- ``distinct``: operand bytes no CTA running at the same time reads too at ``ld`` GB/s an
  SM (L2's feed of distinct blocks, raw/ldgsts-probe-h200.json), for stream-K shares
  (``sk``) or every kernel (``all``);
- ``share``: stream-K shares' k tiles ``f`` times a whole tile's, with ``together_us`` and
  ``fixup_us`` varied;
- ``latency``: a CTA's k tile takes at least ``lat`` microseconds over its ring's stages
  (Little's law: a ring of S stages keeps S loads in flight, each taking about ``lat``
  under load), the per-projection decode graphs' lead (raw/decode-per-projection-h200-bf16-
  56570ae.json: 28672 x 4096 at 1-16 tokens, 64x256 tiles in one wave of deep rings ran
  1.04-1.05 of cuBLAS where the pick's 128x16 swapped tiles in two waves of 4 stages ran
  0.95-0.96).

Prints, per set and over all, the geomean ratio to the peer of the kernel each variant
chooses (``base``: the model as it is).

    python bench/experiments/model_terms_offline.py l2 | l2split | distinct | share | latency
"""

from __future__ import annotations

import dataclasses
import glob
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

from calibrate import timed_kernels  # noqa: E402

from cutemma.kernels import cost  # noqa: E402
from cutemma.kernels.sm90.config import ATOMS_SM90  # noqa: E402


def price(config, m, n, k, dtype, dev, rows16, v: dict) -> float:
    """cost.price (batch 1, bf16 out) with the variant ``v``'s term."""
    rate, tile_us = cost.shape_free(config, dtype, dev)
    eb = ATOMS_SM90[dtype][1]
    bm, bn, bk = config.block_m, config.block_n, config.k_tiles[eb]
    tm, tn, kt = cost._tile_grid(config, m, n, k, dtype)
    if config.swap_ab:
        m, n, rows16 = n, m, rows16[::-1]
    tiles, grid = tm * tn, cost.cluster_grid(config, dev.sms)
    sk, ctas = cost.sk_split(tm, tn, kt, grid, config.split) if config.stream_k else (0, grid)
    m_, n_ = (m, n) if cost.type_class(dtype) in cost.CLAMPED else (bm, bn)
    cm, cn = config.cluster_mn
    ra = min(bm, m_) * (dev.half_sector if rows16[0] else 1.0) / cn
    rb = min(bn, n_) * (dev.half_sector if rows16[1] else 1.0) / cm

    floor = v["lat"] / ring_stages(config, dtype) if "lat" in v else 0.0

    def k_us(shared_a: bool = True, shared_b: bool = True) -> float:
        la = dev.load_gbps if shared_a else v.get("ld", dev.load_gbps)
        lb = dev.load_gbps if shared_b else v.get("ld", dev.load_gbps)
        return max(2 * bm * bn * bk / (rate * 1e6), (ra / la + rb / lb) * bk * eb / 1e3, floor)

    whole_sh = (tn > 1 or cn > 1, tm > 1 or cm > 1)
    k_whole = k_us(*whole_sh) if v.get("scope") == "all" else k_us()
    whole_tile = kt * k_whole + tile_us
    once = (m + n) * k * eb
    if config.kcluster > 1:
        kc, cl = config.kcluster, config.cluster
        waves = -(-tiles // (cl * cost.clusters(kc * cl, grid)))
        k_kc = k_us(*whole_sh) if v.get("scope") in ("sk", "all") else k_whole
        us = waves * (-(-kt // kc) * k_kc + tile_us + cost._kcluster_us(bm, bn, kc, dev))
    elif sk:
        shared = -(-sk * kt // ctas)
        if v.get("scope") in ("sk", "all"):
            if cost._aligned(ctas, sk, config.split):
                rows = min(sk, tm, 8)  # (the grouped raster's first tiles)
                k_sk = k_us(-(-sk // rows) > 1, rows > 1)
            else:
                k_sk = k_us(False, False)
        else:
            k_sk = k_whole * v.get("f", 1.0)
        fix = cost._fix_us(bm, bn, ctas, sk, config.split, dev)
        us = (tiles - sk) // grid * whole_tile + shared * k_sk + tile_us + fix
        if not cost._reads_once(config.swap_ab, m, tn, ctas, sk, config.split):
            once += dev.reread * max(0, sk * (bm + bn) * k * eb - once)
    else:
        us = -(-tiles // grid) * whole_tile
    if config.cluster > 1:
        us += dev.cluster_us
    p = dev.sharpness
    split = bool(sk) or config.kcluster > 1
    if v.get("l2") and (m + n) * k * eb > v.get("big", 0) and (split or not v.get("split")):
        us = max(us, tiles * kt * (ra + rb) * bk * eb / (v["l2"] * 1e3))
    dram_us = (once + m * n * 2) / (dev.dram_gbps * 1e3)
    return ((us**p + dram_us**p) ** (1 / p) + dev.launch_us) * 1e-6


def ring_stages(config, dtype: str) -> int:
    """The ring depth the family gives ``config`` (its stages, or as many as fit:
    cutemma.kernels.sm90.index.launch_record's rule, TMA-store epilogue counted)."""
    from cutemma.kernels.sm90.index import launch_record

    if config.stages:
        return config.stages
    eb = ATOMS_SM90[dtype][1]
    rec = launch_record(config, dtype, "K", "K", "bf16")
    stage = (config.block_m + config.block_n) * config.k_tiles[eb] * eb
    return max(2, rec["shared_bytes"] // stage)


VARIANTS = {
    "latency": [{"lat": lat} for lat in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0)],
    "l2": [{"l2": l2, "big": big} for big in (0, 25e6, 50e6) for l2 in (7000, 9000, 11000)],
    "l2split": [{"l2": l2, "split": True} for l2 in (5000, 6000, 7000, 8000, 9000)],
    "distinct": [{"ld": ld, "scope": s} for s in ("sk", "all") for ld in (40, 57, 75)],
    "share": [
        {"f": f, "together_us": t, "fixup_us": x}
        for f in (1.0, 1.15, 1.3, 1.5)
        for t in (8.0, 4.0)
        for x in (3.077, 1.5)
    ],  # fmt: skip
}


def timed_rows(path: str) -> list:
    """(row, dtype, rows16, {config: us}) of each row of a calibration set that timed any."""
    rows = ((r, *timed_kernels(r)) for r in json.load(open(path))["rows"])
    return [row for row in rows if row[3]]


def main() -> None:
    base = cost.device("h200")
    variants = [{}] + VARIANTS[sys.argv[1]]
    files = sorted(glob.glob(os.path.join(HERE, "..", "results", "raw", "calibrate-h200-*.json")))
    total = [[] for _ in variants]
    print("set".ljust(16), *(str(v or "base")[:24].rjust(24) for v in variants))
    for path in files:
        rows, line = timed_rows(path), []
        for j, v in enumerate(variants):
            consts = {f: v[f] for f in ("together_us", "fixup_us") if f in v}
            dev = dataclasses.replace(base, **consts)
            logs = []
            for r, dtype, r16, timed in rows:
                mnk = r["m"], r["n"], r["k"]
                chosen = min(timed, key=lambda c: price(c, *mnk, dtype, dev, r16, v))
                logs.append(math.log(r["peer_us"] / timed[chosen]))
            total[j] += logs
            line.append(math.exp(statistics.fmean(logs)))
        print(os.path.basename(path)[15:-5][:16].ljust(16), *(f"{x:24.4f}" for x in line))
    print("ALL".ljust(16), *(f"{math.exp(statistics.fmean(t)):24.4f}" for t in total))


if __name__ == "__main__":
    main()
