"""The C++ element types of cutemma's numeric types (``'bf16'`` -> ``bfloat16_t``): what every
part of the C++ rendering that names an element type asks.
"""

from __future__ import annotations

from cutemma.errors import AtomError, CopyError, EmitError


def cpp_value_type(dtype) -> str:
    """The C++ element type of a cutemma numeric type or spelling (``'bf16'`` -> bfloat16_t).

    >>> cpp_value_type("e4m3")
    'float_e4m3_t'
    """
    from cutemma.mma.types import NumericType, numeric_type

    if isinstance(dtype, NumericType):
        return dtype.cpp
    try:
        return numeric_type(dtype).cpp
    except AtomError:
        from cutemma.copy.atom import value_type

        try:
            return value_type(dtype).cpp
        except CopyError:
            raise EmitError(
                f"unknown element type {dtype!r}: give a cutemma numeric type ('f16', 'bf16', "
                "'tf32', 'e4m3', 's8', ...) or a C++ one ('half_t', 'uint32_t', ...)"
            ) from None


__all__ = ["cpp_value_type"]
