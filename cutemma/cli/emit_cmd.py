"""``cutemma emit {cpp,dsl} OBJECT``: an object as CuTe C++ or CuTe DSL source.

OBJECT is a layout in CuTe notation (``"(4,8):(8,1)"``, ``"Sw<3,4,3> o 0 o (8,64):(64,1)"``)
or an atom name (MMA or copy), with the options of ``cutemma show``: ``-p key=value`` for the
atom's parameters (a copy atom's ``dtype``, ``thr`` and ``val``), ``--atom-layout`` and
``--tile`` to make an MMA atom a TiledMMA.

>>> import argparse
>>> parser = argparse.ArgumentParser(prog='cutemma')
>>> register(parser.add_subparsers())
>>> args = parser.parse_args(['emit', 'cpp', 'SM80_16x8x16_F32BF16BF16F32_TN',
...                           '--atom-layout', '2,2'])
>>> args.run(args)
make_tiled_mma(MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN>{}, Layout<Shape<Int<2>,Int<2>,Int<1>>,Stride<Int<1>,Int<2>,Int<0>>>{})
0
"""

from __future__ import annotations

import argparse

from cutemma.errors import CliError, CopyError


def _object(args: argparse.Namespace):
    """The cutemma object OBJECT and the options name."""
    from cutemma.cli.copy_show import _default_dtype, names_copy
    from cutemma.cli.list_show import _params

    text = args.object.strip()
    if text in ("desc", "descriptor"):
        return _descriptor(args)
    if text.startswith(("Sw<", "Swizzle<", "cute::Swizzle<")) and " o " not in text:
        if args.atom_layout or args.tile or args.param:
            raise CliError(f"{text!r} is a swizzle: --atom-layout, --tile and -p belong to an atom")
        from cutemma.layout.notation import parse_swizzle

        return parse_swizzle(text)
    # a layout has a ':' (shape:stride), starts like one or is C++'s Layout<...>; an atom
    # name starts with letters and never has a lone ':' (its C++ spelling has '::')
    starts = text[:1] in tuple("(_0123456789") or text.startswith(("Sw<", "Layout<"))
    if starts or ":" in text.replace("::", ""):
        if args.atom_layout or args.tile or args.param:
            raise CliError(
                f"{text!r} is a layout: --atom-layout, --tile and -p belong to an atom name"
            )
        from cutemma.layout import Layout

        return Layout.parse(text)
    if names_copy(text):
        from cutemma.copy import make_copy_atom

        params = _copy_params(args.param)
        atom = make_copy_atom(text, params.get("dtype") or _default_dtype(text))
        if args.atom_layout or args.tile:
            raise CliError("--atom-layout and --tile make a TiledMMA: give an MMA atom name")
        if "thr" in params:
            from cutemma.layout import Layout
            from cutemma.tiled import make_tiled_copy

            thr, val = Layout.parse(params["thr"]), Layout.parse(params.get("val", "1"))
            return make_tiled_copy(atom, thr, val)
        return atom
    from cutemma.cli.show_viz import parse_atom_layout, parse_tile
    from cutemma.mma import make_mma_atom
    from cutemma.tiled import make_tiled_mma

    atom = make_mma_atom(text, **_params(args.param))
    if not (args.atom_layout or args.tile):
        return atom
    layout = parse_atom_layout(args.atom_layout) if args.atom_layout else (1, 1, 1)
    return make_tiled_mma(atom, layout, parse_tile(args.tile) if args.tile else None)


def _copy_params(pairs) -> dict:
    out = {}
    for p in pairs or []:
        key, eq, value = p.partition("=")
        if not eq or key not in ("dtype", "thr", "val"):
            raise CopyError(f"parameter {p!r}: a copy atom takes -p dtype=f16, thr=L, val=L")
        if key in out:
            raise CopyError(f"parameter {key} given twice (-p {key}=...): give each key once")
        out[key] = value
    return out


_DESC_KEYS = ("major", "swizzle", "dtype", "tile", "start", "arch")


def _descriptor(args: argparse.Namespace):
    """``desc -p major=K -p swizzle=128 -p dtype=bf16 -p tile=64x64``: the descriptor that
    ``cutemma desc`` builds from the same values."""
    from cutemma.cli.desc import make_descriptor

    if args.atom_layout or args.tile:
        raise CliError("--atom-layout and --tile make a TiledMMA: a descriptor takes -p only")
    given: dict = {}
    for p in args.param or []:
        key, eq, value = p.partition("=")
        if not eq or key not in _DESC_KEYS:
            raise CliError(
                f"parameter {p!r}: a descriptor takes -p major=K|MN, swizzle=INTER|32|64|128, "
                "dtype=bf16, tile=64x64 (MN x K), and optionally start=0, arch=sm90|sm100"
            )
        if key in given:
            raise CliError(f"parameter {key} given twice (-p {key}=...): give each key once")
        given[key] = value
    missing = [k for k in _DESC_KEYS[:4] if k not in given]
    if missing:
        raise CliError(
            f"a descriptor needs -p {'=... -p '.join(missing)}=..., e.g. cutemma emit cpp desc "
            "-p major=K -p swizzle=128 -p dtype=bf16 -p tile=64x64"
        )
    return make_descriptor(
        given["major"], given["swizzle"], given["dtype"], given["tile"],
        given.get("start", "0"), given.get("arch"),
    )[1]  # fmt: skip


def _dsl():
    try:
        from cutemma.emit.dsl import to_cute_dsl
    except ImportError:
        raise CliError(
            "cutemma emit dsl needs cutemma.emit.dsl (CuTe DSL output), which this copy of "
            "cutemma does not have; `cutemma emit cpp` writes CuTe C++"
        ) from None
    return to_cute_dsl


def run_emit(args: argparse.Namespace) -> int:
    """Print OBJECT as CuTe C++ (``cpp``) or CuTe DSL (``dsl``) source.

    >>> ns = argparse.Namespace(target="cpp", object="(4,2):(2,1)", param=None,
    ...                         atom_layout=None, tile=None, type=False)
    >>> run_emit(ns)
    Layout<Shape<Int<4>,Int<2>>,Stride<Int<2>,Int<1>>>{}
    0
    """
    obj = _object(args)
    if args.target == "cpp":
        from cutemma.emit import to_cpp

        print(to_cpp(obj, type=args.type))
        return 0
    if args.type:
        raise CliError("--type names a C++ type; CuTe DSL has no type spelling: drop --type")
    print(_dsl()(obj))
    return 0


_DESCRIPTION = """
objects:
  (4,8):(8,1)                         a layout (also C++ Layout<...>{} or Sw<3,4,3> o 0 o L)
  Sw<3,4,3>                           a swizzle
  SM80_16x8x16_F32BF16BF16F32_TN      an MMA atom; --atom-layout / --tile make a TiledMMA
  SM75_U32x4_LDSM_N -p dtype=f16      a copy atom
  UniversalCopy<uint32_t> -p thr="(32,4):(4,1)" -p val="(1,2)"
                                      a TiledCopy: thr= the thread layout, val= each
                                      thread's value layout (default 1)
  desc -p major=K -p swizzle=128 -p dtype=bf16 -p tile=64x64 [-p start=0] [-p arch=sm100]
                                      a wgmma (sm90) or tcgen05 (sm100) smem descriptor

CuTe DSL atoms of sm90 (wgmma) and sm100 (tcgen05) need CUTE_DSL_ARCH=sm_90a or sm_100a
when the DSL runs without that GPU; cutemma.emit.dsl.dsl_arch(obj) says which.
"""


def register(sub) -> None:
    """Add the ``emit`` subcommand.

    >>> sub = argparse.ArgumentParser(prog="cutemma").add_subparsers()
    >>> register(sub)
    >>> sub.choices["emit"].parse_args(["cpp", "4:1"]).object
    '4:1'
    """
    summary = "write a layout, swizzle, atom, TiledMMA, TiledCopy or descriptor as CuTe C++ (cpp) or CuTe DSL (dsl)"  # noqa: E501
    p = sub.add_parser(
        "emit",
        help=summary,
        description=summary[0].upper() + summary[1:] + ". " + _DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("target", choices=("cpp", "dsl"), help="cpp: CuTe C++; dsl: CuTe DSL")
    p.add_argument(
        "object",
        help='a layout in CuTe notation, e.g. "(4,8):(8,1)", a swizzle "Sw<3,4,3>", an atom '
        "name, e.g. SM80_16x8x16_F32BF16BF16F32_TN or SM75_U32x4_LDSM_N, or desc",
    )
    p.add_argument(
        "-p",
        "--param",
        action="append",
        help="parameter key=value, each key once (repeatable): an MMA atom's parameters; a "
        "copy atom's dtype=, thr= and val= (layouts: a TiledCopy); a descriptor's major=, "
        "swizzle=, dtype=, tile=, start=, arch=",
    )
    p.add_argument("--atom-layout", help='tile atoms over threads, e.g. "(2,2):(2,1)" or "2,2,1"')
    p.add_argument(
        "--tile", help='tile size / permutations, e.g. "32,32,4" or "(4,4,2):(1,8,4),32,4"'
    )
    p.add_argument("--type", action="store_true", help="cpp: print the C++ type, not a value")
    p.set_defaults(run=run_emit)
