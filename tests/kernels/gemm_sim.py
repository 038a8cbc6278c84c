"""A CPU model of the generated sm80 GEMM's data movement, thread by thread.

It reads its per-thread offsets from the generated CUDA text (the ``const int X = ...;``
lines, evaluated as Python), its constants from the plan, moves data as cp.async
(16-byte chunks, zero fill), ldmatrix (the PTX fragment rule written independently
here) and mma.sync (the atom's emulation) would, and stores through the epilogue.
"""

from __future__ import annotations

import re

import numpy as np

from cutemma.kernels.sm80.plan import GemmPlan
from cutemma.kernels.sm80.source import _ldsm_a, _ldsm_b, _mma_lines

_DECL = re.compile(r"^\s*const (?:int|uint32_t) (\w+) = (.+);", re.M)
_TABLE = re.compile(r"^__constant__ int (\w+)\[\d+\] = \{([^}]*)\};", re.M)


def thread_values(source: str, names: list[str], threads: int) -> dict[str, list[int]]:
    """Evaluate the kernel's ``const int|uint32_t name = expr;`` lines for every tid (C ``/``
    -> ``//``), in order, each seeing the names before it; shared addresses from smem_base 0."""
    exprs = {m.group(1): m.group(2) for m in _DECL.finditer(source)}
    # __constant__ tables a thread part reads at [tid] where no layout reproduces it
    tables = {m.group(1): [int(x) for x in m.group(2).split(",")] for m in _TABLE.finditer(source)}
    out: dict[str, list[int]] = {}
    for name in names:
        code = compile(exprs[name].replace("/", "//"), name, "eval")
        env = [
            {"tid": t, "smem_base": 0} | tables | {k: v[t] for k, v in out.items()}
            for t in range(threads)
        ]
        out[name] = [eval(code, {}, e) for e in env]
    return out


def _key_names(plan: GemmPlan) -> list[str]:
    """The per-thread names the kernel declares: offsets, then one shared address per key."""
    names = ["A_copy_base", "B_copy_base", "C_m", "C_n"]
    for X in "AB":  # the read's thread part, or (a 'k+' split) one per key
        split = plan.smem_read(X)
        base = f"{X}_ld_base" if plan.universal[X] else f"{X}_ldsm_base"
        if split.op == "k+":
            names += [f"{base}{j}" for j in range(len(split.keys))]
        elif not plan.universal[X]:
            names.append(base)
    for X in "AB":
        names += [f"{X}_dst{j}" for j in range(len(plan.copy(X).smem.parts()[0]))]
        if plan.universal[X]:
            names += [f"{X}_ld_base"] if plan.regload(X).op != "k+" else []
            names += [f"{X}_ld{j}" for j in range(len(plan.regload(X).parts()[0]))]
        else:
            names += [f"{X}_ldsm{j}" for j in range(len(plan.ldmatrix(X)[1].parts()[0]))]
    return names


_COPIERS = re.compile(r"if \(tid < (\d+)\) \{  // ([AB]): threads")


def copy_threads(source: str, threads: int) -> dict[str, int]:
    """How many threads run each operand's copy, read from the kernel text: the bound of
    its ``if (tid < n)`` guard, else every thread of the block."""
    out = {"A": threads, "B": threads}
    for n, X in _COPIERS.findall(source):
        out[X] = int(n)
    return out


_MMA_STMT = re.compile(r'asm volatile\(\s*"mma\.sync.*?\);', re.S)


def mma_statements(text: str) -> list[tuple[list[int], list[tuple], list[tuple]]]:
    """(acc registers, a_frag (group, reg), b_frag (group, reg)) of each mma.sync statement
    of one k block's kernel text (buffer 0): the model runs the pairing the kernel writes."""
    out = []
    for stmt in _MMA_STMT.findall(text):
        _, outs, ins = stmt.split("\n  :", 2)
        acc = [int(x) for x in re.findall(r"acc\[(\d+)\]", outs)]
        a = [tuple(map(int, x)) for x in re.findall(r"a_frag\[0\]\[(\d+)\]\[(\d+)\]", ins)]
        b = [tuple(map(int, x)) for x in re.findall(r"b_frag\[0\]\[(\d+)\]\[(\d+)\]", ins)]
        out.append((acc, a, b))
    return out


def atom_lane_groups(plan: GemmPlan) -> list[list[int]]:
    """The lanes of a warp that run each atom instance of one mma.sync, in the atom's thread
    order. A 32-thread atom: all lanes. The m8n8k4 quadpair atom (PTX ISA, "Matrix fragments
    for mma.m8n8k4"): quadpair q is lanes 4q..4q+3 and 4q+16..4q+19, each its own 8x8x4."""
    if plan.tiled.atom.shape_mnk == (8, 8, 4):
        return [
            [4 * q + i for i in range(4)] + [4 * q + 16 + i for i in range(4)] for q in range(4)
        ]
    return [list(range(32))]


def _at(tv: dict, name: str, t: int, add: int, plan: GemmPlan, X: str) -> int:
    """Element offset in X's tile of one stage: the kernel's byte address at key + add."""
    off = 0 if X == "A" else plan.stage_elems_A
    byte = tv[name][t] + plan.elem_bytes * add
    assert byte % plan.elem_bytes == 0
    return byte // plan.elem_bytes - off


def ldmatrix_lane_values(
    rows: list[np.ndarray], num: int, trans: bool, elem_bytes: int = 2
) -> np.ndarray:
    """(32, values) each lane gets from the 8*num 16-byte rows the lanes addressed (PTX rule).

    Register j of a lane holds bytes 4*(lane%4) .. +3 of row lane/4 of matrix j (plain), or
    16-bit elements (2*(lane%4) + h, lane/4) of matrix j (.trans, 16-bit only); a register's
    4 bytes are 4 // elem_bytes values.
    """
    per = 4 // elem_bytes
    out = np.zeros((32, num * per), dtype=rows[0].dtype)
    for lane in range(32):
        for j in range(num):
            mat = np.stack(rows[8 * j : 8 * j + 8])  # mat[row, element]
            for h in range(per):
                if trans:
                    out[lane, per * j + h] = mat[2 * (lane % 4) + h, lane // 4]
                else:
                    out[lane, per * j + h] = mat[lane // 4, (lane % 4) * per + h]
    return out


def simulate(
    plan: GemmPlan, source: str, A: np.ndarray, B: np.ndarray, stats: dict | None = None
) -> np.ndarray:
    """D = A @ B as the kernel computes it (A (M,K), B (K,N) float arrays of exact values).

    Tiles the kernel copies without predicates (``k_fast``: a block inside the matrix, a
    full k tile past the prologue) are read unclipped, so one outside the matrix fails;
    ``stats['full']``/``stats['edge']`` count the tiles copied each way.
    """
    M, K = A.shape
    N = B.shape[1]
    cfg, T, vec = plan.config, plan.threads, plan.vec
    tv = thread_values(source, _key_names(plan), T)
    assert "const int k_fast = (A_inside && B_inside) ? K / BLOCK_K - " in source
    stats = {} if stats is None else stats
    stats.setdefault("full", 0)
    stats.setdefault("edge", 0)
    D = np.full((M, N), np.nan)
    atom = plan.tiled.atom
    _, _, epi = plan.epilogue
    copiers = copy_threads(source, T)
    for m0 in range(0, M, cfg.block_m):
        for n0 in range(0, N, cfg.block_n):
            acc = np.zeros((T, plan.mma_m * plan.mma_n * plan.tv_tables["C"].shape[1]))
            inside = m0 + cfg.block_m <= M and n0 + cfg.block_n <= N
            for kt in range(-(-K // cfg.block_k)):
                full = inside and cfg.stages - 1 <= kt < K // cfg.block_k
                stats["full" if full else "edge"] += 1
                sA = np.full(plan.stage_elems_A, np.nan)
                sB = np.full(plan.stage_elems_B, np.nan)
                for X, smem, G, ext, block_mn in (("A", sA, A, M, m0), ("B", sB, B.T, N, n0)):
                    cp = plan.copy(X)
                    cpr, _ = cp.thr_layout.shape
                    vec = cp.vec  # elements per chunk: 16 bytes, or 8 or 4 (cp.async.ca)
                    writes = np.zeros(len(smem), dtype=int)  # chunk writes per element
                    for t in range(copiers[X]):
                        c, o = (t % cpr) * vec, t // cpr
                        for i, (key, add) in enumerate(cp.smem.parts()[1]):
                            if cp.k_contiguous:
                                mn, k = block_mn + o + i * cp.rows_per_pass, kt * cfg.block_k + c
                                idx = [(mn, k + j) for j in range(vec)]
                                ok = [mn < ext and k + j < K for j in range(vec)]
                            else:
                                k, mn = kt * cfg.block_k + o + i * cp.rows_per_pass, block_mn + c
                                idx = [(mn + j, k) for j in range(vec)]
                                ok = [k < K and mn + j < ext for j in range(vec)]
                            if full:  # cp_async_16_full: no predicate, must be inside
                                assert all(ok), f"unpredicated copy outside: {X} {idx[0]}"
                            vals = [G[ij] if good else 0 for ij, good in zip(idx, ok)]
                            at = _at(tv, f"{X}_dst{key}", t, add, plan, X)
                            assert 0 <= at and at + vec <= len(smem), f"{X} chunk outside"
                            smem[at : at + vec] = vals
                            writes[at : at + vec] += 1
                    assert (writes == 1).all(), f"{X} elements written {set(writes.tolist())} times"
                assert not np.isnan(sA).any() and not np.isnan(sB).any(), "smem not fully written"
                kb = plan.k_blocks
                for ik in range(kb):
                    stmts = mma_statements(_mma_lines(plan, ik, 0))
                    for w in range(T // 32):
                        lanes = list(range(32 * w, 32 * w + 32))
                        regs = {
                            X: _read_registers(plan, tv, X, ik, lanes, smem)
                            for X, smem in (("A", sA), ("B", sB))
                        }
                        vpc = plan.acc_values // plan.regs_c  # values per accumulator register
                        for acc_regs, a_regs, b_regs in stmts:
                            a = np.concatenate([regs["A"][x] for x in a_regs], axis=1)
                            b = np.concatenate([regs["B"][x] for x in b_regs], axis=1)
                            vals = [r * vpc + h for r in acc_regs for h in range(vpc)]
                            for group in atom_lane_groups(plan):
                                rows = [32 * w + lane for lane in group]
                                acc[np.ix_(rows, vals)] = atom.emulate(
                                    a[group], b[group], acc[np.ix_(rows, vals)]
                                )
            for t in range(T):
                for idx, dm, dn in epi:
                    m, n = m0 + tv["C_m"][t] + dm, n0 + tv["C_n"][t] + dn
                    if m < M and n < N:
                        D[m, n] = acc[t, idx]
    return D


def _read_registers(
    plan: GemmPlan, tv: dict, X: str, ik: int, lanes: list[int], smem: np.ndarray
) -> dict[tuple[int, int], np.ndarray]:
    """(group, register) -> (32, values per register) of operand X's fragments in k block
    ``ik``, as ldmatrix (the PTX fragment rule) or the plain loads (at the addresses the
    kernel computes) fill them; a register's values are its bytes, low first."""
    eb, vec, vpr = plan.elem_bytes, plan.vec, 4 // plan.elem_bytes
    kb, out = plan.k_blocks, {}
    groups = plan.mma_m if X == "A" else plan.mma_n
    if plan.universal[X]:
        _, parts = plan.regload(X).parts()
        nregs = plan.frag_regs[X]
        for g in range(groups):
            for r in range(nregs):
                first = ((g * kb + ik) * nregs + r) * vpr
                cols = []
                for h in range(vpr):
                    key, add = parts[first + h]
                    cols.append([smem[_at(tv, f"{X}_ld{key}", t, add, plan, X)] for t in lanes])
                out[g, r] = np.array(cols).T
        return out
    lm, _ = plan.ldmatrix(X)
    # the ldmatrix statements the kernel writes for this k block: their destination
    # registers and addresses, read from the text (x1/x2/x4, whole atoms or parts of one)
    text = "\n".join((_ldsm_a if X == "A" else _ldsm_b)(plan, ik, 0))
    stmts = _LDSM_STMT.findall(text)
    assert len(stmts) == plan.ldmatrix_groups(X)
    for ptx, outs, name, add in stmts:
        assert ptx == lm.atom.ptx
        regs = [tuple(map(int, x)) for x in re.findall(r"_frag\[0\]\[(\d+)\]\[(\d+)\]", outs)]
        assert len(regs) == lm.atom.num
        off = 0 if X == "A" else plan.stage_elems_A
        addrs = [(tv[name][t] + int(add or 0)) // eb - off for t in lanes]
        rows = [smem[a : a + vec] for a in addrs[: 8 * lm.atom.num]]
        vals = ldmatrix_lane_values(rows, lm.atom.num, lm.atom.trans, eb)
        for j, reg in enumerate(regs):
            assert reg not in out, f"{X} register {reg} loaded twice"
            out[reg] = vals[:, j * vpr : (j + 1) * vpr]
    return out


_LDSM_STMT = re.compile(
    r'asm volatile\("(ldmatrix[\w.]+) \{[^}]*\}, \[%\d+\];\\n" : (.*?) : '
    r'"r"\((\w+) \+ rd(?: \+ (\d+))?\)\);'
)
