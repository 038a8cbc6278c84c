"""The PTX ISA's matrix-fragment formulas, written from the ISA text.

For every tensor-core instruction shape and type class the PTX ISA says which
element of A, B and C/D each thread holds: fragment element ``i`` of ``%laneid``
(for wgmma: of thread 0..127 of the warpgroup) sits at ``(row, col)`` of the
matrix, with the ISA's convention A: (m, k), B: (k, n), C/D: (m, n). This module
is that text as code, one function per instruction shape and type class, each
citing its section of PTX ISA 9.x ("Matrix Fragments for mma.mMnNkK",
"Register Fragments" for wgmma); the functions are in :mod:`cutemma.mma.ptx_fragments`,
their table and evaluation here. It is the first of cutemma's witnesses for the
catalog's layouts, so it never reads a Layout: only lanes and element indices.

Sources: mma.sync fragments are the ISA's row/col formulas; wgmma fragments
are given only as figures, read off here; dp4a/dp2a and fma.f32x2 (one thread
each) follow from their arithmetic. Sparse wgmma A is stated in logical
(uncompressed) K: a thread owns the 2:4 groups its compressed pairs come from.

Not documented this way, and so absent here:

* tcgen05 (sm100 UMMA): D lives in tensor memory and A/B in shared or tensor
  memory; the ISA describes data-path layouts of tensor memory, not per-thread
  register fragments. :func:`tables_for` returns None for them.
* Operands in shared memory (wgmma B, wgmma A in the SS form): the ISA gives a
  matrix descriptor, not fragments. :func:`tables_for` reports them with CuTe's
  convention that every thread sees the whole tile (seed 004, "GMMA ... ALayout").
* Block-scale factor registers and sparsity metadata (their own operands).

>>> fragment_coords('m16n8k8', 'f16', 'C')[5].tolist()   # lane 5: group 1, thread 1
[[1, 2], [1, 3], [9, 2], [9, 3]]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from cutemma.errors import AtomError
from cutemma.mma.ptx_fragments import (
    SPARSE_A,
    m8n8_int,
    m8n8k4_f16,
    m8n8k4_f64,
    m16n8k4_tf32_f64,
    m16n8k8_f16,
    m16n8k8_tf32_f64,
    m16n8k16_f16,
    m16n8k16_f64,
    m16n8k16_i8,
    m16n8k32_i4,
    m16n8k32_i8,
    m16n8k64_i4,
    m16n8k128_b1,
    m16n8k256_b1,
    single_thread,
    wgmma_a,
    wgmma_d,
)

OPERANDS = ("A", "B", "C")

# Which register-packing class each element type falls in. The ISA gives one
# formula per class (e.g. every 8-bit type in 9.7.14.5.10 shares Figure 88). A
# type with several candidates takes the first class the shape has: e2m1 is
# padded to 8 bits in kind::f8f6f4 (m16n8k32) and packed 8 per register in
# kind::mxf4 (m16n8k64).
TYPE_CLASSES: dict[str, tuple[str, ...]] = {
    "f16": ("f16",),
    "bf16": ("f16",),
    "tf32": ("tf32",),
    "f64": ("f64",),
    "s8": ("i8",),
    "u8": ("i8",),
    "e4m3": ("i8",),
    "e5m2": ("i8",),
    "e3m2": ("i8",),
    "e2m3": ("i8",),
    "e2m1": ("i8", "i4"),
    "s4": ("i4",),
    "u4": ("i4",),
    "b1": ("b1",),
}


def _sparse_a_coords(atype: str, k: int) -> np.ndarray:
    tclass = next(c for c in TYPE_CLASSES[atype] if c in SPARSE_A)
    per_warp = SPARSE_A[tclass]
    return _evaluate(wgmma_a(per_warp), 128, 64 * k // 128)


# --- the table -------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """One (shape, type class) entry: its fragment function and element counts."""

    fn: object
    values: tuple[int, int, int]  # elements per thread of A, B, C
    section: str
    variants: dict = field(default_factory=dict)  # operand -> allowed variants


_M8N8K4_VARIANTS = {"A": ("row", "col"), "B": ("row", "col"), "C": ("f16", "f32")}

SPECS: dict[tuple[str, str], Spec] = {
    ("m8n8k4", "f16"): Spec(m8n8k4_f16, (4, 4, 8), "9.7.14.5.1", _M8N8K4_VARIANTS),
    ("m8n8k4", "f64"): Spec(m8n8k4_f64, (1, 1, 2), "9.7.14.5.2"),
    ("m8n8k16", "i8"): Spec(m8n8_int(4), (4, 4, 2), "9.7.14.5.3"),
    ("m8n8k32", "i4"): Spec(m8n8_int(8), (8, 8, 2), "9.7.14.5.4"),
    ("m8n8k128", "b1"): Spec(m8n8_int(32), (32, 32, 2), "9.7.14.5.5"),
    ("m16n8k4", "tf32"): Spec(m16n8k4_tf32_f64, (2, 1, 4), "9.7.14.5.6"),
    ("m16n8k4", "f64"): Spec(m16n8k4_tf32_f64, (2, 1, 4), "9.7.14.5.6"),
    ("m16n8k8", "f16"): Spec(m16n8k8_f16, (4, 2, 4), "9.7.14.5.7"),
    ("m16n8k8", "tf32"): Spec(m16n8k8_tf32_f64, (4, 2, 4), "9.7.14.5.7"),
    ("m16n8k8", "f64"): Spec(m16n8k8_tf32_f64, (4, 2, 4), "9.7.14.5.7"),
    ("m16n8k16", "f16"): Spec(m16n8k16_f16, (8, 4, 4), "9.7.14.5.8"),
    ("m16n8k16", "f64"): Spec(m16n8k16_f64, (8, 4, 4), "9.7.14.5.8"),
    ("m16n8k16", "i8"): Spec(m16n8k16_i8, (8, 4, 4), "9.7.14.5.9"),
    ("m16n8k32", "i4"): Spec(m16n8k32_i4, (16, 8, 4), "9.7.14.5.10"),
    ("m16n8k32", "i8"): Spec(m16n8k32_i8, (16, 8, 4), "9.7.14.5.10"),
    ("m16n8k64", "i4"): Spec(m16n8k64_i4, (32, 16, 4), "9.7.14.5.11"),
    ("m16n8k128", "b1"): Spec(m16n8k128_b1, (64, 32, 4), "9.7.14.5.12"),
    ("m16n8k256", "b1"): Spec(m16n8k256_b1, (128, 64, 4), "9.7.14.5.13"),
}

# wgmma K and the per-warp A fragment of each class (9.7.15.5.1.1.1-4).
WGMMA_K: dict[str, tuple[int, object, str]] = {
    "f16": (16, m16n8k16_f16, "9.7.15.5.1.1.1"),
    "tf32": (8, m16n8k8_tf32_f64, "9.7.15.5.1.1.2"),
    "i8": (32, m16n8k32_i8, "9.7.15.5.1.1.3"),
    "b1": (256, m16n8k256_b1, "9.7.15.5.1.1.4"),
}

# Which N wgmma allows (9.7.15.5.1.1 tables): every multiple of 8 up to 256,
# except with s32 accumulators (.s8/.u8/.b1): 8..32 by 8, then 48..256 by 16.
_WGMMA_N_ALL = tuple(range(8, 257, 8))
_WGMMA_N_INT = (8, 16, 24, 32) + tuple(range(48, 257, 16))

SINGLE_THREAD: dict[str, tuple[int, int, int]] = {"dp4a": (1, 1, 4), "dp2a": (1, 1, 2)}

_SHAPE = re.compile(r"^m(\d+)n(\d+)k(\d+)$")


def parse_shape(shape: str) -> tuple[int, int, int]:
    """(M, N, K) of a PTX shape token.

    >>> parse_shape('m16n8k16')
    (16, 8, 16)
    """
    if shape in SINGLE_THREAD:
        return SINGLE_THREAD[shape]
    m = _SHAPE.match(shape)
    if not m:
        raise AtomError(f"shape {shape!r} is not a PTX shape like 'm16n8k16', 'dp4a' or 'dp2a'")
    return int(m[1]), int(m[2]), int(m[3])


def type_class(shape: str, atype: str) -> str:
    """The fragment class of ``atype`` at ``shape`` ('f16', 'tf32', 'f64', 'i8', 'i4', 'b1').

    >>> type_class('m16n8k64', 'e2m1'), type_class('m16n8k32', 'e2m1')
    ('i4', 'i8')
    """
    if atype not in TYPE_CLASSES:
        raise AtomError(f"A type {atype!r}: expected one of {', '.join(TYPE_CLASSES)}")
    classes = TYPE_CLASSES[atype]
    m, n, k = parse_shape(shape)
    if m == 64:  # wgmma: K picks the class
        for c in classes:
            if c in WGMMA_K and WGMMA_K[c][0] == k:
                return c
    for c in classes:
        if (shape, c) in SPECS:
            return c
    return classes[0]


# Every mma.sync but m8n8k4 .f16 is .row.col; C's type never changes its layout.
_ONLY_FORM = {"A": ("row",), "B": ("col",), "C": ("f16", "f32")}


def _default_variant(operand: str, ctype: str | None, major: str | None) -> str:
    if operand == "C":
        return "f16" if ctype == "f16" else "f32"
    return major or ("row" if operand == "A" else "col")


def fragment_coords(
    shape: str,
    atype: str,
    operand: str,
    *,
    ctype: str | None = None,
    major: str | None = None,
) -> np.ndarray:
    """(row, col) of every fragment element: an int array (threads, values, 2).

    ``shape`` is the PTX shape (``'m16n8k16'``, ``'m64n128k16'`` for wgmma,
    ``'dp4a'``/``'dp2a'``); ``atype`` the A element type, which fixes the register
    packing; ``operand`` 'A', 'B' or 'C' (C stands for D too). Coordinates follow
    the ISA: A (m, k), B (k, n), C (m, n). Threads are %laneid 0..31 for mma.sync
    (all four quadpairs for m8n8k4 .f16, each in its own 8x8 tile), thread 0..127
    of the warpgroup for wgmma, one thread for dp4a/dp2a. ``major`` is the ISA's
    'row'/'col' of A or B (only m8n8k4 .f16 offers both; others are A row, B col);
    ``ctype`` matters only for the m8n8k4 .f16 accumulator ('f16' or 'f32').

    >>> fragment_coords('m16n8k16', 'bf16', 'A')[0, :, 0].tolist()  # rows of lane 0
    [0, 0, 8, 8, 0, 0, 8, 8]
    >>> fragment_coords('m64n8k16', 'f16', 'C')[32, 0].tolist()  # warp 1 starts at row 16
    [16, 0]
    """
    if operand not in OPERANDS:
        raise AtomError(f"operand {operand!r}: expected one of {OPERANDS} (C stands for D)")
    if shape in SINGLE_THREAD:
        return _single_thread_coords(shape, operand)
    tclass = type_class(shape, atype)
    variant = _default_variant(operand, ctype, major)
    if parse_shape(shape)[0] == 64:
        return _wgmma_coords(shape, atype, tclass, operand)
    spec = SPECS.get((shape, tclass))
    if spec is None:
        known = sorted({s for s, c in SPECS if c == tclass})
        raise AtomError(
            f"mma.sync shape {shape!r} with A type {atype!r}: the ISA documents class "
            f"{tclass!r} at {known}"
        )
    allowed = spec.variants.get(operand) or _ONLY_FORM[operand]
    if variant not in allowed:
        raise AtomError(
            f"mma.{shape} .{atype} operand {operand}: {variant!r}; the ISA allows {allowed}"
        )
    values = spec.values[OPERANDS.index(operand)]
    return _evaluate(lambda lane, i: spec.fn(operand, lane, i, variant), 32, values)


def _evaluate(fn, threads: int, values: int) -> np.ndarray:
    lane = np.arange(threads, dtype=np.int64)[:, None]
    i = np.arange(values, dtype=np.int64)[None, :]
    row, col = fn(lane, i)
    shape = (threads, values)
    return np.stack([np.broadcast_to(row, shape), np.broadcast_to(col, shape)], axis=-1)


def _single_thread_coords(shape: str, operand: str) -> np.ndarray:
    m, n, k = SINGLE_THREAD[shape]
    rows, cols = {"A": (m, k), "B": (k, n), "C": (m, n)}[operand]
    return _evaluate(single_thread(rows, cols), 1, rows * cols)


def _wgmma_coords(shape: str, atype: str, tclass: str, operand: str) -> np.ndarray:
    m, n, k = parse_shape(shape)
    if tclass not in WGMMA_K or WGMMA_K[tclass][0] != k:
        raise AtomError(
            f"wgmma shape {shape!r}: class {tclass!r} needs K="
            f"{WGMMA_K.get(tclass, ('none',))[0]} (f16/bf16 16, tf32 8, 8-bit 32, b1 256)"
        )
    # Integer (s32-accumulating) forms allow fewer N than the float forms.
    allowed_n = _WGMMA_N_INT if atype in ("s8", "u8", "b1") else _WGMMA_N_ALL
    if n not in allowed_n:
        raise AtomError(f"wgmma shape {shape!r}: N={n} not in {allowed_n}")
    if operand == "B":
        raise AtomError(f"wgmma {shape}: B is read from shared memory; it has no fragment")
    if operand == "C":
        return _evaluate(wgmma_d, 128, n // 2)
    per_warp = WGMMA_K[tclass][1]
    return _evaluate(wgmma_a(per_warp), 128, m * k // 128)


def flat_coords(coords: np.ndarray, operand: str, mnk: tuple[int, int, int]) -> np.ndarray:
    """CuTe's flat index of each (row, col): A m + k*M, B n + k*N, C m + n*M.

    >>> c = fragment_coords('m16n8k8', 'f16', 'C')
    >>> flat_coords(c, 'C', (16, 8, 8))[1].tolist()   # lane 1: (0,2) (0,3) (8,2) (8,3)
    [32, 48, 40, 56]
    """
    m, n, _ = mnk
    row, col = coords[..., 0], coords[..., 1]
    if operand == "A":
        return row + col * m
    if operand == "B":
        return col + row * n
    if operand == "C":
        return row + col * m
    raise AtomError(f"operand {operand!r}: expected one of {OPERANDS}")


# --- from an Operation to its tables ---------------------------------------------


@dataclass(frozen=True)
class OpTables:
    """The ISA's view of one Operation, in CuTe's (logical thread, value) terms.

    ``threads[t]`` is the lane (warpgroup thread) of logical thread t: the ISA's
    participating threads in ascending order (quadpair 0 of m8n8k4 .f16 is lanes
    0-3 then 16-19). ``A``/``B``/``C`` are (threads, values) flat-index tables, or
    None with the reason in ``notes``. ``kind[op]`` is 'fragment' (ISA formulas) or
    'descriptor' (operand in shared memory: every thread sees the whole tile).
    """

    mnk: tuple[int, int, int]
    threads: np.ndarray
    A: np.ndarray | None
    B: np.ndarray | None
    C: np.ndarray | None
    kind: dict
    notes: dict


_TYPES = set(TYPE_CLASSES) | {"f32", "s32"}
_NAME_MNK = re.compile(r"_(\d+)x(\d+)x(\d+)_")


def parse_ptx(ptx: str) -> dict:
    """The shape, types and majors named in a PTX mnemonic.

    >>> p = parse_ptx('mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32')
    >>> p['shape'], p['types'], p['majors']
    ('m8n8k4', ['f32', 'f16', 'f16', 'f32'], ['col', 'row'])
    """
    tokens = ptx.split(".")
    shape = next((t for t in tokens if _SHAPE.match(t)), None)
    if tokens[0] in SINGLE_THREAD:
        shape = tokens[0]
    return {
        "head": tokens[0],
        "shape": shape,
        "types": [t for t in tokens if t in _TYPES],
        "majors": [t for t in tokens if t in ("row", "col")],
        "sparse": "sp" in tokens,
    }


def tables_for(op) -> OpTables | None:
    """The ISA's (thread, value) -> flat index tables for an Operation.

    Reads only the Operation's PTX mnemonic, name and operand sources. Returns None
    for instructions the ISA does not describe by per-thread fragments (tcgen05).

    >>> from types import SimpleNamespace as NS
    >>> op = NS(name='SM70_8x8x4_F32F16F16F32_NT', a_source='reg', b_source='reg',
    ...         ptx='mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32')
    >>> tables_for(op).threads.tolist()
    [0, 1, 2, 3, 16, 17, 18, 19]
    """
    p = parse_ptx(op.ptx)
    if p["head"] in SINGLE_THREAD:
        return _single_thread_tables(p["head"], p["head"])
    if p["head"] == "fma":
        m = _NAME_MNK.search(op.name)
        return None if m is None else _single_thread_tables(tuple(map(int, m.groups())), "fma")
    if p["head"] == "wgmma":
        return _wgmma_tables(op, p)
    if p["head"] != "mma" or p["shape"] is None:
        return None
    return _mma_tables(p)


def _single_thread_tables(which, name: str) -> OpTables:
    mnk = SINGLE_THREAD[which] if isinstance(which, str) else which
    m, n, k = mnk
    tabs = {}
    for operand, (rows, cols) in zip(OPERANDS, ((m, k), (k, n), (m, n)), strict=True):
        coords = _evaluate(single_thread(rows, cols), 1, rows * cols)
        tabs[operand] = flat_coords(coords, operand, mnk)
    kind = dict.fromkeys(OPERANDS, "fragment")
    return OpTables(mnk, np.arange(1), tabs["A"], tabs["B"], tabs["C"], kind, {})


def _mma_tables(p: dict) -> OpTables:
    shape = p["shape"]
    dtype, atype = p["types"][0], p["types"][1]
    ctype = p["types"][3] if len(p["types"]) > 3 else dtype
    majors = p["majors"] or ["row", "col"]
    mnk = parse_shape(shape)
    tabs = {
        "A": fragment_coords(shape, atype, "A", major=majors[0]),
        "B": fragment_coords(shape, atype, "B", major=majors[1]),
        "C": fragment_coords(shape, atype, "C", ctype=ctype),
    }
    lanes = np.arange(32)
    if shape == "m8n8k4" and type_class(shape, atype) == "f16":
        lanes = np.array([0, 1, 2, 3, 16, 17, 18, 19])  # MMA computation 1 (seed 002)
    flat = {o: flat_coords(tabs[o][lanes], o, mnk) for o in OPERANDS}
    kind = dict.fromkeys(OPERANDS, "fragment")
    return OpTables(mnk, lanes, flat["A"], flat["B"], flat["C"], kind, {})


def _wgmma_tables(op, p: dict) -> OpTables:
    shape, atype = p["shape"], p["types"][1]
    mnk = parse_shape(shape)
    m, n, k = mnk
    threads = np.arange(128)
    notes, kind, flat = {}, {}, {}
    # D depends on N only (dense and sparse alike), so no K/type check here.
    flat["C"] = flat_coords(_evaluate(wgmma_d, 128, n // 2), "C", mnk)
    kind["C"] = "fragment"
    for operand, source, rows in (("A", op.a_source, m), ("B", op.b_source, n)):
        if source == "smem":
            # Every thread names the whole tile (CuTe's convention, seed 004).
            flat[operand] = np.broadcast_to(np.arange(rows * k), (128, rows * k))
            kind[operand] = "descriptor"
        elif p["sparse"]:
            flat[operand] = flat_coords(_sparse_a_coords(atype, k), operand, mnk)
            kind[operand] = "fragment"
            notes[operand] = "sparse: each compressed pair stands for its 2:4 group of K"
        else:
            coords = fragment_coords(shape, atype, operand)
            flat[operand], kind[operand] = flat_coords(coords, operand, mnk), "fragment"
    return OpTables(mnk, threads, flat["A"], flat["B"], flat["C"], kind, notes)
