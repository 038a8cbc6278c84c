"""Copy atoms: CopyOperation + CopyTraits = CopyAtom, and the catalog of CuTe's copies.

:mod:`cutemma.copy.tma` (hopper) holds the TMA host side (tensor maps, box derivation);
:mod:`cutemma.copy.tma_atoms` sizes the TMA copy atoms from it.

>>> atom = make_copy_atom('SM75_U32x4_LDSM_N', 'f16')
>>> atom.num_val_src, atom.num_val_dst
(8, 8)

Each name loads its module when first asked for (a submodule by its name too, as an eager
package would have it loaded):

>>> import cutemma.copy
>>> cutemma.copy.make_copy_atom("SM75_U32x4_LDSM_N", "f16").num_val_src
8
"""

from typing import TYPE_CHECKING

from cutemma.lazy_exports import lazy_exports

if TYPE_CHECKING:  # what type checkers and the API reference (griffe) read; at run time each
    # name loads its module on first use (below)
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

# each name loads its module on first use: a cached GEMM kernel's launch imports
# cutemma.copy.tma_map alone (no atoms, catalog or layout algebra; issue 21, cold start)
_LAZY = {
    **dict.fromkeys(("CopyAtom", "ValueType", "value_type"), "atom"),
    **dict.fromkeys(
        ("CopyFamily", "copy_families", "copy_op", "copy_ops", "copy_traits", "is_copy_name",
         "make_copy_atom", "parse_copy_name", "register_copy_family"),
        "catalog",
    ),
    **dict.fromkeys(("CopyOperation", "Operand"), "operation"),
    "CopyTraits": "traits",
}  # fmt: skip


# the submodules an eager package had loaded (attributes after ``import cutemma.copy``)
_SUBMODULES = ("arch", "atom", "catalog", "operation", "traits")
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, submodules=_SUBMODULES)


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
