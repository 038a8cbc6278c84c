"""Shared-memory layouts by CuTe's own names: ``GMMA::Layout_K_SW128_Atom<T>`` and
``tile_to_shape`` of one.

cutemma's atoms (``gmma_layout_atom``) are in element units: ``Sw<3,3,3> o 0 o (8,64):(64,1)``
for 16-bit K-major SW128. CuTe's ``Layout_K_SW128_Atom<T>`` is the byte-unit atom upcast to
``T`` (cute/atom/mma_traits_sm90_gmma.hpp): it prints ``Sw<3,4,3> o smem_ptr[16b](unset) o
(_8,_64):(_64,_1)``, the swizzle still on bytes, and a tensor made from it over a
``smem_ptr<T>`` moves the swizzle onto the pointer, where it acts on byte addresses. So the
two are the same placement of elements: element ``i`` of the C++ tensor sits
``outer(inner(i))`` elements after an aligned base, which is cutemma's value (the witness in
tests/emit checks every value through such a tensor).

>>> from cutemma.smem import gmma_layout_atom
>>> from cutemma.layout import tile_to_shape
>>> smem_layout_expr(tile_to_shape(gmma_layout_atom("MN", "SW64", "f16"), (64, 32)), None)
'tile_to_shape(GMMA::Layout_MN_SW64_Atom<half_t>{}, make_shape(Int<64>{}, Int<32>{}))'
"""

from __future__ import annotations

from cutemma.emit.cpp_types import cpp_value_type
from cutemma.errors import CutemmaError
from cutemma.layout.int_tuple import is_tuple, product_each
from cutemma.layout.swizzle import ComposedLayout, Swizzle

# a C++ type of each width, for atoms whose dtype is not given (the layout depends only on it)
_DEFAULT_TYPE = {8: "uint8_t", 16: "half_t", 32: "float"}
_DEFAULT_DTYPE = {8: "u8", 16: "f16", 32: "f32"}


def _cpp_type(dtype, bits: int) -> str | None:
    if dtype is None:
        return _DEFAULT_TYPE.get(bits)
    return cpp_value_type(dtype)


def _candidates(sw: Swizzle, dtype):
    """(atom name, C++ type, cutemma atom) of every atom whose element swizzle is ``sw``."""
    from cutemma.smem.swizzle_atoms import SWIZZLE_MODES, element_bits, umma_layout_atom

    for mode in SWIZZLE_MODES:
        if (mode.bits, mode.shift) != (sw.bits, sw.shift):
            continue
        log2 = sw.base - mode.base + 4  # log2(elements per 16 bytes)
        if not 0 <= log2 <= 4:
            continue
        bits = 128 >> log2
        if dtype is not None and element_bits(dtype) != bits:
            continue
        cpp_t = _cpp_type(dtype, bits)
        if cpp_t is None or (dtype is None and bits not in _DEFAULT_DTYPE):
            continue
        for major in mode.majors:
            try:
                atom = umma_layout_atom(major, mode.name, dtype or _DEFAULT_DTYPE[bits])
            except CutemmaError:
                continue
            ns = "UMMA" if mode.gmma_code is None else "GMMA"
            yield f"{ns}::Layout_{major}_{mode.name}_Atom<{cpp_t}>{{}}", atom


def _shape_expr(shape) -> str:
    # a shared-memory tile's extents: far inside Int<n>'s 32-bit range
    return "make_shape(" + ", ".join(f"Int<{s}>{{}}" for s in shape) + ")"


def smem_layout_expr(c: ComposedLayout, dtype) -> str | None:
    """CuTe's name for ``c`` when it is a GMMA/UMMA atom or ``tile_to_shape`` of one (in
    column-major or row-major order of the repeats), else None."""
    from cutemma.layout import tile_to_shape

    if not isinstance(c.outer, Swizzle) or c.offset != 0:
        return None
    target = product_each(c.shape)
    target = target if is_tuple(target) else (target,)
    for name, atom in _candidates(c.outer, dtype):
        if atom == c:
            return name
        if len(target) < 2:
            continue
        r = len(target)
        orders = (None, tuple(range(r - 1, -1, -1))) if r == 2 else (None, (1, 0, *range(2, r)))
        for order in orders:
            try:
                tiled = tile_to_shape(atom, target, order)
            except CutemmaError:
                break
            if tiled == c and str(tiled) == str(c):
                step = (
                    ""
                    if order is None
                    else ", Step<" + ",".join(f"Int<{o + 1}>" for o in order) + ">{}"
                )
                return f"tile_to_shape({name}, {_shape_expr(target)}{step})"
    return None
