"""cutemma.tune with sm90 candidates on the GPU, then cutemma.gemm with the winner (a script).

    python tests/kernels/gpu_tune_sm90.py OUT.json

Tunes bf16 4096^3 (A row-major, B row-major) in a fresh cache folder, prints every
candidate's time and the winner, then checks cutemma.gemm on that class (first call and
the fast-path repeat, fresh inputs, poisoned output) against float64.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

import torch  # before cutemma's CUDA modules (see notes/CUDA.md)

os.environ.setdefault("CUTEMMA_CACHE_DIR", tempfile.mkdtemp())

import cutemma  # noqa: E402
from cutemma.kernels import tune  # noqa: E402


def main() -> None:
    path = sys.argv[1]
    tune.reload()
    best = cutemma.tune(4096, 4096, 4096, "bfloat16", "K", "N")
    entry = json.loads(tune.cache_path().read_text())["entries"]
    ((key, rec),) = entry.items()
    print("winner", best.name, type(best).__name__, json.dumps(rec["timings"]))
    ok = True
    for m, n, k in [(4096, 4096, 4096), (3000, 4000, 2056), (4096, 4096, 4096)]:
        A = torch.randn(m, k, device="cuda").bfloat16()
        B = torch.randn(k, n, device="cuda").bfloat16()
        D = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        cutemma.gemm(A, B, out=D)
        cutemma.gemm(A, B, out=D)  # the repeat: the prepared launch
        ref = A.double() @ B.double()
        err = float((D.double() - ref).norm() / ref.norm())
        ok &= bool(torch.isfinite(D).all()) and err < 1e-2
        print(m, n, k, f"rel err {err:.1e}")
    json.dump({"winner": best.name, "entry": rec, "ok": ok}, open(path, "w"), indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
