"""An independent reading of a shared-memory matrix descriptor, written from the PTX ISA text
(wgmma "Matrix Descriptor Format", "Shared Memory Matrix Layout"; tcgen05 "Shared memory
descriptor", "Major-ness supported by strides"), not from cutemma's layouts.

From the fields alone: the bit address of element (mn, k) of the block the hardware reads.
"""

# layout_type code -> (swizzle row bytes, swizzle granule bytes, rows per K group)
GMMA_CODES = {0: (16, 16, 8), 1: (128, 16, 8), 2: (64, 16, 8), 3: (32, 16, 8)}
UMMA_CODES = {0: (16, 16, 8), 1: (128, 32, 4), 2: (128, 16, 8), 4: (64, 16, 8), 6: (32, 16, 8)}


def swizzle_address(addr: int, row_bytes: int, granule: int) -> int:
    """The swizzle patterns: inside each swizzle row the granule index is XORed with the row
    number ((addr / 128) mod (granules per row)): 16-byte chunks for 32/64/128B, 32-byte
    chunks for 128B with 32-byte atomicity."""
    if row_bytes == 16:
        return addr
    n = row_bytes // granule
    return addr ^ (((addr >> 7) % n) * granule)


def hw_bit_address(raw_fields: dict, codes: dict, major: str, bits: int, mn: int, k: int) -> int:
    row_bytes, granule, g = codes[raw_fields["layout_type"]]
    start = raw_fields["start_address"] << 4
    lbo = raw_fields["leading_byte_offset"] << 4
    sbo = raw_fields["stride_byte_offset"] << 4
    T = 128 // bits  # elements per 16 bytes
    if major == "K":
        row, col, e = mn, k // T, k % T  # rows of MN, 16-byte columns of K
        if row_bytes == 16:  # core matrices of 8 rows x 16 bytes; LBO along K, SBO along MN
            addr = start + (row // 8) * sbo + (row % 8) * 16 + col * lbo
        else:  # 8 rows of one swizzle row each; SBO from 8 rows to the next
            addr = start + (row // 8) * sbo + (row % 8) * row_bytes + col * 16
    else:
        col, e, row = mn // T, mn % T, k  # 16-byte columns of MN, rows of K
        if row_bytes == 16:  # core matrix: 8 K rows x 16 bytes of MN; SBO along MN, LBO along K
            addr = start + col * sbo + (row % 8) * 16 + (row // 8) * lbo
        else:  # swizzle rows of MN; LBO to the next row of MN, SBO to the next K group
            s = row_bytes // 16
            addr = start + (col % s) * 16 + (col // s) * lbo + (row % g) * row_bytes
            addr += (row // g) * sbo
    return swizzle_address(addr, row_bytes, granule) * 8 + e * bits
