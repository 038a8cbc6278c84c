"""The kernels' element types: their size in bytes and the C type each is held in.

Kernel type names, not torch's: 'f16', 'bf16', 'tf32' (float32 multiplied as tf32), 's8',
the fp8 kinds 'e4m3' and 'e5m2', and the mixed fp8 pairs '<A type>_<B type>'.

>>> ELEM_BYTES["tf32"], OUT_TYPES["bf16"]
(4, 'uint16_t')
"""

from __future__ import annotations

FP8_KINDS = ("e4m3", "e5m2", "e4m3_e5m2", "e5m2_e4m3")  # a mixed pair: A's type, then B's
ELEM_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "s8": 1} | {fp8: 1 for fp8 in FP8_KINDS}
# what an output or C element is held in (16-bit floats as their bits)
OUT_TYPES = {"f32": "float", "f16": "uint16_t", "bf16": "uint16_t", "s32": "int"}
OUT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "s32": 4}  # (the size of each OUT_TYPES type)
