"""Instruction mix of the sm80 GEMM mainloop, read from SASS (no GPU needed).

Usage: python bench/gemm_sass.py [--arch sm_90a] [--dtype bf16] [--majors KN] [--config NAME ...]

Compiles each config with NVRTC, disassembles it, and finds the mainloop: every
backward branch whose loop body holds HMMA/IMMA. For each such loop it reports
the instructions of one pass through the body (the steady state: all of them run
on an interior tile), divided by the k tiles one pass covers, as HMMA, LDSM,
LDGSTS and the rest, plus registers and local memory of the kernel. The loop with
the most tensor-core instructions per pass and the fewest others is the hot one (the
steady-state loop, unpredicated copies); ``edge`` is the other loop's total per k tile
(the last tiles and the blocks at the matrix edge).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cutemma.cuda import compile, local_memory_use, resource_usage, sass  # noqa: E402
from cutemma.kernels import BUILTIN_CONFIGS, GemmConfig, GemmPlan, gemm_source  # noqa: E402

_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
_MMA = ("HMMA", "IMMA")


def parse(text: str) -> list[tuple[int, str, str]]:
    """(address, opcode with modifiers, operands) of every instruction."""
    return [
        (int(m.group(1), 16), m.group(3), m.group(4))
        for m in map(_LINE.search, text.splitlines())
        if m
    ]


def loops(code: list[tuple[int, str, str]]) -> list[tuple[int, int, Counter]]:
    """(start, end, opcode counts) of each backward-branch loop body holding MMAs."""
    out = []
    for addr, op, args in code:
        m = re.match(r"\s*(0x[0-9a-f]+)", args)
        if not op.startswith("BRA") or not m or int(m.group(1), 16) > addr:
            continue
        start = int(m.group(1), 16)
        body = [o.split(".", 1)[0] for a, o, _ in code if start <= a <= addr]
        counts = Counter(body)
        if any(counts[k] for k in _MMA):
            out.append((start, addr, counts))
    return out


def mix(cfg: GemmConfig, dtype: str, majors: str, arch: str) -> dict:
    """The hot loop's per-k-tile instruction mix (per warp) and the kernel's resources."""
    plan = GemmPlan(cfg, dtype, majors[0], majors[1])
    out = {"f16": "f16", "bf16": "bf16", "tf32": "f32", "s8": "s32"}[dtype]
    cubin = compile(gemm_source(cfg, dtype, majors[0], majors[1], out), arch)
    code = parse(sass(cubin))
    per_tile = plan.mma_m * plan.mma_n * plan.k_blocks
    found = loops(code)
    most = max(sum(c[k] for k in _MMA) for _, _, c in found)
    found = sorted(
        (c for _, _, c in found if sum(c[k] for k in _MMA) == most), key=lambda c: sum(c.values())
    )
    counts = found[0]
    tiles = sum(counts[k] for k in _MMA) / per_tile
    mma = sum(counts[k] for k in _MMA) / tiles
    row = {k: counts[k] / tiles for k in ("LDSM", "LDGSTS")}
    total = sum(counts.values()) / tiles
    res = next(iter(resource_usage(cubin).values()))
    return {
        "config": cfg.name,
        "mma": mma,
        "ldsm": row["LDSM"],
        "ldgsts": row["LDGSTS"],
        "other": total - mma - row["LDSM"] - row["LDGSTS"],
        "total": total,
        "mma_share": mma / total,
        "tiles_per_pass": tiles,
        "loops": len(found),
        "edge": sum(found[-1].values()) / tiles if len(found) > 1 else None,
        "regs": res.get("REG", 0),
        "local": bool(local_memory_use(cubin)),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--majors", default="KN", help="A major then B major: KK, KN, MK, MN")
    ap.add_argument("--config", nargs="*", default=None, help="built-in names or b128x128x64_s3")
    args = ap.parse_args()
    extra = {"b128x128x64_s3": GemmConfig(128, 128, 64, (2, 2), 3)}
    names = args.config or [*BUILTIN_CONFIGS, *extra]
    print(f"{args.dtype} {args.majors} {args.arch}: per k tile, per warp, of the hot loop")
    head = "config                      MMA   LDSM LDGSTS  other  total MMA%  regs local  edge"
    print(head)
    for name in names:
        cfg = BUILTIN_CONFIGS.get(name) or extra[name]
        r = mix(cfg, args.dtype, args.majors, args.arch)
        print(
            f"{r['config']:26s} {r['mma']:5.0f} {r['ldsm']:6.0f} {r['ldgsts']:6.0f} "
            f"{r['other']:6.0f} {r['total']:6.0f} {100 * r['mma_share']:3.0f}% {r['regs']:5d} "
            f"{'SPILL' if r['local'] else 'no':>5s} {r['edge'] or 0:5.0f}"
        )


if __name__ == "__main__":
    main()
