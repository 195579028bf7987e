"""IAM policy evaluation, as far as the template's function policies go: Allow and Deny statements
with Action and Resource lists (``*`` and ``?`` wildcards, actions case-insensitive) and String/Arn
conditions on the keys a call sets. Anything else is refused loudly rather than guessed."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from herald_local.aws.function_calls import AwsCall

_CONDITION_OPERATORS = {"StringEquals": False, "ArnEquals": False, "StringLike": True, "ArnLike": True}


class UnsupportedPolicy(ValueError):
    """A statement uses IAM grammar this evaluator does not know."""


@cache
def _pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    expression = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(f"^{expression}$", re.IGNORECASE if ignore_case else 0)


def _listed(value: Any) -> list[str]:
    return [str(item) for item in (value if isinstance(value, list) else [value])]


def _any_matches(patterns: Any, value: str, *, ignore_case: bool = False) -> bool:
    return any(_pattern(pattern, ignore_case).match(value) for pattern in _listed(patterns))


def _conditions_hold(conditions: Mapping[str, Any] | None, context: Mapping[str, str]) -> bool:
    for operator, tests in (conditions or {}).items():
        if operator not in _CONDITION_OPERATORS:
            raise UnsupportedPolicy(f"condition operator {operator}")
        wildcards = _CONDITION_OPERATORS[operator]
        for key, expected in tests.items():
            actual = context.get(key)
            if actual is None:
                return False
            if wildcards and not _any_matches(expected, actual):
                return False
            if not wildcards and actual not in _listed(expected):
                return False
    return True


def _check_grammar(statement: Mapping[str, Any]) -> None:
    unknown = set(statement) - {"Sid", "Effect", "Action", "Resource", "Condition"}
    if unknown:
        raise UnsupportedPolicy(f"statement keys {sorted(unknown)}")


def _applies(statement: Mapping[str, Any], call: AwsCall, *, with_conditions: bool = True) -> bool:
    _check_grammar(statement)
    return (
        _any_matches(statement["Action"], call.action, ignore_case=True)
        and _any_matches(statement["Resource"], call.resource)
        and (not with_conditions or _conditions_hold(statement.get("Condition"), dict(call.context)))
    )


def allows(statements: Iterable[Mapping[str, Any]], call: AwsCall) -> bool:
    """True when an Allow statement covers the call and no Deny statement does."""
    allowed = False
    for statement in statements:
        if _applies(statement, call):
            if statement["Effect"] == "Deny":
                return False
            allowed = True
    return allowed


@dataclass(frozen=True)
class Grant:
    function: str
    action: str
    resource: str

    def __str__(self) -> str:
        return f"{self.function}: {self.action} on {self.resource}"


def unused_grants(
    function: str, statements: Iterable[Mapping[str, Any]], calls: Sequence[AwsCall]
) -> list[Grant]:
    """Each action and resource an Allow statement grants that none of the calls used."""
    unused = []
    for statement in statements:
        if statement["Effect"] != "Allow":
            continue
        for action in _listed(statement["Action"]):
            for resource in _listed(statement["Resource"]):
                narrowed = {**statement, "Action": action, "Resource": resource}
                if not any(_applies(narrowed, call, with_conditions=False) for call in calls):
                    unused.append(Grant(function, action, resource))
    return unused
