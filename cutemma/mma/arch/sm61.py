"""sm61: the integer dot-product instructions DP4A and DP2A as one-thread atoms.

Both are CuTe's ``SM61_DP4A`` / ``SM61_DP2A``: one thread, K = 4 (four s8 pairs)
or K = 2 (two s16 in ``a`` times the low two s8 of ``b``), accumulated into s32.

>>> from cutemma.mma import make_mma_atom
>>> make_mma_atom('SM61_DP2A').op.ptx
'dp2a.lo.s32.s32'
"""

from __future__ import annotations

from cutemma.errors import AtomError
from cutemma.layout import Layout
from cutemma.mma.arch import Family, register_family
from cutemma.mma.names import MmaName
from cutemma.mma.operation import Operation, RegArray
from cutemma.mma.traits import Traits
from cutemma.mma.types import numeric_type

# token: (PTX, K, A type, B type). PTX ISA "dp4a" / "dp2a": dp2a needs a .lo/.hi
# mode choosing which two bytes of b are used; CuTe's asm omits it, we emit .lo.
# CuTe declares DP2A's B as int16_t, but the ISA multiplies the two 16-bit halves
# of a with two *bytes* of b, so B here is s8.
_DP = {
    "DP4A": ("dp4a.s32.s32", 4, "s8", "s8"),
    "DP2A": ("dp2a.lo.s32.s32", 2, "s16", "s8"),
}


def _claims(name: MmaName) -> bool:
    return len(name.tokens) == 1 and name.tokens[0] in _DP


def _build(name: MmaName, params: dict) -> tuple[Operation, Traits]:
    if params:
        raise AtomError(f"{name.text}: takes no parameters; got {sorted(params)}")
    ptx, k, a, b = _DP[name.tokens[0]]
    s32 = numeric_type("s32")
    one = RegArray("int32_t", 1)
    op = Operation(
        name.text, 61, "sm61.dp", ptx, one, RegArray("uint32_t", 1), RegArray("uint32_t", 1), one
    )
    # CuTe's Layout<Shape<_1,_4>>: its compact strides give size-1 modes stride 0.
    ab = Layout((1, k), (0, 1))
    thr, c = Layout(1, 0), Layout((1, 1), (0, 0))
    traits = Traits(s32, numeric_type(a), numeric_type(b), s32, (1, 1, k), thr, ab, ab, c)
    return op, traits


register_family(
    Family(
        "sm61.dp",
        61,
        "SM61_DP4A (4 x s8 dot product) and SM61_DP2A (2 x s16 . s8)",
        _claims,
        _build,
        lambda: [f"SM61_{t}" for t in _DP],
    )
)
