"""Probe kernels for copy atoms: one warp runs the instruction on data placed by the atom's layouts.

Each probe is generated from the atom (its layouts give every address and index as constant
tables) and compared with :meth:`cutemma.copy.CopyAtom.move` on the CPU:

- ``ldmatrix`` (LDSM): the index space (``64 * n`` 16-bit elements) is filled into shared
  memory, lane t gives the address of element ``layout_src_tv(t, 0)`` (its row); the lanes'
  registers are written out: ``out[t, v]`` must be ``in[layout_dst_tv(t, v)]``.
- ``stmatrix`` (STSM): register value (t, v) is ``in[layout_src_tv(t, v)]``, lane t's row
  address is ``layout_dst_tv(t, 0)``; shared memory read back must equal ``in``.
- ``cp.async``: thread t copies its ``bits`` from ``in`` to shared memory and back out; the
  ZFILL forms pass source size 0 on every third thread, whose words must come back zero.
- shuffles: registers ``in[2t], in[2t+1]`` exchanged with lane ``t ^ m`` as the atom says.

Compiled on any machine (NVRTC) and checked for the SASS instruction the atom must become
(LDSM, STSM, LDGSTS, SHFL) and for no local memory; run where a GPU is.

>>> p = copy_probe("SM75_U16x8_LDSM_T")
>>> p.sass_kind, p.threads, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in p.source
('LDSM', 32, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cutemma.copy import copy_ops, make_copy_atom
from cutemma.cuda.source import (
    FIXED_WIDTH_TYPES,
    Param,
    asm_volatile,
    comment,
    constant_table,
    kernel,
    operand_list,
    translation_unit,
)
from cutemma.errors import CopyError
from cutemma.mma.traits import tv_table

# family -> (SASS instruction kind, arch to compile for)
PROBED = {
    "sm75.ldsm": ("LDSM", "sm_80"),
    "sm90.stsm": ("STSM", "sm_90"),
    "sm80.cp_async": ("LDGSTS", "sm_80"),
    "sm50.shuffle": ("SHFL", "sm_80"),
}


@dataclass(frozen=True)
class CopyProbe:
    """One generated probe: source, kernel name, data sizes and the expected output."""

    name: str
    source: str
    kernel_name: str
    arch: str
    sass_kind: str
    threads: int
    in_dtype: str
    n_in: int
    n_out: int
    expect: object  # (in: np.ndarray) -> np.ndarray

    def inputs(self, seed: int = 0) -> np.ndarray:
        """Distinct input words (so a misplaced value cannot pass).

        >>> copy_probe("SM50_Shuffle_U32_2x2Trans_XOR1").inputs()[:3].tolist()
        [1, 2, 3]
        """
        return (np.arange(self.n_in, dtype=np.int64) + 1).astype(self.in_dtype)


def _kname(name: str) -> str:
    return "probe_" + "".join(c if c.isalnum() else "_" for c in name).strip("_")


def _ldsm(atom) -> CopyProbe:
    n = atom.op.param("num")
    size = 64 * n
    rows = tv_table(atom.layout_src_tv)[:, 0]
    regs = [f"r[{j}]" for j in range(n)]
    body = "\n".join(
        [
            f"__shared__ __align__(128) uint16_t smem[{size}];",
            "const int t = threadIdx.x;",
            f"for (int i = t; i < {size}; i += 32) smem[i] = in[i];",
            "__syncwarp();",
            "uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(&smem[row_of_lane[t]]));",
            f"uint32_t r[{n}];",
            asm_volatile(
                f"{atom.op.ptx} {operand_list(0, n)}, [%{n}];",
                [("=r", x) for x in regs],
                [("r", "addr")],
            ),
            f"for (int j = 0; j < {n}; ++j) {{",
            f"  out[t * {2 * n} + 2 * j] = static_cast<uint16_t>(r[j] & 0xffff);",
            f"  out[t * {2 * n} + 2 * j + 1] = static_cast<uint16_t>(r[j] >> 16);",
            "}",
        ]
    )
    src_tab = tv_table(atom.layout_src_tv)

    def expect(x: np.ndarray) -> np.ndarray:
        return atom.move(x[src_tab]).reshape(-1)

    return _probe(
        atom,
        "LDSM",
        body,
        [constant_table("int", "row_of_lane", rows)],
        "uint16_t",
        size,
        32 * 2 * n,
        expect,
    )


def _stsm(atom) -> CopyProbe:
    n = atom.op.param("num")
    size = 64 * n
    src = tv_table(atom.layout_src_tv)  # (32, 2n) element index of register value (t, v)
    rows = tv_table(atom.layout_dst_tv)[:, 0]
    regs = [f"r[{j}]" for j in range(n)]
    body = "\n".join(
        [
            f"__shared__ __align__(128) uint16_t smem[{size}];",
            "const int t = threadIdx.x;",
            f"for (int i = t; i < {size}; i += 32) smem[i] = 0;",
            f"uint32_t r[{n}];",
            f"for (int j = 0; j < {n}; ++j)",
            f"  r[j] = uint32_t(in[value_index[t * {2 * n} + 2 * j]]) |",
            f"         (uint32_t(in[value_index[t * {2 * n} + 2 * j + 1]]) << 16);",
            "__syncwarp();",
            "uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(&smem[row_of_lane[t]]));",
            asm_volatile(
                f"{atom.op.ptx} [%0], {operand_list(1, n)};",
                [],
                [("r", "addr"), *[("r", x) for x in regs]],
                ["memory"],
            ),
            "__syncwarp();",
            f"for (int i = t; i < {size}; i += 32) out[i] = smem[i];",
        ]
    )
    tables = [
        constant_table("int", "row_of_lane", rows),
        constant_table("int", "value_index", src.reshape(-1)),
    ]
    return _probe(atom, "STSM", body, tables, "uint16_t", size, size, lambda x: x.copy())


def _cp_async(atom) -> CopyProbe:
    bits = atom.op.param("bits")
    words = bits // 32
    zfill = "zfill" in atom.op.modifiers
    size = 32 * words
    ptx = f"{atom.op.ptx} [%0], [%1], {bits // 8}" + (", %2;" if zfill else ";")
    inputs = [("r", "dst"), ("l", "in + t * " + str(words))]
    if zfill:
        inputs.append(("r", "(t % 3 == 0) ? 0 : " + str(bits // 8)))
    body = "\n".join(
        [
            f"__shared__ __align__(128) uint32_t smem[{size}];",
            "const int t = threadIdx.x;",
            f"for (int i = t; i < {size}; i += 32) smem[i] = 0xdeadbeefu;",
            "__syncthreads();",
            f"uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(&smem[t * {words}]));",
            asm_volatile(ptx, [], inputs, ["memory"]),
            asm_volatile("cp.async.commit_group;"),
            asm_volatile("cp.async.wait_all;", [], [], ["memory"]),
            "__syncthreads();",
            f"for (int i = t; i < {size}; i += 32) out[i] = smem[i];",
        ]
    )

    def expect(x: np.ndarray) -> np.ndarray:
        y = x.copy().reshape(32, words)
        if zfill:
            y[::3] = 0  # threads 0, 3, 6, ...: source size 0 fills zeros (PTX ISA, cp.async)
        return y.reshape(-1)

    return _probe(atom, "LDGSTS", body, [], "uint32_t", size, size, expect)


def _shuffle(atom) -> CopyProbe:
    m = atom.op.param("xor")
    body = "\n".join(
        [
            "const int t = threadIdx.x;",
            "uint32_t r0 = in[2 * t], r1 = in[2 * t + 1];",
            f"const bool upper = (t & {m}) != 0;",
            "// the lane with the mask bit clear keeps r0 and takes its partner's r0 as d1;",
            "// the other keeps r1 and takes its partner's r1 as d0 (a 2x2 transpose)",
            f"uint32_t recv = __shfl_xor_sync(0xffffffffu, upper ? r0 : r1, {m});",
            "out[2 * t] = upper ? recv : r0;",
            "out[2 * t + 1] = upper ? r1 : recv;",
        ]
    )

    def expect(x: np.ndarray) -> np.ndarray:
        return atom.move(x.reshape(32, 2)).reshape(-1)

    return _probe(atom, "SHFL", body, [], "uint32_t", 64, 64, expect)


def _probe(atom, kind, body, tables, ctype, n_in, n_out, expect) -> CopyProbe:
    name = _kname(atom.name)
    params = [Param(f"const {ctype}*", "in"), Param(f"{ctype}*", "out")]
    source = translation_unit(
        FIXED_WIDTH_TYPES,
        comment(f"copy probe of {atom.name}: data placed by its layouts, one warp"),
        *tables,
        kernel(name, params, body),
    )
    dtype = {"uint16_t": "uint16", "uint32_t": "uint32"}[ctype]
    arch = PROBED[atom.op.family][1]
    return CopyProbe(atom.name, source, name, arch, kind, 32, dtype, n_in, n_out, expect)


def copy_probe(name: str) -> CopyProbe:
    """The probe of one H100-runnable copy atom (LDSM, STSM, cp.async, shuffles).

    >>> copy_probe("SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint64_t>").n_in
    64
    """
    from cutemma.copy import copy_op

    op = copy_op(name)
    if op.family not in PROBED:
        raise CopyError(
            f"{name} (family {op.family}) has no probe; probes exist for {', '.join(PROBED)}"
        )
    bits = {"sm75.ldsm": 16, "sm90.stsm": 16, "sm50.shuffle": 32}.get(op.family)
    atom = make_copy_atom(op, bits or op.param("bits"))
    build = {"sm75.ldsm": _ldsm, "sm90.stsm": _stsm, "sm80.cp_async": _cp_async}.get(
        op.family, _shuffle
    )
    return build(atom)


def copy_probes() -> list[CopyProbe]:
    """Every probed atom of the catalog (22: 6 LDSM, 6 STSM, 8 cp.async, 2 shuffles).

    >>> len(copy_probes())
    22
    """
    return [copy_probe(op.name) for fam in PROBED for op in copy_ops(family=fam)]
