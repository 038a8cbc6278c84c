"""A kernel family's config rules as data: each allowed combination of the config's fields is
one named :class:`ConfigRule` (a predicate and the words of what would satisfy it), the
family's table lists them once beside its config, and :func:`apply_rules` checks a config
against the table when it is made. A broken rule is reported by its qualified name,
``<scope>.<name>`` (``sm90_config.pingpong_shape``), in the config's
:class:`~cutemma.errors.ConfigRuleError` and in a design's failed rules.

>>> table = (ConfigRule("even", lambda n: n % 2 == 0, lambda n: f"{n} even"),)
>>> [r.name for r in broken_rules(3, table)], broken_rules(4, table)
(['even'], [])
>>> apply_rules(3, table, "demo", "the number 3")
Traceback (most recent call last):
...
cutemma.errors.ConfigRuleError: the number 3: rule demo.even: need 3 even
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cutemma.errors import ConfigRuleError


@dataclass(frozen=True)
class ConfigRule:
    """One allowed combination of a config's fields: ``holds(config)`` is True when the
    config keeps it; ``need(config)`` says, in the config's own numbers, what would.

    >>> r = ConfigRule("small", lambda n: n < 10, lambda n: f"{n} < 10")
    >>> r.holds(3), r.need(12)
    (True, '12 < 10')
    """

    name: str
    holds: Callable[[Any], bool]
    need: Callable[[Any], str]


def broken_rules(config: Any, table: Sequence[ConfigRule]) -> list[ConfigRule]:
    """The rules of ``table`` that ``config`` breaks, in the table's order.

    >>> broken_rules(12, (ConfigRule("small", lambda n: n < 10, str),))[0].name
    'small'
    """
    return [rule for rule in table if not rule.holds(config)]


def apply_rules(config: Any, table: Sequence[ConfigRule], scope: str, subject: str) -> None:
    """Raise a :class:`~cutemma.errors.ConfigRuleError` naming every rule of ``table`` that
    ``config`` breaks (as ``scope.name``, with what would satisfy it); ``subject`` names the
    config in the message. Nothing when every rule holds.

    >>> apply_rules(4, (ConfigRule("even", lambda n: n % 2 == 0, str),), "demo", "4")
    """
    bad = broken_rules(config, table)
    if bad:
        raise ConfigRuleError(subject, tuple((f"{scope}.{r.name}", r.need(config)) for r in bad))


def rule_names(table: Sequence[ConfigRule], scope: str) -> tuple[str, ...]:
    """The qualified names of a table's rules, in order.

    >>> rule_names((ConfigRule("even", bool, str),), "demo")
    ('demo.even',)
    """
    return tuple(f"{scope}.{r.name}" for r in table)
