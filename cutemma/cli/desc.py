"""``cutemma desc``: build a shared-memory tile and its matrix descriptor, or explain a raw one.

``cutemma desc --major K --swizzle 128 --dtype bf16 --tile 64x64`` prints the atom, the tile
layout, the canonical form it was recognised as, every descriptor field and the raw value.
``cutemma desc --decode 0x...`` explains a raw descriptor (sm100 when bit 46, its version bit,
is set, else sm90, unless ``--arch`` says). ``--kind f16 --decode 0x...`` reads a tcgen05
instruction descriptor instead.

>>> run(parse(["--major", "MN", "--swizzle", "64", "--dtype", "bf16", "--tile", "64x16"]))
atom:      Sw<2,3,3> o 0 o (32,8):(1,32)
tile:      Sw<2,3,3> o 0 o ((32,2),(8,2)):((1,256),(32,512))
canonical: MN-major SW64, T=8, m=2, k=2, LBO=256 elements (512 bytes), SBO=512 elements (1024 bytes)
wgmma (sm90) matrix descriptor 0x8000004000200000
  bits 0-13   start_address       = 0  (start address >> 4)
  bits 16-29  leading_byte_offset = 32  (LBO >> 4)
  bits 32-45  stride_byte_offset  = 64  (SBO >> 4)
  bits 49-51  base_offset         = 0  (swizzle pattern phase, 0 when aligned)
  bits 62-63  layout_type         = 2  (swizzle: 0 none, 1 128B, 2 64B, 3 32B)
  start address: 0x0 (bytes, low 4 bits dropped)
  swizzle: SW64 (64-byte rows in 16-byte units, pattern repeats every 512 bytes)
  if MN-major: LBO = 512 bytes: from one swizzle row of MN to the next
  if MN-major: SBO = 1024 bytes: from one group of K rows to the next
raw: 0x8000004000200000
0
"""

from __future__ import annotations

import argparse
import re

from cutemma.errors import CliError, DescriptorError
from cutemma.layout import tile_to_shape
from cutemma.smem import (
    decode_gmma_desc,
    decode_instr_desc,
    decode_umma_desc,
    element_bits,
    gmma_layout_atom,
    make_gmma_desc,
    make_umma_desc,
    match_canonical,
    umma_layout_atom,
)

_ARCH = {
    "sm90": (gmma_layout_atom, make_gmma_desc, decode_gmma_desc),
    "sm100": (umma_layout_atom, make_umma_desc, decode_umma_desc),
}
_VERSION_BIT = 1 << 46  # tcgen05 descriptors hold 0b001 in bits 46-48; wgmma keep them 0


def _int(text: str) -> int:
    # ASCII only: int() would also read other scripts' digits
    if len(text) > 80 or not re.fullmatch(r"[0-9]+|0[xX][0-9a-fA-F]+|0[bB][01]+", text.strip()):
        raise DescriptorError(
            f"{text[:80]!r} is not a non-negative integer (decimal, 0x... hex or 0b... binary)"
        )
    return int(text, 0)


def _tile(text: str) -> tuple[int, int]:
    from cutemma.cli.args import positive_ints

    return positive_ints(text, "--tile", 2, example="64x64 (MN x K)")


def _arch(text: str | None) -> str | None:
    """``--arch`` in any spelling (sm90, 90, sm_90a, sm100a) as 'sm90' or 'sm100'."""
    if text is None:
        return None
    from cutemma.cli.args import parse_arch

    number, _ = parse_arch(text)
    if f"sm{number}" not in _ARCH:
        raise CliError(
            f"--arch {text}: shared-memory descriptors exist for sm90 (wgmma) and sm100 "
            "(tcgen05); give one of them"
        )
    return f"sm{number}"


def _words(form, bits: int) -> str:
    def off(name, v):
        return f"{name} unused" if v is None else f"{name}={v} elements ({v * bits // 8} bytes)"

    return (
        f"{form.major}-major {form.swizzle}, T={form.T}, m={form.m}, k={form.k}, "
        f"{off('LBO', form.lbo)}, {off('SBO', form.sbo)}"
    )


def make_descriptor(major: str, swizzle: str, dtype: str, tile: str, start: str = "0",
                    arch: str | None = None):  # fmt: skip
    """The atom, tile and descriptor ``cutemma desc`` builds from its option texts.

    >>> atom, desc = make_descriptor("K", "128", "bf16", "64x64")
    >>> hex(desc.raw)
    '0x4000004000010000'
    """
    atom_fn, make, _ = _ARCH[_arch(arch) or "sm90"]
    atom = atom_fn(major, swizzle, dtype)
    tile = tile_to_shape(atom, _tile(tile))
    return tile, make(tile, major, dtype, start_address=_int(start))


def build(args: argparse.Namespace) -> int:
    """Print atom, tile, canonical form and descriptor for the options given.

    >>> build(parse(["--major", "K", "--swizzle", "32", "--dtype", "e4m3", "--tile", "8x32"]))
    ... # doctest: +ELLIPSIS
    atom:      Sw<1,4,3> o 0 o (8,32):(32,1)
    ...
    raw: 0xc000000000010000
    0
    """
    atom_fn, make, _ = _ARCH[_arch(args.arch_given) or "sm90"]
    if not (args.major and args.swizzle is not None and args.dtype and args.tile):
        raise DescriptorError("give --major, --swizzle, --dtype and --tile, or --decode RAW")
    atom = atom_fn(args.major, args.swizzle, args.dtype)
    tile = tile_to_shape(atom, _tile(args.tile))
    start = _int(args.start)
    form = match_canonical(tile, args.dtype, args.major)
    desc = make(tile, args.major, args.dtype, start_address=start)
    print(f"atom:      {atom}")
    print(f"tile:      {tile}")
    print(f"canonical: {_words(form, element_bits(args.dtype))}")
    print(desc.describe())
    print(f"raw: {desc.raw:#018x}")
    return 0


def decode(args: argparse.Namespace) -> int:
    """Explain a raw shared-memory descriptor, or an instruction descriptor with ``--kind``.

    >>> decode(parse(["--decode", "0x4100910", "--kind", "tf32"]))  # doctest: +ELLIPSIS
    tcgen05 instruction descriptor (kind::tf32) 0x04100910
    ...
    0
    """
    raw = _int(args.decode)
    if args.kind:
        print(decode_instr_desc(raw, args.kind).describe())
        return 0
    arch = _arch(args.arch_given) or ("sm100" if raw & _VERSION_BIT else "sm90")
    print(_ARCH[arch][2](raw, args.major).describe())
    return 0


def run(args: argparse.Namespace) -> int:
    """Entry point of ``cutemma desc``: decode when ``--decode`` is given, else build.

    >>> run(parse(["--decode", "0x0"]))  # doctest: +ELLIPSIS
    wgmma (sm90) matrix descriptor 0x0000000000000000
    ...
    0
    """
    if args.decode is not None:
        return decode(args)
    return build(args)


def register(sub) -> None:
    """Add the ``desc`` subcommand to an argparse sub-parser set.

    >>> import argparse
    >>> register(argparse.ArgumentParser().add_subparsers())
    """
    p = sub.add_parser(
        "desc",
        help="shared-memory tile + wgmma/tcgen05 descriptor, or decode one",
        description="Build a shared-memory tile (--major, --swizzle, --dtype, --tile) and print "
        "its canonical form and wgmma (sm90) or tcgen05 (sm100) matrix descriptor field by "
        "field, or explain a raw descriptor (--decode RAW; with --kind, a tcgen05 instruction "
        "descriptor). cutemma emit cpp desc -p ... writes the same descriptor as CuTe C++.",
    )
    p.add_argument("--major", help="K or MN")
    p.add_argument("--swizzle", help="INTER (or 0/16), 32, 64, 128, or 128_32B (sm100)")
    p.add_argument("--dtype", help="element type: tf32, bf16, f16, e4m3, s8, e2m1, ...")
    p.add_argument("--tile", help="MNxK, e.g. 64x64")
    p.add_argument("--start", default="0", help="byte address of the tile (default 0)")
    p.add_argument("--arch", dest="arch_given", help="sm90 (default) or sm100")
    p.add_argument("--decode", metavar="RAW", help="explain this raw descriptor instead")
    p.add_argument("--kind", help="with --decode: a tcgen05 instruction descriptor of this kind")
    p.set_defaults(run=run)


def parse(argv: list[str]) -> argparse.Namespace:
    """Parse ``desc`` options alone (for tests and examples).

    >>> parse(["--decode", "0x10"]).decode
    '0x10'
    """
    parser = argparse.ArgumentParser(prog="cutemma")
    register(parser.add_subparsers())
    return parser.parse_args(["desc", *argv])
