"""Jupyter: every drawable object gives text/plain plus exactly one rich rendering.

A notebook stores what ``_repr_mimebundle_`` returns (and what any other ``_repr_*_`` method
returns besides), so one rendering per object keeps notebooks small: before issue 13 a GMMA
atom stored its SVG and the HTML explorer, 3.6 MB.
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import numpy as np
import pytest
from viz_parse import svg_panels

import cutemma as cm
from cutemma.errors import CutemmaError
from cutemma.viz import jupyter, to_html, to_svg

RICH = {"image/svg+xml", "text/html", "image/png", "text/latex", "text/markdown"}
SM80 = "SM80_16x8x16_F32F16F16F32_TN"


def _objects() -> dict:
    tiled = cm.make_tiled_mma(SM80, (2, 2))
    tile = cm.tile_to_shape(cm.gmma_layout_atom("K", "SW128", "bf16"), (64, 64))
    return {
        "layout": (cm.Layout((4, 8), (8, 1)), "image/svg+xml"),
        "composed": (tile, "image/svg+xml"),
        "atom": (cm.make_mma_atom(SM80), "image/svg+xml"),
        "tiled": (tiled, "image/svg+xml"),
        "thr": (tiled.get_slice(5), "image/svg+xml"),
        "tensor": (tiled.get_slice(5).partition_C(cm.make_identity_tensor((32, 16))), "text/html"),
        "gmma_desc": (cm.make_gmma_desc(tile, "K", "bf16"), "image/svg+xml"),
        "umma_desc": (
            cm.make_umma_desc(
                cm.tile_to_shape(cm.umma_layout_atom("K", "SW128", "bf16"), (64, 64)), "K", "bf16"
            ),
            "image/svg+xml",
        ),
        "instr_desc": (cm.make_instr_desc("tf32", "tf32", "tf32", "f32", 64, 8), "image/svg+xml"),
    }


OBJECTS = _objects()


@pytest.mark.parametrize("key", sorted(OBJECTS))
def test_one_rich_rendering_plus_text(key):
    obj, mime = OBJECTS[key]
    bundle = obj._repr_mimebundle_()
    assert set(bundle) == {"text/plain", mime}
    assert bundle["text/plain"] == repr(obj)
    # no other _repr_*_ hook that IPython would also call and store
    hooks = [a for a in dir(obj) if a.startswith("_repr_") and a != "_repr_mimebundle_"]
    assert hooks == []


@pytest.mark.parametrize("key", sorted(OBJECTS))
def test_ipython_stores_one_rendering(key):
    formatter = pytest.importorskip("IPython.core.formatter")
    obj, mime = OBJECTS[key]
    data, _ = formatter.DisplayFormatter().format(obj)
    assert set(data) == {"text/plain", mime}


def test_gmma_atom_notebook_output_is_one_svg():
    atom = cm.make_mma_atom("SM90_64x256x16_F32BF16BF16_SS", a_major="K", b_major="K")
    bundle = atom._repr_mimebundle_()
    stored = sum(len(v) for v in bundle.values())
    svg = to_svg(atom, compact=True, labels=False)  # issue 22: the full one is 1.8 MB
    assert bundle["image/svg+xml"] == svg
    assert stored == len(svg) + len(repr(atom))
    # the old output stored the SVG and the HTML page (which embeds the SVG again)
    assert stored < 0.55 * (len(to_svg(atom)) + len(to_html(atom)))
    assert stored < 200_000


def test_html_mode_switches_pictures_to_the_explorer():
    L = cm.Layout((2, 4))
    jupyter.use("html")
    try:
        bundle = L._repr_mimebundle_()
    finally:
        jupyter.use("svg")
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/html"] == to_html(L)
    assert set(L._repr_mimebundle_()) == {"text/plain", "image/svg+xml"}
    with pytest.raises(CutemmaError, match="'svg'"):
        jupyter.use("png")


def test_include_exclude_are_honoured():
    L = cm.Layout(4)
    assert set(L._repr_mimebundle_(include=["text/plain"])) == {"text/plain"}
    assert set(L._repr_mimebundle_(exclude=["image/svg+xml"])) == {"text/plain"}


def test_huge_objects_show_text_only_and_fast():
    start = time.perf_counter()
    bundle = cm.Layout((100000, 100000), (1, 100000))._repr_mimebundle_()
    big = cm.make_identity_tensor((512, 512))._repr_mimebundle_()
    assert time.perf_counter() - start < 1.0
    assert bundle == {"text/plain": "(100000,100000):(1,100000)"}
    assert set(big) == {"text/plain"} and "262144 elements" in big["text/plain"]


def test_thr_mma_picture_colours_exactly_its_partition():
    tiled = cm.make_tiled_mma(SM80, (2, 2))
    M, N, K = tiled.tile_size_mnk
    for thr_idx in (0, 5, 77):
        thr = tiled.get_slice(thr_idx)
        panels = svg_panels(thr._repr_mimebundle_()["image/svg+xml"])
        for which, shape in (("C", (M, N)), ("A", (M, K))):
            p = panels[which]
            mine = {
                divmod(i, p["cols"])
                for i, r in enumerate(p["rects"])
                if r.get("data-t") == str(thr_idx)
            }
            others = {r.get("data-t") for r in p["rects"]} - {str(thr_idx), "-1"}
            # the partition of an identity tensor is an independent path to the same cells
            part = getattr(thr, f"partition_{which}")(cm.make_identity_tensor(shape))
            assert mine == set(part.tolist())
            assert others == set()


def test_tensor_table_holds_every_element_in_print_tensor_order():
    t = cm.make_tensor(np.arange(24, dtype=np.int32), cm.Layout((2, 3, 4)))
    html = t._repr_mimebundle_()["text/html"]
    assert html.count("<table") == 4 and html.count("<td") == 24
    # row m of table k holds t(m, n, k) for n = 0..2
    first_row = html.split("<tr>")[1].split("</tr>")[0]
    assert [int(x.split(">")[1]) for x in first_row.split("</td>")[:-1]] == [0, 2, 4]
    assert "(2,3,4):(1,2,6)" in html


@pytest.mark.parametrize("key", ["gmma_desc", "umma_desc", "instr_desc"])
def test_descriptor_picture_holds_every_field(key):
    import xml.etree.ElementTree as ET

    desc, _ = OBJECTS[key]
    root = ET.fromstring(desc._repr_mimebundle_()["image/svg+xml"])
    raw, seen = 0, set()
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        if g.get("class") == "field" and g.get("data-name") not in seen:
            seen.add(g.get("data-name"))
            raw |= int(g.get("data-value")) << int(g.get("data-lo"))
    assert raw == desc.raw  # the boxes rebuild the descriptor bit for bit


LOWER = ("layout", "tensor.py", "mma", "tiled", "smem", "display.py")


def test_lower_layers_do_not_import_viz():
    root = Path(cm.__file__).parent
    files = [p for name in LOWER for p in ((root / name).rglob("*.py") if (root / name).is_dir()
             else [root / name])]  # fmt: skip
    assert len(files) > 20
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("cutemma.viz"), path
            if isinstance(node, ast.Import):
                assert all(not a.name.startswith("cutemma.viz") for a in node.names), path
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
                arg = node.args[0] if node.args else None  # importlib.import_module("...")
                assert not (isinstance(arg, ast.Constant) and "cutemma.viz" in arg.value), path
