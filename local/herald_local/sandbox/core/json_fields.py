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


def header_object(value: Any) -> dict[str, str]:
    """Mail headers given as one JSON object (SendGrid's and Resend's ``headers``)."""
    return {str(name): as_str(text) for name, text in as_dict(value).items()}


def header_list(value: Any) -> dict[str, str]:
    """Mail headers given as a list of ``{Name, Value}`` (Postmark's and SES v2's ``Headers``)."""
    return {as_str(item.get("Name")): as_str(item.get("Value")) for item in as_dicts(value)}
