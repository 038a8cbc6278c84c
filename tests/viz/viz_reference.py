"""What the pictures must show, computed the slow, obvious way: by calling the layouts.

Nothing here uses cutemma.viz; the tests compare the renderers' output against it.
"""

from __future__ import annotations


def mma_layouts(obj):
    """((M, N, K), {panel: TV layout}, thread id map) of an MmaAtom or TiledMma."""
    if hasattr(obj, "tv_layout_C_tiled"):
        lays = {"A": obj.tv_layout_A_tiled, "B": obj.tv_layout_B_tiled, "C": obj.tv_layout_C_tiled}
        return tuple(obj.tile_size_mnk), lays, obj.thr_id
    lays = {"A": obj.tv_layout_A, "B": obj.tv_layout_B, "C": obj.tv_layout_C}
    return tuple(obj.shape_mnk), lays, obj.thr_id


def panel_dims(name: str, mnk) -> tuple[int, int]:
    M, N, K = mnk
    return {"A": (M, K), "B": (K, N), "C": (M, N)}[name]


def cell_of(name: str, offset: int, mnk) -> tuple[int, int]:
    """(row, col) of an offset in the drawn panel: A is m x k, B is k x n, C is m x n."""
    M, N, K = mnk
    if name == "B":  # n + k*N, drawn with k down and n across
        return offset // N, offset % N
    return offset % M, offset // M  # A: m + k*M, C: m + n*M


def size_of(mode) -> int:
    return mode.size()


def owners(obj) -> dict[str, dict[tuple[int, int], list[tuple[int, int]]]]:
    """panel -> cell -> every (displayed thread, value) landing there, in (t, v) order."""
    mnk, lays, thr = mma_layouts(obj)
    out = {}
    for name, lay in lays.items():
        cells: dict = {}
        # a layout's offset is the sum of its modes' offsets: lay(t, v) = lay(t, 0) + lay(0, v)
        t_off = [lay(t, 0) for t in range(size_of(lay[0]))]
        v_off = [lay(0, v) for v in range(size_of(lay[1]))]
        for t, to in enumerate(t_off):
            shown = thr(t)
            for v, vo in enumerate(v_off):
                cells.setdefault(cell_of(name, to + vo, mnk), []).append((shown, v))
        out[name] = cells
    return out


def thread_cells(obj, thread: int, own: dict | None = None) -> dict[str, set[tuple[int, int]]]:
    """panel -> the cells the displayed thread ``thread`` holds (``own``: owners(obj), reused)."""
    return {
        name: {cell for cell, tvs in cells.items() if any(t == thread for t, _ in tvs)}
        for name, cells in (own or owners(obj)).items()
    }
