"""The picture model: which (thread, value) or offset sits in which cell of each panel.

Every drawing (LaTeX, SVG, HTML, text) is made from a :class:`Figure`, computed here with
numpy from the layouts, so the renderers never re-derive an index. An MMA figure has three
panels in CuTe's arrangement: C (M x N) at the origin, A (M x K) to its left and B (K x N)
above it. A layout figure has one panel of offsets.

>>> from cutemma.layout import Layout
>>> fig = figure_of(Layout((2, 3), (3, 1)))
>>> fig.kind, fig.panels[0].offset.tolist()
('layout', [[0, 1, 2], [3, 4, 5]])
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from cutemma.errors import DrawError, LayoutError
from cutemma.layout import ComposedLayout, Layout, Swizzle
from cutemma.layout.basis import BasisLayout
from cutemma.layout.int_tuple import crd2idx
from cutemma.tensor import CoordinateEngine, Tensor, layout_text


@dataclass(frozen=True)
class Panel:
    """One grid of cells.

    ``thread``/``value`` (rows, cols): the displayed thread id and the value index owning each
    cell (-1 where no (thread, value) lands). ``tv`` (T, V): each logical thread's cells as
    row-major indices ``r * cols + c``; ``thread_ids`` (T,): logical thread -> displayed id.
    A layout panel has ``offset`` (rows, cols) instead and no threads; a basis layout's panel
    also has ``labels`` (rows, cols), the coordinate each cell holds as text (its ``offset``
    is then the coordinate's colexicographic index in the coshape, for colour).

    >>> p = layout_figure(Layout((2, 2), (2, 1))).panels[0]
    >>> p.name, p.area, p.offset.tolist()
    ('L', 4, [[0, 1], [2, 3]])
    """

    name: str
    rows: int
    cols: int
    row_axis: str
    col_axis: str
    layout: str
    thread: np.ndarray | None = None
    value: np.ndarray | None = None
    owners: np.ndarray | None = None
    tv: np.ndarray | None = None
    thread_ids: np.ndarray | None = None
    offset: np.ndarray | None = None
    labels: np.ndarray | None = None

    @property
    def area(self) -> int:
        """Number of cells, rows * cols (see the class example)."""
        return self.rows * self.cols


@dataclass(frozen=True)
class Figure:
    """A titled set of panels: ``kind`` is 'mma' (panels A, B, C), 'layout' or 'tv' (one panel).

    >>> figure_of(Layout(4)).title
    'Layout 4:1'
    """

    kind: str
    title: str
    panels: tuple[Panel, ...]
    shape_mnk: tuple[int, int, int] | None = None
    swizzled: bool = False
    notes: tuple[str, ...] = field(default=())

    def panel(self, name: str) -> Panel:
        """The panel called ``name`` ('A', 'B', 'C' or 'L').

        >>> figure_of(Layout(4)).panel("L").cols
        4
        """
        for p in self.panels:
            if p.name == name:
                return p
        raise KeyError(f"figure {self.title!r} has panels {[p.name for p in self.panels]}")


def mode_offsets(shape, stride) -> np.ndarray:
    """Offsets of every linear index of a (nested) shape:stride, in CuTe's colexicographic order.

    >>> mode_offsets((4, 2), (1, 16)).tolist()
    [0, 1, 2, 3, 16, 17, 18, 19]
    """
    out = np.zeros(1, dtype=np.int64)
    step_shape = []
    _flatten(shape, stride, step_shape)
    for s, d in step_shape:
        # colexicographic: the first mode varies fastest, so it is the innermost axis
        out = (out[None, :] + (np.arange(s, dtype=np.int64) * d)[:, None]).reshape(-1)
    return out


def _flatten(shape, stride, out: list) -> None:
    if isinstance(shape, int):
        out.append((shape, stride))
        return
    for s, d in zip(shape, stride):
        _flatten(s, d, out)


def layout_table(layout) -> np.ndarray:
    """Offsets of every linear index of a Layout or a swizzled ComposedLayout.

    >>> from cutemma.layout import Swizzle
    >>> L = ComposedLayout(Swizzle(1, 0, 1), 0, Layout(4))
    >>> layout_table(L).tolist()
    [0, 1, 3, 2]
    """
    if isinstance(layout, Layout):
        return mode_offsets(layout.shape, layout.stride)
    if isinstance(layout, ComposedLayout):
        x = layout_table(layout.inner) + layout.offset
        outer = layout.outer
        if isinstance(outer, Swizzle):
            y = (x & outer.yyy_mask).astype(np.int64)
            return x ^ (y >> outer.shift if outer.shift >= 0 else y << -outer.shift)
        if isinstance(outer, Layout):
            return layout_table(outer)[x]
        return np.array([outer(int(i)) for i in x], dtype=np.int64)
    raise LayoutError(f"cannot draw {layout!r}: expected a Layout or ComposedLayout")


def tv_offsets(layout: Layout) -> np.ndarray:
    """The (T, V) table of a rank-2 thread-value layout.

    >>> tv_offsets(Layout((2, 2), (2, 1))).tolist()
    [[0, 1], [2, 3]]
    """
    shape, stride = layout.shape, layout.stride
    if isinstance(shape, int) or len(shape) != 2:
        raise LayoutError(
            f"a thread-value layout has rank 2 (thread, value); {layout} has rank "
            f"{1 if isinstance(shape, int) else len(shape)}"
        )
    return mode_offsets(shape[0], stride[0])[:, None] + mode_offsets(shape[1], stride[1])[None, :]


def tv_panel(
    name: str,
    layout: Layout,
    rows: int,
    cols: int,
    row_axis: str,
    col_axis: str,
    thread_ids: np.ndarray,
    column_major_rows: bool = True,
) -> Panel:
    """A panel of a (T, V) -> offset layout over a rows x cols tile.

    The offset is ``r + c * rows`` when ``column_major_rows`` (A: m + k*M, C: m + n*M), else
    ``c + r * cols`` (B drawn K x N: n + k*N). Where several (t, v) land on one cell (a
    broadcast, e.g. GMMA's shared-memory A), the first in (t, v) order owns it.

    >>> p = tv_panel("C", Layout((2, 2), (1, 2)), 2, 2, "m", "n", np.arange(2))
    >>> p.thread.tolist(), p.value.tolist()
    ([[0, 0], [1, 1]], [[0, 1], [0, 1]])
    """
    off = tv_offsets(layout)
    if off.size and (off.min() < 0 or off.max() >= rows * cols):
        raise LayoutError(
            f"{name} layout {layout} reaches offset {int(off.max())}; the {rows}x{cols} "
            f"{name} tile has offsets 0..{rows * cols - 1}"
        )
    if thread_ids.shape[0] != off.shape[0]:
        raise LayoutError(
            f"{name} layout {layout} has {off.shape[0]} threads but the thread map has "
            f"{thread_ids.shape[0]}"
        )
    if column_major_rows:
        r, c = off % rows, off // rows
    else:
        r, c = off // cols, off % cols
    cell = r * cols + c
    flat = cell.reshape(-1)
    T, V = off.shape
    first = np.full(rows * cols, T * V, dtype=np.int64)
    np.minimum.at(first, flat, np.arange(flat.size, dtype=np.int64))
    hit = first < T * V
    thread = np.full(rows * cols, -1, dtype=np.int64)
    value = np.full(rows * cols, -1, dtype=np.int64)
    thread[hit] = np.asarray(thread_ids)[first[hit] // V]
    value[hit] = first[hit] % V
    owners = np.bincount(flat, minlength=rows * cols)
    return Panel(
        name,
        rows,
        cols,
        row_axis,
        col_axis,
        str(layout),
        thread=thread.reshape(rows, cols),
        value=value.reshape(rows, cols),
        owners=owners.reshape(rows, cols),
        tv=cell,
        thread_ids=np.asarray(thread_ids, dtype=np.int64),
    )


def _is_tiled(obj) -> bool:
    return hasattr(obj, "tv_layout_C_tiled")


def _is_atom(obj) -> bool:
    return all(hasattr(obj, a) for a in ("tv_layout_A", "tv_layout_C", "shape_mnk", "thr_id"))


def mma_parts(obj) -> tuple[tuple[int, int, int], Layout, Layout, Layout, np.ndarray, str]:
    """The duck-typed view of an MmaAtom or TiledMma: ((M,N,K), tvA, tvB, tvC, thread ids, title).

    Thread t of the TV layouts is shown as ``thr_id(t)``: CuTe's ThrID for an atom, the
    TiledMma's ``thr_id`` (the identity when its threads are 0..size-1) for a tiled MMA.

    >>> from cutemma.mma import make_mma_atom
    >>> mnk, a, b, c, ids, title = mma_parts(make_mma_atom('SM70_8x8x4_F32F16F16F32_NT'))
    >>> mnk, ids.tolist()
    ((8, 8, 4), [0, 1, 2, 3, 16, 17, 18, 19])
    """
    if _is_tiled(obj):
        mnk = tuple(int(x) for x in obj.tile_size_mnk)
        a, b, c = obj.tv_layout_A_tiled, obj.tv_layout_B_tiled, obj.tv_layout_C_tiled
        threads = tv_offsets(c).shape[0]
        # thr_id maps the thread mode to thread indices (identity when threads are 0..size-1)
        thr = getattr(obj, "thr_id", None)
        ids = layout_table(thr)[:threads] if thr is not None else np.arange(threads)
        atom = getattr(obj, "atom", None)
        name = getattr(atom, "name", type(atom).__name__)
        title = f"TiledMMA {name} {mnk[0]}x{mnk[1]}x{mnk[2]}, {threads} threads"
        return mnk, a, b, c, ids, title
    if _is_atom(obj):
        mnk = tuple(int(x) for x in obj.shape_mnk)
        ids = layout_table(obj.thr_id)
        name = getattr(obj, "name", type(obj).__name__)
        return mnk, obj.tv_layout_A, obj.tv_layout_B, obj.tv_layout_C, ids, f"MMA_Atom {name}"
    raise DrawError(
        f"cannot draw {type(obj).__name__}: expected a Layout, ComposedLayout, basis layout, "
        "Tensor, MmaAtom (tv_layout_A/B/C, shape_mnk, thr_id), TiledMma (tv_layout_A/B/C_tiled, "
        "tile_size_mnk) or ThrMma (tiled_mma.get_slice(t)), or a CopyAtom/TiledCopy"
    )


def mma_figure(obj) -> Figure:
    """The A, B, C panels of an MmaAtom or TiledMma.

    >>> from cutemma.mma import make_mma_atom
    >>> fig = mma_figure(make_mma_atom('SM70_8x8x4_F32F16F16F32_NT'))
    >>> [(p.name, p.rows, p.cols) for p in fig.panels]
    [('A', 8, 4), ('B', 4, 8), ('C', 8, 8)]
    """
    (M, N, K), a, b, c, ids, title = mma_parts(obj)
    panels = (
        tv_panel("A", a, M, K, "m", "k", ids),
        tv_panel("B", b, K, N, "k", "n", ids, column_major_rows=False),
        tv_panel("C", c, M, N, "m", "n", ids),
    )
    notes = []
    for p in panels:
        if p.owners.max() > 1:
            notes.append(
                f"{p.name}: cells held by up to {int(p.owners.max())} (thread, value) pairs; "
                "the first is labelled"
            )
    return Figure("mma", title, panels, shape_mnk=(M, N, K), notes=tuple(notes))


def _grid_shape(layout) -> tuple[int, int]:
    # CuTe's print_layout convention: rows are mode 0, columns everything else
    shape = layout.shape
    if isinstance(shape, int) or len(shape) < 2:
        return 1, int(np.prod(shape))
    rows = int(np.prod(shape[0]))
    if rows == 0:  # a 0 in mode 0: no rows, and so no cells in any column
        return 0, 0
    return rows, int(np.prod(np.array(_leaves(shape), dtype=np.int64))) // rows


def _leaves(shape) -> list[int]:
    if isinstance(shape, int):
        return [shape]
    return [x for s in shape for x in _leaves(s)]


def layout_figure(layout) -> Figure:
    """One panel of offsets: cell (r, c) holds ``layout(r + rows * c)``.

    >>> layout_figure(Layout(4, 2)).panels[0].offset.tolist()
    [[0, 2, 4, 6]]
    """
    rows, cols = _grid_shape(layout)
    table = layout_table(layout)
    offset = table.reshape(cols, rows).T
    panel = Panel("L", rows, cols, "row", "col", str(layout), offset=offset)
    swz = isinstance(layout, ComposedLayout)
    return Figure("layout", f"Layout {layout}", (panel,), swizzled=swz)


def _crd_text(c) -> str:
    return "(" + ",".join(_crd_text(x) for x in c) + ")" if isinstance(c, tuple) else str(c)


def basis_figure(layout: BasisLayout) -> Figure:
    """One panel of coordinates: cell (r, c) holds ``layout(r + rows * c)``, a coordinate (an
    identity layout's cell shows its own (row, col)); colours follow the coordinate.

    >>> from cutemma.layout import make_identity_layout
    >>> make_identity_layout((2, 3)).__class__.__name__, basis_figure(
    ...     make_identity_layout((2, 3))).panels[0].labels.tolist()
    ('BasisLayout', [['(0,0)', '(0,1)', '(0,2)'], ['(1,0)', '(1,1)', '(1,2)']])
    """
    rows, cols = _grid_shape(layout)
    coshape = layout.coshape()
    labels = np.empty((rows, cols), dtype=object)
    offset = np.zeros((rows, cols), dtype=np.int64)
    for c in range(cols):
        for r in range(rows):
            crd = layout(r + rows * c)
            labels[r, c] = _crd_text(crd)
            try:  # the colour key: where the coordinate sits in the coshape
                offset[r, c] = crd2idx(crd, coshape)
            except LayoutError:  # an offset coordinate outside the coshape: colour by cell
                offset[r, c] = r + rows * c
    panel = Panel("L", rows, cols, "row", "col", str(layout), offset=offset, labels=labels)
    return Figure("layout", f"Layout {layout}", (panel,))


def thread_figure(thr) -> Figure:
    """A ThrMma's picture: its TiledMMA's figure with only thread ``thr.thr_idx``'s cells
    coloured and labelled.

    >>> from cutemma.tiled import make_tiled_mma
    >>> fig = thread_figure(make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN").get_slice(5))
    >>> int((fig.panel("C").thread == 5).sum()), int((fig.panel("C").thread == -1).sum())
    (4, 124)
    """
    fig = figure_of(thr.tiled)
    panels = []
    for p in fig.panels:
        thread = np.full(p.area, -1, dtype=np.int64)
        value = np.full(p.area, -1, dtype=np.int64)
        for row in np.flatnonzero(p.thread_ids == thr.thr_idx):
            thread[p.tv[row]] = thr.thr_idx
            value[p.tv[row]] = np.arange(p.tv.shape[1])
        panels.append(
            replace(p, thread=thread.reshape(p.rows, p.cols), value=value.reshape(p.rows, p.cols))
        )
    vmnk = ",".join(str(x) for x in thr.thr_vmnk)
    title = f"ThrMMA thread {thr.thr_idx} (VMNK ({vmnk})) of {fig.title}"
    return replace(fig, title=title, panels=tuple(panels), notes=())


def tensor_figure(tensor: Tensor) -> Figure:
    """A Tensor's picture: its layout's grid (rows = mode 0), each cell labelled with the
    element it holds (a partitioned identity tensor shows the coordinates a thread owns) and
    coloured by the data offset it reads (an identity tensor: by the coordinate).

    >>> from cutemma.tensor import make_identity_tensor
    >>> from cutemma.tiled import make_tiled_mma
    >>> t = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN").get_slice(5).partition_C(
    ...     make_identity_tensor((16, 8)))
    >>> tensor_figure(t).panels[0].labels.tolist()
    [['(1,2)'], ['(1,3)'], ['(9,2)'], ['(9,3)']]
    """
    rows, cols = _grid_shape(tensor.layout)
    engine = getattr(tensor.data, "shape", None)
    labels = np.empty((rows, cols), dtype=object)
    offset = np.zeros((rows, cols), dtype=np.int64)
    for c in range(cols):
        for r in range(rows):
            i = r + rows * c
            v = tensor(i)
            labels[r, c] = _crd_text(v) if isinstance(v, tuple) else f"{v:g}" if isinstance(
                v, float) else str(v)  # fmt: skip
            is_crd = isinstance(tensor.data, CoordinateEngine)
            offset[r, c] = crd2idx(v, engine) if is_crd else tensor.offset + tensor.layout(i)
    name = "identity tensor" if isinstance(tensor.data, CoordinateEngine) else "Tensor"
    text = layout_text(tensor)  # an identity tensor's strides as the coordinate steps they are
    panel = Panel("L", rows, cols, "row", "col", text, offset=offset, labels=labels)
    return Figure("layout", f"{name} {text}", (panel,))


def tv_figure(layout: Layout, tile: tuple[int, int]) -> Figure:
    """A (thread, value) -> m + n*M layout drawn over an M x N tile, like a C panel.

    >>> fig = tv_figure(Layout((2, 2), (2, 1)), (2, 2))
    >>> fig.panels[0].thread.tolist()
    [[0, 1], [0, 1]]
    """
    if len(tile) != 2:
        raise LayoutError(f"a TV layout is drawn over an (M, N) tile; got tile={tile!r}")
    M, N = (int(x) for x in tile)
    threads = tv_offsets(layout).shape[0]
    panel = tv_panel("C", layout, M, N, "m", "n", np.arange(threads, dtype=np.int64))
    return Figure("tv", f"TV layout {layout} over {M}x{N}", (panel,))


# Beyond this many cells a picture is unreadable and its arrays take gigabytes: refuse.
MAX_CELLS = 1 << 20


def check_drawable_size(obj, tile: tuple[int, int] | None = None) -> None:
    """Refuse (LayoutError) a figure of more than :data:`MAX_CELLS` cells before building it.

    >>> check_drawable_size(Layout((100000, 100000)))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cutemma.errors.LayoutError: a picture of 10000000000 cells is too large to draw (at most 1048576)...
    """
    mnk = getattr(obj, "tile_size_mnk", None) or getattr(obj, "shape_mnk", None)
    if mnk is not None and len(mnk) == 3:
        m, n, k = mnk
        cells = m * k + n * k + m * n
    elif isinstance(obj, Layout | ComposedLayout | BasisLayout):
        cells = obj.size()
    else:
        return
    if cells > MAX_CELLS:
        raise LayoutError(
            f"a picture of {cells} cells is too large to draw (at most {MAX_CELLS}); draw a "
            "tile of it (a composition or slice)"
        )


def figure_of(obj, tile: tuple[int, int] | None = None) -> Figure:
    """The figure of anything cutemma can draw (a Figure passes through).

    ``tile`` makes a plain Layout a thread-value layout over that (M, N) tile.

    >>> figure_of(Layout((4, 2), (2, 1)), tile=(4, 2)).kind
    'tv'
    """
    if isinstance(obj, Figure):
        return obj
    if isinstance(obj, Tensor):
        if tile is not None:
            raise LayoutError("tile= draws a plain TV Layout; a Tensor is drawn over its layout")
        check_drawable_size(obj.layout)
        return tensor_figure(obj)
    if hasattr(obj, "thr_idx") and _is_tiled(getattr(obj, "tiled", None)):  # a ThrMma
        return thread_figure(obj)
    check_drawable_size(obj, tile)
    if isinstance(obj, (Layout, ComposedLayout)):
        if tile is not None:
            if not isinstance(obj, Layout):
                raise LayoutError(f"tile= needs a plain TV Layout; got swizzled {obj}")
            return tv_figure(obj, tile)
        return layout_figure(obj)
    if isinstance(obj, BasisLayout):
        if tile is not None:
            raise LayoutError(f"tile= needs a plain TV Layout; got the basis layout {obj}")
        return basis_figure(obj)
    return mma_figure(obj)


_LIGHT = np.array([0.80, 0.70, 0.88])
# (r, g, b) as picks from (chroma, second component, zero) for each 60-degree hue sector
_SECTOR = np.array([[0, 1, 2], [1, 0, 2], [2, 0, 1], [2, 1, 0], [1, 2, 0], [0, 2, 1]])


def rgb_table(keys) -> np.ndarray:
    """Light colours (n, 3) uint8 for thread / value / bank indices; -1 is white.

    Hues step by the golden angle so that 128 or 256 threads stay distinguishable; three
    lightness levels and two saturations separate near hues; black text stays readable.

    >>> rgb_table([0, 1, -1]).tolist()
    [[255, 153, 153], [173, 235, 191], [255, 255, 255]]
    """
    k = np.asarray(keys, dtype=np.int64).reshape(-1)
    hue6 = ((k * 0.381966) % 1.0) * 6
    light = _LIGHT[(k // 7) % 3]
    chroma = (1 - np.abs(2 * light - 1)) * np.where(k % 2 == 0, 1.0, 0.6)
    second = chroma * (1 - np.abs(hue6 % 2 - 1))
    parts = np.stack([chroma, second, np.zeros_like(chroma)], axis=1)
    pick = _SECTOR[np.floor(hue6).astype(np.int64) % 6]
    rgb = np.take_along_axis(parts, pick, axis=1) + (light - chroma / 2)[:, None]
    out = np.round(rgb * 255).astype(np.uint8)
    out[k < 0] = 255
    return out


def hex_table(keys) -> list[str]:
    """``#rrggbb`` strings of :func:`rgb_table`.

    >>> hex_table([0, -1])
    ['#ff9999', '#ffffff']
    """
    return [f"#{r:02x}{g:02x}{b:02x}" for r, g, b in rgb_table(keys).tolist()]


def rgb_of(index: int) -> tuple[int, int, int]:
    """The colour of one index, as (r, g, b).

    >>> rgb_of(0), rgb_of(-1)
    ((255, 153, 153), (255, 255, 255))
    """
    return tuple(rgb_table([index])[0].tolist())


def hex_of(index: int) -> str:
    """``#rrggbb`` of one index.

    >>> hex_of(0)
    '#ff9999'
    """
    return hex_table([index])[0]


def placements(fig: Figure) -> tuple[dict[str, tuple[int, int]], int, int]:
    """Where each panel's top-left cell goes, in cell units, and the drawing's width, height.

    CuTe's arrangement: C at the origin, A to its left, B above it; one row and one column
    of margin for index labels (the gap between panels holds A's k and B's k labels).

    >>> from cutemma.mma import make_mma_atom
    >>> placements(mma_figure(make_mma_atom('SM70_8x8x4_F32F16F16F32_NT')))
    ({'A': (1, 6), 'B': (6, 1), 'C': (6, 6)}, 14, 14)
    """
    if fig.kind == "mma":
        M, N, K = fig.shape_mnk
        at = {"A": (1, K + 2), "B": (K + 2, 1), "C": (K + 2, K + 2)}
        return at, K + 2 + N, K + 2 + M
    if fig.kind == "copy":  # CuTe's print_latex_copy: S, then D (then banks) side by side
        at, x = {}, 1
        for p in fig.panels:
            at[p.name] = (x, 1)
            x += p.cols + 2
        return at, x - 1, 1 + max(p.rows for p in fig.panels)
    p = fig.panels[0]
    return {p.name: (1, 1)}, 1 + p.cols, 1 + p.rows


def index_labels(fig: Figure) -> list[tuple[str, int, int, str]]:
    """The edge labels: (text, x, y, 'row' or 'col') in cell units, one per row/column index
    of each panel; row labels sit left of the panel, column labels above it.

    >>> index_labels(layout_figure(Layout(2, 1)))
    [('0', 0, 1, 'row'), ('0', 1, 0, 'col'), ('1', 2, 0, 'col')]
    """
    at, _, _ = placements(fig)
    out = []
    for p in fig.panels:
        if fig.kind == "mma" and p.name == "C":
            continue  # C's m and n are read off A (left) and B (above)
        x0, y0 = at[p.name]
        out += [(str(r), x0 - 1, y0 + r, "row") for r in range(p.rows)]
        out += [(str(c), x0 + c, y0 - 1, "col") for c in range(p.cols)]
    return out
