"""Basis strides: layouts whose strides are coordinates, as CuTe's identity tensors print.

CuTe gives an identity tensor ``make_identity_tensor((64,64))`` the layout
``(_64,_64):(_1@0,_1@1)``: each stride is a *scaled basis element* ``v@i`` (CuTe's
``ScaledBasis<Int<v>, i>``, ``E<i>`` scaled by v), and the layout maps an index to a
coordinate, the sum of ``crd_j * stride_j`` taken component by component. A nested basis
``E<1,0>`` (component 0 of mode 1) prints innermost first, ``_1@0@1``
(cute/numeric/arithmetic_tuple.hpp prints the modes in reverse). A tensor view of such a
layout prints its starting coordinate first: ``ArithTuple(4,1) o (_4,_2):(_1@0,_8@0)``.

:class:`ScaledBasis` is that stride value and :class:`BasisLayout` the layout; both print
back as CuTe prints (without the underscores of static ints) and
:func:`cutemma.layout.parse_layout` reads them.

>>> L = make_identity_layout((4, 3))
>>> str(L), L(5), L(1, 2)
('(4,3):(1@0,1@1)', (1, 1), (1, 2))
>>> str(BasisLayout((4, 2), (ScaledBasis(1, (0,)), ScaledBasis(8, (0,))), offset=(4, 1)))
'ArithTuple(4,1) o (4,2):(1@0,8@0)'
"""

from __future__ import annotations

from dataclasses import dataclass

from cutemma.display import RichDisplay
from cutemma.errors import LayoutError
from cutemma.layout import int_tuple as it
from cutemma.layout.int_tuple import IntTuple, is_int, is_tuple


@dataclass(frozen=True)
class ScaledBasis:
    """``value`` times the basis element at ``modes`` (outermost mode first): CuTe's
    ``ScaledBasis<value, modes...>``, printed ``value@inner...@outer``.

    >>> str(ScaledBasis(1, (1, 0))), str(ScaledBasis(8, (0,)) * 2)
    ('1@0@1', '16@0')
    """

    value: int
    modes: tuple[int, ...]

    def __post_init__(self):
        if not is_int(self.value) or not all(is_int(m) and m >= 0 for m in self.modes):
            raise LayoutError(
                f"ScaledBasis({self.value!r}, {self.modes!r}): the value must be an int and the "
                "modes non-negative ints"
            )

    def __mul__(self, k: int) -> ScaledBasis:
        return ScaledBasis(self.value * k, self.modes)

    __rmul__ = __mul__

    def __str__(self) -> str:
        return f"{self.value}" + "".join(f"@{m}" for m in reversed(self.modes))


def _fmt(t) -> str:
    if is_tuple(t):
        return "(" + ",".join(_fmt(x) for x in t) + ")"
    return str(t)


def _leaves(t) -> list:
    return [y for x in t for y in _leaves(x)] if is_tuple(t) else [t]


def _congruent(shape, stride) -> bool:
    if is_tuple(shape):
        return (
            is_tuple(stride)
            and len(shape) == len(stride)
            and all(_congruent(a, b) for a, b in zip(shape, stride))
        )
    return not is_tuple(stride)


def _add(crd: dict, modes: tuple[int, ...], v: int) -> None:
    crd[modes] = crd.get(modes, 0) + v


def _build(entries: dict, prefix: tuple = ()):
    """Nested tuple of the components in ``entries`` (mode path -> value) under ``prefix``."""
    if prefix in entries and not any(len(k) > len(prefix) and k[: len(prefix)] == prefix
                                     for k in entries):  # fmt: skip
        return entries[prefix]
    children = {
        k[len(prefix)] for k in entries if len(k) > len(prefix) and k[: len(prefix)] == prefix
    }
    if not children:
        return 0
    return tuple(_build(entries, prefix + (i,)) for i in range(max(children) + 1))


class BasisLayout(RichDisplay):
    """``shape:stride`` whose strides are :class:`ScaledBasis` (or 0): index -> coordinate.

    ``offset`` is the coordinate of index 0 (a tensor view's ``ArithTuple``), a tuple of ints
    or 0. Called like a Layout: a linear index, or one coordinate per mode.

    >>> L = BasisLayout((2, (2, 3)), (ScaledBasis(1, (0,)), (ScaledBasis(1, (1, 0)), ScaledBasis(1, (1, 1)))))
    >>> str(L), L(7)
    ('(2,(2,3)):(1@0,(1@0@1,1@1@1))', (1, (1, 1)))
    """

    __slots__ = ("shape", "stride", "offset")

    def __init__(self, shape: IntTuple, stride, offset=0):
        if not _congruent(shape, stride):
            raise LayoutError(
                f"shape {_fmt(shape)} and stride {_fmt(stride)} are not congruent: the stride "
                "must have the same nesting as the shape"
            )
        for s in _leaves(shape):
            if not is_int(s) or s < 0:
                raise LayoutError(f"shape {_fmt(shape)} has {s!r}; extents are ints >= 0")
        for d in _leaves(stride):
            if not isinstance(d, ScaledBasis) and d != 0:
                raise LayoutError(
                    f"stride {_fmt(stride)} has {d!r}: a basis layout's strides are v@i basis "
                    "elements or 0 (an int stride other than 0 belongs in a Layout)"
                )
        if not (offset == 0 or (is_tuple(offset) and all(is_int(x) for x in _leaves(offset)))):
            raise LayoutError(f"offset {offset!r} must be 0 or a tuple of ints (a coordinate)")
        self.shape, self.stride, self.offset = shape, stride, offset

    def size(self) -> int:
        """Number of indices.

        >>> make_identity_layout((4, 3)).size()
        12
        """
        return it.product(self.shape)

    def __call__(self, *crd, strict: bool = True):
        """The coordinate an index or a (natural or partial) coordinate maps to.

        ``strict`` (the default) refuses a coordinate outside the shape; ``strict=False``
        extends each mode past its size as CuTe does (the mode's last leaf takes the excess),
        so ``(64, 0)`` of ``(64,64):(1@0,1@1)`` is ``(64, 0)``, not a wrap into mode 1.

        >>> L = make_identity_layout((64, 64))
        >>> L(65), L(64, 0, strict=False)
        ((1, 1), (64, 0))
        """
        from cutemma.layout.checks import _check_coord, int_tuple_arg

        if strict is not False and strict is not True:
            raise LayoutError(f"{self}: strict={strict!r:.40} must be True or False")
        if len(crd) == 1 and is_int(crd[0]):
            c = crd[0]
        else:
            c = int_tuple_arg(crd[0] if len(crd) == 1 else tuple(crd), "BasisLayout", "coordinate")
        if strict:
            _check_coord(c, self.shape if self.size() else 1, f"BasisLayout {self}", c)
        elif any(x < 0 for x in _leaves(c)):
            raise LayoutError(f"coordinate {c} of {self} has a negative entry; entries are >= 0")
        natural = it.idx2crd(c, self.shape)  # per leaf; the last leaf of a mode extends
        entries: dict = {}
        if self.offset != 0:
            self._scatter(self.offset, (), entries)
        for x, d in zip(_leaves(natural), _leaves(self.stride)):
            if isinstance(d, ScaledBasis):
                _add(entries, d.modes, x * d.value)
        return _build(entries)

    def _scatter(self, t, prefix, entries) -> None:
        if is_tuple(t):
            for i, x in enumerate(t):
                self._scatter(x, prefix + (i,), entries)
        else:
            _add(entries, prefix, t)

    def coshape(self):
        """CuTe's ``coshape``: one past the largest coordinate reached, component by component
        (the sum of ``(extent - 1) * |v|`` of each basis stride ``v@i``, plus one).

        >>> make_identity_layout((4, (2, 3))).coshape()
        (4, (2, 3))
        """
        entries: dict = {}
        for s, d in zip(_leaves(self.shape), _leaves(self.stride)):
            if isinstance(d, ScaledBasis):
                _add(entries, d.modes, (s - 1) * abs(d.value))
        return _plus_one(_build(entries)) if entries else 1

    def cosize(self) -> int:
        """CuTe's ``cosize`` of a basis layout: the size of its coshape.

        >>> make_identity_layout((64, 64)).cosize()
        4096
        """
        return it.product(self.coshape())

    def __eq__(self, other) -> bool:
        return isinstance(other, BasisLayout) and (self.shape, self.stride, self.offset) == (
            other.shape,
            other.stride,
            other.offset,
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.stride, self.offset))

    def __str__(self) -> str:
        body = f"{_fmt(self.shape)}:{_fmt(self.stride)}"
        return body if self.offset == 0 else f"ArithTuple{_fmt(self.offset)} o {body}"

    def __repr__(self) -> str:
        return f"BasisLayout({self})"


def _plus_one(t):
    return tuple(_plus_one(x) for x in t) if is_tuple(t) else t + 1


def make_identity_layout(shape: IntTuple) -> BasisLayout:
    """CuTe's ``make_identity_layout``: ``shape`` with basis strides ``1@i`` (nested modes get
    nested bases), so each index maps to its own coordinate.

    >>> str(make_identity_layout((2, (2, 3))))
    '(2,(2,3)):(1@0,(1@0@1,1@1@1))'
    """

    def basis(s, modes):
        if is_tuple(s):
            return tuple(basis(x, modes + (i,)) for i, x in enumerate(s))
        return ScaledBasis(1, modes)

    if not is_tuple(shape):
        return BasisLayout(shape, ScaledBasis(1, ()))
    return BasisLayout(shape, tuple(basis(s, (i,)) for i, s in enumerate(shape)))


__all__ = ["BasisLayout", "ScaledBasis", "make_identity_layout"]
