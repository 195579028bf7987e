"""The rules of an account's event type catalog: names, descriptions, schema documents and what a
payload's schema problems look like (``herald.domain.events`` holds the event type itself).

A schema is a JSON Schema 2020-12 document that a tenant writes and every event of the type is
validated against at accept, on the API's own time: so it is held to bounds (size, nesting, only
references inside itself) before it is stored, and its validation to a step budget when it runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

# What one schema document may weigh (compact JSON): it is stored twice (the head and its version).
MAX_SCHEMA_BYTES = 64 * 1024
# Nesting of the schema document's objects and arrays.
MAX_SCHEMA_DEPTH = 32
MAX_DESCRIPTION_LENGTH = 1000
# The schema versions an event type keeps (the current one among them); older ones are dropped.
MAX_VERSIONS_KEPT = 20
# The problems one refused payload lists (the sentence names the first).
MAX_PAYLOAD_PROBLEMS = 10
# Keyword evaluations one payload's validation may take (some 0.5 s at most): a schema whose
# combinators multiply (anyOf of anyOf of ... over $refs) stops here instead of running for
# minutes, while a 64 KiB payload of small items under a simple schema stays well within it.
MAX_VALIDATION_STEPS = 50_000
# Names the catalog's own routes take (GET /event-types/openapi.json is the catalog's document).
RESERVED_NAMES = frozenset({"openapi.json"})
# Keywords whose values are data, not schemas: a "$ref" inside them is a value, never followed.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


class SchemaFault(Exception):
    """A schema Herald does not store: ``message`` says where and why, in one sentence."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class PayloadProblem(msgspec.Struct, frozen=True):
    """One way a payload breaks its type's schema: where (a JSON Pointer into the payload, "" for
    the payload itself) and what."""

    path: str
    message: str


class EventTypeVersion(msgspec.Struct, frozen=True):
    """A kept schema version of an event type."""

    version: int
    created_at: str
    schema: Mapping[str, Any] | None = None


class EventTypeChange(msgspec.Struct, frozen=True):
    """What a PATCH asks for: each field left UNSET (description, schema) or None (the flags) stays
    as it is; a description or a schema given as None is removed."""

    description: str | None | UnsetType = UNSET
    schema: Mapping[str, Any] | None | UnsetType = UNSET
    deprecated: bool | None = None
    archived: bool | None = None


def json_pointer(path: Iterator[str | int] | tuple[str | int, ...]) -> str:
    """RFC 6901: each step, ``~`` and ``/`` escaped, after a ``/``."""
    return "".join("/" + str(step).replace("~", "~0").replace("/", "~1") for step in path)


def local_references(schema: Mapping[str, Any]) -> list[str]:
    """The schema's ``$ref`` and ``$dynamicRef`` values, each a reference inside the document: a
    ``SchemaFault`` names the first that points elsewhere (a URL, a file), which Herald never
    fetches, or nesting beyond ``MAX_SCHEMA_DEPTH``."""
    found: list[str] = []
    _walk(schema, (), found)
    return found


def _walk(node: object, at: tuple[str | int, ...], found: list[str]) -> None:
    if len(at) > MAX_SCHEMA_DEPTH:
        raise SchemaFault(f"The schema is nested more than {MAX_SCHEMA_DEPTH} levels deep.")
    if isinstance(node, list):
        for index, item in enumerate(node):
            _walk(item, (*at, index), found)
    elif isinstance(node, Mapping):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                if not value.startswith("#"):
                    raise SchemaFault(
                        f"The schema's {key} at {json_pointer(at) or '/'} is {value[:200]!r}: a schema "
                        "may refer only to its own parts (#/$defs/…), never to a URL or a file."
                    )
                found.append(value)
            elif key not in _DATA_KEYWORDS:
                _walk(value, (*at, key), found)
