"""Would tiles not in the space earn a place in it? On a ``calibrate.py measure`` file that
timed them beside the space's kernels, fit each new tile class's efficiency (the one that
best prices its kernels against the same shapes' other kernels: each shape's median model
error over the space's kernels is taken out first), then report what the model's choices
among the timed kernels ran at against the peer, with the new tiles at their fitted
efficiencies and without them.

    python bench/experiments/new_class_fit.py MEASURED.json OUT.json --set wn2 --set fp8w

``--set``: a tile set of bench/experiments/tiles192_probe.py (each tile whole, and stream-K
with each of the space's splits, B evict-first or not: the names ``measure`` times).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

GRID = [e / 100 for e in range(30, 121)]


def extra_configs(sets: list[str]) -> dict:
    """name -> config of every variant of the sets' tiles that ``measure`` may have timed."""
    import tiles192_probe

    from cutemma.kernels.space import SPLITS

    found = {}
    for name in sets:
        for base in tiles192_probe.configs(name).values():
            base = replace(base, stream_k=False, split=None)
            for ef in ("", "B"):
                for cfg in [replace(base, evict_first=ef)] + [
                    replace(base, stream_k=True, split=s, evict_first=ef) for s in SPLITS
                ]:
                    found[cfg.name] = cfg
    return found


def points(rows: list[dict], extra: dict) -> list[tuple]:
    """(config, m, n, k, dtype, us, rows16, new?) of every timed kernel."""
    from calibrate import KERNEL_DTYPE, _rows16

    from cutemma.kernels.space import candidates

    pts = []
    for r in rows:
        dtype, r16 = KERNEL_DTYPE[r["combo"]], _rows16(r)
        major = "N" if r["combo"] == "bf16_bN" else "K"
        space = {c.name: c for c in candidates(r["m"], r["n"], r["k"], dtype, rows16=r16,
                                               b_major=major)}  # fmt: skip
        for name, us in r["times_us"].items():
            cfg = space.get(name) or extra.get(name)
            if isinstance(us, float) and cfg is not None:
                pts.append((cfg, r["m"], r["n"], r["k"], dtype, us, r16, name not in space))
    return pts


def priced(cfg, m, n, k, dtype, r16, eff: float | None) -> float:
    """The model's microseconds, at ``eff`` for the config's class (None: as calibrated)."""
    from cutemma.kernels.cost import device, price, shape_free, type_class

    dev = device("h200")
    rate, tile_us = shape_free(cfg, dtype, dev)
    if eff is not None:
        rate = dev.rate_tflops[type_class(dtype)] * eff
    return price((rate, tile_us), cfg, m, n, k, dtype, 1, dev, 2, r16) * 1e6


def fit(pts: list[tuple]) -> dict:
    from cutemma.kernels.cost import tile_class

    bias: dict[tuple, list] = {}
    for cfg, m, n, k, dt, us, r16, new in pts:
        if not new:
            bias.setdefault((m, n, k, dt, r16), []).append(
                math.log(priced(cfg, m, n, k, dt, r16, None) / us)
            )
    shape_bias = {key: statistics.median(v) for key, v in bias.items()}
    classes: dict[str, list] = {}
    for p in pts:
        if p[7]:
            classes.setdefault(tile_class(p[0], p[4]), []).append(p)
    out = {}
    for cls, ps in sorted(classes.items()):

        def loss(e, ps=ps):
            return sum(abs(math.log(priced(c, m, n, k, dt, r16, e) / us)
                           - shape_bias.get((m, n, k, dt, r16), 0.0))
                       for c, m, n, k, dt, us, r16, _ in ps)  # fmt: skip

        out[cls] = {"eff": min(GRID, key=loss), "kernels_timed": len(ps)}
    return out


def choices(rows: list[dict], pts: list[tuple], effs: dict | None) -> dict:
    """Per combo: geomean over rows of peer / the model's choice among the timed kernels
    (the new ones at ``effs``, or left out with None), and of peer / the best timed."""
    from calibrate import KERNEL_DTYPE, _rows16

    from cutemma.kernels.cost import tile_class

    by_row: dict[tuple, list] = {}
    for p in pts:
        by_row.setdefault((p[1], p[2], p[3], p[4], p[6]), []).append(p)
    out: dict[str, dict] = {}
    for r in rows:
        key = (r["m"], r["n"], r["k"], KERNEL_DTYPE[r["combo"]], _rows16(r))
        ps = [p for p in by_row.get(key, []) if effs is not None or not p[7]]
        if not ps:
            continue

        def cost(p):
            eff = effs[tile_class(p[0], p[4])]["eff"] if p[7] else None
            return priced(p[0], *p[1:5], p[6], eff)

        chosen = min(ps, key=cost)
        d = out.setdefault(r["combo"], {"model": [], "best": [], "new_chosen": 0})
        d["model"].append(math.log(r["peer_us"] / chosen[5]))
        d["best"].append(math.log(r["peer_us"] / min(p[5] for p in ps)))
        d["new_chosen"] += chosen[7]
    return {c: {"model": round(math.exp(statistics.fmean(d["model"])), 4),
                "best": round(math.exp(statistics.fmean(d["best"])), 4),
                "new_chosen": d["new_chosen"], "rows": len(d["model"])}
            for c, d in out.items()}  # fmt: skip


def main() -> None:
    sets = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--set"]
    path, out_path = sys.argv[1], sys.argv[2]
    rows = json.load(open(path))["rows"]
    pts = points(rows, extra_configs(sets))
    effs = fit(pts)
    report = {"what": __doc__.splitlines()[0], "measured": os.path.basename(path), "sets": sets,
              "fitted": effs, "with_new": choices(rows, pts, effs),
              "without_new": choices(rows, pts, None), "script": open(__file__).read()}  # fmt: skip
    json.dump(report, open(out_path, "w"), indent=1)
    print(json.dumps({k: v for k, v in report.items() if k != "script"}, indent=1))


if __name__ == "__main__":
    main()
