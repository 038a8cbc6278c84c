"""The sm90 GEMM's epilogues: D = alpha * acc + beta * C through partition_C from
registers (predicated at the edges, adjacent n pairs stored as one word), or, for 16-bit
D with beta = 0, through a swizzled shared-memory staging tile and TMA stores.

"""

from __future__ import annotations

from cutemma.cuda.source import FROM_F32, TO_F32
from cutemma.errors import TiledMmaError
from cutemma.kernels.common.expr import swizzle_expr
from cutemma.kernels.epilogue import NO_EPILOGUE, Epilogue
from cutemma.kernels.sm90.config import STAGING_ELEM_BYTES
from cutemma.kernels.sm90.plan import Sm90Plan

_PACK = {"f16": "pack_f16x2", "bf16": "pack_bf16x2"}


def epilogue_lines(
    plan: Sm90Plan,
    out: str,
    c_type: str,
    acc_name: str = "acc",
    epilogue: Epilogue = NO_EPILOGUE,
) -> str:
    """D = epi(alpha * acc + beta * C) through partition_C; adjacent n pairs stored as one
    word; the fused ops read their tensors at the (m, n) partition_C gives each value
    (evaluated inside the edge predicates).

    >>> from cutemma.kernels.sm90.plan import Sm90Config, Sm90Plan
    >>> plan = Sm90Plan(Sm90Config(128, 128), "bf16", "K", "N", "f32")
    >>> epilogue_lines(plan, "f32", "f32").count("if (m < M)") == plan.acc_per_thread
    True
    """
    _, _, consts = plan.epilogue
    lines = []
    i = 0
    while i < len(consts):
        idx, dm, dn = consts[i]
        pair = (
            out in _PACK
            and i + 1 < len(consts)
            and consts[i + 1][1:] == (dm, dn + 1)
            and consts[i + 1][0] == idx + 1
        )
        vals = []
        for j, (ix, _, _) in enumerate(consts[i : i + (2 if pair else 1)]):
            c_val = TO_F32[c_type].format(x=f"C[m * ldc_m + (long long)(n + {j}) * ldc_n]")
            val = f"alpha * {acc_name}[{ix}] + (beta != 0.f ? beta * {c_val} : 0.f)"
            vals.append(epilogue.apply(val, "m", f"n + {j}") if epilogue else val)
        if pair:
            body = (
                f"if (vec_d && n + 1 < N) {{ const uint32_t w = {_PACK[out]}({vals[0]}, {vals[1]});"
                f" *reinterpret_cast<uint32_t*>(&D[m * ldd_m + n]) = w; }}\n"
                f"else {{ if (n < N) D[m * ldd_m + n * ldd_n] = {FROM_F32[out].format(x=vals[0])};"
                f" if (n + 1 < N) D[m * ldd_m + (n + 1) * ldd_n] = "
                f"{FROM_F32[out].format(x=vals[1])}; }}"
            )
        else:
            body = f"if (n < N) D[m * ldd_m + n * ldd_n] = {FROM_F32[out].format(x=vals[0])};"
        lines.append(
            f"{{ const long long m = m0 + C_m + {dm}; const int n = n0 + C_n + {dn};\n"
            f"  if (m < M) {{ {body} }} }}"
        )
        i += 2 if pair else 1
    return "\n".join(lines)


def tma_store_lines(
    plan: Sm90Plan,
    out: str,
    acc_name: str = "acc",
    batched: bool = False,
    epilogue: Epilogue = NO_EPILOGUE,
) -> str:
    """epi(alpha * acc) packed in pairs into the swizzled staging tile, then one thread
    stores it with TMA (the boxes of ``plan.tma_D``; TMA clips at the tensor's edges;
    batched: D's rank-3 map, problem ``l`` outermost), in ``plan.d_passes`` passes of
    ``plan.d_width`` columns: "tma2" through one buffer (a pass waits for the store before
    it), "tmab" / "tmatb" through two taken in turn. Pingpong: each warpgroup has its own
    staging tile and named barrier (``d_smem``, ``EPI_BAR``). Every value of the tile is
    computed, those past the edges too (TMA drops them): the fused ops read their tensors
    at coordinates clamped into the matrix there.

    >>> from cutemma.kernels.sm90.plan import Sm90Config, Sm90Plan
    >>> plan = Sm90Plan(Sm90Config(128, 256), "bf16", "K", "N", "bf16")
    >>> tma_store_lines(plan, "bf16").count("tma_store_2d("), len(plan.tma_D.copies)
    (4, 4)
    """
    _, n_t, consts = plan.epilogue
    _, offs = plan.epilogue_smem
    passes = plan.epilogue_passes
    by_m = plan.d_major == "MN"  # "tmat": D column-major, the pair's halves a row apart
    sw = plan.smem_D.outer
    eb = STAGING_ELEM_BYTES
    sync = f"named_sync(EPI_BAR, {plan.consumer_threads});"
    lines = []
    if by_m:
        # the swizzle reads and writes only the offset's bits under `period`: a value's
        # address is one of a few per-thread bases (its offset's low part, swizzled once)
        # plus the rest, an immediate (two addresses per pair, each swizzled, spilled)
        period = 1 << (sw.bits + sw.base + sw.shift)
        lows = sorted({off % period for off in offs})
        lines += [
            f"const uint32_t dz{j} = d_smem + {eb} * ({swizzle_expr(sw, f'(d_thr + {low})')});"
            for j, low in enumerate(lows)
        ]

        def at(off: int, buf: int) -> str:
            return f"dz{lows.index(off % period)} + {eb * (off - off % period) + buf}"

    def stage(h: int, paired: bool, buf: int) -> list[str]:
        """Pass ``h``'s values into the staging buffer ``buf`` bytes in; ``paired``: a
        column vector's two values of a pair read as one word (Epilogue.pair_reads)."""
        staged, named = [], set()
        for i in range(0, len(consts), 2):
            if passes[i] != h:
                continue
            (ia, dm, dn), (ib, dm1, dn1) = consts[i], consts[i + 1]
            if (ib, dm1, dn1) != (ia + 1, dm, dn + 1) or not (by_m or offs[i + 1] == offs[i] + 1):
                raise TiledMmaError("TMA-store epilogue: accumulators do not come in n pairs")
            addr = swizzle_expr(sw, f"(d_thr + {offs[i]})")
            va, vb = f"alpha * {acc_name}[{ia}]", f"alpha * {acc_name}[{ib}]"
            if epilogue:
                m = f"min(m0 + C_m + {dm}, M - 1)"
                lo = hi = None
                if paired:
                    reads, lo, hi = epilogue.pair_reads(f"n0 + C_n + {dn}", named, str(dn))
                    staged += reads
                va = epilogue.apply(va, m, f"min(n0 + C_n + {dn}, N - 1)", lo)
                vb = epilogue.apply(vb, m, f"min(n0 + C_n + {dn + 1}, N - 1)", hi)
            packed = f"{_PACK[out]}({va}, {vb})"
            if by_m:
                staged.append(
                    f"st_shared_b16x2({at(offs[i], buf)}, {at(offs[i + 1], buf)}, {packed});"
                )
            else:
                base = f"d_smem + {buf}" if buf else "d_smem"
                staged.append(f"st_shared_b32({base} + {eb} * ({addr}), {packed});")
        return staged

    # column vectors of 16-bit values a word per pair where they can be (the even columns
    # of an aligned vector of even N; else per value): half the loads and their registers.
    # The cooperative fused calls of the epilogue sweep ran 1.045 of the plain call against
    # 1.053 with the prefetch alone (raw/epilogue-sweep-h200-2581065801-pairs.json)
    pairs = bool(epilogue) and not by_m and bool(epilogue.column_pairs())
    pairs = pairs and all(dn % 2 == 0 for _, _, dn in consts[::2])
    pairs = pairs and all(v % 2 == 0 for v in n_t.table) and plan.config.block_n % 2 == 0
    if pairs:
        lines.append(epilogue.pairs_flag())
    buffers = plan.config.store_buffers
    wait_all = "if (tid == 0) bulk_wait_read0();  // the last store has read the staging tile"
    for h in range(plan.d_passes):
        # one buffer ("tma2"): a pass waits for the store before it to read the tile, then
        # writes; two ("tmab"): it writes its buffer, then waits for the store before it
        # (the other buffer, the next pass's) to have read, one barrier for both
        if h == 0 or buffers == 1:
            lines += [wait_all, sync]
        buf = h % buffers * plan.d_buffer_bytes
        if pairs:
            lines += ["if (epi_pairs) {", *stage(h, True, buf), "} else {",
                      *stage(h, False, buf), "}"]  # fmt: skip
        else:
            lines += stage(h, False, buf)
        lines.append("fence_async_smem();  // generic-proxy writes -> the TMA engine's reads")
        if h and buffers > 1:
            lines.append(wait_all.replace("staging tile", "other buffer"))
        lines += [sync, "if (tid == 0) {"]
        for dc, do, off in plan.tma_D.copies:
            if by_m:  # (the box's contiguous mode is m: D^T's dims (M, N))
                crd = f"m0 + {dc}, n0 + {h * plan.d_width + do}"
            else:
                crd = f"n0 + {h * plan.d_width + dc}, m0 + {do}"
            crd += ", l" if batched else ""
            lines.append(
                f"  tma_store_{'3d' if batched else '2d'}(&tmap_d, d_smem + {buf + off * eb}, {crd});"
            )
        if h + 1 < plan.d_passes:
            lines += ["  bulk_commit();", "}"]
    lines += ["  bulk_commit();", "}"]
    return "\n".join(lines)
