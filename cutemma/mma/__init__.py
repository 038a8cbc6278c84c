"""MMA atoms: numeric types, Operation + Traits = MmaAtom, and the catalog.

>>> atom = make_mma_atom('SM80_16x8x16_F32BF16BF16F32_TN')
>>> atom.shape_mnk, str(atom.val_type_A)
((16, 8, 16), 'bf16')
"""

from cutemma.mma.atom import MmaAtom
from cutemma.mma.catalog import (
    Family,
    families,
    make_mma_atom,
    mma_op,
    mma_ops,
    register_family,
    traits_of,
)
from cutemma.mma.names import MmaName, format_name, parse_name
from cutemma.mma.operation import Extra, Operation, RegArray
from cutemma.mma.traits import Traits, tv_table
from cutemma.mma.types import TYPES, NumericType, numeric_type

__all__ = [
    "TYPES",
    "Extra",
    "Family",
    "MmaAtom",
    "MmaName",
    "NumericType",
    "Operation",
    "RegArray",
    "Traits",
    "families",
    "format_name",
    "make_mma_atom",
    "mma_op",
    "mma_ops",
    "numeric_type",
    "parse_name",
    "register_family",
    "traits_of",
    "tv_table",
]
