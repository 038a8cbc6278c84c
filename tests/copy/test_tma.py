"""TMA boxes from smem layouts and the cuTensorMapEncodeTiled arguments (CPU; no driver call).

Expected values by independent reasoning: a 128-byte K-major swizzle row of bf16 is 64
elements, so a (128, 64) K-major tile is one (64, 128) box of 16 KiB; an MN-major tile tiled
along K first takes one 64-row box per 64 MN elements, 64 x 64 x 2 = 8 KiB apart. The
driver's enum values come from cuda.bindings itself where it is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.copy.tma import (
    TMA_DTYPES,
    TMA_RULES,
    TMA_SWIZZLES,
    tensor_map_args,
    tma_box,
)
from cutemma.errors import TmaError
from cutemma.layout import ComposedLayout, Layout, Swizzle, tile_to_shape
from cutemma.smem import gmma_layout_atom


def _tile(major, sw, dtype, shape, order=None):
    return tile_to_shape(gmma_layout_atom(major, sw, dtype), shape, order)


def test_k_major_sw128_is_one_box():
    box = tma_box(_tile("K", "SW128", "bf16", (128, 64)), "bf16", "K")
    assert box.box == (64, 128) and box.copies == ((0, 0, 0),)
    assert box.swizzle == "SW128" and box.bytes == 128 * 64 * 2


@pytest.mark.parametrize("sw,width", [("SW64", 32), ("SW32", 16)])
def test_narrower_swizzles(sw, width):
    box = tma_box(_tile("K", sw, "f16", (64, width)), "f16", "K")
    assert box.box == (width, 64) and box.swizzle == sw


def test_mn_major_takes_a_box_per_64_rows():
    box = tma_box(_tile("MN", "SW128", "bf16", (256, 64), (1, 0)), "bf16", "MN")
    assert box.box == (64, 64)
    assert [c[:2] for c in box.copies] == [(0, 0), (64, 0), (128, 0), (192, 0)]
    assert [c[2] * 2 for c in box.copies] == [0, 8192, 16384, 24576]


def test_model_fills_the_tile():
    """Simulate the copies (dense box, byte swizzle) and read the tile back through the
    layout: every element of a global matrix arrives where the layout says."""
    lay = _tile("MN", "SW128", "f16", (128, 32), (1, 0))
    box = tma_box(lay, "f16", "MN")
    g = np.arange(128 * 32).reshape(32, 128)  # global (k, mn), mn contiguous
    smem = {}
    b0, b1 = box.box
    for dc, do, off in box.copies:
        for j in range(b1):
            for i in range(b0):
                byte = (off + i + b0 * j) * 2
                byte ^= ((byte >> 7) & 7) << 4  # 128B swizzle: bits [4,7) ^= [7,10)
                smem[byte] = g[do + j, dc + i]
    for mn in range(128):
        for k in range(32):
            assert smem[lay(mn, k) * 2] == g[k, mn]


def test_refusals_name_the_problem():
    # the byte-address swizzle given as if it were the element swizzle of bf16
    wrong = ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    with pytest.raises(TmaError, match="cannot produce the swizzle"):
        tma_box(wrong, "bf16", "K")
    with pytest.raises(TmaError, match="no stride-1 run"):
        tma_box(_tile("MN", "SW128", "bf16", (64, 64)), "bf16", "K")
    padded = Layout((64, 64), (72, 1))  # rows padded to 144 bytes: boxes off 128 bytes
    with pytest.raises(TmaError, match="not on 128 bytes"):
        tma_box(padded, "bf16", "K")
    with pytest.raises(TmaError, match="element type"):
        tma_box(_tile("K", "SW128", "bf16", (64, 64)), "f64", "K")


def test_tensor_map_args_follow_the_driver_rules():
    box = tma_box(_tile("K", "SW128", "bf16", (128, 64)), "bf16", "K")
    a = tensor_map_args(box, 0x7F0000001000, (4096, 300), (4104,))
    assert a.global_strides == (8208,) and a.box_dim == (64, 128) and a.rank == 2
    assert a.swizzle == TMA_SWIZZLES["SW128"].value and a.oob_fill == 0
    with pytest.raises(TmaError, match="not 16-byte aligned"):
        tensor_map_args(box, 0x7F0000001008, (4096, 300), (4096,))
    with pytest.raises(TmaError, match="multiple of 16 bytes"):
        tensor_map_args(box, 0x7F0000001000, (4095, 300), (4095,))
    with pytest.raises(TmaError, match="zero"):
        tensor_map_args(box, 0x7F0000001000, (64, 300, 4), (64, 0))
    with pytest.raises(TmaError, match=r"\[1, 2\^32\]"):
        tensor_map_args(box, 0x7F0000001000, (0, 300), (64,))
    assert TMA_RULES.max_box == 256 and TMA_RULES.stride_multiple == 16


def test_enums_match_the_driver():
    driver = pytest.importorskip("cuda.bindings.driver")
    for sw in TMA_SWIZZLES.values():
        assert int(getattr(driver.CUtensorMapSwizzle, sw.enum)) == sw.value
    for name, value, _ in TMA_DTYPES.values():
        assert int(getattr(driver.CUtensorMapDataType, name)) == value
