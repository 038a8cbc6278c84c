"""How many clusters of a kcluster kernel run at once (the driver's
``cuOccupancyMaxActiveClusters`` for the kernel as the GEMM launches it), by cluster size and
tile, beside what ``cutemma.kernels.sm90.kcluster.clusters`` assumes, and the time of one
call at that many clusters and at one more (a second wave).

    python bench/experiments/kcluster_capacity.py OUT.json
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))


def main() -> None:
    import torch
    from gemm_sweep import turns_ms

    import cutemma
    from cutemma import libcuda
    from cutemma.kernels.sm90 import host
    from cutemma.kernels.sm90.config import Sm90Config
    from cutemma.kernels.sm90.kcluster import clusters

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    cu = libcuda.lib()
    rows = []
    for bm, bn, cons in ((128, 128, 2), (128, 256, 2), (64, 128, 1)):
        for kc in (2, 4, 8):
            cfg = Sm90Config(bm, bn, consumers=cons, kcluster=kc)
            A = torch.randn(bm, 4096, device="cuda", dtype=torch.bfloat16)
            W = torch.randn(bn, 4096, device="cuda", dtype=torch.bfloat16)
            cutemma.gemm(A, W.t(), config=cfg)
            key = host.kernel_key(cfg, "bf16", "K", "K", "bf16", "bf16")
            kern, _ = host.compiled_sm90(key, "sm_90a")
            fn = kern.handle(0)
            conf = libcuda.LaunchConfig(gridDimX=kc * 512, gridDimY=1, gridDimZ=1,
                                        blockDimX=kern.threads, blockDimY=1, blockDimZ=1,
                                        sharedMemBytes=kern.shared, hStream=None,
                                        attrs=None, numAttrs=0)  # fmt: skip
            n = ctypes.c_int(-1)
            st = cu.cuOccupancyMaxActiveClusters(ctypes.byref(n), fn, ctypes.byref(conf))
            r = {"config": cfg.name, "kcluster": kc, "status": st, "max_active_clusters": n.value,
                 "model_clusters": clusters(kc, sms)}  # fmt: skip
            # one call of exactly that many tiles (one wave), and of one tile more
            if st == 0 and n.value > 0:
                calls = {}
                for tiles in (n.value, n.value + 1):
                    A2 = torch.randn(bm * tiles, 8192, device="cuda", dtype=torch.bfloat16)
                    W2 = torch.randn(bn, 8192, device="cuda", dtype=torch.bfloat16)
                    calls[str(tiles)] = lambda A2=A2, W2=W2, c=cfg: cutemma.gemm(
                        A2, W2.t(), config=c
                    )
                r["us_by_tiles"] = {t: round(v * 1e3, 2) for t, v in turns_ms(calls, 10).items()}
            rows.append(r)
            print(r, flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump({"what": __doc__.splitlines()[0], "sms": sms, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
