"""What every ``cutemma`` command shares: one-line usage errors, the one architecture parser,
whole-number options, and option values that start with ``-``.

>>> parse_arch("sm_90a"), parse_arch("89"), parse_arch("SM100")
((90, 'a'), (89, ''), (100, ''))
>>> nvrtc_target("sm89")
'sm_89'
"""

from __future__ import annotations

import argparse
import re

from cutemma.errors import CliError

_ARCH = re.compile(r"(?:sm_?)?(\d{2,3})([af]?)", re.IGNORECASE)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (a :class:`CliError`), not usage + exit.

    >>> p = Parser(prog="cutemma x")
    >>> _ = p.add_argument("n", type=int)
    >>> try:
    ...     p.parse_args([])
    ... except CliError as e:
    ...     print(e)
    x: the following arguments are required: n (see cutemma x --help)
    """

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, then an option given '' is refused (it would read as not given)."""
        ns, rest = super().parse_known_args(args, namespace)
        for action in self._actions:
            value = getattr(ns, action.dest, None) if action.option_strings else None
            values = value if isinstance(value, list) else [value]
            if any(isinstance(v, str) and not v.strip() for v in values):
                self.error(f"{action.option_strings[-1]} {value!r}: give a value")
        return ns, rest

    def error(self, message: str):  # argparse calls this for every usage error
        command = self.prog.removeprefix("cutemma").strip()
        raise CliError(f"{command + ': ' if command else ''}{message} (see {self.prog} --help)")


def parse_arch(text: str | int, option: str = "--arch") -> tuple[int, str]:
    """(compute capability, suffix) from ``sm90``, ``sm_90a``, ``90``, ``SM100f`` ...

    >>> parse_arch("sm_100a")
    (100, 'a')
    """
    m = _ARCH.fullmatch(str(text).strip())
    if not m:
        raise CliError(f"{option} {text!r} is not an architecture: write it as sm90, sm_90a or 90")
    return int(m.group(1)), m.group(2).lower()


def catalog_arch(text: str, option: str = "--arch") -> str:
    """An architecture the MMA catalog has atoms for, as ``'sm90'``; else a CliError naming them.

    >>> catalog_arch("sm_80"), catalog_arch("90a")
    ('sm80', 'sm90')
    """
    from cutemma.mma import families

    number, _ = parse_arch(text, option)
    known = sorted({f.arch for f in families()})
    if number not in known:
        raise CliError(
            f"{option} {text}: the catalog has no atoms for sm{number}; it has "
            + ", ".join(f"sm{a}" for a in known)
        )
    return f"sm{number}"


def nvrtc_target(text: str, option: str = "--arch") -> str:
    """The NVRTC spelling ``sm_NN[a|f]`` of any accepted architecture spelling.

    >>> nvrtc_target("90a"), nvrtc_target("SM_120A")
    ('sm_90a', 'sm_120a')
    """
    number, suffix = parse_arch(text, option)
    return f"sm_{number}{suffix}"


def whole_number(text: str) -> int:
    """An argparse ``type`` for a whole number in ASCII digits (``int`` also reads '٤' as 4).

    >>> whole_number("-3"), whole_number("64")
    (-3, 64)
    """
    if not re.fullmatch(r"[+-]?[0-9]{1,18}", text.strip()):
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}")
    return int(text)


def positive_ints(text: str, option: str, count: int | None = None, example: str = "") -> tuple:
    """Whole numbers >= 1 separated by ``x`` or ``,`` (``64x64``, ``2,2,1``); ``count`` of them.

    >>> positive_ints("64x32", "--tile", 2)
    (64, 32)
    """
    parts = [p.strip() for p in re.split(r"[x,]", text.strip().strip("()"), flags=re.IGNORECASE)]
    like = f", e.g. {example}" if example else ""
    want = f"{count} " if count else ""
    if not all(re.fullmatch(r"\d{1,9}", p) for p in parts) or (count and len(parts) != count):
        raise CliError(
            f"{option} {text!r}: expected {want}positive whole numbers separated by x or ,{like}"
        )
    values = tuple(int(p) for p in parts)
    if min(values) < 1:
        raise CliError(f"{option} {text!r}: every extent must be at least 1{like}")
    return values


def join_dash_values(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``--tile -64x64`` as ``--tile=-64x64``: a value that starts with ``-`` reaches the
    option (which then says what is wrong with it) instead of argparse's "expected one
    argument". A token that is itself an option is left alone.

    >>> p = Parser()
    >>> _ = p.add_argument("--tile")
    >>> join_dash_values(p, ["--tile", "-64x64"])
    ['--tile=-64x64']
    """
    takes_value, options = set(), set()
    stack = [parser]
    while stack:
        p = stack.pop()
        for action in p._actions:
            options.update(action.option_strings)
            if action.option_strings and action.nargs is None and action.const is None:
                if not isinstance(action, argparse._StoreConstAction | argparse._VersionAction):
                    takes_value.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
    out, i = [], 0
    while i < len(argv):
        tok = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if tok in takes_value and nxt and nxt.startswith("-") and nxt not in options:
            out.append(f"{tok}={nxt}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out
