"""A whole tiled GEMM on the CPU, done the way the GPU does it.

The problem is padded to whole tiles (zero fill), each thread's A, B and C elements are
found with ``ThrMma.partition_*`` on the global tensors, fragments are regrouped per atom
instance and handed to the atom's arithmetic one K-step at a time (so rounding happens
where the hardware rounds), and the accumulators are written back through the C partition,
masked to the real M x N. Everything is vectorised over threads, values and atom instances.

B is N x K, as in CuTe (``D[m, n] = sum_k A[m, k] * B[n, k]``): pass ``b.T`` for a K x N matrix.

>>> import numpy as np
>>> from cutemma.tiled import make_tiled_mma
>>> t = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2))
>>> A = np.ones((20, 17)); B = np.ones((9, 17))
>>> D = gemm(t, A, B)
>>> D.shape, float(D[0, 0])
((20, 9), 17.0)
"""

from __future__ import annotations

import numpy as np

from cutemma.errors import TiledMmaError
from cutemma.layout.int_tuple import ceil_div
from cutemma.layout.layout import Layout, size
from cutemma.layout.offsets import offsets
from cutemma.tensor import Tensor


def _padded(x: np.ndarray, rows: int, cols: int) -> tuple[np.ndarray, Layout]:
    """Zero-padded copy in the same major-ness as ``x``, and its (rows, cols) layout."""
    out = np.zeros(
        (rows, cols), dtype=np.result_type(x.dtype, np.float64) if x.dtype.kind == "f" else x.dtype
    )
    out[: x.shape[0], : x.shape[1]] = x
    if x.flags.f_contiguous and not x.flags.c_contiguous:
        return np.asfortranarray(out), Layout((rows, cols), (1, rows))
    return out, Layout((rows, cols), (cols, 1))


def _flat(x: np.ndarray, layout: Layout) -> np.ndarray:
    return x.ravel(order="F" if layout.stride[0] == 1 else "C")


def _thread_table(tiled, tensor: Tensor, which: str, threads: list[int]) -> np.ndarray:
    """offsets[thread, frg, rest0, rest1] of each thread's partition of ``tensor``."""
    tabs = []
    for t in threads:
        part = getattr(tiled.get_slice(t), f"partition_{which}")(tensor)
        shape = tuple(size(part.layout[i]) for i in range(3))
        tabs.append(offsets(part.layout).reshape(shape, order="F") + part.offset)
    return np.stack(tabs)


def _atom_table(layout: Layout) -> np.ndarray:
    """(T, V) table of an atom TV layout's flat coordinates."""
    t, v = size(layout[0]), size(layout[1])
    return offsets(layout).reshape((t, v), order="F")


def _check_numbers(what: str, x, tiled_mma, func: str = "gemm") -> None:
    """Real numbers only: complex values would lose their imaginary part, objects are not
    numbers (the atoms' arithmetic is real; complex atoms take real and imaginary parts).
    An integer atom's operand must hold whole numbers inside its type's range: rounding 1.5
    or wrapping 200 into s8 would compute a product of numbers the caller never gave."""
    if x is None:
        return
    if x.dtype.kind not in "biuf":
        kind = {"c": "complex", "O": "object", "U": "text", "S": "bytes"}.get(
            x.dtype.kind, str(x.dtype)
        )
        raise TiledMmaError(
            f"{func}: {what} holds {kind} values (dtype {x.dtype}); {tiled_mma.atom.name} "
            "multiplies real numbers: pass a numeric (bool, int or float) array"
        )
    vt = getattr(tiled_mma.atom, f"val_type_{'C' if what == 'C' else what}")
    if vt.kind != "int" or x.size == 0 or x.dtype.kind == "b":
        return
    if x.dtype.kind == "f" and not np.all(np.isfinite(x) & (x == np.rint(x))):
        bad = x[~(np.isfinite(x) & (x == np.rint(x)))].flat[0].item()
        raise TiledMmaError(
            f"{func}: {what} holds {bad!r}, not a whole number; {tiled_mma.atom.name} reads "
            f"{what} as {vt.name} (integers {vt.min}..{vt.max}): pass whole numbers"
        )
    lo, hi = x.min(), x.max()
    if lo < vt.min or hi > vt.max:
        bad = (lo if lo < vt.min else hi).item()
        raise TiledMmaError(
            f"{func}: {what} holds {bad!r}, outside {vt.name}'s range {vt.min}..{vt.max} that "
            f"{tiled_mma.atom.name} reads {what} as; the hardware would keep only the low "
            f"{vt.bits} bits: pass values in range"
        )


def gemm(tiled_mma, A, B, C=None) -> np.ndarray:
    """``D = A @ B.T + C`` computed through ``tiled_mma`` exactly as its threads would.

    A is M x K, B is N x K (CuTe's convention), C is M x N or None (zeros). Any M, N, K >= 0
    (K = 0 gives D = C in the atom's D type).
    Returns D as float64 / int64 values of the atom's D type.

    The inputs are first rounded to the atom's A, B and C types, as the hardware reads them
    (round to nearest even; an integer atom refuses values that are not whole or not in its
    type's range rather than wrap them): float64 data given to a bf16 atom keeps 8 bits
    of mantissa, so D differs from ``A @ B.T`` by that rounding, not by a bug. Compare D with
    :func:`rounded_reference` (the same product of the rounded inputs, in float64).

    >>> import numpy as np
    >>> from cutemma.tiled import make_tiled_mma
    >>> t = make_tiled_mma("SM80_16x8x32_S32S8S8S32_TN")
    >>> A = np.full((16, 32), 2, np.int8); B = np.full((8, 32), 3, np.int8)
    >>> int(gemm(t, A, B)[3, 5])
    192
    """
    from cutemma.tiled import TiledMma

    if not isinstance(tiled_mma, TiledMma):
        raise TiledMmaError(
            f"gemm: expected a TiledMma (make_tiled_mma(...)) first, got {tiled_mma!r}"
        )
    A, B = np.asarray(A), np.asarray(B)
    for what, x in (("A", A), ("B", B), ("C", None if C is None else np.asarray(C))):
        _check_numbers(what, x, tiled_mma)
    if A.ndim != 2 or B.ndim != 2:
        raise TiledMmaError(
            f"gemm needs 2-D A (M x K) and B (N x K); got shapes {A.shape} and {B.shape}"
        )
    (M, K), (N, K2) = A.shape, B.shape
    if K != K2:
        raise TiledMmaError(
            f"gemm: A is {M}x{K} and B is {N}x{K2}; B must be N x K with the same K as A "
            "(pass b.T for a K x N matrix)"
        )
    C = np.zeros((M, N)) if C is None else np.asarray(C)
    if C.shape != (M, N):
        raise TiledMmaError(f"gemm: C has shape {C.shape}, expected (M, N) = ({M}, {N})")

    atom = tiled_mma.atom
    TM, TN, TK = tiled_mma.tile_size_mnk
    # an empty extent still runs one zero-padded tile: K = 0 gives D = C, M or N = 0 nothing
    Mp, Np, Kp = (max(ceil_div(x, t), 1) * t for x, t in ((M, TM), (N, TN), (K, TK)))
    Ab, la = _padded(A, Mp, Kp)
    Bb, lb = _padded(B, Np, Kp)
    Cb, lc = _padded(C, Mp, Np)
    a_flat, b_flat, c_flat = _flat(Ab, la), _flat(Bb, lb), _flat(Cb, lc)

    # threads grouped by atom instance: thread_of[p][v] for atom position p, atom thread v
    coords = tiled_mma._thr_coords
    positions = sorted({c[1:] for c in coords.values()})
    by_coord = {c: t for t, c in coords.items()}
    n_v = size(atom.thr_id)
    thread_of = np.array([[by_coord[(v, *p)] for v in range(n_v)] for p in positions])
    threads = sorted(coords)
    sel = np.searchsorted(threads, thread_of)  # (P, V) -> row in the thread tables

    ic = _thread_table(tiled_mma, Tensor(c_flat, lc), "C", threads)[sel]  # (P,V,FC,RM,RN)

    am, an, ak = atom.shape_mnk
    ta, tb, tc = (_atom_table(x) for x in (atom.tv_layout_A, atom.tv_layout_B, atom.tv_layout_C))
    P, _, _, RM, RN = ic.shape

    def to_tiles(flat, tensor, which, table, rows, cols):
        # fragments of every instance scattered into the atom's (rows, cols) tiles. Each tile
        # element is read from one (thread, value) that holds it: a shared-memory operand
        # (GMMA's A and B: every thread of the warpgroup "holds" the whole tile) is then read
        # once, not once per thread (issue 22: 8.3 GB for a 1024^3 GMMA emulation)
        first = np.unique(table.reshape(-1), return_index=True)[1]  # into the (T, V) table
        v_of, f_of = np.divmod(first, table.shape[1])
        need = np.unique(v_of)  # the atom threads that must be partitioned
        ts = sorted(set(thread_of[:, need].ravel().tolist()))
        pick = np.searchsorted(ts, thread_of[:, need])  # (P, n) -> row of the thread table
        idx = _thread_table(tiled_mma, tensor, which, ts)[pick]  # (P, n, F, r0, r1)
        frag = flat[idx[:, np.searchsorted(need, v_of), f_of]]  # (P, E, r0, r1)
        r0, r1 = frag.shape[2:]
        tiles = np.zeros((P, r0, r1, rows * cols), dtype=frag.dtype)
        tiles[:, :, :, table.reshape(-1)[first]] = np.moveaxis(frag, 1, 3)
        return tiles.reshape(P, r0, r1, cols, rows).swapaxes(-1, -2)

    tiles_a = to_tiles(a_flat, Tensor(a_flat, la), "A", ta, am, ak)  # (P, RM, RK, am, ak)
    tiles_b = to_tiles(b_flat, Tensor(b_flat, lb), "B", tb, an, ak)  # (P, RN, RK, an, ak)
    tiles_c = to_tiles(c_flat, Tensor(c_flat, lc), "C", tc, am, an)  # (P, RM, RN, am, an)
    RK = tiles_a.shape[2]

    # atoms along K hold replicas of C: the first starts from C, the others from zero
    k_pos = np.array([p[2] for p in positions])
    acc = np.where((k_pos == 0)[:, None, None, None, None], tiles_c, 0)
    for rk in range(RK):
        acc = atom.emulate_tiles(tiles_a[:, :, None, rk], tiles_b[:, None, :, rk], acc)

    # back through the C partition; K-replicas are summed, padding is dropped
    frag_c = acc.swapaxes(-1, -2).reshape(P, RM, RN, -1)[..., tc.reshape(-1)]
    frag_c = np.moveaxis(frag_c.reshape(P, RM, RN, *tc.shape), (1, 2), (3, 4))  # (P,V,FC,RM,RN)
    out = np.zeros(c_flat.shape, dtype=acc.dtype)
    np.add.at(out, ic.reshape(-1), frag_c.reshape(-1))
    D = out.reshape((Mp, Np), order="F" if lc.stride[0] == 1 else "C")
    return D[:M, :N]


def rounded_reference(tiled_mma, A, B, C=None) -> np.ndarray:
    """``A @ B.T + C`` of the inputs rounded to the atom's A, B and C types, in float64
    (int64 for integer atoms): what :func:`gemm` computes, up to the order of its sums.

    >>> import numpy as np
    >>> from cutemma.tiled import make_tiled_mma
    >>> t = make_tiled_mma("SM80_16x8x16_F32BF16BF16F32_TN")
    >>> A = np.full((16, 16), 1 + 2**-10); B = np.ones((8, 16))   # 1 + 2**-10 is 1.0 in bf16
    >>> float(rounded_reference(t, A, B)[0, 0]), float((A @ B.T)[0, 0]) > 16
    (16.0, True)
    """
    from cutemma.tiled import TiledMma

    if not isinstance(tiled_mma, TiledMma):
        raise TiledMmaError(
            f"rounded_reference: expected a TiledMma (make_tiled_mma(...)) first, got {tiled_mma!r}"
        )
    atom = tiled_mma.atom
    A, B = np.asarray(A), np.asarray(B)
    for what, x in (("A", A), ("B", B), ("C", None if C is None else np.asarray(C))):
        _check_numbers(what, x, tiled_mma, "rounded_reference")
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
        raise TiledMmaError(
            f"rounded_reference needs A (M x K) and B (N x K) with one K; got {A.shape} and "
            f"{B.shape} (pass b.T for a K x N matrix)"
        )
    a = atom.val_type_A.quantize(A)
    b = atom.val_type_B.quantize(B)
    exact = np.int64 if a.dtype.kind in "iu" and b.dtype.kind in "iu" else np.float64
    D = a.astype(exact) @ b.astype(exact).T
    if C is not None:
        C = np.asarray(C)
        if C.shape != D.shape:
            raise TiledMmaError(f"rounded_reference: C has shape {C.shape}, expected {D.shape}")
        D = D + atom.val_type_C.quantize(C).astype(exact)
    return D


__all__ = ["gemm", "rounded_reference"]
