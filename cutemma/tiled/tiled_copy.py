"""TiledCopy and ThrCopy: copy atoms laid out over threads and values, tensors partitioned.

Semantics follow CuTe's ``TiledCopy`` (``include/cute/atom/copy_atom.hpp``). A TiledCopy is a
copy atom, a (thread, value) -> tile-coordinate layout ``layout_tv_tiled`` and a tiler
``tiler_mn``. To partition a tensor, it is cut into tiler-sized tiles; each tile is read
through ``layout_tv_tiled``, first re-indexed from the atom's reference (thread, value)
order to its source (``partition_S``) or destination (``partition_D``) order, and the
threads take their rows. ``make_tiled_copy`` builds the TV layout from a thread layout and a
value layout (each thread's block raked over the threads); ``make_tiled_copy_A/B/C`` takes
it from a TiledMMA, so that the copy's destination is exactly the MMA's fragment.

>>> from cutemma.copy import make_copy_atom
>>> from cutemma.layout import Layout
>>> tc = make_tiled_copy(make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f16"),
...                      Layout((16, 8), (8, 1)), Layout((1, 8)))
>>> tc.size, tc.tiler_mn, str(tc.layout_tv_tiled)
(128, (16, 64), '((8,16),8):((128,1),16)')
"""

from __future__ import annotations

from functools import cached_property

from cutemma.display import RichDisplay
from cutemma.errors import CopyError, LayoutError
from cutemma.layout import algebra
from cutemma.layout.checks import as_int
from cutemma.layout.int_tuple import is_int, is_tuple, product_each
from cutemma.layout.layout import Layout, _modes, coalesce, cosize, make_layout, size
from cutemma.layout.layout import filter as filter_layout
from cutemma.layout.swizzle import ComposedLayout
from cutemma.tensor import CoordinateEngine, Tensor, packed_text


def _as_copy_atom(atom, dtype=None):
    from cutemma.copy.atom import CopyAtom
    from cutemma.copy.catalog import make_copy_atom
    from cutemma.copy.operation import CopyOperation

    if isinstance(atom, CopyAtom):
        if dtype is not None:
            raise CopyError(f"{atom.name}: give the value type with a name, not with a CopyAtom")
        return atom
    if not isinstance(atom, str | CopyOperation):
        raise CopyError(
            f"expected a CopyAtom (make_copy_atom(name, value type)) or a copy atom name with "
            f"dtype=, e.g. make_tiled_copy('SM75_U32x4_LDSM_N', ..., dtype='f16'); got {atom!r}"
        )
    if dtype is None:
        raise CopyError(
            f"copy atom {atom!r}: give its value type, e.g. make_copy_atom({atom!r}, 'f16')"
        )
    return make_copy_atom(atom, dtype)


def _tiler_layouts(tiler) -> tuple:
    """The tiler as a tuple of Layouts (ints become compact layouts)."""
    return tuple(Layout(t) if is_int(t) else t for t in tiler)


def _tiler_shape(tiler) -> tuple:
    return tuple(t if is_int(t) else t.shape for t in tiler)


def _check_tiler(tiler_mn: tuple, layout_tv: Layout) -> None:
    """Each extent a whole number >= 1 (or a Layout), the tile large enough for every
    (thread, value) the layout maps into it. Any number of threads, as in CuTe: a block's
    limit is the kernel's to apply (:func:`cutemma.hardware.limits`)."""
    bad = [t for t in tiler_mn if not isinstance(t, Layout) and (as_int(t) is None or t < 1)]
    if bad or not tiler_mn:
        raise CopyError(
            f"TiledCopy: tiler_mn {tuple(tiler_mn)!r}: each extent a whole number >= 1 or a "
            "Layout, e.g. (8, 8)"
        )
    tile = 1
    for t in tiler_mn:
        tile *= size(t)
    if cosize(layout_tv) > tile:
        raise CopyError(
            f"TiledCopy: layout_tv {layout_tv} reaches index {cosize(layout_tv) - 1}, outside "
            f"the {tile}-element tile {_tiler_shape(tuple(tiler_mn))}: make the tile cover "
            "every (thread, value)"
        )


def _zip2(layout: Layout) -> Layout:
    """((a,b),(c,d)) -> ((a,c),(b,d)) (CuTe's zip of a rank-2 x rank-2 layout)."""
    (a, b), (c, d) = (_modes(m) for m in _modes(layout))
    return make_layout(make_layout(a, c), make_layout(b, d))


class TiledCopy(RichDisplay):
    """A copy atom tiled by a (thread, value) -> coordinate layout over a tile ``tiler_mn``.

    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.tiled import make_tiled_mma
    >>> tc = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"),
    ...                        make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN"))
    >>> tc.size, tc.tiler_mn, str(tc.layout_src_tv_tiled)
    (32, (16, 16), '((16,2),(8,1)):((1,128),(16,0))')
    """

    def __init__(self, atom, layout_tv: Layout, tiler_mn: tuple):
        from cutemma.copy.atom import CopyAtom

        if not isinstance(atom, CopyAtom):
            raise CopyError(
                f"TiledCopy: the atom must be a CopyAtom (make_copy_atom(name, dtype)), got {atom!r}"
            )
        if not isinstance(layout_tv, Layout) or not is_tuple(layout_tv.shape):
            raise CopyError(
                f"TiledCopy: layout_tv must be a (thread, value) Layout of rank 2, got {layout_tv!r}"
            )
        if not isinstance(tiler_mn, tuple | list):
            raise CopyError(
                f"TiledCopy: tiler_mn must be a tuple of tile extents or Layouts, e.g. (8, 8); "
                f"got {tiler_mn!r}"
            )
        _check_tiler(tiler_mn, layout_tv)
        self.atom = atom
        self.layout_tv_tiled = layout_tv
        # numpy integers are integers: stored plain, as the layouts store theirs
        self.tiler_mn = tuple(t if isinstance(t, Layout) else as_int(t) for t in tiler_mn)
        # how a constructor made it, e.g. ("make_tiled_copy_A", tiled_mma): cutemma.emit
        # writes the same call back; None for a TiledCopy built from its parts
        self.origin: tuple | None = None
        a_thr, a_val = size(atom.layout_ref_tv[0]), size(atom.layout_ref_tv[1])
        t_thr, t_val = size(layout_tv[0]), size(layout_tv[1])
        if t_thr % a_thr:
            raise CopyError(
                f"TiledCopy of {atom.name}: {t_thr} threads is not a multiple of the atom's "
                f"{a_thr}; use a thread layout of a multiple of {a_thr} threads"
            )
        if t_val % a_val:
            raise CopyError(
                f"TiledCopy of {atom.name}: {t_val} values per thread is not a multiple of the "
                f"atom's {a_val} ({atom.val_type.name}); use a value layout of a multiple of "
                f"{a_val} values"
            )

    # ------------------------------------------------------------------ sizes
    @property
    def size(self) -> int:
        """Number of threads."""
        return size(self.layout_tv_tiled[0])

    @property
    def num_values(self) -> int:
        """Values per thread per tile."""
        return size(self.layout_tv_tiled[1])

    # ------------------------------------------------------------------ partition machinery
    @cached_property
    def _ref2src(self) -> Layout:
        return algebra.composition(
            algebra.right_inverse(self.atom.layout_ref_tv), self.atom.layout_src_tv
        )

    @cached_property
    def _ref2dst(self) -> Layout:
        return algebra.composition(
            algebra.right_inverse(self.atom.layout_ref_tv), self.atom.layout_dst_tv
        )

    @cached_property
    def _thrval2mn_cache(self) -> dict:
        return {}

    def _thrval2mn(self, ref2trg: Layout) -> Layout:
        """((trg_thr, rest_thr), (trg_val, rest_val)) -> linear index in the tile."""
        key = str(ref2trg)
        if key not in self._thrval2mn_cache:
            a_thr, a_val = size(self.atom.layout_ref_tv[0]), size(self.atom.layout_ref_tv[1])
            atom_tv = algebra.zipped_divide(self.layout_tv_tiled, (Layout(a_thr), Layout(a_val)))
            trg_tv = algebra.composition(atom_tv, (ref2trg, None))
            self._thrval2mn_cache[key] = coalesce(_zip2(trg_tv), (1, (1, 1)))
        return self._thrval2mn_cache[key]

    def _tile2thrfrg(self, layout, ref2trg: Layout):
        """(Thr, Val, Rest) view of a layout already divided as ((tile...), (rest...))."""
        tv = algebra.composition(layout, (self._thrval2mn(ref2trg), None))
        swizzled = isinstance(tv, ComposedLayout)
        thrval, rest = _modes(tv.inner if swizzled else tv)
        thr, val = _modes(thrval)
        out = make_layout(thr, val, rest)
        return tv.with_inner(out) if swizzled else out

    def _tidfrg(self, layout, ref2trg: Layout, what: str, pad: bool = False):
        if not isinstance(layout, Layout | ComposedLayout):
            raise CopyError(f"{what}: expected a Layout of the tensor, got {layout!r}")
        shape = (layout.inner if isinstance(layout, ComposedLayout) else layout).shape
        rank = len(shape) if is_tuple(shape) else 1
        if rank < len(self.tiler_mn):
            raise CopyError(
                f"{what}: a tensor of shape {shape} has rank {rank}; this TiledCopy tiles "
                f"{len(self.tiler_mn)} modes {_tiler_shape(self.tiler_mn)}"
            )
        for j, t in enumerate(_tiler_shape(self.tiler_mn)):
            ext = size(Layout(shape[j] if is_tuple(shape) else shape))
            # an identity tensor may be padded: its last tile's coordinates run past the end,
            # as CuTe's (the ones a predicated copy tests); data past the end would be wrong
            if not pad and ext % size(Layout(t)):
                raise CopyError(
                    f"{what}: mode {j} of the tensor has extent {ext}, not a multiple of the "
                    f"TiledCopy tile {size(Layout(t))}; pad the tensor or use a tile that divides "
                    "it (an identity tensor of this shape partitions, padded, for predication)"
                )
        try:
            divided = algebra.zipped_divide(layout, _tiler_layouts(self.tiler_mn))
            return self._tile2thrfrg(divided, ref2trg)
        except LayoutError as e:
            raise CopyError(f"{what} of {layout}: {e}") from None

    def tidfrg_S(self, layout):
        """(Thr, Val, Rest) view of a source layout (CuTe's tidfrg_S)."""
        return self._tidfrg(layout, self._ref2src, "partition_S")

    def tidfrg_D(self, layout):
        """(Thr, Val, Rest) view of a destination layout (CuTe's tidfrg_D)."""
        return self._tidfrg(layout, self._ref2dst, "partition_D")

    def _tv_tiled(self, ref2trg: Layout) -> Layout:
        ref = make_layout(Layout(_tiler_shape(self.tiler_mn)), Layout(1, 0))
        thr, val, _ = _modes(self._tile2thrfrg(ref, ref2trg))
        return make_layout(thr, val)

    @cached_property
    def layout_src_tv_tiled(self) -> Layout:
        """(thread, value) -> index in the tile of what each thread reads (CuTe's get_layoutS_TV)."""
        return self._tv_tiled(self._ref2src)

    @cached_property
    def layout_dst_tv_tiled(self) -> Layout:
        """(thread, value) -> index in the tile of what each thread writes (CuTe's get_layoutD_TV)."""
        return self._tv_tiled(self._ref2dst)

    def retile(self, layout: Layout) -> Layout:
        """A thread's register fragment layout regrouped as (atom values, rest), CuTe's retile."""
        if not isinstance(layout, Layout):
            raise CopyError(
                f"retile: expected the Layout of a thread's fragment (e.g. partition_S(...)"
                f".layout), got {layout!r}"
            )
        v = size(layout[0]) if is_tuple(layout.shape) else size(layout)
        a_val = size(self.atom.layout_ref_tv[1])
        try:
            return self._retile(layout, v, a_val)
        except LayoutError:  # the algebra's own words name its internals, not the fragment
            raise CopyError(
                f"retile: a fragment {layout} ({v} values in its first mode) does not regroup "
                f"into {self.atom.name}'s {a_val}-value calls over this TiledCopy's "
                f"{self.num_values} values a thread: give the fragment of a thread's partition "
                "(partition_S/partition_D of this TiledCopy, or the TiledMMA's)"
            ) from None

    def _retile(self, layout: Layout, v: int, a_val: int) -> Layout:
        shape = _tiler_shape(self.tiler_mn)
        frg_mn = algebra.upcast(
            algebra.composition(algebra.right_inverse(self.layout_tv_tiled), Layout(shape)),
            self.size * v,
        )
        frg_v = algebra.zipped_divide(
            algebra.logical_product(Layout(v), algebra.right_inverse(frg_mn)), Layout(a_val)
        )
        tile = (v, *_flat_tuple(product_each(frg_mn.shape)))
        t = algebra.zipped_divide(layout, tuple(Layout(x) for x in tile))
        vt = algebra.composition(t, (frg_v, None))
        first, rest = _modes(vt)
        rest_modes = _modes(rest)[1:] if is_tuple(rest.shape) else []
        return make_layout(first, *rest_modes) if rest_modes else make_layout(first)

    def get_slice(self, thr_idx: int) -> ThrCopy:
        """The view of thread ``thr_idx``.

        >>> from cutemma.copy import make_copy_atom
        >>> tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "f32"), Layout(32))
        >>> tc.get_slice(3).thr_idx
        3
        """
        return ThrCopy(self, thr_idx)

    get_thread_slice = get_slice

    def __repr__(self) -> str:
        return (
            f"TiledCopy({self.atom.name}, {self.atom.val_type.name}, threads={self.size}, "
            f"tiler={_tiler_shape(self.tiler_mn)}, layout_tv={self.layout_tv_tiled})"
        )


def _flat_tuple(t) -> tuple:
    return tuple(t) if is_tuple(t) else (t,)


class ThrCopy:
    """One thread's view of a TiledCopy: its partitions of source and destination tensors.

    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.tensor import make_identity_tensor
    >>> tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint64_t>", "f16"),
    ...                      Layout((4, 8), (8, 1)), Layout((1, 4)))
    >>> p = tc.get_slice(1).partition_S(make_identity_tensor((8, 64)))
    >>> p.size(), p(0), p(3), p(4)
    (16, (0, 4), (0, 7), (4, 4))
    """

    def __init__(self, tiled: TiledCopy, thr_idx: int):
        if not isinstance(tiled, TiledCopy):
            raise CopyError(
                f"ThrCopy: expected a TiledCopy (make_tiled_copy(...)), got {type(tiled).__name__}"
            )
        idx = as_int(thr_idx)
        if idx is None or not 0 <= idx < tiled.size:
            raise CopyError(
                f"thread {thr_idx!r} is not a thread of this TiledCopy (0..{tiled.size - 1})"
            )
        self.tiled = tiled
        self.thr_idx = idx

    def _slice(self, frg, tensor: Tensor) -> Tensor:
        swizzled = isinstance(frg, ComposedLayout)
        thr, val, rest = _modes(frg.inner if swizzled else frg)
        off = thr(self.thr_idx)
        sub = make_layout(val, *_modes(rest)) if is_tuple(rest.shape) else make_layout(val, rest)
        if swizzled:  # the thread's offset goes inside, where the swizzle sees it
            return Tensor(
                tensor.data, ComposedLayout(frg.outer, frg.offset + off, sub), tensor.offset
            )
        return Tensor(tensor.data, sub, tensor.offset + off)

    def _check(self, tensor, what: str) -> None:
        if not isinstance(tensor, Tensor):
            raise CopyError(f"{what} expects a cutemma Tensor, got {type(tensor).__name__}")

    def partition_S(self, tensor: Tensor) -> Tensor:
        """This thread's source elements: shape (CopyV, RestM, RestN, ...)."""
        self._check(tensor, "partition_S")
        return self._partition(tensor, self.tiled._ref2src, "partition_S")

    def partition_D(self, tensor: Tensor) -> Tensor:
        """This thread's destination elements: shape (CopyV, RestM, RestN, ...)."""
        self._check(tensor, "partition_D")
        return self._partition(tensor, self.tiled._ref2dst, "partition_D")

    def _partition(self, tensor: Tensor, ref2trg: Layout, what: str) -> Tensor:
        pad = isinstance(tensor.data, CoordinateEngine)  # (see _tidfrg)
        try:
            frg = self.tiled._tidfrg(tensor.layout, ref2trg, what, pad)
        except CopyError as e:  # an identity tensor's strides, as coordinate steps
            raise CopyError(packed_text(str(e), tensor)) from None
        return self._slice(frg, tensor)

    def retile_S(self, tensor: Tensor) -> Tensor:
        """A register fragment (e.g. an MMA partition) regrouped for this copy's source."""
        self._check(tensor, "retile_S")
        return Tensor(tensor.data, self.tiled.retile(tensor.layout), tensor.offset)

    def retile_D(self, tensor: Tensor) -> Tensor:
        """A register fragment regrouped for this copy's destination."""
        self._check(tensor, "retile_D")
        return Tensor(tensor.data, self.tiled.retile(tensor.layout), tensor.offset)


# ---------------------------------------------------------------------- constructors


def make_tiled_copy_impl(atom, layout_tv: Layout, tiler_mn) -> TiledCopy:
    """A TiledCopy from an atom, a (thread, value) -> tile index layout and a tiler.

    >>> from cutemma.copy import make_copy_atom
    >>> make_tiled_copy_impl(make_copy_atom("UniversalCopy<uint32_t>", "f32"),
    ...                      Layout((32, 4), (4, 1)), (128,)).size
    32
    """
    tiler = tiler_mn if isinstance(tiler_mn, tuple) else (tiler_mn,)
    return TiledCopy(_as_copy_atom(atom), layout_tv, tiler)


def make_tiled_copy(atom, thr_layout=None, val_layout=None, dtype=None) -> TiledCopy:
    """CuTe's ``make_tiled_copy(atom, thr_layout, val_layout)``.

    ``thr_layout`` maps an (m, n) thread coordinate to the thread index, ``val_layout``
    each thread's (m, n) block to the value index; the tile is their raked product (each
    thread's values spaced by the thread layout's extent).

    >>> from cutemma.copy import make_copy_atom
    >>> tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "f32"),
    ...                      Layout((4, 8)), Layout((2, 1)))
    >>> tc.tiler_mn, [tc.layout_tv_tiled(t, v) for t in (0, 1, 4) for v in (0, 1)]
    ((8, 8), [0, 1, 2, 3, 8, 9])
    """
    atom = _as_copy_atom(atom, dtype)
    thr = Layout(1) if thr_layout is None else _as_layout(thr_layout, "thr_layout")
    val = Layout(1) if val_layout is None else _as_layout(val_layout, "val_layout")
    layout_mn = algebra.raked_product(thr, val)
    layout_tv = algebra.composition(
        algebra.right_inverse(layout_mn), Layout((size(thr), size(val)))
    )
    tiler = product_each(layout_mn.shape)
    return _made(TiledCopy(atom, layout_tv, _flat_tuple(tiler)), "make_tiled_copy", thr, val)


def _made(tc: TiledCopy, fn: str, *args) -> TiledCopy:
    tc.origin = (fn, *args)
    return tc


def _as_layout(x, what: str) -> Layout:
    if isinstance(x, Layout):
        return x
    n = as_int(x)
    if n is not None and n < 1:
        raise CopyError(f"{what}={x}: a Layout or a shape of extents >= 1, e.g. (8, 4)")
    if n is not None:
        return Layout(n)
    if is_tuple(x):
        return Layout(x)
    raise CopyError(f"{what} must be a Layout or a shape, got {x!r}")


def _from_mma(atom, tiled_mma, which: str) -> TiledCopy:
    from cutemma.tiled.tiled_mma import TiledMma

    if not isinstance(tiled_mma, TiledMma):
        raise CopyError(
            f"make_tiled_copy_{which} needs a TiledMMA (make_tiled_mma(...)), got "
            f"{type(tiled_mma).__name__}"
        )
    m, n, k = tiled_mma.tile_size_mnk
    tv = {
        "A": tiled_mma.tv_layout_A_tiled,
        "B": tiled_mma.tv_layout_B_tiled,
        "C": tiled_mma.tv_layout_C_tiled,
    }[which]
    tiler = {"A": (m, k), "B": (n, k), "C": (m, n)}[which]
    return _made(TiledCopy(_as_copy_atom(atom), tv, tiler), f"make_tiled_copy_{which}", tiled_mma)


def make_tiled_copy_A(atom, tiled_mma) -> TiledCopy:
    """The TiledCopy whose (thread, value) layout is the TiledMMA's A fragment, over (M, K).

    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.tiled import make_tiled_mma
    >>> make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"),
    ...                   make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", (2, 2))).tiler_mn
    (32, 16)
    """
    return _from_mma(atom, tiled_mma, "A")


def make_tiled_copy_B(atom, tiled_mma) -> TiledCopy:
    """The TiledCopy of the TiledMMA's B fragment, over (N, K).

    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.tiled import make_tiled_mma
    >>> make_tiled_copy_B(make_copy_atom("SM75_U32x2_LDSM_N", "f16"),
    ...                   make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN")).tiler_mn
    (8, 16)
    """
    return _from_mma(atom, tiled_mma, "B")


def make_tiled_copy_C(atom, tiled_mma) -> TiledCopy:
    """The TiledCopy of the TiledMMA's C fragment, over (M, N).

    >>> from cutemma.copy import make_copy_atom
    >>> from cutemma.tiled import make_tiled_mma
    >>> make_tiled_copy_C(make_copy_atom("SM90_U32x2_STSM_N", "f16"),
    ...                   make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN")).size
    32
    """
    return _from_mma(atom, tiled_mma, "C")


def make_tiled_copy_S(atom, tiled_copy: TiledCopy) -> TiledCopy:
    """A TiledCopy of another atom whose (thread, value) layout is ``tiled_copy``'s source side.

    >>> from cutemma.copy import make_copy_atom
    >>> tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "f32"), Layout(32))
    >>> make_tiled_copy_S(make_copy_atom("UniversalCopy<uint32_t>", "f32"), tc).tiler_mn
    (32,)
    """
    return _retargeted(atom, tiled_copy, "S")


def make_tiled_copy_D(atom, tiled_copy: TiledCopy) -> TiledCopy:
    """A TiledCopy of another atom whose (thread, value) layout is ``tiled_copy``'s destination side.

    >>> from cutemma.copy import make_copy_atom
    >>> tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "f32"), Layout(32))
    >>> make_tiled_copy_D(make_copy_atom("UniversalCopy<uint32_t>", "f32"), tc).size
    32
    """
    return _retargeted(atom, tiled_copy, "D")


def _retargeted(atom, tiled_copy: TiledCopy, side: str) -> TiledCopy:
    """make_tiled_copy_S/D: ``atom`` over ``tiled_copy``'s source or destination TV layout."""
    if not isinstance(tiled_copy, TiledCopy):
        raise CopyError(
            f"make_tiled_copy_{side} needs a TiledCopy (make_tiled_copy(...)), "
            f"got {type(tiled_copy).__name__}"
        )
    tv = tiled_copy.layout_src_tv_tiled if side == "S" else tiled_copy.layout_dst_tv_tiled
    tc = TiledCopy(_as_copy_atom(atom), tv, tiled_copy.tiler_mn)
    return _made(tc, f"make_tiled_copy_{side}", tiled_copy)


def make_cotiled_copy(atom, atom_tv_layout: Layout, data_layout: Layout) -> TiledCopy:
    """A TiledCopy from the atom's (thread, value) -> data address map and the data's layout.

    CuTe's ``make_cotiled_copy``: the addresses are read back into data coordinates
    (``left_inverse`` of the data layout), the tiler is the part of each data mode they touch
    and the TV layout indexes that tile.

    >>> from cutemma.copy import make_copy_atom
    >>> tc = make_cotiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "f32"),
    ...                        Layout((32, 2), (2, 1)), Layout((8, 8), (8, 1)))
    >>> tc.size, [str(t) for t in tc.tiler_mn]
    (32, ['8:1', '(4,2):(2,1)'])
    """
    atom = _as_copy_atom(atom)
    if not isinstance(atom_tv_layout, Layout):
        raise CopyError(
            f"make_cotiled_copy: atom_tv_layout must be a (thread, value) -> address Layout, "
            f"got {atom_tv_layout!r}"
        )
    inv = make_layout(algebra.left_inverse(data_layout), Layout(1, 0))
    tv_data = algebra.composition(inv, atom_tv_layout)
    flat = _flat_tuple(product_each(data_layout.shape))
    tiler = []
    for i in range(len(flat)):
        unit = Layout(flat, tuple(1 if j == i else 0 for j in range(len(flat))))
        tiler.append(filter_layout(algebra.composition(unit, tv_data)))
    tile2data = algebra.composition(Layout(flat), tuple(tiler))
    layout_tv = algebra.composition(algebra.left_inverse(tile2data), tv_data)
    return TiledCopy(atom, layout_tv, tuple(tiler))


def make_tmem_copy(atom, tmem_layout: Layout) -> TiledCopy:
    """The TiledCopy of a tcgen05.ld/st atom over a tensor-memory layout (CuTe's make_tmem_copy).

    Four warps, each on its own 32 data-path lanes; every lane of a warp names the same
    address (the instruction takes one), and the atom's values walk its ``val_id``.

    >>> from cutemma.copy import make_copy_atom
    >>> tc = make_tmem_copy(make_copy_atom("SM100_TMEM_LOAD_32dp32b8x", "f32"),
    ...                     Layout((128, 64), (65536, 1)))
    >>> str(tc.layout_tv_tiled), [str(t) for t in tc.tiler_mn]
    ('((32,4),(8,32)):((0,1),(128,4))', ['(4,32):(32,1)', '8:1'])
    """
    atom = _as_copy_atom(atom)
    val_id = atom.traits.val_id
    if val_id is None:
        raise CopyError(f"make_tmem_copy needs a tcgen05.ld/st atom; {atom.name} has no val_id")
    from cutemma.copy.arch.sm100_tmem import DP_BITS

    bits = atom.val_type.bits
    lane = DP_BITS // bits  # one data-path lane in value units (CuTe's TMEM::DP<T>)
    thr = Layout((32, 4), (0, 32 * lane))
    val = coalesce(algebra.upcast(val_id, bits))
    return make_cotiled_copy(atom, make_layout(thr, val), tmem_layout)


__all__ = [
    "ThrCopy",
    "TiledCopy",
    "make_tiled_copy",
    "make_tiled_copy_A",
    "make_tiled_copy_B",
    "make_tiled_copy_C",
    "make_tiled_copy_D",
    "make_tiled_copy_S",
    "make_tiled_copy_impl",
    "make_cotiled_copy",
    "make_tmem_copy",
]
