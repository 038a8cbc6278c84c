"""Copy atoms: CopyOperation + CopyTraits = CopyAtom, and the catalog of CuTe's copies.

:mod:`cutemma.copy.tma` (hopper) holds the TMA host side (tensor maps, box derivation);
:mod:`cutemma.copy.tma_atoms` sizes the TMA copy atoms from it.

>>> atom = make_copy_atom('SM75_U32x4_LDSM_N', 'f16')
>>> atom.num_val_src, atom.num_val_dst
(8, 8)
"""

from cutemma.copy.atom import CopyAtom, ValueType, value_type
from cutemma.copy.catalog import (
    CopyFamily,
    copy_families,
    copy_op,
    copy_ops,
    copy_traits,
    is_copy_name,
    make_copy_atom,
    parse_copy_name,
    register_copy_family,
)
from cutemma.copy.operation import CopyOperation, Operand
from cutemma.copy.traits import CopyTraits

__all__ = [
    "CopyAtom",
    "CopyFamily",
    "CopyOperation",
    "CopyTraits",
    "Operand",
    "ValueType",
    "copy_families",
    "copy_op",
    "copy_ops",
    "copy_traits",
    "is_copy_name",
    "make_copy_atom",
    "parse_copy_name",
    "register_copy_family",
    "value_type",
]
