"""Structured sparsity of ``wgmma.mma_async.sp``: compressed A and the metadata words.

A sparse GMMA atom multiplies a dense logical 64xK tile A in which each row holds at
most 2 nonzeros in every group ("chunk") of 4 consecutive K elements (tf32: 1 in 2).
The instruction reads only the kept values, packed to a 64x(K/2) tile, plus one 32-bit
metadata register per thread saying where in its chunk each kept value sits. This
module turns a dense 2:4 tile into both, and back, from one table of hardware facts
(:data:`FORMATS`).

Facts (PTX ISA 9.7.15.6 "Asynchronous Warpgroup Level Multiply-and-Accumulate Operation
using wgmma.mma_async.sp instruction"):

* 9.7.15.6.1 "Sparse matrix storage": the MxK A is packed into Mx(K/2); granularity
  2:4 for .f16/.bf16 (k32) and .e4m3/.e5m2/.s8/.u8 (k64), 1:2 for .tf32 (k16). The
  metadata holds the index of each kept element in its chunk; 0b0000, 0b0101, 0b1010,
  0b1111 (the same index twice) are invalid.
* 9.7.15.6.3 ``wgmma.mma_async.sp``, table of valid ``sp-meta`` / ``sp-sel``: tf32
  nibbles are only 0b0100 and 0b1110; f16/bf16 and tf32 take sp-sel 0 (threads T0, T1
  of each quad hold the metadata) or 1 (T2, T3); the 8-bit types only 0 ("all threads
  contribute").
* 9.7.15.6.2.1-3 "Matrix Fragments for sparse wgmma.mma_async.m64nNk32 / k16 / k64":
  the metadata register holds 16 2-bit indices (f16: 8 chunks of 4), eight 4-bit
  vectors (tf32: 8 chunks of 2), or 16 4-bit vectors (8-bit: 16 chunks of 4); the
  register A fragment holds the kept values in the layout of the dense fragment of
  half the K (for f16: four .b32, each "two non-zero elements out of 4 consecutive").

Our reading where the ISA speaks only through figures (176, 178, 180, 181 reuse the
warp-level ``mma.sp`` metadata pictures for each warp's 16 rows); if the GPU disagrees,
look here first:

1. Inside a chunk, the kept values appear in rising K order and their 2-bit indices
   fill the chunk's nibble from the low bits: ``idx0 | idx1 << 2`` with idx0 < idx1.
   A tf32 chunk is read as four 16-bit halves, so keeping element p is the index pair
   (2p, 2p+1): 0b0100 for p=0, 0b1110 for p=1 -- the two values the ISA allows.
2. Chunk nibbles fill a thread's word in the order of K from bit 0 up, one row per
   16 bits for f16/tf32: lane q of quad g (rows g, g+8 of warp w's 16 rows) holds, for
   f16, row g K 0..15 in bits 0-15 and row g+8 K 0..15 in bits 16-31 when q is even,
   K 16..31 when q is odd (tf32: K 0..7 / 8..15); q // 2 is the selector that makes
   the pair count, and both pairs get the same words here. 8-bit: q % 2 picks row g or
   g+8, q // 2 the K half (0..31 / 32..63), 8 nibbles per word. These are the
   :data:`FORMATS` ``meta`` layouts, equal to CuTe's ``GMMA::ELayout_64x32 / 64x16 /
   64x64`` (the published CuTe witness).
3. Shared-memory A (SS) is the packed 64x(K/2) tile in the canonical GMMA layout of
   its major, the descriptor covering K/2 columns (as dense wgmma of that K).

>>> import numpy as np
>>> fmt = FORMATS["f16"]
>>> A = np.zeros((64, 32)); A[0, :8] = [0, 1.5, 0, 2, 3, 0, 0, 0]
>>> values, index = compress(A, fmt)
>>> values[0, :4].tolist(), index[0, :2].tolist()
([1.5, 2.0, 3.0, 0.0], [[1, 3], [0, 1]])
>>> bool((decompress(values, index, fmt) == A).all())
True
>>> hex(int(metadata_words(index, fmt)[0]))  # rows 0 | 8, K 0..15: 0b1101 (1, 3), 0b0100 (0, 1)..
'0x4444444d'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cutemma.errors import AtomError
from cutemma.layout import Layout, flatten

__all__ = [
    "FORMATS",
    "SparseFormat",
    "check_pattern",
    "compress",
    "compressed_tv_layout",
    "contributors",
    "decode_metadata",
    "decompress",
    "metadata_words",
    "random_pattern",
    "sparse_format",
    "sparse_operands",
]

WORD_BITS = 32
NIBBLE = 4  # metadata bits per chunk, every format (two 2-bit indices)


@dataclass(frozen=True)
class SparseFormat:
    """How one A type class of ``wgmma.mma_async.sp`` stores its sparse A.

    ``chunk`` dense K elements hold at most ``keep`` nonzeros; ``k`` is the dense K of
    the instruction; ``selectors`` the valid sp-sel; ``meta`` the (thread, value) ->
    ``m + 64 k`` layout of the metadata over the dense 64xK tile (value v's chunk nibble
    starts at bit ``v * 32 // values``).
    """

    name: str
    types: tuple[str, ...]
    chunk: int
    keep: int
    k: int
    selectors: tuple[int, ...]
    meta: Layout

    @property
    def ratio(self) -> str:
        """'2:4' or '1:2'.

        >>> FORMATS['tf32'].ratio
        '1:2'
        """
        return f"{self.keep}:{self.chunk}"

    def code(self, kept: tuple[int, ...]) -> int:
        """The metadata nibble of a chunk keeping the elements at ``kept`` (rising).

        Each kept element is ``4 // chunk`` 16-bit-wide halves (tf32: 2); their 2-bit
        indices fill the nibble from bit 0 (reading 1 of the module docstring).

        >>> FORMATS['f16'].code((1, 3)), bin(FORMATS['tf32'].code((1,)))
        (13, '0b1110')
        """
        sub = NIBBLE // self.chunk
        halves = [p * sub + s for p in kept for s in range(sub)]
        return sum(h << (2 * i) for i, h in enumerate(halves))


# The hardware facts, one row per A type class (module docstring: ISA sections, readings).
FORMATS = {
    "f16": SparseFormat(
        "f16", ("f16", "bf16"), 4, 2, 32, (0, 1),
        Layout.parse("((2,2,8,4),(16,2)):((1024,0,1,16),(64,8))"),
    ),
    "tf32": SparseFormat(
        "tf32", ("tf32",), 2, 1, 16, (0, 1),
        Layout.parse("((2,2,8,4),(8,2)):((512,0,1,16),(64,8))"),
    ),
    "8bit": SparseFormat(
        "8bit", ("e4m3", "e5m2", "s8", "u8"), 4, 2, 64, (0,),
        Layout.parse("((2,2,8,4),32):((8,2048,1,16),64)"),
    ),
}  # fmt: skip
ROWS = 64  # every wgmma A tile is 64 rows


def format_of_type(a_type: str) -> SparseFormat:
    """The sparse format of an A type name.

    >>> format_of_type('e5m2').name
    '8bit'
    """
    for fmt in FORMATS.values():
        if a_type in fmt.types:
            return fmt
    known = sorted(t for f in FORMATS.values() for t in f.types)
    raise AtomError(f"wgmma.mma_async.sp has no A type {a_type!r}; it takes {known}")


def sparse_format(atom) -> SparseFormat | None:
    """The format of a sparse GMMA atom (or Operation with traits), None if dense.

    >>> from cutemma.mma import make_mma_atom
    >>> sparse_format(make_mma_atom('SM90_SPARSE_64x8x16_F32TF32TF32_RS_TN')).ratio
    '1:2'
    >>> sparse_format(make_mma_atom('SM90_64x8x16_F32F16F16_RS')) is None
    True
    """
    op = getattr(atom, "op", atom)
    if not op.ptx.startswith("wgmma.mma_async.sp."):
        return None
    # wgmma.mma_async.sp.sync.aligned.m64nNkK.dtype.atype.btype[.satfinite]
    return format_of_type(op.ptx.split(".")[7])


# --- the pattern -----------------------------------------------------------------------


def _chunks(A, fmt: SparseFormat) -> np.ndarray:
    A = np.asarray(A)
    k = A.shape[-1]
    if k % fmt.chunk:
        raise AtomError(f"A has K={k}, not a multiple of the {fmt.name} chunk {fmt.chunk}")
    return A.reshape(*A.shape[:-1], k // fmt.chunk, fmt.chunk)


def check_pattern(A, fmt: SparseFormat, who: str = "sparse A") -> None:
    """Raise AtomError unless every chunk of ``A`` (..., M, K) has <= ``keep`` nonzeros.

    >>> import numpy as np
    >>> check_pattern(np.ones((64, 16)), FORMATS['tf32'], 'SM90_SPARSE_64x8x16')
    Traceback (most recent call last):
    ...
    cutemma.errors.AtomError: SM90_SPARSE_64x8x16: A breaks the 1:2 pattern at row 0, K 0..1 (2 nonzeros); a sparse tf32 A keeps at most 1 nonzero in every 2 consecutive K elements of a row
    """
    nz = (_chunks(A, fmt) != 0).sum(axis=-1)
    bad = np.argwhere(nz > fmt.keep)
    if len(bad):
        *_, row, c = bad[0].tolist()
        where = tuple(bad[0].tolist())
        raise AtomError(
            f"{who}: A breaks the {fmt.ratio} pattern at row {row}, K {c * fmt.chunk}.."
            f"{c * fmt.chunk + fmt.chunk - 1} ({nz[where]} nonzeros); a sparse "
            f"{'/'.join(fmt.types)} A keeps at most {fmt.keep} nonzero"
            f"{'s' if fmt.keep > 1 else ''} in every {fmt.chunk} consecutive K elements of a row"
        )


def _kept_positions(chunks: np.ndarray, fmt: SparseFormat) -> np.ndarray:
    """(..., C, keep) rising positions: the nonzeros, padded with the first zeros."""
    nz = chunks != 0
    # sort key: nonzeros first, then by position; take keep, then sort by position
    order = np.argsort(~nz, axis=-1, kind="stable")[..., : fmt.keep]
    return np.sort(order, axis=-1)


def compress(A, fmt: SparseFormat) -> tuple[np.ndarray, np.ndarray]:
    """(values, index) of a structured-sparse A (..., M, K).

    ``values`` (..., M, K * keep // chunk) are the kept elements, in rising K order;
    ``index`` (..., M, K // chunk, keep) their positions in each chunk (rising; a chunk
    with fewer nonzeros keeps some zeros, so every index pair is valid).

    >>> import numpy as np
    >>> v, i = compress(np.array([[0., 7., 0., 0.]]), FORMATS['8bit'])
    >>> v.tolist(), i.tolist()
    ([[0.0, 7.0]], [[[0, 1]]])
    """
    check_pattern(A, fmt)
    chunks = _chunks(A, fmt)
    index = _kept_positions(chunks, fmt)
    values = np.take_along_axis(chunks, index, axis=-1)
    return values.reshape(*values.shape[:-2], -1), index


def decompress(values, index, fmt: SparseFormat) -> np.ndarray:
    """The dense A that ``compress`` came from.

    >>> import numpy as np
    >>> decompress(np.array([[5.]]), np.array([[[1]]]), FORMATS['tf32']).tolist()
    [[0.0, 5.0]]
    """
    values, index = np.asarray(values), np.asarray(index)
    vals = values.reshape(*index.shape)
    dense = np.zeros((*index.shape[:-1], fmt.chunk), dtype=values.dtype)
    np.put_along_axis(dense, index, vals, axis=-1)
    return dense.reshape(*dense.shape[:-2], -1)


def random_pattern(A, fmt: SparseFormat, rng: np.random.Generator) -> np.ndarray:
    """``A`` with all but ``keep`` random elements of every chunk set to zero.

    >>> import numpy as np
    >>> a = random_pattern(np.ones((64, 32)), FORMATS['f16'], np.random.default_rng(0))
    >>> int(a.sum()), a[0].reshape(8, 4).sum(axis=1).tolist() == [2.0] * 8
    (1024, True)
    """
    chunks = _chunks(A, fmt)
    ranks = rng.random(chunks.shape).argsort(axis=-1).argsort(axis=-1)
    out = np.where(ranks < fmt.keep, chunks, np.zeros_like(chunks))
    return out.reshape(np.asarray(A).shape)


# --- what each thread passes ----------------------------------------------------------


def metadata_words(index, fmt: SparseFormat) -> np.ndarray:
    """The 128 uint32 ``sp-meta`` words, thread by thread, for chunk positions ``index``
    (64, K // chunk, keep) as :func:`compress` returns them.

    >>> import numpy as np
    >>> words = metadata_words(np.tile([0, 1], (64, 8, 1)), FORMATS['f16'])
    >>> words.shape, hex(int(words[0]))
    ((128,), '0x44444444')
    """
    index = np.asarray(index)
    want = (ROWS, fmt.k // fmt.chunk, fmt.keep)
    if index.shape != want:
        raise AtomError(f"metadata of a {fmt.name} sparse A: index has shape {index.shape}; "
                        f"expected {want} (rows, chunks, kept)")  # fmt: skip
    codes = np.zeros(index.shape[:2], dtype=np.uint64)
    for j in range(fmt.keep):  # code() on every chunk at once
        sub = NIBBLE // fmt.chunk
        for s in range(sub):
            shift = 2 * (j * sub + s)
            codes |= ((index[..., j] * sub + s).astype(np.uint64)) << np.uint64(shift)
    table = _meta_table(fmt)  # (128, V) offsets m + 64 k
    values = table.shape[1]
    bits = WORD_BITS // values  # per dense element
    words = np.zeros(table.shape[0], dtype=np.uint64)
    for v in range(0, values, fmt.chunk):
        m, k = table[:, v] % ROWS, table[:, v] // ROWS
        words |= codes[m, k // fmt.chunk] << np.uint64(v * bits)
    return words.astype(np.uint32)


def contributors(fmt: SparseFormat, sp_sel: int = 0) -> list[int]:
    """The threads whose ``sp-meta`` the instruction reads for selector ``sp_sel``: lanes
    2 sp_sel and 2 sp_sel + 1 of every quad (f16, tf32), every thread (8-bit).

    >>> contributors(FORMATS['f16'], 1)[:4], len(contributors(FORMATS['8bit']))
    ([2, 3, 6, 7], 128)
    """
    if sp_sel not in fmt.selectors:
        raise AtomError(f"sp_sel={sp_sel}: a {fmt.name} sparse A takes {fmt.selectors}")
    if fmt.selectors == (0,):
        return list(range(128))
    return [t for t in range(128) if (t % 4) // 2 == sp_sel]


def decode_metadata(words, fmt: SparseFormat, sp_sel: int = 0) -> np.ndarray:
    """The chunk positions (64, K // chunk, keep) the metadata words say, read from the
    :func:`contributors` only (our reading of the hardware; inverse of ``metadata_words``).

    >>> import numpy as np
    >>> index = np.tile([1, 3], (64, 16, 1))
    >>> bool((decode_metadata(metadata_words(index, FORMATS['8bit']), FORMATS['8bit']) == index).all())
    True
    """
    words = np.asarray(words).astype(np.uint64)
    table = _meta_table(fmt)
    values = table.shape[1]
    bits, sub = WORD_BITS // values, NIBBLE // fmt.chunk
    index = np.full((ROWS, fmt.k // fmt.chunk, fmt.keep), -1)
    for t in contributors(fmt, sp_sel):
        for v in range(0, values, fmt.chunk):
            m, k = table[t, v] % ROWS, table[t, v] // ROWS
            code = int(words[t] >> np.uint64(v * bits)) & 0xF
            halves = [(code >> (2 * i)) & 3 for i in range(fmt.keep * sub)]
            index[m, k // fmt.chunk] = [h // sub for h in halves[::sub]]
    if (index < 0).any():
        raise AtomError(f"{fmt.name} metadata layout leaves chunks without sp-meta bits")
    return index


def _meta_table(fmt: SparseFormat) -> np.ndarray:
    from cutemma.mma.traits import tv_table

    table = tv_table(fmt.meta)
    t, v = table.shape
    k = table // ROWS
    # each chunk is `chunk` consecutive values along K, starting at a chunk boundary
    starts = k[:, :: fmt.chunk]
    ok = (starts % fmt.chunk == 0).all() and all(
        (k[:, i :: fmt.chunk] == starts + i).all() for i in range(fmt.chunk)
    )
    if not ok or (t, v * NIBBLE // fmt.chunk) != (128, WORD_BITS):
        raise AtomError(f"metadata layout {fmt.meta} of {fmt.name} is not whole chunks of a word")
    return table


def compressed_tv_layout(tv: Layout, fmt: SparseFormat, rows: int = ROWS) -> Layout:
    """The (thread, value) layout of the packed A registers, from the dense one.

    A register-sourced sparse A's dense layout (``m + rows * k`` over the logical tile)
    gives each register whole chunks, consecutive along K in its first value mode;
    packing keeps ``keep`` of each ``chunk``, so K offsets scale by keep/chunk and the
    first value mode shrinks by the same. The result indexes the packed
    rows x (K * keep / chunk) tile.

    >>> str(compressed_tv_layout(Layout.parse('((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))'),
    ...                          FORMATS['f16']))
    '((4,8,4),(2,2,2)):((128,1,16),(64,8,512))'
    """
    shape, stride = tv.shape, tv.stride
    vs, vd = list(flatten(shape[1])), list(flatten(stride[1]))
    if vd[0] != rows or vs[0] % fmt.chunk:
        raise AtomError(
            f"sparse A layout {tv}: its first value mode must run along K (stride {rows}) over "
            f"whole chunks of {fmt.chunk}"
        )

    def pack(d: int, first: bool = False) -> int:
        m, k = d % rows, d // rows
        if not first and k * fmt.keep % fmt.chunk:
            raise AtomError(f"sparse A layout {tv}: stride {d} is not a whole number of chunks")
        return m + rows * (k if first else k * fmt.keep // fmt.chunk)

    ts, td = flatten(shape[0]), flatten(stride[0])
    vs[0] = vs[0] * fmt.keep // fmt.chunk
    vd = [pack(vd[0], True)] + [pack(d) for d in vd[1:]]
    return Layout((tuple(ts), tuple(vs)), (tuple(pack(d) for d in td), tuple(vd)))


def sparse_operands(atom, A) -> tuple[np.ndarray, np.ndarray]:
    """What a sparse GMMA atom reads for the dense 2:4 tile ``A`` (64, K): the packed
    64 x K/2 tile (``m + k * 64`` order as every tile) and the 128 ``sp-meta`` words.

    >>> import numpy as np
    >>> from cutemma.mma import make_mma_atom
    >>> atom = make_mma_atom('SM90_SPARSE_64x8x64_S32S8S8_RS_TN')
    >>> packed, meta = sparse_operands(atom, np.zeros((64, 64), int))
    >>> packed.shape, meta.dtype.name
    ((64, 32), 'uint32')
    """
    fmt = sparse_format(atom)
    if fmt is None:
        raise AtomError(f"{atom.name} is not a sparse GMMA atom")
    check_pattern(A, fmt, atom.name)
    values, index = compress(A, fmt)
    return values, metadata_words(index, fmt)
