"""The ``cutemma`` command line: ``cutemma layout L``, and the subcommands of later layers.

Each layer that has a command adds it with a ``register(subparsers)`` function in a module
of this package; this module only wires them together.

>>> main(["layout", "(2,2):(2,1)"])
(2,2):(2,1)
size 4  cosize 4
      0  1
    +--+--+
 0  | 0| 1|
 1  | 2| 3|
0
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from cutemma.errors import CutemmaError

# subcommand modules, in the order they appear in --help; a missing one (its layer not
# installed or not built yet) is skipped
_COMMANDS = (
    "cutemma.cli.layout_cmd",
    "cutemma.cli.list_show",
    "cutemma.cli.desc",
    "cutemma.cli.verify",
    "cutemma.cli.gemm",
    "cutemma.cli.emit_cmd",
)
# which module registers each command: a command line naming one imports only that module
# (``cutemma layout`` never loads the MMA catalog or the kernel generator)
_COMMAND_OF = {
    "layout": "cutemma.cli.layout_cmd",
    "list": "cutemma.cli.list_show",
    "show": "cutemma.cli.list_show",
    "desc": "cutemma.cli.desc",
    "verify": "cutemma.cli.verify",
    "gemm": "cutemma.cli.gemm",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every available subcommand (usage errors raise CliError), or,
    given ``command``, with only the module that registers it.

    >>> "layout" in build_parser().format_help()
    True
    >>> sorted(build_parser("layout")._subparsers._group_actions[0].choices)
    ['layout']
    """
    from cutemma import __version__
    from cutemma.cli.args import Parser

    parser = Parser(
        prog="cutemma", description="CuTe's MMA system: layouts, atoms, descriptors, kernels."
    )
    parser.add_argument("--version", action="version", version=f"cutemma {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    names = (_COMMAND_OF[command],) if command in _COMMAND_OF else _COMMANDS
    for name in names:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        mod.register(sub)
    return parser


def one_line(err: BaseException) -> str:
    """The first line of an error's message: a CLI error is one line on stderr.

    >>> one_line(ValueError("first" + chr(10) + "second"))
    'first'
    """
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input).

    Bad input of any kind is one line on stderr, ``cutemma: error: ...``, and status 2; no
    traceback (``CUTEMMA_TRACEBACK=1`` shows one for an internal error).

    >>> main(["layout", "4:2"]) == 0
    4:2
    size 4  cosize 7
          0  1  2  3
        +--+--+--+--+
     0  | 0| 2| 4| 6|
    True
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:  # before any parser: start-up is the whole cost of this one
        from cutemma import __version__

        print(f"cutemma {__version__}")
        return 0
    from cutemma.cli.args import join_dash_values

    parser = build_parser(argv[0] if argv else None)
    try:
        args = parser.parse_args(join_dash_values(parser, argv))
        if not getattr(args, "run", None):
            parser.print_help()
            return 0
        return args.run(args) or 0
    except SystemExit as e:  # --help and --version print, then exit 0
        return e.code if isinstance(e.code, int) else 0
    except CutemmaError as e:
        print(f"cutemma: error: {one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cutemma: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise
    except Exception as e:  # a bug: still one line, never a traceback unless asked for
        if os.environ.get("CUTEMMA_TRACEBACK"):
            raise
        print(
            f"cutemma: internal error: {type(e).__name__}: {one_line(e)} (a bug in cutemma; "
            "CUTEMMA_TRACEBACK=1 shows the traceback)",
            file=sys.stderr,
        )
        return 1


def console_main() -> None:
    """Entry point of the ``cutemma`` console script: :func:`main` on ``sys.argv``, then exit.

    >>> from unittest import mock
    >>> try:
    ...     with mock.patch("sys.argv", ["cutemma", "layout", "2:1"]):
    ...         console_main()
    ... except SystemExit as e:
    ...     print("exit status", e.code)
    2:1
    size 2  cosize 2
          0  1
        +--+--+
     0  | 0| 1|
    exit status 0
    """
    try:
        sys.exit(main())
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        sys.exit(0)
