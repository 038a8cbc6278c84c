"""Random cases where cutemma still differs from C++, each with the notes entry that tracks it.

``{case key: "notes/divergences.md#<entry>"}`` (the shared notes, /work/wt/notes/divergences.md, section
"[algebra] from cpp-suite"). test_algebra_random marks a group expected-fail while its only
mismatches are listed here; anything else that differs fails the test.
"""

OPEN: dict[str, str] = {
    "divide_tiler/flat_divide/0096": "notes/divergences.md#cpp-suite-negative-strides",
    "divide_tiler/logical_divide/0096": "notes/divergences.md#cpp-suite-negative-strides",
    "divide_tiler/tiled_divide/0096": "notes/divergences.md#cpp-suite-negative-strides",
    "divide_tiler/zipped_divide/0068": "notes/divergences.md#cpp-suite-zipped-divide-underscore",
    "divide_tiler/zipped_divide/0096": "notes/divergences.md#cpp-suite-negative-strides",
    "product_layout/flat_product/0030": "notes/divergences.md#cpp-suite-negative-strides",
    "product_layout/logical_product/0030": "notes/divergences.md#cpp-suite-negative-strides",
    "product_layout/tiled_product/0030": "notes/divergences.md#cpp-suite-negative-strides",
    "product_layout/zipped_product/0030": "notes/divergences.md#cpp-suite-negative-strides",
    "product_tiler/flat_product/0011": "notes/divergences.md#cpp-suite-product-weak-stride",
    "product_tiler/flat_product/0038": "notes/divergences.md#cpp-suite-product-weak-stride",
    "product_tiler/flat_product/0049": "notes/divergences.md#cpp-suite-negative-strides",
    "product_tiler/flat_product/0066": "notes/divergences.md#cpp-suite-product-weak-stride",
    "product_tiler/logical_product/0011": "notes/divergences.md#cpp-suite-product-weak-stride",
    "product_tiler/logical_product/0038": "notes/divergences.md#cpp-suite-product-weak-stride",
    "product_tiler/logical_product/0049": "notes/divergences.md#cpp-suite-negative-strides",
    "product_tiler/logical_product/0066": "notes/divergences.md#cpp-suite-product-weak-stride",
    "product_tiler/tiled_product/0011": "notes/divergences.md#cpp-suite-product-weak-stride",
    "product_tiler/tiled_product/0038": "notes/divergences.md#cpp-suite-product-weak-stride",
    "product_tiler/tiled_product/0049": "notes/divergences.md#cpp-suite-negative-strides",
    "product_tiler/tiled_product/0066": "notes/divergences.md#cpp-suite-product-weak-stride",
    "product_tiler/zipped_product/0011": "notes/divergences.md#cpp-suite-product-weak-stride",
    "product_tiler/zipped_product/0038": "notes/divergences.md#cpp-suite-product-weak-stride",
    "product_tiler/zipped_product/0049": "notes/divergences.md#cpp-suite-negative-strides",
    "product_tiler/zipped_product/0066": "notes/divergences.md#cpp-suite-product-weak-stride",
    "tile_to_shape/tile_to_shape/0068": "notes/divergences.md#cpp-suite-product-weak-stride",
    "tile_to_shape/tile_to_shape/0099": "notes/divergences.md#cpp-suite-product-weak-stride",
    "tile_to_shape/tile_to_shape/0128": "notes/divergences.md#cpp-suite-product-weak-stride",
    "tile_to_shape_order/tile_to_shape/0000": "notes/divergences.md#cpp-suite-product-weak-stride",
    "tile_to_shape_order/tile_to_shape/0050": "notes/divergences.md#cpp-suite-product-weak-stride",
    "tile_to_shape_order/tile_to_shape/0137": "notes/divergences.md#cpp-suite-product-weak-stride",
    "tile_to_shape_order/tile_to_shape/0149": "notes/divergences.md#cpp-suite-product-weak-stride",
}
