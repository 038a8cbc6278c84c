"""Int-tuples: ints and nested tuples of ints, CuTe's shapes, strides and coordinates.

Coordinates are decomposed colexicographically (the leftmost mode varies fastest), as
in CuTe's ``idx2crd``/``crd2idx``.

>>> idx2crd(5, (2, (2, 2)))
(1, (0, 1))
>>> crd2idx((1, (0, 1)), (2, (2, 2)), (1, (2, 4)))
5
"""

from __future__ import annotations

from functools import reduce

from cutemma.errors import LayoutError

IntTuple = int | tuple  # an int or a (nested) tuple of IntTuples


def is_int(x: object) -> bool:
    """True for a plain int (bools excluded): a leaf of an int-tuple.

    >>> is_int(3), is_int((3,))
    (True, False)
    """
    return isinstance(x, int) and not isinstance(x, bool)


def is_tuple(x: object) -> bool:
    """True for a tuple: an inner node of an int-tuple.

    >>> is_tuple((1, 2)), is_tuple(1)
    (True, False)
    """
    return isinstance(x, tuple)


MAX_DEPTH = 64  # nesting a shape may have; CuTe's deepest layouts nest a handful of levels


def check_int_tuple(t: object, what: str = "int-tuple") -> IntTuple:
    """Return ``t`` if it is an int or a nested tuple of ints, else raise LayoutError.

    Walked without recursion, so a tuple nested past :data:`MAX_DEPTH` is refused by name
    (the algebra recurses over the hierarchy) rather than failing inside Python.

    >>> check_int_tuple((1, (2, 3)))
    (1, (2, 3))
    """
    stack = [(t, 0)]
    while stack:
        x, level = stack.pop()
        if is_int(x):
            continue
        if not is_tuple(x):
            raise LayoutError(f"{what} must be an int or a nested tuple of ints, got {t!r:.200}")
        if level >= MAX_DEPTH:
            raise LayoutError(
                f"{what} is nested more than {MAX_DEPTH} levels deep; use a shallower hierarchy"
            )
        stack.extend((v, level + 1) for v in x)
    return t


def rank(t: IntTuple) -> int:
    """Number of top-level modes; an int has rank 1.

    >>> rank((2, (3, 4))), rank(7)
    (2, 1)
    """
    return len(t) if is_tuple(t) else 1


def depth(t: IntTuple) -> int:
    """Nesting depth; an int has depth 0.

    >>> depth(4), depth((4, 2)), depth(((4, 2), 2))
    (0, 1, 2)
    """
    if is_tuple(t):
        return 1 + max((depth(x) for x in t), default=0)
    return 0


def product(t: IntTuple) -> int:
    """Product of all leaves.

    Many leaves are multiplied as a balanced tree: a left-to-right product of a million
    2s multiplies a growing big int a million times (quadratic), the tree does not.

    >>> product(((2, 3), 4))
    24
    """
    if not is_tuple(t):
        return t
    if len(t) <= 32:
        return reduce(lambda acc, x: acc * product(x), t, 1)
    return _tree_product(list(_leaf_iter(t)))


def _leaf_iter(t: tuple):
    stack = [iter(t)]
    while stack:
        for x in stack[-1]:
            if is_tuple(x):
                stack.append(iter(x))
                break
            yield x
        else:
            stack.pop()


def _tree_product(xs: list) -> int:
    while len(xs) > 1:
        pairs = [xs[i] * xs[i + 1] for i in range(0, len(xs) - 1, 2)]
        xs = pairs + xs[len(xs) - len(xs) % 2 :]
    return xs[0] if xs else 1


size = product


def product_each(t: IntTuple) -> IntTuple:
    """The product of each top-level mode, always a tuple: an int ``n`` is one mode, ``(n,)``
    (CuTe's ``product_each`` wraps a non-tuple first).

    >>> product_each(((2, 3), 4)), product_each(16)
    ((6, 4), (16,))
    """
    check_int_tuple(t, "product_each: the int-tuple")  # a str leaf would multiply into 'xxx'
    return tuple(product(x) for x in t) if is_tuple(t) else (t,)


def flatten(t: IntTuple) -> tuple:
    """All leaves in order, as a flat tuple (an int becomes a 1-tuple).

    >>> flatten(((2, 3), (4, (5,))))
    (2, 3, 4, 5)
    """
    if is_tuple(t):
        return tuple(leaf for x in t for leaf in flatten(x))
    return (t,)


def unflatten(flat: tuple, profile: IntTuple) -> IntTuple:
    """Rebuild the hierarchy of ``profile`` from its flat leaves.

    >>> unflatten((1, 2, 3), ((0, 0), 0))
    ((1, 2), 3)
    """
    it = iter(flat)

    def build(p):
        return tuple(build(x) for x in p) if is_tuple(p) else next(it)

    return build(profile)


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """Same hierarchy (profile).

    >>> congruent((1, (2, 3)), (4, (5, 6))), congruent((1, 2), (1, (2, 3)))
    (True, False)
    """
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return is_int(a) and is_int(b)


def weakly_congruent(a: IntTuple, b: IntTuple) -> bool:
    """``a``'s hierarchy is a coarsening of ``b``'s: an int in ``a`` may stand for a tuple in ``b``.

    >>> weakly_congruent((1, 2), (1, (2, 3))), weakly_congruent((1, (2, 3)), (1, 2))
    (True, False)
    """
    if is_int(a):
        return True
    if is_int(b):
        return False
    return len(a) == len(b) and all(weakly_congruent(x, y) for x, y in zip(a, b))


def prefix_product(t: IntTuple, init: int = 1) -> IntTuple:
    """Exclusive prefix product over the leaves, keeping the hierarchy (compact column-major strides).

    >>> prefix_product(((2, 3), 4))
    ((1, 2), 6)
    """
    if is_tuple(t):
        out = []
        for x in t:
            out.append(prefix_product(x, init))
            init *= product(x)
        return tuple(out)
    return init


def compact_col_major(t: IntTuple, current: int = 1) -> IntTuple:
    """CuTe's ``compact_major<LayoutLeft>``: column-major strides, a size-1 mode gets stride 0.

    With static ints CuTe gives an extent-1 mode stride ``_0`` (it can never be stepped), which
    is where this differs from ``prefix_product``.

    >>> compact_col_major(((2, 1), 4))
    ((1, 0), 2)
    """
    if is_tuple(t):
        out = []
        for x in t:
            out.append(compact_col_major(x, current))
            current *= product(x)
        return tuple(out)
    return 0 if t == 1 else current


def suffix_product(t: IntTuple, init: int = 1) -> IntTuple:
    """Exclusive suffix product over the leaves (compact row-major strides).

    >>> suffix_product(((2, 3), 4))
    ((12, 4), 1)
    """
    if is_tuple(t):
        out = []
        for x in reversed(t):
            out.append(suffix_product(x, init))
            init *= product(x)
        return tuple(reversed(out))
    return init


def ceil_div(a: int, b: int) -> int:
    """Ceiling of a / b for positive b.

    >>> ceil_div(7, 2)
    4
    """
    return -(-a // b)


def shape_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """CuTe's shape division: ``a / b`` where one of them divides the other (else LayoutError).

    An int divisor is consumed mode by mode from the left.

    >>> shape_div((4, 6), 8)
    (1, 3)
    >>> shape_div(3, 6)
    1
    """
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise LayoutError(f"shape_div: ranks differ: {a} and {b}")
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out = []
        for x in a:
            out.append(shape_div(x, b))
            b = shape_div(b, product(x))
        return tuple(out)
    if is_tuple(b):
        return shape_div(a, product(b))
    if b == 0 or (a % b != 0 and b % a != 0):
        raise LayoutError(
            f"shape_div({a}, {b}): neither divides the other; CuTe needs {a} % {b} == 0 "
            f"or {b} % {a} == 0"
        )
    return ceil_div(a, b)


def elem_scale(a: IntTuple, b: IntTuple) -> IntTuple:
    """Elementwise product of congruent tuples.

    >>> elem_scale((2, 3), (4, 5))
    (8, 15)
    """
    if is_tuple(a):
        return tuple(elem_scale(x, y) for x, y in zip(a, b))
    return a * product(b)


def idx2crd(idx: int, shape: IntTuple) -> IntTuple:
    """The natural coordinate of a linear index in ``shape`` (colexicographic).

    The last mode absorbs any excess, as in CuTe; call through ``Layout`` for range checks.

    >>> idx2crd(7, (2, (2, 3)))
    (1, (1, 1))
    >>> idx2crd((1, 5), (3, (2, 3)))
    (1, (1, 2))
    """
    if is_tuple(idx):
        if not is_tuple(shape) or len(idx) != len(shape):
            raise LayoutError(f"idx2crd: coordinate {idx} does not match shape {shape}")
        return tuple(idx2crd(i, s) for i, s in zip(idx, shape))
    if not is_int(idx):
        raise LayoutError(f"idx2crd: index {idx!r} must be an int or a tuple of ints")
    if is_tuple(shape):
        out = []
        for i, s in enumerate(shape):
            if i == len(shape) - 1:
                out.append(idx2crd(idx, s))
            else:
                n = product(s)
                out.append(idx2crd(idx % n, s))
                idx //= n
        return tuple(out)
    return idx


def crd2idx(crd: IntTuple, shape: IntTuple, stride: IntTuple | None = None) -> int:
    """Inner product of a coordinate with strides (column-major strides when omitted).

    An int coordinate into a tuple mode is first decomposed by ``idx2crd``.

    >>> crd2idx((1, 2), (2, 3))
    5
    >>> crd2idx(5, (2, 3), (3, 1))
    5
    """
    if stride is None:
        stride = prefix_product(shape)
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise LayoutError(f"coordinate {crd} does not match shape {shape}")
        return sum(crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride))
    if is_tuple(shape):
        total = 0
        for i, (s, d) in enumerate(zip(shape, stride)):
            if i == len(shape) - 1:
                total += crd2idx(crd, s, d)
            else:
                n = product(s)
                total += crd2idx(crd % n, s, d)
                crd //= n
        return total
    return crd * stride


def crd2crd(crd: IntTuple, src_shape: IntTuple, dst_shape: IntTuple) -> IntTuple:
    """Re-express a coordinate of ``src_shape`` as a coordinate of ``dst_shape`` (same size).

    >>> crd2crd((1, 1), (2, 3), ((2, 3),))
    ((1, 1),)
    """
    if product(src_shape) != product(dst_shape):
        raise LayoutError(f"crd2crd: shapes {src_shape} and {dst_shape} differ in size")
    return idx2crd(crd2idx(crd, src_shape), dst_shape)


def fill_like(t: IntTuple, value: int) -> IntTuple:
    """A tuple congruent to ``t`` with every leaf set to ``value``.

    >>> fill_like((2, (3, 4)), 0)
    (0, (0, 0))
    """
    return tuple(fill_like(x, value) for x in t) if is_tuple(t) else value
