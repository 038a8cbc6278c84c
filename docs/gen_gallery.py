"""The docs' pictures, drawn by cutemma itself.

``python docs/gen_gallery.py OUTDIR`` writes every picture as OUTDIR/<name>.svg; the MkDocs
hook (docs/hooks.py) calls :func:`pictures` at build time and adds them to the site as
``img/gallery/<name>.svg``, so no generated file is committed and the pictures always show
what the code draws.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import cutemma as cm
from cutemma.viz.bitfield import descriptor_svg
from cutemma.viz.jupyter import thread_figure

NT = "SM70_8x8x4_F32F16F16F32_NT"
N_MAJOR = cm.Layout((2, 2), (2, 1))


def _gmma_tile():
    return cm.tile_to_shape(cm.gmma_layout_atom("K", "SW128", "bf16"), (64, 64))


# name -> (caption, drawing function returning SVG text)
GALLERY: dict[str, tuple[str, Callable[[], str]]] = {
    "layout_3x2x3": (
        "The layout (3,(2,3)):(3,(12,1)): offsets, rows = mode 0",
        lambda: cm.to_svg(cm.Layout((3, (2, 3)), (3, (12, 1)))),
    ),
    "blocked_product": (
        "blocked_product of a 2x2 tile by a 3x4 matrix of tiles",
        lambda: cm.to_svg(cm.blocked_product(cm.Layout((2, 2)), cm.Layout((3, 4), (4, 1)))),
    ),
    "raked_product": (
        "raked_product of the same: the tiles interleaved",
        lambda: cm.to_svg(cm.raked_product(cm.Layout((2, 2)), cm.Layout((3, 4), (4, 1)))),
    ),
    "swizzle_8x64": (
        "Sw<3,4,3> o (8,64):(64,1): the 128-byte swizzle of 8-bit elements (element units)",
        lambda: cm.to_svg(cm.composition(cm.Swizzle(3, 4, 3), cm.Layout((8, 64), (64, 1)))),
    ),
    "gmma_sw128_bf16_atom": (
        "GMMA K-major SW128 layout atom for bf16 (element units: Sw<3,3,3>)",
        lambda: cm.to_svg(cm.gmma_layout_atom("K", "SW128", "bf16")),
    ),
    "sm70_nt_atom": (
        "SM70_8x8x4_F32F16F16F32_NT: the quadpair's A, B and C",
        lambda: cm.to_svg(cm.make_mma_atom(NT)),
    ),
    "sm70_2x2": (
        "Four quadpairs, atom layout (2,2):(2,1): a 16x16x4 TiledMMA",
        lambda: cm.to_svg(cm.make_tiled_mma(NT, N_MAJOR)),
    ),
    "sm70_2x2_32x32x4": (
        "The same 32 threads over a 32x32x4 tile",
        lambda: cm.to_svg(cm.make_tiled_mma(NT, N_MAJOR, (32, 32, 4))),
    ),
    "sm70_2x2_32Mx32x4": (
        "M permuted by (4,4,2):(1,8,4): each thread's A values contiguous",
        lambda: cm.to_svg(cm.make_tiled_mma(NT, N_MAJOR, (cm.Layout((4, 4, 2), (1, 8, 4)), 32, 4))),
    ),
    "sm80_16x8x16_bf16_atom": (
        "SM80_16x8x16_F32BF16BF16F32_TN: one warp (the home page's atom)",
        lambda: cm.to_svg(cm.make_mma_atom("SM80_16x8x16_F32BF16BF16F32_TN")),
    ),
    "sm80_16x8x16_atom": (
        "SM80_16x8x16_F32F16F16F32_TN: one warp",
        lambda: cm.to_svg(cm.make_mma_atom("SM80_16x8x16_F32F16F16F32_TN")),
    ),
    "sm80_thread5": (
        "ThrMMA: thread 5 of a 2x2-warp SM80 TiledMMA, its cells only",
        lambda: cm.to_svg(
            thread_figure(cm.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2)).get_slice(5))
        ),
    ),
    "sm90_64x8_atom": (
        "SM90_64x8x16_F16F16F16_SS: a warpgroup; A and B come from shared memory",
        lambda: cm.to_svg(cm.make_mma_atom("SM90_64x8x16_F16F16F16_SS", a_major="K", b_major="K")),
    ),
    "gmma_desc": (
        "The wgmma descriptor of a 64x64 bf16 K-major SW128 tile",
        lambda: descriptor_svg(cm.make_gmma_desc(_gmma_tile(), "K", "bf16", 0x400)),
    ),
    "umma_desc": (
        "The tcgen05 shared-memory descriptor of a 128x64 bf16 K-major SW128 tile",
        lambda: descriptor_svg(
            cm.make_umma_desc(
                cm.tile_to_shape(cm.umma_layout_atom("K", "SW128", "bf16"), (128, 64)),
                "K",
                "bf16",
            )
        ),
    ),
    "instr_desc": (
        "A tcgen05 instruction descriptor: kind::f16, bf16 x bf16 -> f32, 128x256",
        lambda: descriptor_svg(cm.make_instr_desc("f16", "bf16", "bf16", "f32", 128, 256)),
    ),
}


def pictures() -> dict[str, str]:
    """name -> SVG text of every gallery picture."""
    return {name: draw() for name, (_, draw) in GALLERY.items()}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python docs/gen_gallery.py OUTDIR", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name, svg in pictures().items():
        (out / f"{name}.svg").write_text(svg)
    print(f"{len(GALLERY)} pictures in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
