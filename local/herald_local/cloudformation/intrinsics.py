"""CloudFormation intrinsic functions: recognising them and rewriting the references they make.

The local stack never evaluates an intrinsic itself (moto's CloudFormation does); it only swaps
references to resources it does not create in moto (functions, HTTP APIs) for the values those
resources would have, so that the expressions stay resolvable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_SUB_TOKEN = re.compile(r"\$\{([^}!][^}]*)\}")


def is_intrinsic(node: Any) -> bool:
    if not isinstance(node, dict) or len(node) != 1:
        return False
    (key,) = node
    return key in {"Ref", "Condition"} or key.startswith("Fn::")


@dataclass(frozen=True)
class StandIn:
    """What a resource absent from moto answers to ``Ref`` and ``Fn::GetAtt``: expressions moto can resolve."""

    ref: Any
    attributes: Mapping[str, Any]


class UnresolvableReference(Exception):
    """An expression refers to a resource the local stack does not create and cannot stand in for."""

    def __init__(self, logical_id: str, attribute: str | None = None) -> None:
        self.logical_id = logical_id
        self.attribute = attribute
        target = f"{logical_id}.{attribute}" if attribute else logical_id
        super().__init__(f"refers to {target}, which the local stack does not create")


class _Rewriter:
    def __init__(self, stand_ins: Mapping[str, StandIn], absent: frozenset[str]) -> None:
        self._stand_ins = stand_ins
        self._absent = absent
        self._variables = 0

    def rewrite(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.rewrite(item) for item in node]
        if not isinstance(node, dict):
            return node
        if is_intrinsic(node):
            ((key, value),) = node.items()
            if key == "Ref" and isinstance(value, str):
                return self._ref(value, node)
            if key == "Fn::GetAtt":
                return self._get_att(value, node)
            if key == "Fn::Sub":
                return self._sub(value)
        return {key: self.rewrite(value) for key, value in node.items()}

    def _stand_in(self, logical_id: str, attribute: str | None) -> StandIn | None:
        if logical_id in self._stand_ins:
            return self._stand_ins[logical_id]
        if logical_id in self._absent:
            raise UnresolvableReference(logical_id, attribute)
        return None

    def _ref(self, logical_id: str, node: Any) -> Any:
        stand_in = self._stand_in(logical_id, None)
        return node if stand_in is None else stand_in.ref

    def _attribute(self, logical_id: str, attribute: str) -> Any | None:
        stand_in = self._stand_in(logical_id, attribute)
        if stand_in is None:
            return None
        if attribute not in stand_in.attributes:
            raise UnresolvableReference(logical_id, attribute)
        return stand_in.attributes[attribute]

    def _get_att(self, value: Any, node: Any) -> Any:
        logical_id, attribute = value.split(".", 1) if isinstance(value, str) else value
        replacement = self._attribute(str(logical_id), str(attribute))
        return node if replacement is None else replacement

    def _sub(self, value: Any) -> Any:
        text, variables = (value, {}) if isinstance(value, str) else (value[0], dict(value[1]))
        variables = {name: self.rewrite(expr) for name, expr in variables.items()}

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in variables or "::" in name:
                return match.group(0)
            logical_id, _, attribute = name.partition(".")
            if attribute:
                expression = self._attribute(logical_id, attribute)
            else:
                stand_in = self._stand_in(logical_id, None)
                expression = None if stand_in is None else stand_in.ref
            if expression is None:
                return match.group(0)
            self._variables += 1
            variable = f"HeraldLocalStandIn{self._variables}"
            variables[variable] = expression
            return "${" + variable + "}"

        rewritten = _SUB_TOKEN.sub(replace, text)
        return {"Fn::Sub": [rewritten, variables] if variables else rewritten}


def with_stand_ins(node: Any, stand_ins: Mapping[str, StandIn], absent: frozenset[str]) -> Any:
    """``node`` with every reference to a resource in ``stand_ins`` replaced by its stand-in.

    Raises UnresolvableReference for a reference to a resource in ``absent`` without a stand-in.
    """
    return _Rewriter(stand_ins, absent).rewrite(node)


def _intrinsic_as_sub_text(key: str, value: Any) -> str:
    if key == "Ref":
        return "${" + str(value) + "}"
    if key == "Fn::GetAtt":
        return "${" + (value if isinstance(value, str) else ".".join(value)) + "}"
    if key == "Fn::Sub" and isinstance(value, str):
        return value
    raise ValueError(f"{key} cannot be written inside a JSON document for moto")


def _as_sub_text(node: Any) -> Any:
    """``node`` with Ref/GetAtt/Sub turned into ``${...}`` text, so a JSON dump of it is a Sub template."""
    if isinstance(node, list):
        return [_as_sub_text(item) for item in node]
    if isinstance(node, str):
        return node.replace("${", "${!")
    if is_intrinsic(node):
        ((key, value),) = node.items()
        return _intrinsic_as_sub_text(key, value)
    if isinstance(node, dict):
        return {key: _as_sub_text(value) for key, value in node.items()}
    return node


def json_document(node: Any) -> Any:
    """A JSON-document property (a KMS key policy) as the string moto needs, intrinsics still resolved."""
    text = json.dumps(_as_sub_text(node))
    return {"Fn::Sub": text} if "${" in text.replace("${!", "") else text.replace("${!", "${")
