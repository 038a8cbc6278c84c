"""The batched (3-D) parts of the sm90 GEMM's source: L problems in one persistent launch.

:func:`cutemma.kernels.sm90.source.gemm_sm90_source` with ``batched=True`` adds these to the
2-D kernel (whose own source stays unchanged): rank-3 TMA loads and stores, the choice per
operand between its rank-3 map (it has a batch) and its rank-2 one (shared by every
problem), and an epilogue whose C and D are problem ``l``'s.

>>> print(batch_epilogue("D[0] = C[0];", "bf16", "bf16"))
const uint16_t* const C_l = C + l * ldc_l;
uint16_t* const D_l = D + l * ldd_l;
{
  const uint16_t* C = C_l;  // problem l's C and D (shadowing the bases)
  uint16_t* D = D_l;
  D[0] = C[0];
}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cutemma.cuda.source import block, indent
from cutemma.kernels.common.types import OUT_TYPES

# batched kernels only (the 2-D kernel's source stays as it was): rank-3 boxes, the batch
# coordinate outermost (PTX ISA 9.7.9.25.5.1: .3d takes {c0, c1, c2}, innermost first)
HELPERS_SM90_BATCHED = r"""
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const TmaMap* map, int c0, int c1,
                                            int c2, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n"
      :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void tma_load_3d_multicast(uint32_t dst, const TmaMap* map, int c0,
                                                      int c1, int c2, uint32_t bar,
                                                      uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;\n"
      :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar),
         "h"(mask) : "memory");
}
__device__ __forceinline__ void tma_store_3d(const TmaMap* map, uint32_t src, int c0, int c1,
                                             int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
               :: "l"(reinterpret_cast<uint64_t>(map)), "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
"""
# the rank-3 load with an L2 cache policy (Sm90Config.evict_first; only kernels that hint)
HELPERS_EVICT_FIRST_3D = r"""
__device__ __forceinline__ void tma_load_3d_hint(uint32_t dst, const TmaMap* map, int c0, int c1,
                                                 int c2, uint32_t bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".L2::cache_hint [%0], [%1, {%2, %3, %4}], [%5], %6;\n"
      :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar),
         "l"(policy) : "memory");
}
"""
from cutemma.kernels.sm90.config import BAT_A, BAT_B  # noqa: E402 - the bits, defined there


def tma_lines_batched(plan: Any, tma_lines: Callable[..., str]) -> str:
    """A batched kernel's loads of a k tile: an operand whose bit is set in ``bat`` has a
    rank-3 map (problem ``l`` its third coordinate); a shared (broadcast) one keeps its
    rank-2 map and loads as in the 2-D kernel (one thread; a uniform branch per operand)."""
    out = []
    for which, bit in (("A", BAT_A), ("B", BAT_B)):
        out.append(
            block(f"if (bat & {bit})", tma_lines(plan, which, rank3=True))
            + " else {\n" + indent(tma_lines(plan, which)) + "\n}"
        )  # fmt: skip
    return "\n".join(out)


def batch_epilogue(epilogue: str, out: str, c_type: str) -> str:
    """A batched kernel's epilogue: the 2-D one inside a block where C and D name problem
    ``l``'s matrices (C's batch stride may be 0: a shared C)."""
    return (
        f"const {OUT_TYPES[c_type]}* const C_l = C + l * ldc_l;\n"
        f"{OUT_TYPES[out]}* const D_l = D + l * ldd_l;\n"
        + block(
            "",
            f"const {OUT_TYPES[c_type]}* C = C_l;  // problem l's C and D (shadowing the bases)\n"
            f"{OUT_TYPES[out]}* D = D_l;\n" + epilogue,
        ).lstrip()
    )
