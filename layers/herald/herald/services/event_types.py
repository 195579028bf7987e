"""The account's event type catalog: create, list and read, change (a new schema is a new version,
the previous ones kept), deprecate, archive and un-archive; and the events accept path's check of a
payload against its type's schema (``EventTypes.checked``: one GetItem, then the validation).

Every change is written with its audit entry, and a schema is checked by the engine before it is
stored: one that is not valid JSON Schema 2020-12, refers outside itself, or is too costly to apply
is refused when it is saved, not when an event is sent. An archived type takes no new events, but
subscriptions that name it keep it, and PATCH ``{"archived": false}`` brings it back (its name stays
taken meanwhile, so it cannot come back as a different type).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from msgspec import UNSET
from msgspec.structs import replace

from herald.domain.access import Grant
from herald.domain.audit import AuditAction, AuditEntry, entry
from herald.domain.clock import iso, utc_now
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.event_types import (
    MAX_DESCRIPTION_LENGTH,
    MAX_SCHEMA_BYTES,
    MAX_VERSIONS_KEPT,
    RESERVED_NAMES,
    EventTypeChange,
    PayloadProblem,
    SchemaFault,
)
from herald.domain.events import EVENT_TYPE_NAME, MAX_EVENT_TYPE_NAME, MAX_EVENT_TYPES, EventType
from herald.services.outcomes import EventTypeChanged
from herald.services.ports.event_types import EventTypeStore, SchemaEngine


class EventTypes:
    def __init__(
        self, store: EventTypeStore, schemas: SchemaEngine, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self._store = store
        self._schemas = schemas
        self._clock = clock

    def list(self, tenant_id: str, include_archived: bool = False) -> tuple[EventType, ...]:
        """The catalog by name (archived types only when asked for)."""
        return tuple(kind for kind in self._store.list(tenant_id) if include_archived or not kind.archived)

    def get(self, tenant_id: str, name: str, version: int | None = None) -> EventType:
        """The event type; with ``version``, as it was then (that kept version's schema)."""
        event_type = self._store.get(tenant_id, name)
        if event_type is None:
            raise not_found(name)
        if version is None or version == event_type.version:
            return event_type
        kept = self._store.version(tenant_id, name, version)
        if kept is None:
            raise HeraldError(
                f"Event type {name} keeps no version {version} (it keeps its last {MAX_VERSIONS_KEPT}).",
                ErrorCode.EVENT_TYPE_NOT_FOUND,
            )
        return replace(event_type, schema=kept.schema, version=kept.version)

    def create(
        self,
        tenant_id: str,
        grant: Grant,
        name: str,
        description: str | None,
        schema: Mapping[str, Any] | None,
    ) -> EventType:
        _valid_name(name)
        self._check(schema)
        if len(self._store.list(tenant_id)) >= MAX_EVENT_TYPES:
            raise HeraldError(
                f"This account has {MAX_EVENT_TYPES} event types (archived ones count), the most it may "
                "have.",
                ErrorCode.EVENT_TYPE_LIMIT_REACHED,
            )
        now = iso(self._clock())
        created = EventType(name, now, now, _description(description), schema)
        audit = self._entry(tenant_id, grant, AuditAction.EVENT_TYPE_CREATED, created)
        try:
            self._store.create(tenant_id, created, audit)
        except EventTypeChanged as exc:
            raise self._taken(tenant_id, name) from exc
        return created

    def update(self, tenant_id: str, grant: Grant, name: str, change: EventTypeChange) -> EventType:
        """The type with ``change`` applied; a schema that differs from the current one is a new
        version (the previous ones kept, the oldest beyond ``MAX_VERSIONS_KEPT`` dropped)."""
        before = self.get(tenant_id, name)
        after = replace(before, updated_at=iso(self._clock()))
        if change.description is not UNSET:
            after = replace(after, description=_description(change.description))
        if change.schema is not UNSET and change.schema != before.schema:
            self._check(change.schema)
            after = replace(after, schema=change.schema, version=before.version + 1)
        if change.deprecated is not None:
            after = replace(after, deprecated=change.deprecated)
        if change.archived is not None:
            after = replace(after, archived=change.archived)
        return self._save(tenant_id, grant, before, after)

    def archive(self, tenant_id: str, grant: Grant, name: str) -> EventType:
        """No new event of the type is accepted from now on (archiving twice changes nothing)."""
        return self.update(tenant_id, grant, name, EventTypeChange(archived=True))

    def checked(self, tenant_id: str, name: str, payload: Mapping[str, Any]) -> EventType:
        """The event type an event names, if it takes ``payload`` (the accept path: one strongly
        consistent GetItem, then the validation): ``event_type_not_found``, ``event_type_archived``
        or ``event_payload_invalid`` (its ``errors``: where and what, at most 10) otherwise."""
        event_type = self._store.get(tenant_id, name)
        if event_type is None:
            raise not_found(name)
        if event_type.archived:
            raise HeraldError(
                f"Event type {name} is archived: it takes no new events (PATCH it with "
                '{"archived": false} to use it again).',
                ErrorCode.EVENT_TYPE_ARCHIVED,
            )
        if event_type.schema is None:
            return event_type
        try:
            problems = self._schemas.problems(event_type.schema, payload)
        except SchemaFault as exc:
            raise HeraldError(
                f"The payload cannot be checked against event type {name}'s schema (version "
                f"{event_type.version}): {exc.message}",
                ErrorCode.EVENT_PAYLOAD_INVALID,
                extra={"errors": []},
            ) from exc
        if problems:
            raise payload_invalid(event_type, problems)
        return event_type

    def _save(self, tenant_id: str, grant: Grant, before: EventType, after: EventType) -> EventType:
        """``after`` stored with an audit entry naming what changed (nothing changed: no write)."""
        changed = {
            field: _detail(getattr(after, field))
            for field in ("version", "deprecated", "archived", "description")
            if getattr(after, field) != getattr(before, field)
        }
        if not changed:
            return before
        archiving = changed.get("archived") == "true"
        action = AuditAction.EVENT_TYPE_ARCHIVED if archiving else AuditAction.EVENT_TYPE_UPDATED
        audit = self._entry(tenant_id, grant, action, after, **changed)
        oldest = after.version - MAX_VERSIONS_KEPT
        dropped = oldest if "version" in changed and oldest >= 1 else None
        with _concurrent():
            self._store.update(tenant_id, before, after, dropped, audit)
        return after

    def _check(self, schema: Mapping[str, Any] | None) -> None:
        if schema is None:
            return
        size = len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False).encode())
        if size > MAX_SCHEMA_BYTES:
            raise HeraldError(
                f"The schema is {size} bytes as compact JSON, more than {MAX_SCHEMA_BYTES}.",
                ErrorCode.EVENT_TYPE_INVALID,
            )
        try:
            self._schemas.check(schema)
        except SchemaFault as exc:
            raise HeraldError(exc.message, ErrorCode.EVENT_TYPE_INVALID) from exc

    def _taken(self, tenant_id: str, name: str) -> HeraldError:
        """The name is another type's (a second read, only on this failing path)."""
        existing = self._store.get(tenant_id, name)
        if existing is None:  # gone again since: a concurrent create and archive, at worst
            return HeraldError(
                f"Event type {name} changed meanwhile; read it again.", ErrorCode.EVENT_TYPE_CHANGED
            )
        hint = ' (archived: PATCH it with {"archived": false} to use it again)' if existing.archived else ""
        return HeraldError(f"There is already an event type {name}{hint}.", ErrorCode.EVENT_TYPE_EXISTS)

    def _entry(
        self, tenant_id: str, grant: Grant, action: AuditAction, event_type: EventType, **details: str
    ) -> AuditEntry:
        return entry(
            tenant_id,
            event_type.updated_at,
            grant.actor,
            action,
            event_type.name,
            **{"version": str(event_type.version), **details},
        )


def not_found(name: str) -> HeraldError:
    return HeraldError(f"There is no event type {name}.", ErrorCode.EVENT_TYPE_NOT_FOUND)


def payload_invalid(event_type: EventType, problems: list[PayloadProblem]) -> HeraldError:
    """The first problem in the sentence, every one (at most 10) in ``errors``."""
    first = problems[0]
    where = f"at {first.path}" if first.path else "at its top level"
    more = f" (and {len(problems) - 1} more, listed in errors)" if len(problems) > 1 else ""
    return HeraldError(
        f"The payload does not match event type {event_type.name}'s schema (version "
        f"{event_type.version}): {where}, {first.message}{more}.",
        ErrorCode.EVENT_PAYLOAD_INVALID,
        extra={"errors": [{"path": problem.path, "message": problem.message} for problem in problems]},
    )


def _detail(value: object) -> str:
    """A changed field as an audit entry's detail: flags as JSON writes them, no description as ""."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _valid_name(name: str) -> None:
    if len(name) > MAX_EVENT_TYPE_NAME or not EVENT_TYPE_NAME.fullmatch(name) or name in RESERVED_NAMES:
        raise HeraldError(
            f"An event type's name is 1 to {MAX_EVENT_TYPE_NAME} characters: lower-case words of letters, "
            f"digits, _ and -, joined by at most 7 dots, like order.paid ({name[:120]!r} is not one"
            f"{', it is reserved' if name in RESERVED_NAMES else ''}).",
            ErrorCode.VALIDATION_ERROR,
        )


def _description(description: str | None) -> str | None:
    if description is None:
        return None
    cleaned = description.strip()
    if len(cleaned) > MAX_DESCRIPTION_LENGTH:
        raise HeraldError(
            f"An event type's description is at most {MAX_DESCRIPTION_LENGTH} characters.",
            ErrorCode.VALIDATION_ERROR,
        )
    return cleaned or None


@contextmanager
def _concurrent() -> Iterator[None]:
    """A concurrent change came first: the caller reads the event type again and retries."""
    try:
        yield
    except EventTypeChanged as exc:
        raise HeraldError(
            "The event type changed meanwhile (another edit or an archiving); read it again.",
            ErrorCode.EVENT_TYPE_CHANGED,
        ) from exc
