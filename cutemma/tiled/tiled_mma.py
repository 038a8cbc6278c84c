"""TiledMMA and ThrMMA: atoms laid out over threads and values, and tensors partitioned among threads.

Semantics follow CuTe's ``TiledMMA`` (``include/cute/atom/mma_atom.hpp``): the thread layout
``thr_layout_vmnk = tiled_product(atom.thr_id, atom_layout_mnk)`` names every thread by
(atom thread V, atom position M, N, K); a tensor is first permuted by the permutation tiles,
cut into atom-sized tiles, each tile re-indexed by the atom's (thread, value) layout, and the
tiles dealt out to the atom positions.

The TV layouts (``tv_layout_A/B/C_tiled``, CuTe's ``get_layoutA/B/C_TV``) are indexed by
thread index, built exactly as C++ builds them: ``thr_layout_vmnk`` completed by its
complement and inverted. When the threads are not 0..size-1 (a lone SM70 quadpair atom:
threads 0-3 and 16-19) the thread mode spans the completed range (0..31) and the threads
outside the TiledMMA get the rows CuTe gives them (aliases of real threads' rows);
``get_slice(t)`` takes any such index, as C++ does (``get_flat_coord``).

>>> from cutemma.mma import make_mma_atom
>>> t = make_tiled_mma("SM70_8x8x4_F32F16F16F32_NT", Layout((2, 2), (2, 1)))
>>> t.size, t.tile_size_mnk
(32, (16, 16, 4))
"""

from __future__ import annotations

import operator
from functools import cached_property

from cutemma.display import RichDisplay
from cutemma.errors import LayoutError, TiledMmaError
from cutemma.layout import algebra
from cutemma.layout.int_tuple import flatten, is_int, is_tuple
from cutemma.layout.layout import Layout, _modes, append, make_layout, size
from cutemma.layout.swizzle import ComposedLayout
from cutemma.tensor import CoordinateEngine, Tensor, packed_text

# which of (M, N, K) each operand spans, as indices into shape_mnk
_OPERAND_MODES = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}


def _as_atom(x, **params):
    from cutemma.mma.atom import MmaAtom
    from cutemma.mma.catalog import make_mma_atom

    return x if isinstance(x, MmaAtom) else make_mma_atom(x, **params)


def _as_atom_layout(x) -> Layout:
    if isinstance(x, Layout):
        layout = x
    else:
        try:
            layout = Layout(x)
        except LayoutError:
            raise TiledMmaError(
                f"atom layout {x!r}: atom_layout_mnk must be an int-tuple or a Layout, of whole "
                "numbers >= 1, e.g. (2, 2, 1) or Layout((2, 2), (2, 1))"
            ) from None
    if 0 in flatten(layout.shape):
        raise TiledMmaError(
            f"atom layout {layout} has an extent 0: every mode needs at least one atom, "
            "e.g. (2, 1, 1)"
        )
    _check_injective(layout)
    r = len(layout) if is_tuple(layout.shape) else 1
    if r > 3:
        raise TiledMmaError(
            f"atom_layout_mnk {layout} has rank {r}; it must have at most 3 modes (M, N, K)"
        )
    if r < 3:
        layout = (
            append(layout, Layout(1, 0), 3)
            if is_tuple(layout.shape)
            else append(Layout((layout.shape,), (layout.stride,)), Layout(1, 0), 3)
        )
    return layout


# Checks that must look at every index (a layout that is not provably injective from its
# strides) stop here, naming the limit, instead of taking minutes and gigabytes.
CHECK_LIMIT = 1 << 24


def _digits_injective(layout: Layout) -> bool:
    """Proof of injectivity from the strides alone: sorted by |stride|, every stride is at least
    the span of the modes below it (a mixed-radix number system), so distinct coordinates
    give distinct offsets. False means "not proved", not "not injective"."""
    shapes, strides = layout.flat()
    modes = sorted((abs(d), s) for s, d in zip(shapes, strides) if s != 1)
    span = 1
    for d, s in modes:
        if d < span:
            return False
        span = d * s
    return True


def _offsets_checked(layout: Layout, what: str):
    """Every offset of ``layout`` (numpy), or a TiledMmaError naming CHECK_LIMIT."""
    from cutemma.layout.offsets import offsets

    n = size(layout)
    if n > CHECK_LIMIT:
        raise TiledMmaError(
            f"{what} {layout} has {n} indices: checking it index by index is limited to "
            f"{CHECK_LIMIT} (cutemma.tiled.tiled_mma.CHECK_LIMIT); give it strides whose "
            "sorted magnitudes each cover the modes below (e.g. a compact layout), which proves "
            "it without looking at every index"
        )
    return offsets(layout)


def _check_injective(layout: Layout) -> None:
    """Distinct atoms get distinct thread groups: the atom layout must be injective."""
    import numpy as np

    if _digits_injective(layout):
        return
    n = size(layout)
    reached = len(np.unique(_offsets_checked(layout, "atom layout")))
    if reached != n:
        raise TiledMmaError(
            f"atom layout {layout} is not injective: its {n} atoms reach only {reached} "
            "distinct thread groups, so threads would be shared; use strides that give each "
            "atom its own index, e.g. the compact Layout((2, 2)) or Layout((2, 2), (2, 1))"
        )


def _check_bijection(layout: Layout, what: str) -> None:
    import numpy as np

    n = size(layout)
    image = np.sort(_offsets_checked(layout, what))
    if not np.array_equal(image, np.arange(n)):
        raise TiledMmaError(
            f"{what} {layout} is not a permutation of 0..{n - 1}: it reaches {image[:8].tolist()}"
            f"{'...' if n > 8 else ''}; a permutation tile must be a bijection"
        )


def _as_permutation(p, i: int):
    if p is None:
        return None
    if is_int(p):
        if p < 1:
            raise TiledMmaError(f"permutation_mnk[{i}] = {p}: a tile size must be >= 1")
        return Layout(p)
    if isinstance(p, Layout):
        _check_bijection(p, f"permutation_mnk[{i}]")
        return p
    raise TiledMmaError(f"permutation_mnk[{i}] must be None, an int or a Layout, got {p!r}")


class TiledMma(RichDisplay):
    """Atoms tiled over threads (``atom_layout_mnk``) and values (``permutation_mnk``).

    ``tv_layout_A_tiled`` etc. are CuTe's ``get_layoutA/B/C_TV``: (thread, value) -> offset in
    the tile (A: m + k*M, B: n + k*N, C: m + n*M over ``tile_size_mnk``).

    >>> t = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2))
    >>> t.size, t.tile_size_mnk, str(t.thr_layout_vmnk)
    (128, (32, 16, 16), '(32,2,2,1):(1,32,64,0)')
    """

    def __init__(self, atom, atom_layout_mnk: Layout, permutation_mnk: tuple):
        if not hasattr(atom, "shape_mnk") or not hasattr(atom, "thr_id"):
            raise TiledMmaError(
                f"TiledMma: expected an MMA atom first, got {atom!r}; build one with "
                "make_mma_atom(name), or call make_tiled_mma(name, atom_layout, permutation)"
            )
        if not isinstance(atom_layout_mnk, Layout) or len(_modes(atom_layout_mnk)) != 3:
            raise TiledMmaError(
                f"TiledMma: atom_layout_mnk={atom_layout_mnk!r} must be a rank-3 (M, N, K) "
                "Layout; make_tiled_mma builds it from a tuple such as (2, 2, 1)"
            )
        if not isinstance(permutation_mnk, tuple) or len(permutation_mnk) != 3:
            raise TiledMmaError(
                f"TiledMma: permutation_mnk={permutation_mnk!r} must be a 3-tuple of None, "
                "ints or Layouts (one per M, N, K)"
            )
        self.atom = atom
        self.atom_layout_mnk = atom_layout_mnk
        self.permutation_mnk = permutation_mnk
        for i, p in enumerate(permutation_mnk):
            if p is None:
                continue
            need = atom.shape_mnk[i] * size(atom_layout_mnk[i])
            if size(p) % need != 0:
                raise TiledMmaError(
                    f"permutation_mnk[{i}] {p} has size {size(p)}, which is not a multiple of "
                    f"the atom extent x atom count {atom.shape_mnk[i]} x "
                    f"{size(atom_layout_mnk[i])} = {need}"
                )

    # ------------------------------------------------------------------ threads
    @cached_property
    def thr_layout_vmnk(self) -> Layout:
        """(V, M, N, K) -> thread index: atom thread V of the atom at (M, N, K)."""
        return algebra.tiled_product(self.atom.thr_id, self.atom_layout_mnk)

    @property
    def size(self) -> int:
        """Number of threads."""
        return size(self.thr_layout_vmnk)

    @cached_property
    def _thr_coords(self) -> dict:
        """thread index -> its (v, m, n, k) coordinate, for the threads of ``thr_layout_vmnk``."""
        lay = self.thr_layout_vmnk
        return {lay(i): self.thr_coord(lay(i)) for i in range(size(lay))}

    def thr_coord(self, thr_idx: int) -> tuple[int, int, int, int]:
        """The (v, m, n, k) coordinate of a thread index, as CuTe's ``get_flat_coord``.

        Each leaf of ``thr_layout_vmnk`` reads ``(thr_idx // stride) % extent`` (0 for an
        extent of 1), and each of the four modes turns its leaves into one index. On the
        threads of the layout this inverts it; any other index of the TV layouts' thread
        range (threads 4-15 of a lone SM70 quadpair atom) gets the coordinate CuTe gives it,
        the one its TV rows alias.

        >>> make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2)).thr_coord(97)
        (1, 1, 1, 0)
        >>> make_tiled_mma("SM70_8x8x4_F32F16F16F32_NT").thr_coord(17)
        (5, 0, 0, 0)
        """
        try:
            thr_idx = operator.index(thr_idx)  # numpy ints are thread indices too
        except TypeError:
            raise TiledMmaError(
                f"thread {thr_idx!r} must be an int thread index (0..{self.thread_count - 1})"
            ) from None
        if not 0 <= thr_idx < self.thread_count:
            raise TiledMmaError(
                f"thread {thr_idx!r} is not a thread of this TiledMMA: its TV layouts take "
                f"thread indices 0..{self.thread_count - 1}"
            )
        out = []
        for mode in _modes(self.thr_layout_vmnk):
            shapes, strides = mode.flat()
            idx, scale = 0, 1
            for s, d in zip(shapes, strides):
                if s != 1:  # CuTe skips the division for extent-1 leaves (stride may be 0)
                    idx += (thr_idx // d) % s * scale if d else 0
                scale *= s
            out.append(idx)
        return tuple(out)

    @cached_property
    def thread_count(self) -> int:
        """How many thread indices the TV layouts take: ``size`` when the threads of
        ``thr_layout_vmnk`` are 0..size-1, else its span rounded up by CuTe's complement (32
        for a lone SM70 quadpair atom, whose threads are 0-3 and 16-19).

        >>> make_tiled_mma("SM70_8x8x4_F32F16F16F32_NT").thread_count
        32
        """
        return size(self._thridx_2_thrid)

    # ------------------------------------------------------------------ tile
    @cached_property
    def tile_size_mnk(self) -> tuple[int, int, int]:
        """The M, N, K extent one call of the whole TiledMMA covers."""
        out = []
        for i in range(3):
            p = self.permutation_mnk[i]
            if p is None:
                out.append(self.atom.shape_mnk[i] * size(self.atom_layout_mnk[i]))
            else:
                out.append(size(p))
        return tuple(out)

    def _thrfrg(self, layout: Layout, which: str) -> Layout:
        """((ThrV,(Thr0,Thr1)),(FrgV,(Rest0,Rest1))) view of an operand tensor layout."""
        i0, i1 = _OPERAND_MODES[which]
        atom_tv = {
            "A": self.atom.tv_layout_A,
            "B": self.atom.tv_layout_B,
            "C": self.atom.tv_layout_C,
        }[which]
        perm = (self.permutation_mnk[i0], self.permutation_mnk[i1])
        t = algebra.logical_divide(layout, perm)
        atom_tile = (Layout(self.atom.shape_mnk[i0]), Layout(self.atom.shape_mnk[i1]))
        a = algebra.zipped_divide(t, atom_tile)
        tv = algebra.composition(a, (atom_tv, None))
        thr = self.thr_layout_vmnk
        thr_tile = (None, (Layout(size(thr[1 + i0])), Layout(size(thr[1 + i1]))))
        return algebra.zipped_divide(tv, thr_tile)

    @cached_property
    def _thridx_2_thrid(self) -> Layout:
        """thread index -> index into ``thr_layout_vmnk``'s domain, as CuTe's get_layoutX_TV
        builds it: the right inverse of the thread layout completed by its complement, folded
        onto the domain by ``(size,1):(1,0)`` (indices past it wrap, as in C++)."""
        thr = self.thr_layout_vmnk
        full = make_layout(thr, algebra.complement(thr))
        return algebra.composition(Layout((size(thr), 1), (1, 0)), algebra.right_inverse(full))

    def _tv_tiled(self, which: str) -> Layout:
        # CuTe's get_layoutA/B/C_TV (include/cute/atom/mma_atom.hpp), step by step
        i0, i1 = _OPERAND_MODES[which]
        m, n = (size(self.thr_layout_vmnk[j]) for j in (1, 2))
        ref = Layout((self.tile_size_mnk[i0], self.tile_size_mnk[i1]))
        tv = self._thrfrg(ref, which)
        # A and B: (ThrV,(ThrM,ThrK)) -> (ThrV,(ThrM,ThrN,ThrK)), the other operand's threads
        # broadcast (stride 0), so the thread mode's domain follows thr_layout_vmnk
        widen = {"A": Layout((m, n), (1, 0)), "B": Layout((m, n), (0, 1))}.get(which)
        if widen is not None:
            tv = algebra.composition(tv, ((None, (widen, None)), None))
        return algebra.composition(tv, (self._thridx_2_thrid, None))

    @cached_property
    def thr_id(self) -> Layout:
        """Thread mode of ``tv_layout_*_tiled`` -> thread index: the identity over
        ``thread_count`` threads (the TV layouts are indexed by thread index, as CuTe's).

        >>> str(make_tiled_mma("SM70_8x8x4_F32F16F16F32_NT").thr_id)
        '32:1'
        """
        return Layout(self.thread_count)

    @cached_property
    def tv_layout_A_tiled(self) -> Layout:
        """(thread, value) -> m + k*M over the tile (CuTe's get_layoutA_TV)."""
        return self._tv_tiled("A")

    @cached_property
    def tv_layout_B_tiled(self) -> Layout:
        """(thread, value) -> n + k*N over the tile (CuTe's get_layoutB_TV)."""
        return self._tv_tiled("B")

    @cached_property
    def tv_layout_C_tiled(self) -> Layout:
        """(thread, value) -> m + n*M over the tile (CuTe's get_layoutC_TV)."""
        return self._tv_tiled("C")

    def get_slice(self, thr_idx: int) -> ThrMma:
        """The view of thread ``thr_idx`` (any of the ``thread_count`` indices, as in CuTe).

        >>> make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN").get_slice(3).thr_idx
        3
        """
        self.thr_coord(thr_idx)
        return ThrMma(self, operator.index(thr_idx))

    get_thread_slice = get_slice

    def __str__(self) -> str:
        """CuTe's ``print(TiledMMA)`` (cute/atom/mma_atom.hpp) without the underscores of static
        ints; the header adds what C++ leaves to the reader: threads and the MNK tile.

        A permutation given as a tile size prints as that size (``32``), as C++ prints
        ``Tile<_32,...>``; no permutation prints ``_``.

        >>> t = make_tiled_mma("SM70_8x8x4_F32F16F16F32_NT", Layout((2, 2), (2, 1)),
        ...                    (Layout((4, 4, 2), (1, 8, 4)), 32, 4))
        >>> print(t)
        TiledMMA 32 threads, Tile_MNK (32,32,4)
          ThrLayoutVMNK:  ((4,2),2,2,1):((1,16),8,4,0)
          PermutationMNK: ((4,4,2):(1,8,4),32,4)
        MMA_Atom SM70_8x8x4_F32F16F16F32_NT
          ThrID:      (4,2):(1,16)
          Shape_MNK:  (8,8,4)
          LayoutA_TV: ((4,2),4):((8,4),1)
          LayoutB_TV: ((4,2),4):((8,4),1)
          LayoutC_TV: ((2,2,2),(2,2,2)):((1,16,4),(8,2,32))
        """
        perm = ",".join(_perm_text(p) for p in self.permutation_mnk)
        tile = ",".join(str(x) for x in self.tile_size_mnk)
        return "\n".join(
            [
                f"TiledMMA {self.size} threads, Tile_MNK ({tile})",
                f"  ThrLayoutVMNK:  {self.thr_layout_vmnk}",
                f"  PermutationMNK: ({perm})",
                str(self.atom),
            ]
        )

    def __repr__(self) -> str:
        return self.__str__()


class ThrMma(RichDisplay):
    """One thread's view of a TiledMma: its partitions of A, B and C tensors.

    >>> from cutemma.tensor import make_identity_tensor
    >>> thr = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN").get_slice(0)
    >>> c = thr.partition_C(make_identity_tensor((16, 8)))
    >>> c.shape, c(0), c(1), c(2)
    (((2, 2), 1, 1), (0, 0), (0, 1), (8, 0))
    """

    def __init__(self, tiled: TiledMma, thr_idx: int):
        if not isinstance(tiled, TiledMma):
            raise TiledMmaError(f"ThrMma: expected a TiledMma (make_tiled_mma(...)), got {tiled!r}")
        tiled.thr_coord(thr_idx)  # refuses a thread index out of range
        self.tiled = tiled
        self.thr_idx = thr_idx

    @property
    def thr_vmnk(self) -> tuple[int, int, int, int]:
        """This thread's (v, m, n, k) coordinate in ``tiled.thr_layout_vmnk``.

        >>> make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2)).get_slice(37).thr_vmnk
        (5, 1, 0, 0)
        """
        return self.tiled.thr_coord(self.thr_idx)

    def __str__(self) -> str:
        """CuTe's ``print(ThrMMA)``: this thread's VMNK coordinate, then its TiledMMA.

        >>> print(make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2)).get_slice(5))
        ThrMMA thread 5
          Thr VMNK: (5,0,0,0)
        TiledMMA 128 threads, Tile_MNK (32,16,16)
          ThrLayoutVMNK:  (32,2,2,1):(1,32,64,0)
          PermutationMNK: (_,_,_)
        MMA_Atom SM80_16x8x16_F32F16F16F32_TN
          ThrID:      32:1
          Shape_MNK:  (16,8,16)
          LayoutA_TV: ((4,8),(2,2,2)):((32,1),(16,8,128))
          LayoutB_TV: ((4,8),(2,2)):((16,1),(8,64))
          LayoutC_TV: ((4,8),(2,2)):((32,1),(16,8))
        """
        vmnk = ",".join(str(x) for x in self.thr_vmnk)
        return f"ThrMMA thread {self.thr_idx}\n  Thr VMNK: ({vmnk})\n{self.tiled}"

    def __repr__(self) -> str:
        return self.__str__()

    def _partition_layout(
        self, layout: Layout, which: str, pad: bool = False
    ) -> tuple[Layout, int]:
        t = self.tiled
        i0, i1 = _OPERAND_MODES[which]
        tile = t.tile_size_mnk
        shape = layout.shape if is_tuple(layout.shape) else (layout.shape,)
        if len(shape) < 2:
            raise TiledMmaError(f"partition_{which}: tensor layout {layout} must have 2 modes")
        for j, (ext, idx) in enumerate(zip(shape[:2], (i0, i1))):
            # an identity tensor may be padded: its last tile's coordinates run past the end,
            # as CuTe's (the ones a predicated kernel tests); data past the end would be wrong
            if not pad and size(Layout(ext)) % tile[idx] != 0:
                raise TiledMmaError(
                    f"partition_{which}: mode {j} of the tensor has extent {size(Layout(ext))}, "
                    f"not a multiple of the TiledMMA tile {'MNK'[idx]}={tile[idx]}; pad the "
                    "tensor or use a tile that divides it (an identity tensor of this shape "
                    "partitions, padded, for predication)"
                )
        try:
            frg = t._thrfrg(layout, which)
        except LayoutError as e:
            raise TiledMmaError(f"partition_{which} of {layout}: {e}") from None
        v, m, n, k = t.thr_coord(self.thr_idx)
        c = {"A": (m, k), "B": (n, k), "C": (m, n)}[which]
        rest = frg[1]
        rest_rank = len(rest[1]) if is_tuple(rest[1].shape) else 1
        rest_slice = (None, tuple([None] * rest_rank) if rest_rank > 1 else None)
        from cutemma.layout.layout import slice_and_offset

        return slice_and_offset(((v, c), rest_slice), frg)

    def _partition(self, tensor: Tensor, which: str) -> Tensor:
        if not isinstance(tensor, Tensor):
            raise TiledMmaError(
                f"partition_{which} expects a cutemma Tensor, got {type(tensor).__name__}"
            )
        layout = tensor.layout
        if isinstance(layout, ComposedLayout):
            # partition the inner layout; the thread's offset goes inside the swizzle
            # (outer(offset + off + sub(i))), as CuTe slices a swizzled tensor
            sub, off = self._partition_layout(layout.inner, which, pad=False)
            return Tensor(tensor.data, ComposedLayout(layout.outer, layout.offset + off, sub),
                          tensor.offset)  # fmt: skip
        pad = isinstance(tensor.data, CoordinateEngine)
        try:
            sub, off = self._partition_layout(layout, which, pad)
        except TiledMmaError as e:  # an identity tensor's strides, as coordinate steps
            raise TiledMmaError(packed_text(str(e), tensor)) from None
        return Tensor(tensor.data, sub, tensor.offset + off)

    def partition_A(self, tensor: Tensor) -> Tensor:
        """This thread's elements of an (M, K) tensor: shape (FrgV, M_tiles, K_tiles)."""
        return self._partition(tensor, "A")

    def partition_B(self, tensor: Tensor) -> Tensor:
        """This thread's elements of an (N, K) tensor: shape (FrgV, N_tiles, K_tiles)."""
        return self._partition(tensor, "B")

    def partition_C(self, tensor: Tensor) -> Tensor:
        """This thread's elements of an (M, N) tensor: shape (FrgV, M_tiles, N_tiles)."""
        return self._partition(tensor, "C")

    def partition_shape(self, shape: tuple, which: str) -> tuple:
        """The shape ``partition_<which>`` gives for a tensor of ``shape``.

        >>> make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN").get_slice(0).partition_shape((32, 64), "A")
        ((2, 2, 2), 2, 4)
        """
        try:
            layout = Layout(tuple(shape))
        except (LayoutError, TypeError):
            raise TiledMmaError(
                f"partition_shape_{which}: shape {shape!r} must be a tuple of whole numbers >= 1"
            ) from None
        sub, _ = self._partition_layout(layout, which)
        return sub.shape

    def partition_shape_A(self, shape: tuple) -> tuple:
        """Shape of this thread's A partition for an (M, K) tensor of ``shape``."""
        return self.partition_shape(shape, "A")

    def partition_shape_B(self, shape: tuple) -> tuple:
        """Shape of this thread's B partition for an (N, K) tensor of ``shape``."""
        return self.partition_shape(shape, "B")

    def partition_shape_C(self, shape: tuple) -> tuple:
        """Shape of this thread's C partition for an (M, N) tensor of ``shape``."""
        return self.partition_shape(shape, "C")

    def _fragment(self, tensor, which: str):
        import numpy as np

        if isinstance(tensor, Tensor) and isinstance(tensor.data, CoordinateEngine):
            part = self._partition(tensor, which).shape  # padded, as its partition is
        else:
            shape = tensor.layout.shape if isinstance(tensor, Tensor) else tuple(tensor)
            part = self.partition_shape(shape if is_tuple(shape) else (shape,), which)
        atom = self.tiled.atom
        vt = {"A": atom.val_type_A, "B": atom.val_type_B, "C": atom.val_type_C}[which]
        layout = Layout(part)
        return Tensor(np.zeros(size(layout), dtype=vt.compute), layout)

    def partition_fragment_A(self, tensor) -> Tensor:
        """A fresh register fragment shaped like this thread's A partition."""
        return self._fragment(tensor, "A")

    def partition_fragment_B(self, tensor) -> Tensor:
        """A fresh register fragment shaped like this thread's B partition."""
        return self._fragment(tensor, "B")

    def partition_fragment_C(self, tensor) -> Tensor:
        """A fresh register fragment shaped like this thread's C partition."""
        return self._fragment(tensor, "C")


def _perm_text(p) -> str:
    if p is None:
        return "_"
    if is_int(p.shape) and p.stride == 1:
        return str(p.shape)  # a plain tile size, C++'s Tile<_32,...>
    return str(p)


def make_tiled_mma(
    atom,
    atom_layout_mnk=(1, 1, 1),
    permutation_mnk: tuple | None = None,
    **atom_params,
) -> TiledMma:
    """Compose an atom (or an operation name) into a TiledMMA, as CuTe's ``make_tiled_mma``.

    ``atom_layout_mnk`` is an int-tuple or a Layout of up to 3 modes (M, N, K atoms);
    ``permutation_mnk`` has up to three entries, each None (no permutation), an int (a tile
    size, replicating values when larger than the atoms cover) or a Layout (a scatter
    permutation of that mode, CuTe's ``Tile<...>``).

    >>> t = make_tiled_mma("SM70_8x8x4_F32F16F16F32_NT", Layout((2, 2), (2, 1)), (32, 32, 4))
    >>> t.tile_size_mnk
    (32, 32, 4)
    """
    atom = _as_atom(atom, **atom_params)
    layout = _as_atom_layout(atom_layout_mnk)
    if permutation_mnk is None:
        permutation_mnk = (None, None, None)
    if not isinstance(permutation_mnk, tuple) or len(permutation_mnk) > 3:
        raise TiledMmaError(
            f"permutation_mnk must be a tuple of at most 3 entries (M, N, K), got {permutation_mnk!r}"
        )
    perms = tuple(_as_permutation(p, i) for i, p in enumerate(permutation_mnk))
    perms = perms + (None,) * (3 - len(perms))
    return TiledMma(atom, layout, perms)


def tv_offsets(layout: Layout):
    """Every offset of a rank-2 (thread, value) layout as a numpy (T, V) table.

    >>> tv_offsets(Layout((2, 3), (3, 1))).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    from cutemma.layout.offsets import offsets

    t, v = size(layout[0]), size(layout[1])
    return offsets(layout).reshape(v, t).T


__all__ = ["ThrMma", "TiledMma", "make_tiled_mma", "tv_offsets", "flatten", "make_layout"]
