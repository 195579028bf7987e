"""Expressions resolved by moto's CloudFormation, through synthetic stack Outputs.

Every intrinsic the local runtime needs the value of (a function's environment, an event source's
queue, an alarm's threshold) becomes an Output of the moto stack with the very same expression, and
is read back after the stack is created: no intrinsic-function engine of our own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from herald_local.cloudformation.intrinsics import is_intrinsic

OUTPUT_PREFIX = "HeraldLocal"


@dataclass(frozen=True)
class Deferred:
    """Stands in a tree for an expression until the stack has resolved its Output."""

    output: str


class UnresolvedExpression(Exception):
    def __init__(self, expression: Any) -> None:
        super().__init__(f"moto could not resolve {json.dumps(expression)}")
        self.expression = expression


class ExpressionSet:
    """The expressions to resolve, deduplicated, each named by one synthetic Output."""

    def __init__(self) -> None:
        self._outputs: dict[str, str] = {}
        self._expressions: dict[str, Any] = {}

    def add(self, expression: Any) -> Deferred:
        canonical = json.dumps(expression, sort_keys=True)
        if canonical not in self._outputs:
            name = f"{OUTPUT_PREFIX}{len(self._outputs):04d}"
            self._outputs[canonical] = name
            self._expressions[name] = expression
        return Deferred(self._outputs[canonical])

    def defer(self, tree: Any) -> Any:
        """``tree`` with each intrinsic replaced by a Deferred; literals stay as they are."""
        if is_intrinsic(tree):
            return self.add(tree)
        if isinstance(tree, dict):
            return {key: self.defer(value) for key, value in tree.items()}
        if isinstance(tree, list):
            return [self.defer(item) for item in tree]
        return tree

    def outputs(self) -> dict[str, Any]:
        return {name: {"Value": expression} for name, expression in self._expressions.items()}

    def expression(self, name: str) -> Any:
        return self._expressions[name]


def fill(tree: Any, values: Mapping[str, str], expressions: ExpressionSet) -> Any:
    """``tree`` with every Deferred replaced by the value the stack resolved for it."""
    if isinstance(tree, Deferred):
        if tree.output not in values:
            raise UnresolvedExpression(expressions.expression(tree.output))
        return values[tree.output]
    if isinstance(tree, dict):
        return {key: fill(value, values, expressions) for key, value in tree.items()}
    if isinstance(tree, list):
        return [fill(item, values, expressions) for item in tree]
    return tree
