"""Compile-only checks of the sm100 copy atoms: each instruction assembles and becomes its SASS.

No Blackwell GPU is lent here, so these atoms are only compiled (for ``sm_100a``): one small
kernel per atom issues its PTX with the operand counts of its CopyOperation, all kernels of a
family in one NVRTC program, and each kernel's SASS must hold the instruction's kind:
``LDTM`` (tcgen05.ld), ``STTM`` (tcgen05.st), ``UTCCP`` (tcgen05.cp), ``LDSM``/``STSM``
(8-bit ldmatrix/stmatrix), ``LDG``/``STG`` (256-bit global). Kinds read off NVRTC 13's output.

>>> src, kernels = family_source("sm100.utccp")
>>> len(kernels), "tcgen05.cp.cta_group::2.128x256b" in src
(12, True)
"""

from __future__ import annotations

from cutemma.copy import copy_ops
from cutemma.cuda.source import FIXED_WIDTH_TYPES, Param, asm_volatile, kernel, operand_list

ARCH = "sm_100a"
# family -> SASS kind per direction (load/store where the family has both)
KINDS = {
    "sm100.ldsm8": "LDSM",
    "sm100.stsm8": "STSM",
    "sm100.tmem_load": "LDTM",
    "sm100.tmem_store": "STTM",
    "sm100.utccp": "UTCCP",
    "sm100.global256": None,  # LDG or STG by the operation's direction
}


def _kname(name: str) -> str:
    return "chk_" + "".join(c if c.isalnum() else "_" for c in name)


def _split(op) -> str:
    """The immHalfSplitoff operand of a 16x32bx2 tcgen05.ld/st (PTX ISA, tcgen05.ld)."""
    half = op.param("half_split")
    return f", {half}" if half is not None else ""


def _body(op) -> str:
    fam = op.family
    if fam == "sm100.utccp":
        return asm_volatile(f"{op.ptx} [%0], %1;", [], [("r", "taddr"), ("l", "desc")])
    if fam == "sm100.global256":
        if op.dst.space == "gmem":
            regs = [f"in[{i}]" for i in range(8)]
            return asm_volatile(
                f"{op.ptx} [%0], {operand_list(1, 8)};",
                [],
                [("l", "out"), *[("r", r) for r in regs]],
            )
        return "\n".join(
            [
                "uint32_t r[8];",
                asm_volatile(
                    f"{op.ptx} {operand_list(0, 8)}, [%8];",
                    [("=r", f"r[{i}]") for i in range(8)],
                    [("l", "in")],
                ),
                "out[threadIdx.x] = r[0] ^ r[7];",
            ]
        )
    if op.src.space == "reg":  # stores: registers from memory, then the instruction
        n = op.src.count
        dst = "taddr" if op.dst.space == "tmem" else "saddr"
        return "\n".join(
            [
                f"uint32_t v[{n}];",
                f"for (int i = 0; i < {n}; ++i) v[i] = in[threadIdx.x + 32 * i];",
                asm_volatile(
                    f"{op.ptx} [%0]{_split(op)}, {operand_list(1, n)};",
                    [],
                    [("r", dst), *[("r", f"v[{i}]") for i in range(n)]],
                    ["memory"],
                ),
            ]
        )
    n = op.dst.count
    src = "taddr" if op.src.space == "tmem" else "saddr"
    wait = ['asm volatile("tcgen05.wait::ld.sync.aligned;");'] if op.src.space == "tmem" else []
    return "\n".join(
        [
            f"uint32_t r[{n}];",
            asm_volatile(
                f"{op.ptx} {operand_list(0, n)}, [%{n}]{_split(op)};",
                [("=r", f"r[{i}]") for i in range(n)],
                [("r", src)],
            ),
            *wait,
            "uint32_t acc = 0;",
            f"for (int i = 0; i < {n}; ++i) acc ^= r[i];",
            "out[threadIdx.x] = acc;",
        ]
    )


def family_source(family: str) -> tuple[str, dict[str, tuple[str, str]]]:
    """One NVRTC program holding a kernel per atom of ``family``; {kernel: (atom, SASS kind)}."""
    kernels: dict[str, tuple[str, str]] = {}
    parts = [FIXED_WIDTH_TYPES]
    params = [
        Param("uint32_t*", "out"),
        Param("const uint32_t*", "in"),
        Param("uint32_t", "taddr"),
        Param("unsigned long long", "desc"),
    ]
    for op in copy_ops(family=family):
        name = _kname(op.name)
        kind = KINDS[family] or ("STG" if op.dst.space == "gmem" else "LDG")
        head = [
            "__shared__ __align__(128) uint32_t smem[1024];",
            "uint32_t saddr = static_cast<uint32_t>(__cvta_generic_to_shared(&smem[(threadIdx.x * 4) % 1024]));",
        ]
        parts.append(kernel(name, params, "\n".join([*head, _body(op)])))
        kernels[name] = (op.name, kind)
    return "\n\n".join(parts) + "\n", kernels


def check_family(family: str) -> list[dict]:
    """Compile ``family`` for sm_100a; one result per atom: its SASS kind count (0 = missing).

    >>> check_family("sm100.global256")[0]["ok"]  # doctest: +SKIP
    True
    """
    from cutemma.cuda.batch_compile import split_sass
    from cutemma.cuda.compile import compile as nvrtc_compile
    from cutemma.cuda.sass import count_instructions, sass

    src, kernels = family_source(family)
    try:
        per_kernel = split_sass(sass(nvrtc_compile(src, ARCH)))
    except Exception as err:  # the whole family failed to build: say so for each atom
        why = str(err)[:300]
        return [
            {"name": a, "arch": ARCH, "compiled": False, "ok": False, "why": why}
            for a, _ in kernels.values()
        ]
    out = []
    for kname, (atom, kind) in kernels.items():
        counts = count_instructions(per_kernel.get(kname, ""))
        n = sum(v for k, v in counts.items() if k.split(".")[0] == kind)
        out.append(
            {
                "name": atom,
                "arch": ARCH,
                "compiled": True,
                "compile_only": True,
                "sass": {kind: n},
                "ok": n > 0,
                "why": None if n else f"no {kind} in its SASS",
            }
        )
    return out


def check_all() -> list[dict]:
    """Every sm100 copy atom compiled and checked (one program per family)."""
    return [r for fam in KINDS for r in check_family(fam)]
