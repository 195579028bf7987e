"""Event type schemas on jsonschema (JSON Schema 2020-12), held to what a shared API can afford.

A tenant writes the schema; every event of the type is validated against it at accept. So:

- **No reference leaves the document.** jsonschema's default registry fetches a ``$ref`` it does
  not hold with ``urlopen`` (a deprecated fallback, but still there): every validator here is given
  an empty ``referencing.Registry`` instead, whose lookups fail without any I/O, and a schema whose
  ``$ref`` is not a fragment (``#/$defs/…``) is refused before it is stored
  (``herald.domain.event_types.local_references``).
- **Patterns run on RE2, in linear time.** jsonschema matches ``pattern``, ``patternProperties``
  and the ``additionalProperties`` / ``unevaluatedProperties`` they narrow with ``re.search``, a
  backtracking engine that ``(a+)+$`` keeps busy for ever on a long string. Its two modules that do
  are given an ``re`` whose ``search`` is RE2's (google-re2), and a schema is checked with ``format:
  regex`` meaning "RE2 compiles it": lookaround and backreferences, which RE2 does not have, are
  refused when the schema is saved. (jsonschema is imported by this module only, and only by the
  paths that check a schema or validate a payload.)
- **A validation has a step budget** (``MAX_VALIDATION_STEPS`` keyword evaluations): combinators
  that multiply through ``$ref``s stop there, and a schema that exceeds it (or recurses without end)
  on the simplest payloads is refused when saved. ``uniqueItems`` compares by hashing, not pairwise.
- ``format`` is an annotation, as 2020-12 has it by default: not asserted.
"""

from __future__ import annotations

import contextvars
import functools
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import re2
from jsonschema import Draft202012Validator, FormatChecker, _keywords, _utils, validators
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from herald.domain.event_types import (
    MAX_PAYLOAD_PROBLEMS,
    MAX_VALIDATION_STEPS,
    PayloadProblem,
    SchemaFault,
    json_pointer,
    local_references,
)

DIALECT = "https://json-schema.org/draft/2020-12/schema"
_DIALECTS = frozenset({DIALECT, DIALECT + "#"})
# The document's own address while its references are resolved: nothing is registered under any other.
_BASE = "urn:herald:event-type-schema"
# Payloads every schema is tried on when saved: a schema too costly for these is too costly for any.
_PROBES: tuple[object, ...] = (None, True, 0, 1.5, "", "a" * 64, [], [None], {}, {"a": None})
_MESSAGE_LENGTH = 300
_STEPS: contextvars.ContextVar[list[int]] = contextvars.ContextVar("herald_schema_steps")


class _TooCostly(Exception):
    pass


# ---------------------------------------------------------------- RE2 for jsonschema's patterns


# RE2 bounds each pattern's memory (its program and the lazily built automaton the searches fill) by
# max_mem; with the cache's size, that bounds what patterns hold in a 512 MB function to 128 MB.
_PATTERN_MEMORY = 2 << 20
_PATTERNS_CACHED = 64


@functools.lru_cache(maxsize=_PATTERNS_CACHED)
def _compiled(pattern: str) -> Any:
    options = re2.Options()
    options.max_mem = _PATTERN_MEMORY
    options.log_errors = False  # a refused pattern is the tenant's, not a fault worth a log line
    return re2.compile(pattern, options)


class _Re2:
    """The part of ``re`` jsonschema's keyword modules use (``search``), on RE2."""

    error = re2.error

    @staticmethod
    def search(pattern: str, string: str) -> Any:
        return _compiled(pattern).search(string)


_keywords.re = _Re2  # type: ignore[attr-defined]
_utils.re = _Re2  # type: ignore[attr-defined]

_FORMATS = FormatChecker(formats=())


@_FORMATS.checks("regex", raises=re2.error)
def _is_re2(instance: object) -> bool:
    return not isinstance(instance, str) or _compiled(instance) is not None


# ---------------------------------------------------------------- the validator


def _counted(
    keyword: Callable[..., Iterable[ValidationError] | None],
) -> Callable[..., Iterator[ValidationError]]:
    @functools.wraps(keyword)
    def evaluate(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        steps = _STEPS.get(None)
        if steps is not None:
            steps[0] -= 1
            if steps[0] < 0:
                raise _TooCostly
        yield from keyword(validator, value, instance, schema) or ()

    return evaluate


def _hashable(value: object) -> object:
    """A value equal to another's exactly when JSON Schema calls them equal (1 == 1.0, true != 1)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, Mapping):
        return ("object", frozenset((key, _hashable(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return ("array", tuple(_hashable(item) for item in value))
    return ("value", value)


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:  # noqa: ARG001
    if unique and validator.is_type(instance, "array"):
        seen: set[object] = set()
        for index, item in enumerate(instance):
            key = _hashable(item)
            if key in seen:
                yield ValidationError(f"item {index} repeats an earlier item (uniqueItems)")
                return
            seen.add(key)


_Validator = validators.extend(  # type: ignore[no-untyped-call]  # (typeshed leaves it untyped)
    Draft202012Validator,
    validators={
        **{name: _counted(keyword) for name, keyword in Draft202012Validator.VALIDATORS.items()},
        "uniqueItems": _counted(_unique_items),
    },
)


def _validator(schema: Mapping[str, Any]) -> Any:
    return _Validator(schema, registry=Registry())


def _errors(schema: Mapping[str, Any], payload: object) -> list[ValidationError]:
    """The payload's first problems, within the step budget (``SchemaFault`` past it)."""
    token = _STEPS.set([MAX_VALIDATION_STEPS])
    try:
        return list(itertools.islice(_validator(schema).iter_errors(payload), MAX_PAYLOAD_PROBLEMS))
    except _TooCostly as exc:
        raise SchemaFault(
            f"Validating against the schema takes more than {MAX_VALIDATION_STEPS} steps "
            "(combinators that multiply through references)."
        ) from exc
    except RecursionError as exc:
        raise SchemaFault("The schema refers to itself without end.") from exc
    except Unresolvable as exc:
        raise SchemaFault(f"The schema refers to {exc.ref!r}, which it does not define.") from exc
    finally:
        _STEPS.reset(token)


# ---------------------------------------------------------------- the port


def check(schema: Mapping[str, Any]) -> None:
    """``SchemaFault`` naming the first reason ``schema`` is not a schema Herald stores."""
    references = local_references(schema)
    dialect = schema.get("$schema")
    if dialect is not None and dialect not in _DIALECTS:
        raise SchemaFault(
            f"Event type schemas are JSON Schema 2020-12 ({DIALECT}), not {str(dialect)[:200]!r}."
        )
    try:
        Draft202012Validator.check_schema(schema, format_checker=_FORMATS)
    except SchemaError as exc:
        raise SchemaFault(_schema_error(exc)) from exc
    resolver = Registry().with_resource(_BASE, DRAFT202012.create_resource(schema)).crawl().resolver(_BASE)
    for reference in references:
        try:
            resolver.lookup(reference)
        except Unresolvable as exc:
            raise SchemaFault(f"The schema refers to {reference[:200]!r}, which it does not define.") from exc
    for probe in _PROBES:
        _errors(schema, probe)


def problems(schema: Mapping[str, Any], payload: Mapping[str, Any]) -> list[PayloadProblem]:
    """Up to ``MAX_PAYLOAD_PROBLEMS`` ways ``payload`` breaks ``schema``, in the schema's order;
    ``SchemaFault`` when the schema cannot be applied within the budget."""
    errors = _errors(schema, payload)
    if not errors:
        return []
    # The first in the schema's order; under anyOf or oneOf, the branch that came closest.
    first = best_match(errors[:1])
    return [
        PayloadProblem(json_pointer(tuple(error.absolute_path)), _short(error.message))
        for error in (first, *errors[1:])
    ]


def _schema_error(error: SchemaError) -> str:
    where = json_pointer(tuple(error.absolute_path)) or "/"
    if error.validator == "format" and error.validator_value == "regex":
        return (
            f"The schema's pattern at {where} is not an RE2 regular expression "
            f"(no lookaround, no backreferences, at most 2 MiB once compiled): {_short(json.dumps(error.instance))}."
        )
    return f"The schema is not valid JSON Schema 2020-12 at {where}: {_short(error.message)}."


def _short(message: str) -> str:
    return message if len(message) <= _MESSAGE_LENGTH else message[: _MESSAGE_LENGTH - 1] + "…"
