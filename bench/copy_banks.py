"""Shared-memory bank conflicts of ldmatrix TiledCopies: cutemma's prediction vs Nsight Compute.

One kernel per shared-memory layout: the 128 threads of a TiledCopy (SM75_U32x4_LDSM_N, the A
operand of a 2x2 SM80_16x8x16 TiledMMA) issue its ldmatrix instructions over a tile laid out
by that layout (row addresses from the TiledCopy's own partition, as constant tables), and
XOR what they receive into one word each, which is checked against the CPU emulation.
``cutemma.tiled.copy_analysis.bank_conflicts`` predicts the ldmatrix wavefronts and bank
conflicts; ncu counts them (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum`` and
``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum``).

    python bench/copy_banks.py predict            # predictions only (any machine)
    python bench/copy_banks.py run                # launch every kernel once (GPU)
    python bench/copy_banks.py ncu OUT_DIR        # run under ncu, write OUT_DIR/copy-banks.json
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cutemma.copy import make_copy_atom  # noqa: E402
from cutemma.cuda.source import (  # noqa: E402
    FIXED_WIDTH_TYPES,
    Param,
    asm_volatile,
    constant_table,
    kernel,
    translation_unit,
)
from cutemma.layout import Layout, Swizzle  # noqa: E402
from cutemma.layout.swizzle import make_swizzled  # noqa: E402
from cutemma.tiled import make_tiled_copy_A, make_tiled_mma  # noqa: E402
from cutemma.tiled.copy_analysis import _lane_offsets, bank_conflicts  # noqa: E402

CASES = {
    "bank_sw128_free": make_swizzled(Swizzle(3, 3, 3), Layout((32, 64), (64, 1))),
    "bank_rows32B_2way": Layout((32, 16), (16, 1)),
    "bank_rows64B_4way": Layout((32, 32), (32, 1)),
    "bank_rows128B_8way": Layout((32, 64), (64, 1)),
}
METRICS = (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "smsp__inst_executed_op_ldsm.sum",
)


def tiled_copy():
    tm = make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", (2, 2))
    return make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), tm)


def source(name: str, smem) -> tuple[str, int, int]:
    tc = tiled_copy()
    offs, nv = _lane_offsets(tc, smem, "S")  # (thread, instr, value) element offsets
    rows = offs[:, :, 0]
    n_instr = rows.shape[1]
    size = smem.cosize()
    body = "\n".join(
        [
            f"__shared__ __align__(128) uint16_t smem[{size}];",
            "const int t = threadIdx.x;",
            f"for (int i = t; i < {size}; i += {tc.size}) smem[i] = in[i];",
            "__syncthreads();",
            "uint32_t acc = 0;",
            f"for (int i = 0; i < {n_instr}; ++i) {{",
            "  uint32_t r0, r1, r2, r3;",
            f"  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(&smem[row[t * {n_instr} + i]]));",
            "  "
            + asm_volatile(
                "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];",
                [("=r", "r0"), ("=r", "r1"), ("=r", "r2"), ("=r", "r3")],
                [("r", "a")],
            ).replace("\n", "\n  "),
            "  acc ^= r0 ^ r1 ^ r2 ^ r3;",
            "}",
            "out[t] = acc;",
        ]
    )
    src = translation_unit(
        FIXED_WIDTH_TYPES,
        constant_table("int", "row", rows.reshape(-1)),
        kernel(name, [Param("const uint16_t*", "in"), Param("uint32_t*", "out")], body),
    )
    return src, tc.size, size


def expected(smem, data: np.ndarray) -> np.ndarray:
    """Each thread's XOR of its received registers, from the atom's CPU emulation."""
    tc = tiled_copy()
    offs, _ = _lane_offsets(tc, smem, "S")
    acc = np.zeros(tc.size, dtype=np.uint32)
    for w in range(tc.size // 32):
        for i in range(offs.shape[1]):
            vals = data[offs[32 * w : 32 * w + 32, i]].astype(np.uint32)
            got = tc.atom.move(vals)  # (32, 8) 16-bit values, register j = values 2j, 2j+1
            words = got[:, 0::2] | (got[:, 1::2] << 16)
            acc[32 * w : 32 * w + 32] ^= np.bitwise_xor.reduce(words, axis=1)
    return acc


def predict() -> dict:
    tc = tiled_copy()
    out = {}
    for name, smem in CASES.items():
        r = bank_conflicts(tc, smem)
        out[name] = {
            "smem_layout": str(smem),
            "instructions": len(r.instructions),
            "wavefronts": r.wavefronts,
            "ideal": r.ideal,
            "bank_conflicts": r.bank_conflicts,
            "worst": r.worst,
        }
    return out


def run() -> dict:
    import torch

    from cutemma.cuda.compile import compile as nvrtc_compile
    from cutemma.cuda.launch import load_kernel

    checks = {}
    for name, smem in CASES.items():
        src, threads, size = source(name, smem)
        cubin = nvrtc_compile(src, "sm_90")
        data = np.random.default_rng(0).integers(0, 1 << 16, size).astype(np.uint16)
        t_in = torch.from_numpy(data.view(np.int16).copy()).cuda()
        t_out = torch.zeros(threads, dtype=torch.int32, device="cuda")
        load_kernel(cubin, name)(t_in, t_out, grid=1, block=threads)
        torch.cuda.synchronize()
        got = t_out.cpu().numpy().view(np.uint32)
        checks[name] = bool((got == expected(smem, data)).all())
    return checks


def _first(measured: dict, keys: tuple[str, ...]):
    """The counter whose name ends with the first matching key (l1tex__ names before smsp__)."""
    for key in keys:
        hits = sorted(n for n in measured if n.endswith(key + ".sum"))
        hits.sort(key=lambda n: not n.startswith("l1tex__"))
        if hits:
            return measured[hits[0]]
    return None


def under_ncu(out_dir: Path) -> dict:
    query = subprocess.run(["ncu", "--query-metrics"], capture_output=True, text=True)
    known = query.stdout
    (out_dir / "ncu-shared-metrics.txt").write_text(
        "\n".join(ln for ln in known.splitlines() if "shared" in ln or "ldsm" in ln)
    )
    # every shared-memory wavefront / bank-conflict counter this ncu knows, plus ours
    names = {ln.split()[0] for ln in known.splitlines() if ln.strip()}
    found = sorted(
        n + ".sum"
        for n in names
        if "mem_shared" in n and ("wavefronts" in n or "bank_conflicts" in n)
    )
    metrics = [m for m in METRICS if m.rsplit(".", 1)[0] in names] + [
        m for m in found if m not in METRICS
    ]
    cmd = [
        "ncu", "--csv", "--metrics", ",".join(metrics), "--kernel-name", "regex:bank_",
        sys.executable, __file__, "run",
    ]  # fmt: skip
    t0 = time.time()
    res = subprocess.run(cmd, capture_output=True, text=True)
    (out_dir / "ncu-copy-banks.csv").write_text(res.stdout + "\n" + res.stderr[-4000:])
    measured: dict[str, dict] = {}
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith('"')]
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        kname = row.get("Kernel Name", "")
        if kname in CASES and row.get("Metric Name") in metrics:
            value = row.get("Metric Value", "").replace(",", "")
            measured.setdefault(kname, {})[row["Metric Name"]] = float(value) if value else None
    checks_line = [ln for ln in res.stdout.splitlines() if ln.startswith("CHECKS ")]
    checks = json.loads(checks_line[-1][7:]) if checks_line else {}
    pred = predict()
    result = {
        "what": "ldmatrix bank conflicts: cutemma.tiled.copy_analysis vs ncu (H100)",
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "ncu_seconds": round(time.time() - t0, 1),
        "metrics": metrics,
        "cases": {
            k: {"predicted": pred[k], "measured": measured.get(k), "data_ok": checks.get(k)}
            for k in CASES
        },
    }
    for case in result["cases"].values():
        m = case["measured"] or {}
        wf = _first(m, ("wavefronts_mem_shared_op_ldsm", "wavefronts_mem_shared_op_ld"))
        bc = _first(
            m,
            (
                "bank_conflicts_pipe_lsu_mem_shared_op_ldsm",
                "bank_conflicts_pipe_lsu_mem_shared_op_ld",
            ),
        )
        case["wavefronts_measured"], case["bank_conflicts_measured"] = wf, bc
        case["agrees"] = (
            wf == case["predicted"]["wavefronts"] and bc == case["predicted"]["bank_conflicts"]
        )
    (out_dir / "copy-banks-h100.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "predict"
    if what == "predict":
        print(json.dumps(predict(), indent=1))
    elif what == "run":
        print("CHECKS " + json.dumps(run()))
    elif what == "ncu":
        print(json.dumps(under_ncu(Path(sys.argv[2])), indent=1))
    else:
        sys.exit(f"usage: {sys.argv[0]} predict | run | ncu OUT_DIR")
