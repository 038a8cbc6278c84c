"""Random tiles in an atom's formats, their device containers, and the tolerance D is held to.

>>> from cutemma.mma.types import numeric_type
>>> from_container(numeric_type('f16'), to_container(numeric_type('f16'), np.eye(2)), 2, 2)[1, 1]
np.float16(1.0)
"""

from __future__ import annotations

import numpy as np

from cutemma.mma.atom import MmaAtom
from cutemma.mma.types import NumericType


def random_values(t: NumericType, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random values of format ``t``: full range for integers, a spread of magnitudes for floats.

    Every value is already one of ``t``'s (quantizing changes nothing):

    >>> from cutemma.mma.types import numeric_type
    >>> e4m3 = numeric_type('e4m3')
    >>> v = random_values(e4m3, (4, 4), np.random.default_rng(0))
    >>> v.shape, bool(np.all(e4m3.quantize(v) == v))
    ((4, 4), True)
    """
    if t.kind == "bits":
        return rng.integers(0, 2, shape)
    if t.kind == "int":
        hi = min(int(t.max), 2**20) if t.bits == 32 else int(t.max)
        lo = max(int(t.min), -(2**20)) if t.bits == 32 else int(t.min)
        return rng.integers(lo, hi + 1, shape)
    if t.kind == "complex":
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if t.kind == "gauss":
        out = np.zeros(shape, dtype=t.host)
        for part in ("t0", "t1", "t2"):
            out[part] = rng.standard_normal(shape)
        return out
    scale = 2.0 if t.bits <= 8 else 1.0
    return t.quantize(np.clip(rng.standard_normal(shape) * scale, t.min, t.max))


def to_container(t: NumericType, values: np.ndarray) -> np.ndarray:
    """Tile values of ``t`` as the flat array a probe reads (m + k*M order, container dtype).

    >>> from cutemma.mma.types import numeric_type
    >>> to_container(numeric_type('f16'), np.array([[1.0, 2.0]])).dtype
    dtype('uint16')
    """
    flat = np.asarray(values).reshape(-1, order="F")
    if t.kind in ("complex", "gauss"):
        host = np.ascontiguousarray(flat.astype(t.host))
        return host.view(np.float64)
    q = t.quantize(flat)
    if t.name in ("f64",):
        return q.astype(np.float64)
    if t.name in ("f32", "tf32"):
        return q.astype(np.float32)
    if t.kind in ("int", "bits"):
        if t.bits == 32:
            return q.astype(np.int32)
        if t.bits == 16:
            return q.astype(np.int64).astype(np.uint16)
        return (q.astype(np.int64) & ((1 << t.bits) - 1)).astype(np.uint8)
    host = np.ascontiguousarray(t.to_host(q))
    return host.view(np.uint16 if t.bits == 16 else np.uint8)


def from_container(t: NumericType, data: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The inverse of :func:`to_container` for a D tile: values in ``t``'s compute dtype.

    The flat data is in m + n*M order, so it fills the tile column by column:

    >>> from cutemma.mma.types import numeric_type
    >>> from_container(numeric_type('f32'), np.arange(6, dtype=np.float32), 2, 3).tolist()
    [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    """
    data = np.asarray(data)
    if t.kind in ("complex", "gauss"):
        vals = np.ascontiguousarray(data.astype(np.float64)).view(t.host)
    elif t.name in ("f64", "f32", "tf32") or (t.kind == "int" and t.bits == 32):
        vals = data
    else:
        vals = np.ascontiguousarray(data).view(t.host)
    return vals.reshape((rows, cols), order="F")


# Unit roundoff of each accumulator format (2**-mantissa_bits). Atoms with 8-bit-or-narrower
# float inputs and f32 D get 2**-13: tensor cores are not promised to accumulate those in full
# f32 (a loose bound chosen here, not an ISA figure; observed errors are in verify-h100.json).
_EPS = {"f16": 2.0**-10, "bf16": 2.0**-7, "f32": 2.0**-23, "f64": 2.0**-52, "c64": 2.0**-52}
_FP8 = {"e4m3", "e5m2", "e3m2", "e2m3", "e2m1"}


def tolerance(atom: MmaAtom, A, B, C) -> np.ndarray | None:
    """Elementwise bound on |D_gpu - D_ref|; None where D must be exact (integer D).

    Each product and each partial sum may round once in D's format, so the bound
    is ``4 * K * eps * (sum_k |a b| + |c|)`` plus a subnormal floor.

    f32 D, K = 16, all-ones A and B: 4 * 16 * 2**-23 * 16 = 2**-13 at every entry.

    >>> from cutemma.mma import make_mma_atom
    >>> atom = make_mma_atom('SM80_16x8x16_F32F16F16F32_TN')
    >>> tol = tolerance(atom, np.ones((16, 16)), np.ones((8, 16)), np.zeros((16, 8)))
    >>> tol.shape, float(tol.max()) == 2.0**-13
    ((16, 8), True)
    """
    d = atom.val_type_D
    if d.kind in ("int", "bits"):
        return None
    eps = _EPS.get(d.name, 2.0**-23)
    if atom.val_type_A.name in _FP8 and d.name == "f32":
        eps = 2.0**-13
    mag = _magnitude(atom, A, B, C)
    k = atom.shape_mnk[2]
    return 4 * k * eps * mag + 2.0**-100


def _magnitude(atom: MmaAtom, A, B, C) -> np.ndarray:
    def absval(x, t):
        x = np.asarray(x)
        if t.kind == "gauss":
            return np.abs(x["t0"]) + np.abs(x["t1"]) + np.abs(x["t2"])
        return np.abs(x).astype(np.float64)

    a, b = absval(A, atom.val_type_A), absval(B, atom.val_type_B)
    c = absval(C, atom.val_type_C)
    if atom.val_type_A.kind == "complex":
        a, b = 2 * a, 2 * b  # |re| + |im| bounds
    return a @ b.T + c


def compare(atom: MmaAtom, got, want, tol) -> tuple[bool, float]:
    """(ok, max abs error) of a GPU D tile against the reference.

    Integer D (tolerance None) must match exactly:

    >>> from cutemma.mma import make_mma_atom
    >>> compare(make_mma_atom('SM61_DP4A'), np.array([[7]]), np.array([[5]]), None)
    (False, 2.0)
    """
    if atom.val_type_D.kind == "gauss":
        diffs = [np.abs(got[p] - want[p]) for p in ("t0", "t1", "t2")]
        err = np.maximum.reduce(diffs)
    elif atom.val_type_D.kind in ("int", "bits"):
        err = np.abs(got.astype(np.int64) - want.astype(np.int64)).astype(np.float64)
    else:
        err = np.abs(np.asarray(got, dtype=np.complex128) - np.asarray(want, dtype=np.complex128))
        err = np.where(np.isnan(got) & np.isnan(want), 0.0, err)
    max_err = float(np.nanmax(err)) if err.size else 0.0
    if tol is None:
        return bool(max_err == 0), max_err
    return bool(np.all(err <= tol)), max_err


def parts(t: NumericType) -> int:
    """How many container scalars hold one value of ``t`` (complex 2, gauss 3, else 1).

    >>> from cutemma.mma.types import numeric_type
    >>> parts(numeric_type('c64'))
    2
    """
    return {"complex": 2, "gauss": 3}.get(t.kind, 1)
