"""MmaAtom: an Operation joined with its Traits, with fragments and CPU emulation.

Fragments are numpy arrays shaped (threads, values): row t holds what logical
thread t passes to the instruction, in the order of the traits' value mode.
``emulate`` scatters the A, B, C fragments through the thread-value layouts to
the logical (M,K), (N,K), (M,N) tiles, computes D with the instruction's
arithmetic, and gathers D back into a fragment.

>>> import numpy as np
>>> from cutemma.mma import make_mma_atom
>>> atom = make_mma_atom('SM80_16x8x8_F32F16F16F32_TN')
>>> a, b, c = atom.make_fragment_A(), atom.make_fragment_B(), atom.make_fragment_C()
>>> a[:], b[:], c[:] = 1, 2, 0.5
>>> float(atom.emulate(a, b, c)[0, 0])      # 8 products of 1*2, plus 0.5
16.5
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from cutemma.display import RichDisplay
from cutemma.errors import AtomError
from cutemma.mma.operation import Operation
from cutemma.mma.traits import Traits, tv_table
from cutemma.mma.types import NumericType, numeric_type


@dataclass(frozen=True, repr=False)
class MmaAtom(RichDisplay):
    """One MMA instruction as a Python object: ``.op`` + ``.traits``.

    >>> from cutemma.mma import make_mma_atom
    >>> str(make_mma_atom('SM70_8x8x4_F32F16F16F32_NT').tv_layout_A)
    '((4,2),4):((8,4),1)'
    """

    op: Operation
    traits: Traits

    # --- the traits, under CuTe's names -------------------------------------
    @property
    def shape_mnk(self) -> tuple[int, int, int]:
        """Logical (M, N, K) of one instruction."""
        return self.traits.shape_mnk

    @property
    def thr_id(self):
        """Logical thread id -> thread index in the warp/warpgroup."""
        return self.traits.thr_id

    @property
    def tv_layout_A(self):
        """(T, V) -> m + k*M."""
        return self.traits.tv_layout_A

    @property
    def tv_layout_B(self):
        """(T, V) -> n + k*N."""
        return self.traits.tv_layout_B

    @property
    def tv_layout_C(self):
        """(T, V) -> m + n*M (also D's layout)."""
        return self.traits.tv_layout_C

    @property
    def val_type_A(self) -> NumericType:
        return self.traits.val_type_A

    @property
    def val_type_B(self) -> NumericType:
        return self.traits.val_type_B

    @property
    def val_type_C(self) -> NumericType:
        return self.traits.val_type_C

    @property
    def val_type_D(self) -> NumericType:
        return self.traits.val_type_D

    @property
    def name(self) -> str:
        return self.op.name

    # --- printing (CuTe's print(MMA_Atom), cute/atom/mma_atom.hpp) ------------
    def __str__(self) -> str:
        """CuTe's ``print(MMA_Atom)`` without the underscores of static ints, the header
        naming the operation (C++ prints the bare word ``MMA_Atom``).

        >>> from cutemma.mma import make_mma_atom
        >>> print(make_mma_atom('SM70_8x8x4_F32F16F16F32_NT'))
        MMA_Atom SM70_8x8x4_F32F16F16F32_NT
          ThrID:      (4,2):(1,16)
          Shape_MNK:  (8,8,4)
          LayoutA_TV: ((4,2),4):((8,4),1)
          LayoutB_TV: ((4,2),4):((8,4),1)
          LayoutC_TV: ((2,2,2),(2,2,2)):((1,16,4),(8,2,32))
        """
        mnk = ",".join(str(x) for x in self.shape_mnk)
        return "\n".join(
            [
                f"MMA_Atom {self.name}",
                f"  ThrID:      {self.thr_id}",
                f"  Shape_MNK:  ({mnk})",
                f"  LayoutA_TV: {self.tv_layout_A}",
                f"  LayoutB_TV: {self.tv_layout_B}",
                f"  LayoutC_TV: {self.tv_layout_C}",
            ]
        )

    def __repr__(self) -> str:
        return self.__str__()

    # --- fragments -----------------------------------------------------------
    def make_fragment_A(self) -> np.ndarray:
        """Zeros shaped (threads, values of A), in A's host dtype.

        >>> from cutemma.mma import make_mma_atom
        >>> make_mma_atom('SM80_16x8x16_F32BF16BF16F32_TN').make_fragment_A().shape
        (32, 8)
        """
        return _zeros(self.tv_layout_A, self.val_type_A)

    def make_fragment_B(self) -> np.ndarray:
        """Zeros shaped (threads, values of B), in B's host dtype.

        >>> from cutemma.mma import make_mma_atom
        >>> make_mma_atom('SM80_16x8x16_F32BF16BF16F32_TN').make_fragment_B().shape
        (32, 4)
        """
        return _zeros(self.tv_layout_B, self.val_type_B)

    def make_fragment_C(self) -> np.ndarray:
        """Zeros shaped (threads, values of C), in C's host dtype (D has the same shape).

        >>> from cutemma.mma import make_mma_atom
        >>> make_mma_atom('SM70_8x8x4_F32F16F16F32_TN').make_fragment_C().shape
        (8, 8)
        """
        return _zeros(self.tv_layout_C, self.val_type_C)

    # --- fragments <-> logical tiles ------------------------------------------
    def partition_A(self, a_mk) -> np.ndarray:
        """Fragment (T, V) holding the (M, K) matrix ``a_mk`` as the instruction reads it.

        >>> import numpy as np
        >>> from cutemma.mma import make_mma_atom
        >>> atom = make_mma_atom('SM80_16x8x8_F16F16F16F16_TN')
        >>> A = np.arange(16 * 8).reshape(16, 8)
        >>> atom.partition_A(A)[1].tolist()     # thread 1: row 0 at k = 2, 3, then row 8
        [2, 3, 66, 67]
        """
        return _gather(self.tv_layout_A, a_mk, self.shape_mnk[0], self.shape_mnk[2], "A")

    def partition_B(self, b_nk) -> np.ndarray:
        """Fragment (T, V) holding the (N, K) matrix ``b_nk``.

        >>> import numpy as np
        >>> from cutemma.mma import make_mma_atom
        >>> atom = make_mma_atom('SM80_16x8x8_F16F16F16F16_TN')
        >>> atom.partition_B(np.arange(64).reshape(8, 8))[5].tolist()
        [10, 11]
        """
        return _gather(self.tv_layout_B, b_nk, self.shape_mnk[1], self.shape_mnk[2], "B")

    def partition_C(self, c_mn) -> np.ndarray:
        """Fragment (T, V) holding the (M, N) matrix ``c_mn`` (C or D).

        >>> import numpy as np
        >>> from cutemma.mma import make_mma_atom
        >>> atom = make_mma_atom('SM70_8x8x4_F16F16F16F16_TN')
        >>> atom.partition_C(np.arange(64).reshape(8, 8))[1].tolist()
        [8, 9, 10, 11, 12, 13, 14, 15]
        """
        return _gather(self.tv_layout_C, c_mn, self.shape_mnk[0], self.shape_mnk[1], "C")

    def tile_A(self, frag) -> np.ndarray:
        """The (M, K) matrix a fragment of A describes (inverse of ``partition_A``).

        >>> import numpy as np
        >>> from cutemma.mma import make_mma_atom
        >>> atom = make_mma_atom('SM80_16x8x16_F32F16F16F32_TN')
        >>> A = np.arange(256.0).reshape(16, 16)
        >>> bool((atom.tile_A(atom.partition_A(A)) == A).all())
        True
        """
        return _scatter(self.tv_layout_A, frag, self.shape_mnk[0], self.shape_mnk[2], "A")

    def tile_B(self, frag) -> np.ndarray:
        """The (N, K) matrix a fragment of B describes."""
        return _scatter(self.tv_layout_B, frag, self.shape_mnk[1], self.shape_mnk[2], "B")

    def tile_C(self, frag) -> np.ndarray:
        """The (M, N) matrix a fragment of C or D describes."""
        return _scatter(self.tv_layout_C, frag, self.shape_mnk[0], self.shape_mnk[1], "C")

    # --- arithmetic -----------------------------------------------------------
    def emulate(self, a, b, c, scale_d: int = 1, scale_A=None, scale_B=None) -> np.ndarray:
        """D = A*B + C for fragments a, b, c, with the instruction's arithmetic.

        Inputs are rounded to their formats (``NumericType.quantize``); products
        are exact and summed exactly (float64 / int64 / complex128), then rounded
        once to D's type. Floating-point tensor cores add with at least this
        precision, so results agree within D's rounding. Integer D wraps to
        32 bits, or saturates where the op has ``.satfinite``; b1 ops count
        ``popc(a XOR b)`` or ``popc(a AND b)``. Modifiers ``'neg.a'`` / ``'neg.b'``
        (wgmma imm-scale-a/b = -1) negate A / B; ``scale_d=0`` (wgmma's scale-d
        predicate false) drops C: D = A*B. Block-scaled ops take the scale factors as
        (M, K/vs) and (N, K/vs) tiles (see ``emulate_tiles``). Returns D's fragment.

        >>> import numpy as np
        >>> from cutemma.mma import make_mma_atom
        >>> atom = make_mma_atom('SM80_16x8x32_S32S8S8S32_TN_SATURATE')
        >>> a = np.full((32, 16), 127); b = np.full((32, 8), 127); c = np.full((32, 4), 2**31 - 100)
        >>> int(atom.emulate(a, b, c)[0, 0]) == 2**31 - 1
        True
        """
        A = self.val_type_A.quantize(self.tile_A(a))
        B = self.val_type_B.quantize(self.tile_B(b))
        C = self.val_type_C.quantize(self.tile_C(c))
        return self.partition_C(self.emulate_tiles(A, B, C, scale_d, scale_A, scale_B))

    @property
    def block_scale(self) -> tuple[int, NumericType] | None:
        """(scale vector size, scale-factor type) of a block-scaled op, else None.

        One scale factor covers ``vs`` consecutive K elements of a row of A (or of B):
        PTX ISA ``.block_scale.scale_vec::NX`` has N factors per row of the K extent.

        >>> from cutemma.mma import make_mma_atom
        >>> vs, sf = make_mma_atom('SM120_16x8x64_F32E2M1E2M1F32UE4M3_TN_VS16').block_scale
        >>> vs, sf.name
        (16, 'ue4m3')
        """
        m = re.search(r"scale_vec::(\d)X", self.op.ptx)
        if not m:
            return None
        sf = self.op.param("sf_type") or self.op.ptx.rsplit(".", 1)[-1]
        return self.shape_mnk[2] // int(m.group(1)), numeric_type(sf)

    @property
    def sparsity(self):
        """The :class:`cutemma.mma.sparse.SparseFormat` of a sparse GMMA atom, else None.

        >>> from cutemma.mma import make_mma_atom
        >>> make_mma_atom('SM90_SPARSE_64x8x32_F16F16F16_SS').sparsity.ratio
        '2:4'
        """
        from cutemma.mma.sparse import sparse_format

        return sparse_format(self.op)

    def emulate_tiles(self, A, B, C, scale_d: int = 1, scale_A=None, scale_B=None) -> np.ndarray:
        """D(M,N) = A(M,K) @ B(N,K)^T + C(M,N) with the instruction's arithmetic (see ``emulate``).

        Leading batch dimensions broadcast (numpy rules), so many instances run in one call.
        Block-scaled ops take ``scale_A`` (M, K/vs) and ``scale_B`` (N, K/vs) factors
        (rounded to the scale type; omitted means 1): each A[m, k] is multiplied by
        scale_A[m, k // vs] and each B[n, k] by scale_B[n, k // vs] before the products.
        A sparse GMMA atom takes the dense logical A, which must have the 2:4 (tf32 1:2)
        pattern along K the instruction can encode (``cutemma.mma.sparse``); otherwise
        AtomError.

        >>> import numpy as np
        >>> from cutemma.mma import make_mma_atom
        >>> atom = make_mma_atom('SM80_8x8x128_S32U1U1S32_TN_XORPOPC')
        >>> A = np.ones((8, 128), int); B = np.zeros((8, 128), int)
        >>> int(atom.emulate_tiles(A, B, np.zeros((8, 8)))[0, 0])
        128
        """
        A = self.val_type_A.quantize(A)
        B = self.val_type_B.quantize(B)
        C = self.val_type_C.quantize(C)
        C = C if scale_d else np.zeros_like(C)
        fmt = self.sparsity
        if fmt is not None:  # PTX ISA 9.7.15.6.1: at most keep nonzeros per chunk of K
            from cutemma.mma.sparse import check_pattern

            check_pattern(A, fmt, self.name)
        mods = self.op.modifiers
        if "gauss" in mods:
            return _gauss_mma(A, B, C)
        # PTX ISA 9.7.15.5.2: imm-scale-a/b = -1 negates every element of A / B.
        A = -A if "neg.a" in mods else A
        B = -B if "neg.b" in mods else B
        if scale_A is not None or scale_B is not None:
            A, B = self._apply_block_scales(A, B, scale_A, scale_B)
        if "xor.popc" in mods:
            acc = (A[..., :, None, :] ^ B[..., None, :, :]).sum(axis=-1)
        elif "and.popc" in mods:
            acc = (A[..., :, None, :] & B[..., None, :, :]).sum(axis=-1)
        else:
            acc = A @ np.swapaxes(B, -1, -2)  # leading batch dims broadcast
        return _round_accumulator(acc + C, self.val_type_D, "satfinite" in mods)

    def _apply_block_scales(self, A, B, scale_A, scale_B):
        spec = self.block_scale
        if spec is None:
            raise AtomError(
                f"{self.name} is not block-scaled: scale_A/scale_B apply only to "
                "kind::mxf8f6f4 / mxf4 / mxf4nvf4 ops"
            )
        vs, sf = spec
        out = []
        for x, s, which in ((A, scale_A, "A"), (B, scale_B, "B")):
            if s is None:
                out.append(x)
                continue
            s = np.asarray(s)
            want = x.shape[-1] // vs
            if s.shape[-1] != want or s.shape[-2] != x.shape[-2]:
                raise AtomError(
                    f"{self.name}: scale_{which} has shape {s.shape}; expected "
                    f"({x.shape[-2]}, {want}): one factor per {vs} K elements of each row"
                )
            # products of a narrow float and a power-of-two or e4m3 factor are exact in float64
            out.append(x * np.repeat(sf.quantize(s), vs, axis=-1))
        return out[0], out[1]


def _gauss_mma(A: np.ndarray, B: np.ndarray, C: np.ndarray) -> np.ndarray:
    """CuTe's GaussComplex MMA: three real products accumulated into t0, t1, t2."""
    ar, ai, br, bi = A.real, A.imag, B.real, B.imag
    out = np.zeros(C.shape, dtype=C.dtype)
    out["t0"] = C["t0"] + ar @ br.T
    out["t1"] = C["t1"] + ai @ bi.T
    out["t2"] = C["t2"] + (ar + ai) @ (br + bi).T
    return out


def _round_accumulator(x: np.ndarray, t: NumericType, saturate: bool) -> np.ndarray:
    if t.kind in ("int", "bits"):
        x = np.asarray(x, dtype=np.int64)
        return np.clip(x, t.min, t.max) if saturate else t.quantize(x)
    return t.quantize(x)


def _zeros(layout, t: NumericType) -> np.ndarray:
    return np.zeros(tv_table(layout).shape, dtype=t.host)


def _check_tile(x, rows: int, cols: int, which: str) -> np.ndarray:
    x = np.asarray(x)
    if x.shape != (rows, cols):
        raise AtomError(
            f"{which} tile has shape {x.shape}; this atom's {which} is ({rows}, {cols})"
        )
    return x


def _gather(layout, tile, rows: int, cols: int, which: str) -> np.ndarray:
    tile = _check_tile(tile, rows, cols, which)
    # Layout offsets are column-major (row + col*rows): flatten in Fortran order.
    return tile.reshape(-1, order="F")[tv_table(layout)]


def _scatter(layout, frag, rows: int, cols: int, which: str) -> np.ndarray:
    idx = tv_table(layout)
    frag = np.asarray(frag)
    if frag.shape != idx.shape:
        raise AtomError(
            f"{which} fragment has shape {frag.shape}; this atom's {which} fragment is {idx.shape} "
            "(threads, values)"
        )
    flat = np.zeros(rows * cols, dtype=frag.dtype)
    flat[idx.reshape(-1)] = frag.reshape(-1)
    return flat.reshape((rows, cols), order="F")
