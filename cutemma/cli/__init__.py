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
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand.

    >>> "layout" in build_parser().format_help()
    True
    """
    parser = argparse.ArgumentParser(
        prog="cutemma", description="CuTe's MMA system: layouts, atoms, descriptors, kernels."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input).

    >>> main(["layout", "4:2"]) == 0
    4:2
    size 4  cosize 7
        0  1  2  3
    +--+--+--+--+
     0| 2| 4| 6|
    True
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 0
    try:
        return args.run(args) or 0
    except CutemmaError as e:
        print(f"cutemma: error: {e}", file=sys.stderr)
        return 2


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
      0| 1|
    exit status 0
    """
    try:
        sys.exit(main())
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        sys.exit(0)
