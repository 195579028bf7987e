"""Lenient reads of untrusted JSON: a field of the wrong type reads as empty, never raises."""

from __future__ import annotations

from typing import Any


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value, as validation messages name it."""
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    return "null" if value is None else names.get(type(value), "unknown")
