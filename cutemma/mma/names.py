"""CuTe operation names, read into fields and written back.

Every CuTe MMA name is ``SM<arch>`` followed by ``_``-separated tokens and an
optional template argument list: ``SM80_16x8x16_F32BF16BF16F32_TN``,
``SM90_64x128x16_F32BF16BF16_SS<K,MN>``, ``SM100_MMA_F16BF16_SS``, ``SM61_DP4A``.
C++ namespace spellings are folded into the same form:
``SM90::GMMA::SPARSE::GMMA_64x8x32_F16F16F16_SS`` reads as
``SM90_SPARSE_64x8x32_F16F16F16_SS`` and ``SM90::GMMA::MMA_64x8x16_F32F16F16_RS``
as ``SM90_64x8x16_F32F16F16_RS``. :class:`MmaName` only splits; families decide
what the tokens mean (helpers here read shapes and type runs).

>>> n = parse_name('SM90::GMMA::SPARSE::GMMA_64x8x32_F16F16F16_SS')
>>> n.arch, n.tokens
(90, ('SPARSE', '64x8x32', 'F16F16F16', 'SS'))
>>> format_name(n)
'SM90_SPARSE_64x8x32_F16F16F16_SS'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from cutemma.errors import AtomError
from cutemma.mma.types import NumericType, split_type_codes

_HEAD = re.compile(r"SM(\d+)[A-Z]?$")
_TOKEN = re.compile(r"[A-Za-z0-9]+$")
_SHAPE = re.compile(r"(\d+)x(\d+)x(\d+)$")
# Namespace words that carry no meaning of their own in CuTe's spelling; the
# struct prefix after them ("GMMA_", "MMA_") is dropped with them.
_NAMESPACE_NOISE = ("GMMA", "UMMA")
_STRUCT_PREFIX = ("GMMA", "MMA")


@dataclass(frozen=True)
class MmaName:
    """A split operation name: arch, tokens after ``SM<arch>_``, template arguments.

    >>> MmaName(80, ('16x8x8', 'F16F16F16F16', 'TN')).text
    'SM80_16x8x8_F16F16F16F16_TN'
    """

    arch: int
    tokens: tuple[str, ...]
    template: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The canonical spelling (same as ``format_name``).

        >>> parse_name('SM90_64x8x16_F16F16F16_SS<K,MN>').text
        'SM90_64x8x16_F16F16F16_SS<K,MN>'
        """
        return format_name(self)

    def with_arch(self, arch: int) -> MmaName:
        """The same tokens under another architecture prefix.

        >>> parse_name('SM75_16x8x16_F32F16F16F32_TN').with_arch(80).text
        'SM80_16x8x16_F32F16F16F32_TN'
        """
        return replace(self, arch=arch)

    def shape(self, i: int) -> tuple[int, int, int] | None:
        """Token ``i`` read as ``MxNxK``, or None.

        >>> parse_name('SM80_16x8x16_F32F16F16F32_TN').shape(0)
        (16, 8, 16)
        """
        return parse_shape(self.tokens[i]) if i < len(self.tokens) else None

    def types(self, i: int) -> tuple[NumericType, ...] | None:
        """Token ``i`` read as a run of type codes, or None.

        >>> [t.name for t in parse_name('SM89_16x8x32_F32E4M3E5M2F32_TN').types(1)]
        ['f32', 'e4m3', 'e5m2', 'f32']
        """
        return split_type_codes(self.tokens[i]) if i < len(self.tokens) else None

    def __str__(self) -> str:
        return self.text


def parse_shape(token: str) -> tuple[int, int, int] | None:
    """``'16x8x16'`` -> ``(16, 8, 16)``; anything else -> None.

    >>> parse_shape('2x1SM') is None
    True
    """
    m = _SHAPE.match(token)
    return tuple(int(g) for g in m.groups()) if m else None


def format_shape(shape) -> str:
    """``(16, 8, 16)`` -> ``'16x8x16'``.

    >>> format_shape((64, 128, 16))
    '64x128x16'
    """
    return "x".join(str(int(s)) for s in shape)


def parse_name(text: str) -> MmaName:
    """Split a CuTe operation name (underscore or C++ namespace spelling).

    Raises AtomError naming the part that is not of the form
    ``SM<arch>[::NS...]::?_TOKEN[_TOKEN...][<ARG,...>]``.

    >>> parse_name('SM80_16x8x256_S32U1U1S32_TN_XORPOPC').tokens[-1]
    'XORPOPC'
    >>> parse_name('SM90_64x128x16_F32BF16BF16_SS<K, MN>').template
    ('K', 'MN')
    >>> parse_name('SM120_16x8x32_TN<cutlass::float_e4m3_t, complex<float>, float>').template
    ('cutlass::float_e4m3_t', 'complex<float>', 'float')
    """
    if not isinstance(text, str):
        raise AtomError(
            f"an operation name is a string like 'SM80_16x8x8_F16F16F16F16_TN'; got {text!r}"
        )
    body, template = _split_template(text.strip())
    ns, _, tail = body.rpartition("::")
    parts = [p for p in ns.split("::") if p and p != "cute"] if ns else []
    head, *tokens = tail.split("_")
    if parts:
        # C++ spelling: SM90::GMMA::SPARSE::GMMA_64x8x32_... ; arch is the first part.
        head, extra = parts[0], [p for p in parts[1:] if p not in _NAMESPACE_NOISE]
        first = tail.split("_")
        if first[0] in _STRUCT_PREFIX:
            first = first[1:]
        elif _HEAD.match(first[0]):
            first = first[1:]
        tokens = extra + first
    m = _HEAD.match(head)
    if not m:
        raise AtomError(
            f"operation name {text!r} must start with SM<arch> (e.g. SM80_...); "
            f"it starts with {head!r}"
        )
    bad = [t for t in tokens if not _TOKEN.match(t)]
    if not tokens or bad:
        raise AtomError(
            f"operation name {text!r}: after SM{m.group(1)} come '_'-separated letters and digits; "
            + (f"bad part(s) {bad}" if bad else "nothing follows")
        )
    return MmaName(int(m.group(1)), tuple(tokens), template)


def _split_template(text: str) -> tuple[str, tuple[str, ...]]:
    """Cut ``NAME<A, B<C>, D>`` into ``NAME`` and its top-level arguments."""
    if "<" not in text:
        return text, ()
    body, _, rest = text.partition("<")
    if not rest.endswith(">"):
        raise AtomError(f"operation name {text!r}: template arguments are one trailing <A,B,...>")
    args, depth, cur = [], 0, ""
    for ch in rest[:-1]:
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if depth < 0:
            break
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if depth != 0:
        raise AtomError(f"operation name {text!r}: unbalanced < > in the template arguments")
    args.append(cur.strip())
    return body, tuple(a for a in args if a)


def format_name(name: MmaName) -> str:
    """Write an MmaName in canonical underscore form.

    >>> format_name(MmaName(100, ('MMA', 'F16BF16', 'SS')))
    'SM100_MMA_F16BF16_SS'
    """
    if not isinstance(name, MmaName):
        raise AtomError(f"format_name: expected an MmaName (from parse_name), got {name!r}")
    text = f"SM{name.arch}_" + "_".join(name.tokens)
    return text + (f"<{','.join(name.template)}>" if name.template else "")
