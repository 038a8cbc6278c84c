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

_DECL = re.compile(r"^\s*const (?:int|uint32_t) (\w+) = (.+);", re.M)


def thread_values(source: str, names: list[str], threads: int) -> dict[str, list[int]]:
    """Evaluate the kernel's ``const int|uint32_t name = expr;`` lines for every tid (C ``/``
    -> ``//``), in order, each seeing the names before it; shared addresses from smem_base 0."""
    exprs = {m.group(1): m.group(2) for m in _DECL.finditer(source)}
    out: dict[str, list[int]] = {}
    for name in names:
        code = compile(exprs[name].replace("/", "//"), name, "eval")
        env = [
            {"tid": t, "smem_base": 0} | {k: v[t] for k, v in out.items()} for t in range(threads)
        ]
        out[name] = [eval(code, {}, e) for e in env]
    return out


def _key_names(plan: GemmPlan) -> list[str]:
    """The per-thread names the kernel declares: offsets, then one shared address per key."""
    names = ["A_copy_base", "B_copy_base", "A_ldsm_base", "B_ldsm_base", "C_m", "C_n"]
    for X in "AB":
        names += [f"{X}_dst{j}" for j in range(len(plan.copy(X).smem.parts()[0]))]
        names += [f"{X}_ldsm{j}" for j in range(len(plan.ldmatrix(X)[1].parts()[0]))]
    return names


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
    cfg, T, vec, eb = plan.config, plan.threads, plan.vec, plan.elem_bytes
    tv = thread_values(source, _key_names(plan), T)
    assert "const int k_fast = (A_inside && B_inside) ? K / BLOCK_K - " in source
    stats = {} if stats is None else stats
    stats.setdefault("full", 0)
    stats.setdefault("edge", 0)
    D = np.full((M, N), np.nan)
    atom = plan.tiled.atom
    (la, sa), (lb, sb) = plan.ldmatrix("A"), plan.ldmatrix("B")
    _, _, epi = plan.epilogue
    for m0 in range(0, M, cfg.block_m):
        for n0 in range(0, N, cfg.block_n):
            acc = np.zeros((T, plan.mma_m * plan.mma_n * 4))
            inside = m0 + cfg.block_m <= M and n0 + cfg.block_n <= N
            for kt in range(-(-K // cfg.block_k)):
                full = inside and cfg.stages - 1 <= kt < K // cfg.block_k
                stats["full" if full else "edge"] += 1
                sA = np.full(plan.stage_elems_A, np.nan)
                sB = np.full(plan.stage_elems_B, np.nan)
                for X, smem, G, ext, block_mn in (("A", sA, A, M, m0), ("B", sB, B.T, N, n0)):
                    cp = plan.copy(X)
                    cpr, _ = cp.thr_layout.shape
                    for t in range(T):
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
                            smem[at : at + vec] = vals
                assert not np.isnan(sA).any() and not np.isnan(sB).any(), "smem not fully written"
                kb = plan.k_blocks
                for ik in range(kb):
                    for w in range(T // 32):
                        lanes = range(32 * w, 32 * w + 32)
                        afr = []
                        _, pa = sa.parts()
                        for im in range(plan.mma_m):
                            key, add = pa[im * kb + ik]
                            addrs = [_at(tv, f"A_ldsm{key}", t, add, plan, "A") for t in lanes]
                            rows = [sA[a : a + vec] for a in addrs[: 8 * la.atom.num]]
                            afr.append(ldmatrix_lane_values(rows, la.atom.num, la.atom.trans, eb))
                        bfr = []
                        _, pb = sb.parts()
                        for ib in range(plan.ldmatrix_groups("B")):
                            key, add = pb[ib * kb + ik]
                            addrs = [_at(tv, f"B_ldsm{key}", t, add, plan, "B") for t in lanes]
                            rows = [sB[a : a + vec] for a in addrs[: 8 * lb.atom.num]]
                            vals = ldmatrix_lane_values(rows, lb.atom.num, lb.atom.trans, eb)
                            per = lb.atom.num // atom.op.b.count  # B atoms of one ldmatrix
                            nb = vals.shape[1] // per  # values per B atom
                            bfr += [vals[:, nb * h : nb * h + nb] for h in range(per)]
                        for im in range(plan.mma_m):
                            for jn in range(plan.mma_n):
                                sl = slice(
                                    (im * plan.mma_n + jn) * 4, (im * plan.mma_n + jn) * 4 + 4
                                )
                                acc[32 * w : 32 * w + 32, sl] = atom.emulate(
                                    afr[im], bfr[jn], acc[32 * w : 32 * w + 32, sl]
                                )
            for t in range(T):
                for idx, dm, dn in epi:
                    m, n = m0 + tv["C_m"][t] + dm, n0 + tv["C_n"][t] + dn
                    if m < M and n < N:
                        D[m, n] = acc[t, idx]
    return D
