"""Reading verified webhook bodies: JSON of any shape, times in several formats, and ids derived
from what was signed where the sender gives none.

A verified body may still be anything JSON allows. Only a body that is not JSON at all, or not the
top-level shape the sender documents, is refused (``MalformedPayload``); a report with missing or
odd fields becomes an ``IgnoredEvent`` or a field of None, so one odd report in a provider's batch
does not make the provider resend the whole batch forever.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from herald.adapters.provider_fields import safe_reason, text_field
from herald.domain.clock import iso
from herald.domain.inbound import IgnoredEvent, MalformedPayload
from herald.domain.money import Money

DERIVED_ID_PREFIX = "sha256:"
NOT_A_HERALD_EVENT = "not a Herald event type"
NO_RECIPIENT = "no recipient"


def load_json(raw_body: bytes) -> object:
    try:
        return json.loads(raw_body)
    # ValueError covers bad JSON, bad UTF-8 and integers past Python's digit limit; absurd
    # nesting exhausts the parser's recursion guard.
    except (ValueError, RecursionError):
        raise MalformedPayload("the body is not JSON") from None


def load_object(raw_body: bytes) -> Mapping[str, Any]:
    value = load_json(raw_body)
    if not isinstance(value, dict):
        raise MalformedPayload("the body is not a JSON object")
    return value


def load_report(raw_body: bytes, name_field: str) -> tuple[Mapping[str, Any], str]:
    """A body that is one report: the JSON object and its type name ("" when it has none)."""
    report = load_object(raw_body)
    return report, text(report, name_field) or ""


def ignored(source: str, name: str, *, no_recipient: bool = False) -> IgnoredEvent:
    """A report Herald does not record: not a type it knows, or an email report naming nobody."""
    return IgnoredEvent(source=source, name=name, reason=NO_RECIPIENT if no_recipient else NOT_A_HERALD_EVENT)


def as_object(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def text(fields: Mapping[str, Any], key: str) -> str | None:
    """A non-empty string field, or None."""
    return text_field(fields, key) or None


def first_text(fields: Mapping[str, Any], *keys: str) -> str | None:
    return next((value for key in keys if (value := text(fields, key))), None)


def reason(value: str | None) -> str | None:
    """A provider's description trimmed to one short line (an SMTP answer can run long)."""
    return safe_reason(value, ())


# A provider's or processor's time outside these years is no time it could mean: billing adds months
# and a grace period to a period's end, which the calendar's last year cannot take.
_REPORTED_YEARS = range(1970, 2200)


def iso_time(value: object) -> str | None:
    """ISO-8601 UTC with milliseconds from the time a (verified) sender reported: an ISO-8601 string
    in the sender's own spelling (no zone = UTC; some write ``2026-11-30 07:59:55.2+00``) or Unix
    seconds; None when there is no readable, plausible time."""
    try:
        if isinstance(value, str):
            moment = datetime.fromisoformat(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            moment = datetime.fromtimestamp(value, UTC)
        else:
            return None
        moment = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return iso(moment) if moment.year in _REPORTED_YEARS else None


def money(amount: object, currency: str | None) -> Money | None:
    """An amount of minor units (an integer: never a float, a string or a bool) in a currency, the
    code upper-cased (Polar writes "usd"); None unless both are there."""
    if not isinstance(amount, int) or isinstance(amount, bool) or currency is None:
        return None
    return Money(amount, currency.upper())


def derived_id(signed: bytes) -> str:
    """An event id for senders without one: a redelivery sends the same bytes, so the same id."""
    return DERIVED_ID_PREFIX + hashlib.sha256(signed).hexdigest()


def object_id(fields: Mapping[str, Any]) -> str:
    """``derived_id`` of one report inside a batch, independent of where the batch put it."""
    return derived_id(json.dumps(fields, sort_keys=True, separators=(",", ":")).encode("ascii"))
