"""Promoted fp8 tile shapes near cuBLAS's own (a script).

    python bench/experiments/sm90_fp8_tiles.py OUT.json

torch._scaled_mm at e4m3 8192^3 launches nvjet_sm90_qqtst_144x128_128x6_1x2_h_bz_coopA
(run of 2026-11-24, raw/sm90-overlap-run17.json): a 144-wide tile, 6 stages, clusters of
1x2, cooperative. This times cutemma's promoted tiles of 128 rows and 144/160/192 columns,
alone and in clusters along N sharing A (``multicast="A"``), against _scaled_mm in 5
interleaved rounds of do_bench medians (e4m3, bf16 out, 8192^3 and 6144^3), after
checking each on edge shapes (NaN-poisoned output, f32 out, rel. error < 3e-4 against
float64 of the upcast inputs).
"""

from __future__ import annotations

import sys as _sys  # the GPU checks' helpers (gpu_timing) live in tests/kernels
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests" / "kernels"))
_sys.path.insert(0, str(_Path(__file__).resolve().parent))
import json
import sys

import gpu_timing  # beside this script
import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

from cutemma.kernels.dispatch import gemm as gemm_sm90
from cutemma.kernels.sm90.plan import Sm90Config

VARIANTS = {
    "128x192": Sm90Config(128, 192),
    "128x192_x2a": Sm90Config(128, 192, cluster=2, multicast="A"),
    "128x144": Sm90Config(128, 144),
    "128x144_x2a": Sm90Config(128, 144, cluster=2, multicast="A"),
    "128x160": Sm90Config(128, 160),
}


def main() -> None:
    gen = torch.Generator(device="cuda").manual_seed(17)
    e4m3 = torch.float8_e4m3fn
    res = {"device": torch.cuda.get_device_name(), "checks": [], "rows": []}
    for name, cfg in VARIANTS.items():
        for m, n, k in [(1, 8, 16), (300, 290, 272), (1031, 1000, 1040)]:
            A = torch.randn((m, k), generator=gen, device="cuda").to(e4m3)
            B = torch.randn((n, k), generator=gen, device="cuda").to(e4m3).t()
            D = torch.full((m, n), float("nan"), device="cuda")
            gemm_sm90(A, B, out=D, config=cfg)
            ref = A.double() @ B.double()
            err = float((D.double() - ref).norm() / ref.norm())
            ok = bool(torch.isfinite(D).all()) and err < 3e-4
            res["checks"].append({"config": name, "mnk": [m, n, k], "rel_err": err, "ok": ok})
    bad = [c for c in res["checks"] if not c["ok"]]
    print(f"checks {len(res['checks']) - len(bad)} / {len(res['checks'])}; failed {bad}")
    for s in (8192, 6144):
        res["rows"].append(gpu_timing.e4m3_square(s, VARIANTS, gen))
    json.dump(res, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
