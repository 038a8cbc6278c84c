"""The tile scheduler of both families: which output tile a CTA (or a persistent CTA's
iteration) computes. sm80: one CTA per tile, ``blockIdx.x`` in grouped raster order
(GROUP_M tile rows sweep the tile columns together: L2 reuse), the problem of a batched
call in ``blockIdx.y``. sm90: persistent CTAs walking tile indices ``blockIdx.x``,
``+gridDim.x``, ... (a cluster walks cluster tiles; pingpong warpgroups every other tile),
the problem outermost in a batched kernel, the same grouped raster inside it.

>>> "GROUP_M" in raster_sm80() and "GROUP_M" in raster_sm90()
True
"""

from __future__ import annotations

from typing import Any

# the raster's `GROUP_M * tiles_n` is a 32-bit int in both families' kernels: keep group_m
# far below (GemmConfig and Sm90Config refuse more)
GROUP_M_MAX = 1 << 16
# a last wave of tiles at least this full counts as a full one (sm90: 128x256 tiles from this
# share of a wave up when K is long, pick.py; no stream-K when the whole tiles fill their last
# wave to it, sm90/streamk.py)
FULL_WAVE = 0.95


def raster_sm80() -> str:
    """Block index -> (m0, n0) of the sm80 kernel: one CTA per tile, grouped raster."""
    return """\
// grouped rasterization: group_m tile rows sweep the tile columns together (L2 reuse)
const int tiles_m = (M + BLOCK_M - 1) / BLOCK_M, tiles_n = (N + BLOCK_N - 1) / BLOCK_N;
const int per_group = GROUP_M * tiles_n;
const int group = blockIdx.x / per_group, first_m = group * GROUP_M;
const int rows_in_group = min(tiles_m - first_m, GROUP_M);
const int tile_m = first_m + (blockIdx.x % per_group) % rows_in_group;
const int tile_n = (blockIdx.x % per_group) / rows_in_group;
const int m0 = tile_m * BLOCK_M, n0 = tile_n * BLOCK_N;"""


def raster_sm90(
    cluster: int = 1, along: str = "M", batched: bool = False, mn: tuple[int, int] = (2, 2)
) -> str:
    """Tile index -> (m0, n0) (and the problem ``l`` of a batched kernel). ``along``: the
    pairs of a cluster share an N tile ('M': they take M tiles 2i, 2i+1; B multicast) or an
    M tile ('N': N tiles 2j, 2j+1; A multicast); 'MN': a cluster of ``mn`` = (cm, cn) CTAs
    (powers of 2) takes cm M tiles by cn N tiles, rank r at M position r % cm and N
    position r / cm (both multicast).

    Batched: the problem is the outermost part of the index (``tiles_l`` tiles each), so
    the CTAs running at one time work on one or two problems and the grouped raster
    inside a problem keeps its L2 reuse (its A rows and B columns are read by the CTAs
    of a group together); problem-innermost would spread a wave over many problems
    whose operands share nothing.
    """
    t = "tile_l" if batched else "tile"
    head = (
        "// batch outermost: one problem's tiles are consecutive (its grouped raster's L2 reuse)\n"
        "const int l = tile / tiles_l, tile_l = tile - l * tiles_l;\n"
        if batched
        else ""
    )
    if cluster == 1:
        return (
            head
            + f"""\
// grouped raster of tile index `{t}`: GROUP_M tile rows sweep the tile columns together
const int per_group = GROUP_M * tiles_n;
const int group = {t} / per_group, first_m = group * GROUP_M;
const int rows_in_group = min(tiles_m - first_m, GROUP_M);
const int m0 = (first_m + ({t} % per_group) % rows_in_group) * BLOCK_M;
const int n0 = (({t} % per_group) / rows_in_group) * BLOCK_N;"""
        )
    if along == "MN":
        cm, cn = mn
        shift = cm.bit_length() - 1  # (rank / cm)
        return (
            head
            + f"""\
// grouped raster of cluster tile `{t}` over ({cm} M tiles) x ({cn} N tiles): this CTA takes M tile
// {cm} * row + rank % {cm} and N tile {cn} * column + rank / {cm} (past M or N: TMA fills zeros, the
// epilogue stores nothing)
const int per_group = GROUP_M * tiles_nc;
const int group = {t} / per_group, first_m = group * GROUP_M;
const int rows_in_group = min(tiles_mc - first_m, GROUP_M);
const int m0 = ({cm} * (first_m + ({t} % per_group) % rows_in_group) + (int)(rank & {cm - 1})) * BLOCK_M;
const int n0 = ({cn} * (({t} % per_group) / rows_in_group) + (int)(rank >> {shift})) * BLOCK_N;"""
        )
    if along == "N":
        return (
            head
            + f"""\
// grouped raster of cluster tile `{t}` over M x ({cluster} N tiles): this CTA takes N tile
// {cluster} * column + rank (past N: TMA fills zeros, the epilogue stores nothing)
const int per_group = GROUP_M * tiles_nc;
const int group = {t} / per_group, first_m = group * GROUP_M;
const int rows_in_group = min(tiles_m - first_m, GROUP_M);
const int m0 = (first_m + ({t} % per_group) % rows_in_group) * BLOCK_M;
const int n0 = ({cluster} * (({t} % per_group) / rows_in_group) + rank) * BLOCK_N;"""
        )
    return (
        head
        + f"""\
// grouped raster of cluster tile `{t}` over ({cluster} M tiles) x N: this CTA takes M tile
// {cluster} * row + rank (past M: TMA fills zeros, the epilogue stores nothing)
const int per_group = GROUP_M * tiles_n;
const int group = {t} / per_group, first_m = group * GROUP_M;
const int rows_in_group = min(tiles_mc - first_m, GROUP_M);
const int m0 = (({cluster} * (first_m + ({t} % per_group) % rows_in_group)) + rank) * BLOCK_M;
const int n0 = (({t} % per_group) / rows_in_group) * BLOCK_N;"""
    )


def tile_counts_sm90(
    cluster: int, multicast: str, batched: bool, mn: tuple[int, int] = (2, 2), kcluster: int = 1
) -> str:
    """The tile count the persistent loop walks (batched: L problems of ``tiles_l``); a
    cluster's pairs run along N (``multicast`` 'A') or along M ('B'); 'AB': ``mn`` = (cm,
    cn) CTAs along M and N. ``kcluster`` > 1 with pairs: the cluster holds ``kcluster``
    pairs (``crank``: the CTA's cluster rank; ``rank``: its place in its pair)."""
    k_tiles = "k_tiles = (K + BLOCK_K - 1) / BLOCK_K;"
    if cluster == 1:
        per, pairs = "tiles_m * tiles_n", ""
    elif multicast == "AB":
        cm, cn = mn
        per, pairs = (
            "tiles_mc * tiles_nc",
            f"tiles_mc = (tiles_m + {cm - 1}) / {cm}, tiles_nc = (tiles_n + {cn - 1}) / {cn}, ",
        )
    elif multicast == "A":
        per, pairs = "tiles_m * tiles_nc", f"tiles_nc = (tiles_n + {cluster - 1}) / {cluster}, "
    else:
        per, pairs = "tiles_mc * tiles_n", f"tiles_mc = (tiles_m + {cluster - 1}) / {cluster}, "
    tiles = f"tiles_l = {per}, tiles = L * tiles_l" if batched else f"tiles = {per}"
    if cluster == 1:
        return f"const int {tiles}, {k_tiles}"
    if kcluster > 1:
        return (
            f"const int {pairs}{tiles}, {k_tiles}\n"
            f"const uint32_t crank = cluster_rank(), rank = crank % {cluster};"
            "  // this CTA's place in its cluster, and in its pair"
        )
    return (
        f"const int {pairs}{tiles}, {k_tiles}\n"
        "const uint32_t rank = cluster_rank();  // this CTA's place in its cluster"
    )


def tile_loop_sm90(config: Any, pingpong_consumer: bool = False) -> str:
    """The persistent loop over the CTA's tiles: a cluster of CL consecutive blocks walks the
    cluster tiles together; a pingpong consumer warpgroup takes every other tile."""
    CL = config.cluster
    if pingpong_consumer:
        return "for (int tile = blockIdx.x + wg * gridDim.x; tile < tiles; tile += 2 * gridDim.x) {"
    if CL == 1:
        return "for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {"
    return f"for (int tile = blockIdx.x / {CL}; tile < tiles; tile += gridDim.x / {CL}) {{"
