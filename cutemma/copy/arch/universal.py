"""Architecture-neutral copies (cute/arch/copy.hpp): one thread moves one value.

``UniversalCopy<S[,D]>`` is a plain C++ assignment of an ``S`` (8 to 256 bits) to a
``D`` of the same width: one thread, source and destination ``(1,bits):(0,1)``.
``AutoVectorizingCopyWithAssumedAlignment<N>`` (and its aliases ``AutoVectorizingCopy``
= ``<128>``, ``DefaultCopy`` = ``<8>``) is a placeholder whose layouts are
``(1,1):(0,0)``: the copy algorithm picks the vector width.

>>> from cutemma.copy import copy_traits
>>> str(copy_traits('UniversalCopy<uint128_t>').dst_layout)
'(1,128):(0,1)'
"""

from __future__ import annotations

from cutemma.copy.arch import CopyFamily, register_copy_family, reject
from cutemma.copy.operation import CPP_BITS, CopyOperation, Operand
from cutemma.copy.traits import CopyTraits
from cutemma.layout import Layout
from cutemma.mma.names import MmaName

_ONE = Layout(1, 0)


def _bits_of(arg: str, name: str) -> int:
    from cutemma.copy.atom import value_type
    from cutemma.errors import CopyError

    try:
        bits = value_type(arg).bits
    except CopyError:
        raise reject(name, f"template argument {arg!r} is not a type cutemma knows") from None
    if bits < 8:
        raise reject(name, f"UniversalCopy needs a type of at least 8 bits; {arg} has {bits}")
    return bits


def _reg_cpp(bits: int) -> str:
    return f"uint{bits}_t" if f"uint{bits}_t" in CPP_BITS else "uint8_t"


def _universal(n: MmaName):
    args = n.template
    name = f"UniversalCopy<{','.join(args)}>"
    if len(args) not in (1, 2):
        raise reject(
            name, "write UniversalCopy<S> or UniversalCopy<S,D>, e.g. UniversalCopy<uint32_t>"
        )
    s_bits = _bits_of(args[0], name)
    d_bits = _bits_of(args[-1], name)
    count = lambda b: 1 if f"uint{b}_t" in CPP_BITS else b // 8  # noqa: E731
    op = CopyOperation(
        name,
        0,
        "universal",
        "",
        Operand("reg", _reg_cpp(s_bits), count(s_bits)),
        Operand("reg", _reg_cpp(d_bits), count(d_bits)),
        params=(("bits", s_bits),),
        note="dst = src: the compiler emits the load/store of that width",
    )
    src = Layout((1, s_bits), (0, 1))
    dst = Layout((1, d_bits), (0, 1))
    return op, CopyTraits(Layout(1, 0), src, dst, src)


_AUTO = {"AutoVectorizingCopy": 128, "DefaultCopy": 8}


def _auto(n: MmaName):
    head = n.tokens[0]
    if head == "AutoVectorizingCopyWithAssumedAlignment":
        arg = n.template[0] if n.template else ""
        if arg not in ("8", "16", "32", "64", "128"):
            raise reject(f"{head}<{arg}>", "the alignment is one of 8, 16, 32, 64, 128 bits")
        bits, name = int(arg), f"{head}<{arg}>"
    else:
        bits, name = _AUTO[head], head
    op = CopyOperation(
        name,
        0,
        "universal",
        "",
        Operand("reg", "uint8_t", 1),
        Operand("reg", "uint8_t", 1),
        params=(("max_vec_bits", bits),),
        note="placeholder: cute::copy vectorizes up to the assumed alignment",
    )
    one = Layout((1, 1), (0, 0))
    return op, CopyTraits(Layout(1, 0), one, one, one)


def _claims(n: MmaName) -> bool:
    return n.arch == 0 and n.tokens[0] in (
        "UniversalCopy",
        "AutoVectorizingCopyWithAssumedAlignment",
        *_AUTO,
    )


def _build(n: MmaName):
    return _universal(n) if n.tokens[0] == "UniversalCopy" else _auto(n)


UNIVERSAL = register_copy_family(
    CopyFamily(
        "universal",
        0,
        "UniversalCopy<S[,D]> (one thread, 8-256 bits), AutoVectorizingCopy, DefaultCopy",
        _claims,
        _build,
        lambda: (
            [f"UniversalCopy<uint{b}_t>" for b in (8, 16, 32, 64, 128)]
            + ["AutoVectorizingCopy", "DefaultCopy"]
        ),
    )
)
