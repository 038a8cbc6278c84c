"""sm80: ``cp.async`` global -> shared copies (cute/arch/copy_sm80.hpp).

``SM80_CP_ASYNC_CACHEALWAYS<T>`` (``cp.async.ca``: 4, 8 or 16 bytes, cached in L1 and
L2) and ``SM80_CP_ASYNC_CACHEGLOBAL<T>`` (``cp.async.cg``: 16 bytes only, L2 only; PTX
ISA, cp.async: ".cg ... cp-size 16"), each also ``_ZFILL``: the source-size operand
is 0 when the predicate is false, so the destination is zero-filled. One thread,
source and destination ``(1,bits):(0,1)``.

>>> from cutemma.copy import copy_op
>>> copy_op('SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint32_t>').ptx
'cp.async.ca.shared.global.L2::128B'
"""

from __future__ import annotations

from cutemma.copy.arch import CopyFamily, register_copy_family, reject
from cutemma.copy.operation import CPP_BITS, CopyOperation, Operand
from cutemma.copy.traits import CopyTraits
from cutemma.layout import Layout
from cutemma.mma.names import MmaName

# cp-size in bits each cache mode allows (PTX ISA, cp.async)
_SIZES = {"CACHEALWAYS": (32, 64, 128), "CACHEGLOBAL": (128,)}
_MODE = {"CACHEALWAYS": "ca", "CACHEGLOBAL": "cg"}


def _claims(n: MmaName) -> bool:
    t = n.tokens
    return (
        n.arch == 80
        and len(t) in (3, 4)
        and t[:2] == ("CP", "ASYNC")
        and t[2] in _SIZES
        and (len(t) == 3 or t[3] == "ZFILL")
    )


def _build(n: MmaName):
    from cutemma.copy.atom import value_type
    from cutemma.errors import CopyError

    mode, zfill = n.tokens[2], len(n.tokens) == 4
    base = "SM80_CP_ASYNC_" + mode + ("_ZFILL" if zfill else "")
    allowed = ", ".join(f"{base}<uint{b}_t>" for b in _SIZES[mode])
    if len(n.template) not in (1, 2):
        raise reject(base, f"give the copied type as a template argument: {allowed}")
    try:
        bits = {value_type(a).bits for a in n.template}
    except CopyError:
        raise reject(n.text, f"unknown template type; write {allowed}") from None
    if len(bits) != 1:
        raise reject(n.text, "cp.async needs source and destination types of one width")
    (b,) = bits
    if b not in _SIZES[mode]:
        raise reject(
            n.text, f"cp.async.{_MODE[mode]} copies {_SIZES[mode]} bits, not {b}; write {allowed}"
        )
    name = f"{base}<{','.join(n.template)}>"
    cpp = f"uint{b}_t"
    assert cpp in CPP_BITS
    op = CopyOperation(
        name,
        80,
        "sm80.cp_async",
        f"cp.async.{_MODE[mode]}.shared.global.L2::128B",
        Operand("gmem", cpp, 1),
        Operand("smem", cpp, 1),
        modifiers=("zfill",) if zfill else (),
        params=(("bits", b), ("cache", _MODE[mode])),
        ptx_isa=(7, 0),
    )
    one = Layout((1, b), (0, 1))
    return op, CopyTraits(Layout(1, 0), one, one, one)


def _members():
    for mode, sizes in _SIZES.items():
        for z in ("", "_ZFILL"):
            for b in sizes:
                yield f"SM80_CP_ASYNC_{mode}{z}<uint{b}_t>"


CP_ASYNC = register_copy_family(
    CopyFamily(
        "sm80.cp_async",
        80,
        "SM80_CP_ASYNC_{CACHEALWAYS,CACHEGLOBAL}[_ZFILL]<uint{32,64,128}_t> (cp.async.ca/.cg)",
        _claims,
        _build,
        _members,
    )
)
