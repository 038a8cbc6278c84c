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
        out[key] = value
    return out


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


def register(sub) -> None:
    """Add the ``emit`` subcommand.

    >>> sub = argparse.ArgumentParser(prog="cutemma").add_subparsers()
    >>> register(sub)
    >>> sub.choices["emit"].parse_args(["cpp", "4:1"]).object
    '4:1'
    """
    p = sub.add_parser(
        "emit", help="write a layout, atom or TiledMMA as CuTe C++ (cpp) or CuTe DSL (dsl)"
    )
    p.add_argument("target", choices=("cpp", "dsl"), help="cpp: CuTe C++; dsl: CuTe DSL")
    p.add_argument(
        "object",
        help='a layout in CuTe notation, e.g. "(4,8):(8,1)", or an atom name, e.g. '
        "SM80_16x8x16_F32BF16BF16F32_TN or SM75_U32x4_LDSM_N",
    )
    p.add_argument("-p", "--param", action="append", help="parameter key=value (repeatable)")
    p.add_argument("--atom-layout", help='tile atoms over threads, e.g. "(2,2):(2,1)" or "2,2,1"')
    p.add_argument(
        "--tile", help='tile size / permutations, e.g. "32,32,4" or "(4,4,2):(1,8,4),32,4"'
    )
    p.add_argument("--type", action="store_true", help="cpp: print the C++ type, not a value")
    p.set_defaults(run=run_emit)
