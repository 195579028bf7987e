"""The request bodies of the event type routes (imported with those routes only)."""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import UNSET
from pydantic import Field, Strict

from herald.domain.event_types import MAX_DESCRIPTION_LENGTH, EventTypeChange
from herald.domain.events import EVENT_TYPE_NAME, MAX_EVENT_TYPE_NAME
from herald.http.requests import StrictBody

_SCHEMA = "A JSON Schema 2020-12 document each event's payload must meet (64 KiB at most; null: any object)"
_DESCRIPTION = "What the event means, for the people who subscribe to it"
# true or false, never "true" or 1.
Flag = Annotated[bool, Strict()]


class EventTypeBody(StrictBody):
    # The document states the name's pattern; the service checks it, with a sentence that says how
    # a name is written rather than a pattern.
    name: str = Field(
        min_length=1,
        max_length=MAX_EVENT_TYPE_NAME,
        description="Lower-case words joined by dots, like order.paid",
        json_schema_extra={"pattern": f"^{EVENT_TYPE_NAME.pattern}$"},
    )
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION_LENGTH, description=_DESCRIPTION)
    # "schema" would shadow BaseModel.schema: the field takes its name in the API from its alias.
    event_schema: dict[str, Any] | None = Field(default=None, alias="schema", description=_SCHEMA)


class EventTypeUpdate(StrictBody):
    """Only the fields sent change; a new schema is a new version."""

    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION_LENGTH, description=_DESCRIPTION)
    event_schema: dict[str, Any] | None = Field(default=None, alias="schema", description=_SCHEMA)
    deprecated: Flag | None = Field(default=None, description="Still accepted, but marked for retirement")
    archived: Flag | None = Field(
        default=None, description="false: take events again after DELETE archived it"
    )

    def change(self) -> EventTypeChange:
        sent = self.model_fields_set
        return EventTypeChange(
            description=self.description if "description" in sent else UNSET,
            schema=self.event_schema if "event_schema" in sent else UNSET,
            deprecated=self.deprecated,
            archived=self.archived,
        )
