"""The decode-step graph (bench/gemm_decode_graph.py) with the built-in pick, with only
the swapped kernels priced for calls of at most 256 rows, or with the built-in pick's
kernels launched with programmatic dependent launch (``pdl``: each kernel's prologue and
first loads overlap the previous kernel's tail), or with every kernel's shared-memory
carveout set to the most (``carveout``: the SM's L1 and shared memory split the same for
every kernel, so consecutive kernels of different shared-memory needs do not repartition
it): which the graph runs faster.

    python bench/experiments/decode_pick_ab.py OUT.json builtin|swapped|pdl|carveout [MODELS [TOKENS]]

Each variant runs in its own process (the picks are cached per signature), and records
the kernel it took for each projection.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))


def main() -> None:
    out, variant = sys.argv[1], sys.argv[2]
    models = sys.argv[3] if len(sys.argv) > 3 else "llama-3-8b"
    tokens = sys.argv[4] if len(sys.argv) > 4 else "16,32,64,128,256"
    from cutemma.kernels import pick, space

    if variant == "swapped":
        keep = pick.kernels_of

        def kernels(reads, m, n, k, dtype, *a):  # (fp8 at 256 tokens has no swapped kernel)
            found = keep(reads, m, n, k, dtype, *a)  # (the space's tiles first: left out)
            return found[1:] if m <= 256 and space.swapped_groups(m, n, k, dtype) else found

        pick.kernels_of = kernels
    if variant == "pdl":
        from dataclasses import replace

        built_in = pick._sm90_pick

        def with_pdl(*args, **kw):  # (pdl runs clusters of 1 only)
            cfg, t = built_in(*args, **kw)
            return (replace(cfg, pdl=True) if cfg.cluster == 1 else cfg), t

        pick._sm90_pick = with_pdl
    if variant == "carveout":
        import ctypes

        from cutemma import libcuda

        loaded = libcuda.load_function
        carveout, most = 9, 100  # CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, percent

        def load_function(cubin, name, shared):
            module, fn = loaded(cubin, name, shared)
            libcuda.check(
                libcuda._need().cuFuncSetAttribute(ctypes.c_void_p(fn), carveout, most),
                "set the shared-memory carveout",
            )
            return module, fn

        libcuda.load_function = load_function
    import gemm_decode_graph as g
    from gemm_sweep import MODELS

    copy = g.copy_tbps()
    rows = []
    for model in models.split(","):
        for dtype in ("bf16", "e4m3"):
            ws = g.weights(model, dtype)
            for m in map(int, tokens.split(",")):
                row = g.step(model, dtype, m, ws, copy)
                row["variant"] = variant
                row["picks"] = [
                    pick._sm90_pick(m, n, k, dtype, 1, 132, "h200", True)[0].name
                    for n, k in MODELS[model]
                ]
                rows.append(row)
            del ws
    with open(out, "w") as f:
        json.dump({"variant": variant, "copy_tbps": copy, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
