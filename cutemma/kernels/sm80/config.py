"""GemmConfig: the choices of one sm80 GEMM kernel (block tile, warp layout, ring depth,
swizzle width, raster) as plain data, its allowed combinations the named rules of
:data:`CONFIG_RULES` (checked when a config is made), and the element types the family takes
(``ATOMS``, ``ELEM_BYTES``). A module of its own, without the plan's layout machinery, so
that a call of ``cutemma.gemm`` with a cached kernel imports no more than it runs
(:class:`cutemma.kernels.sm80.plan.GemmPlan` derives the kernel's numbers from a config).

>>> GemmConfig(64, 64, 32).name, ELEM_BYTES["e4m3"]
('b64x64x32_w2x2_s4', 1)
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass

from cutemma.errors import TiledMmaError
from cutemma.hardware import MAX_SMEM_PER_BLOCK as SMEM_LIMIT
from cutemma.hardware import MAX_THREADS_PER_BLOCK
from cutemma.kernels.common.config_rules import ConfigRule, apply_rules
from cutemma.kernels.common.scheduler import GROUP_M_MAX
from cutemma.kernels.common.types import ELEM_BYTES  # noqa: F401 - the config's names

ATOMS = {
    "f16": "SM80_16x8x16_F32F16F16F32_TN",
    "bf16": "SM80_16x8x16_F32BF16BF16F32_TN",
    "tf32": "SM80_16x8x8_F32TF32TF32F32_TN",
    "s8": "SM80_16x8x32_S32S8S8S32_TN",
    # fp8 (sm89 mma.sync): "<A type>" when A and B agree, "<A type>_<B type>" when they differ
    "e4m3": "SM89_16x8x32_F32E4M3E4M3F32_TN",
    "e5m2": "SM89_16x8x32_F32E5M2E5M2F32_TN",
    "e4m3_e5m2": "SM89_16x8x32_F32E4M3E5M2F32_TN",
    "e5m2_e4m3": "SM89_16x8x32_F32E5M2E4M3F32_TN",
}
VEC = 8  # 16-bit elements per 16-byte cp.async chunk (16 // elem_bytes in general)
MAX_WARPS = MAX_THREADS_PER_BLOCK // 32  # a block's threads, in warps


@dataclass(frozen=True)
class GemmConfig:
    """Block tile, warp layout, pipeline depth and swizzle width of an sm80 GEMM.

    ``warps`` is the TiledMMA's atom layout (M, N); ``swizzle_bytes`` the widest
    contiguous width of one swizzle atom row, at most 128 bytes (a stage whose rows do not
    hold whole atoms of it takes the widest narrower one that they do).

    >>> GemmConfig(block_m=64, block_n=64).name
    'b64x64x32_w2x2_s4'
    """

    block_m: int = 128
    block_n: int = 128
    block_k: int = 32
    warps: tuple[int, int] = (2, 2)
    stages: int = 4
    swizzle_bytes: int = 128
    group_m: int = 8

    def __post_init__(self) -> None:
        _check_config_ints(self)  # whole positive numbers first: the rules divide by them
        apply_rules(self, CONFIG_RULES, RULE_SCOPE, f"GemmConfig{self.name_tuple}")
        # hashed once: a config is part of cutemma.gemm's repeated-call key (kernels/
        # fastpath.py), and the generated field-by-field hash cost 0.1 us per call
        object.__setattr__(self, "_hash", hash(dataclasses.astuple(self)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def name_tuple(self) -> tuple:
        return (self.block_m, self.block_n, self.block_k, self.warps, self.stages)

    @property
    def name(self) -> str:
        wm, wn = self.warps
        return f"b{self.block_m}x{self.block_n}x{self.block_k}_w{wm}x{wn}_s{self.stages}"

    @property
    def threads(self) -> int:
        return 32 * self.warps[0] * self.warps[1]


def _check_config_ints(cfg: GemmConfig) -> None:
    """Every GemmConfig field a positive whole number (numpy ints too), warps a pair."""
    warps = cfg.warps
    if not (isinstance(warps, tuple | list) and len(warps) == 2):
        raise TiledMmaError(
            f"GemmConfig warps={warps!r}: give the warp layout as a pair (WM, WN), e.g. (2, 2)"
        )
    fields = ["block_m", "block_n", "block_k", "stages", "swizzle_bytes", "group_m"]
    values = [(f, getattr(cfg, f)) for f in fields] + [
        ("warps[0]", warps[0]),
        ("warps[1]", warps[1]),
    ]
    for name, v in values:
        try:
            n = operator.index(v)
        except TypeError:
            n = None
        if n is None or isinstance(v, bool) or n < 1:
            raise TiledMmaError(f"GemmConfig {name}={v!r}: must be a positive whole number")
        if name.startswith("warps"):
            continue
        object.__setattr__(cfg, name, n)  # frozen: store the plain int
    object.__setattr__(cfg, "warps", (operator.index(warps[0]), operator.index(warps[1])))


RULE_SCOPE = "sm80_config"  # a broken rule's qualified name: sm80_config.<name>
# The combinations of fields a GemmConfig may take, checked in order when one is made. The
# block sizes are multiples of the family's smallest atom, 8x8x4 (the SM70 quadpair; tf32
# k4): the plan checks the TiledMMA's own tile and the copy its 16-byte chunks
CONFIG_RULES: tuple[ConfigRule, ...] = (
    ConfigRule(
        "block_m_warps",
        lambda c: c.block_m % (8 * c.warps[0]) == 0,
        lambda c: f"block_m {c.block_m} a multiple of 8*{c.warps[0]}",
    ),
    ConfigRule(
        "block_n_warps",
        lambda c: c.block_n % (8 * c.warps[1]) == 0,
        lambda c: f"block_n {c.block_n} a multiple of 8*{c.warps[1]}",
    ),
    ConfigRule(
        "block_k",
        lambda c: c.block_k % 4 == 0,
        lambda c: f"block_k {c.block_k} a multiple of 4",
    ),
    ConfigRule("stages", lambda c: c.stages >= 2, lambda c: f"stages {c.stages} >= 2"),
    ConfigRule(
        "swizzle_bytes",
        lambda c: c.swizzle_bytes in (16, 32, 64, 128),  # 16: one chunk a row, no swizzle
        lambda c: "swizzle_bytes one of 16, 32, 64, 128",
    ),
    ConfigRule(
        "warps",
        lambda c: c.warps[0] * c.warps[1] <= MAX_WARPS,
        lambda c: (
            f"warps {c.warps[0]}x{c.warps[1]} at most {MAX_WARPS} "
            f"({MAX_THREADS_PER_BLOCK} threads a block)"
        ),
    ),
    ConfigRule(
        "group_m",
        lambda c: c.group_m <= GROUP_M_MAX,
        lambda c: f"group_m {c.group_m} <= {GROUP_M_MAX} (the raster's 32-bit tile index)",
    ),
    ConfigRule(
        "smem",
        lambda c: c.stages * (c.block_m + c.block_n) * c.block_k <= SMEM_LIMIT,
        lambda c: (
            f"a smaller tile or fewer stages: {c.stages} stages of ({c.block_m} + "
            f"{c.block_n}) x {c.block_k} elements do not fit in {SMEM_LIMIT} bytes of "
            "shared memory even at 1 byte each"
        ),
    ),
)
