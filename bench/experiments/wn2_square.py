"""Where two warpgroups side by side along N lose: 192-row tiles (``consumers_n=2``, the TMA
store's staging tile at 3 stages or stores from registers at 4) beside the space's 128x256
and 128x192, the three-warpgroup 192x128 and cuBLAS, on large 16-bit calls (B K-major),
where wave quantisation and the fix-up do not decide: each kernel's rate as a share of the
H200's dense bf16 peak.

    python bench/experiments/wn2_square.py OUT.json
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

SHAPES = [(8192, 8192, 8192), (6144, 6144, 8192), (3072, 12288, 4096)]
PEAK_TFLOPS = 989.4  # H200 dense bf16 (the cost model's 7.5 per SM x 132)


def tiles() -> dict:
    from cutemma.kernels.sm90.config import Sm90Config

    found = [
        Sm90Config(128, 256),
        Sm90Config(128, 192),
        Sm90Config(192, 128, consumers=3),
        Sm90Config(192, 192, consumers_n=2),
        Sm90Config(192, 192, consumers_n=2, epilogue="regs"),
        Sm90Config(192, 128, consumers_n=2),
        Sm90Config(192, 160, consumers_n=2),
        Sm90Config(128, 256, consumers_n=2),
    ]
    return {c.name: c for c in found}


def main() -> None:
    from tiles192_probe import row

    out = []
    for m, n, k in SHAPES:
        r = row("bf16_bK", m, n, k, tiles())
        r["share_of_peak"] = {key: round(2 * m * n * k / (us * 1e-6) / 1e12 / PEAK_TFLOPS, 3)
                              for key, us in r["us"].items()}  # fmt: skip
        out.append(r)
        print(m, n, k, r["share_of_peak"], flush=True)
        with open(sys.argv[1], "w") as f:
            json.dump({"what": __doc__.splitlines()[0], "rows": out,
                       "script": open(__file__).read()}, f, indent=1)  # fmt: skip


if __name__ == "__main__":
    main()
