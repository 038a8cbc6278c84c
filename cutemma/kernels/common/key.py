"""The key of one compiled kernel variant, written once for both families: what a variant's
source depends on (config, element types, majors, output types, batch, alignment, design,
fused epilogue) and the name the family gives it. A family's generator reads its arguments
from the key (:meth:`KernelKey.args`), in the order of that family's source function.

>>> KernelKey("sm80", "cfg", "bf16", "K", "N", "bf16", "bf16").args()[:4]
('cfg', 'bf16', 'K', 'N')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# each family's source-generator arguments, in its order (gemm_source, gemm_sm90_source)
_ARGS = {
    "sm80": (
        "config",
        "dtype",
        "a_major",
        "b_major",
        "out",
        "c_type",
        "vec_a",
        "vec_b",
        "design",
        "epilogue",
    ),  # fmt: skip
    "sm90": ("config", "dtype", "a_major", "b_major", "out", "c_type", "batched", "epilogue"),
}


@dataclass(frozen=True)
class KernelKey:
    """One kernel variant of a family ('sm80' or 'sm90'); hashable, so compiled variants are
    cached by it. ``vec_a``/``vec_b`` (sm80): the operand's 16-byte chunks are aligned;
    ``batched`` (sm90): the kernel of L problems; ``design`` (sm80): a custom GemmDesign;
    ``name``: the kernel's symbol, as the family names it."""

    family: str
    config: Any
    dtype: str
    a_major: str
    b_major: str
    out: str
    c_type: str
    batched: bool = False
    epilogue: Any = None
    vec_a: bool = True
    vec_b: bool = True
    design: Any = None
    name: str = ""

    def args(self) -> tuple:
        """The family's source-generator arguments, in its order."""
        return tuple(getattr(self, f) for f in _ARGS[self.family])
