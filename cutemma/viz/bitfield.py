"""SVG pictures of descriptor words: every field a box over its bits, named, with its value.

A 64-bit word is drawn as two rows of 32 bits (63..32 above 31..0), a 32-bit word as one,
high bits on the left as the PTX ISA draws its descriptor tables. Bits no field covers are
grey. Under the boxes, the descriptor's own ``describe()`` lines say what the numbers mean.

>>> from cutemma.smem import GmmaDescriptor
>>> svg = descriptor_svg(GmmaDescriptor(stride_byte_offset=64, layout_type=1))
>>> svg.startswith('<svg') and svg.count('class="field"')
5
"""

from __future__ import annotations

from html import escape

from cutemma.viz.grid import hex_table

BIT_W = 22  # px per bit
ROW_H = 54  # px per row of 32 bits (bit numbers + box)
LINE_H = 16


def word_fields(desc) -> tuple[str, int, int, list[tuple[str, int, int, int]], list[str]]:
    """(title, width in bits, raw, [(name, lo, width, value)], explanation lines) of a
    shared-memory descriptor (``TABLE``, 64 bits) or a tcgen05 instruction descriptor (32 bits).

    >>> from cutemma.smem import GmmaDescriptor
    >>> title, bits, raw, fields, lines = word_fields(GmmaDescriptor(layout_type=1))
    >>> bits, fields[-1]
    (64, ('layout_type', 62, 2, 1))
    """
    text = desc.describe().splitlines()
    if hasattr(desc, "TABLE"):
        table, values, bits = desc.TABLE, desc.values(), 64
    else:  # InstrDescriptor: its kind's table, the 32-bit instruction descriptor
        from cutemma.smem.bitfield import unpack
        from cutemma.smem.instr_desc import _kind

        table, bits = _kind(desc.kind).table, 32
        values = unpack(table, desc.raw)
    fields = [(f.name, f.lo, f.width, int(values.get(f.name, f.fixed or 0))) for f in table]
    return text[0], bits, desc.raw, fields, text[1:]


def descriptor_svg(desc) -> str:
    """An SVG of a GmmaDescriptor, UmmaDescriptor or InstrDescriptor.

    >>> from cutemma.smem import make_instr_desc
    >>> 'n_dim' in descriptor_svg(make_instr_desc("tf32", "tf32", "tf32", "f32", 64, 8))
    True
    """
    title, bits, raw, fields, lines = word_fields(desc)
    rows = bits // 32
    colours = hex_table(range(len(fields)))
    top = 30
    width = 32 * BIT_W + 20
    height = top + rows * ROW_H + 10 + LINE_H * len(lines)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" '
        'text-anchor="middle" dominant-baseline="central">',
        f"<title>{escape(title)}</title>",
        f'<text x="10" y="14" font-size="14" font-weight="bold" text-anchor="start">'
        f"{escape(title)}</text>",
    ]

    def x_of(bit: int) -> int:  # left edge of a bit's cell; high bits on the left
        return 10 + (31 - bit % 32) * BIT_W

    for r in range(rows):
        hi = bits - 1 - 32 * r
        y = top + r * ROW_H
        out.append(f'<g class="bits" font-size="8" fill="#555" data-row="{r}">')
        for b in range(hi, hi - 32, -1):
            out.append(f'<text x="{x_of(b) + BIT_W / 2:g}" y="{y + 6}">{b}</text>')
        out.append("</g>")
        out.append(
            f'<rect x="10" y="{y + 12}" width="{32 * BIT_W}" height="34" fill="#e8e8e8" '
            'stroke="#999"/>'
        )
    for (name, lo, w, value), colour in zip(fields, colours):
        # a field never crosses bit 32 in these tables; split it if one ever does
        for part_lo, part_hi in _row_parts(lo, lo + w - 1):
            r = (bits - 1 - part_hi) // 32
            y = top + r * ROW_H + 12
            x0, x1 = x_of(part_hi), x_of(part_lo) + BIT_W
            label = name if (x1 - x0) >= 6 * len(name) else name[: max(1, (x1 - x0) // 6)]
            out.append(
                f'<g class="field" data-name="{name}" data-lo="{lo}" data-width="{w}" '
                f'data-value="{value}"><rect x="{x0}" y="{y}" width="{x1 - x0}" height="34" '
                f'fill="{colour}" stroke="#000"/>'
                f'<text x="{(x0 + x1) / 2:g}" y="{y + 10}" font-size="9">{escape(label)}</text>'
                f'<text x="{(x0 + x1) / 2:g}" y="{y + 24}" font-size="11">{value}</text></g>'
            )
    y = top + rows * ROW_H + 10
    out.append('<g class="legend" font-size="12" text-anchor="start" font-family="monospace">')
    for i, line in enumerate(lines):
        out.append(
            f'<text x="10" y="{y + LINE_H * i + 6}" xml:space="preserve">{escape(line)}</text>'
        )
    out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _row_parts(lo: int, hi: int) -> list[tuple[int, int]]:
    parts = []
    while lo <= hi:
        end = min(hi, (lo // 32) * 32 + 31)
        parts.append((lo, end))
        lo = end + 1
    return parts


__all__ = ["descriptor_svg", "word_fields"]
