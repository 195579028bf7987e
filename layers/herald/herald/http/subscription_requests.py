"""The request bodies of the subscription routes (imported with those routes only).

Their shape is checked here; the rules that need the account (each event type exists, the URL
passes the SSRF guard, the account's cap) and the names of channels and subscribers are checked by
the subscription service, which the portal's routes call too.
"""

from __future__ import annotations

from typing import Annotated, TypeVar, cast

from msgspec import UNSET, UnsetType
from pydantic import BeforeValidator, ConfigDict, Field, StrictInt, field_validator
from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

from herald.domain.events import (
    CHANNEL_NAME,
    EVENT_TYPE_NAME,
    MAX_CHANNELS,
    MAX_EVENT_TYPE_NAME,
    MAX_EVENT_TYPES_PER_SUBSCRIPTION,
    MAX_RATE_PER_SECOND,
    MIN_RATE_PER_SECOND,
)
from herald.domain.notifications import ONE_LINE_PATTERN
from herald.domain.subscriptions import MAX_DESCRIPTION, SUBSCRIBER_ID, SubscriptionChange, SubscriptionDraft
from herald.http.requests import (
    WEBHOOK_HEADERS_SCHEMA,
    WEBHOOK_HEADERS_TEXT,
    StrictBody,
    WebhookHeaders,
    WindowEdge,
    whole_number,
)

T = TypeVar("T")
# The patterns are the document's; the service checks them with a sentence of its own.
EventTypeName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_EVENT_TYPE_NAME,
        json_schema_extra={"pattern": f"^{EVENT_TYPE_NAME.pattern}$"},
    ),
]
ChannelName = Annotated[
    str, Field(min_length=1, max_length=128, json_schema_extra={"pattern": f"^{CHANNEL_NAME.pattern}$"})
]
Url = Annotated[
    str,
    Field(
        min_length=1,
        max_length=2048,
        description="https:// URL on a public host (checked now and at every delivery)",
        json_schema_extra={"pattern": ONE_LINE_PATTERN},
    ),
]
EventTypes = Annotated[
    list[EventTypeName],
    Field(
        min_length=1,
        max_length=MAX_EVENT_TYPES_PER_SUBSCRIPTION,
        description="The event types it receives: existing, not archived",
    ),
]
Channels = Annotated[
    list[ChannelName],
    Field(
        max_length=MAX_CHANNELS, description="Only events sent to one of these channels; empty: every event"
    ),
]
Description = Annotated[str, Field(max_length=MAX_DESCRIPTION)]
# The bounds sit on the integer itself, before the whole-number validator (JSON's 5.0 is 5).
Rate = Annotated[
    StrictInt,
    Field(
        ge=MIN_RATE_PER_SECOND,
        le=MAX_RATE_PER_SECOND,
        description="Deliveries per second at most; null: as fast as they come",
    ),
    BeforeValidator(whole_number),
]
Headers = Annotated[
    WebhookHeaders, Field(description=WEBHOOK_HEADERS_TEXT, json_schema_extra=WEBHOOK_HEADERS_SCHEMA)
]


# The PATCH fields that are optional but take no null (the document says so; the model's type
# admits None only as "absent").
NOT_NULL = ("url", "eventTypes")


def _without_null(schema: JsonDict) -> None:
    properties = cast("dict[str, JsonDict]", schema["properties"])
    for name in NOT_NULL:
        field = properties[name]
        branches = cast("list[JsonDict]", field.pop("anyOf"))
        field.pop("default", None)
        field.update(next(branch for branch in branches if branch.get("type") != "null"))


class SubscriptionBody(StrictBody):
    url: Url
    eventTypes: EventTypes  # noqa: N815
    description: Description | None = None
    channels: Channels | None = None
    rateLimitPerSecond: Rate | None = None  # noqa: N815
    headers: Headers | None = None
    subscriberId: str | None = Field(  # noqa: N815
        default=None,
        min_length=1,
        max_length=128,
        description="The account's own id of the customer who owns the endpoint (a portal link's scope)",
        json_schema_extra={"pattern": f"^{SUBSCRIBER_ID.pattern}$"},
    )

    def draft(self) -> SubscriptionDraft:
        return SubscriptionDraft(
            url=self.url,
            event_types=tuple(self.eventTypes),
            description=self.description,
            channels=tuple(self.channels or ()),
            rate_limit_per_second=self.rateLimitPerSecond,
            headers=self.headers,
            subscriber_id=self.subscriberId,
        )


class SubscriptionPatch(StrictBody):
    """The fields to change; an absent field stays as it is, null clears one that may be empty (a
    subscription always has a URL and event types: those take no null)."""

    model_config = ConfigDict(**StrictBody.model_config, json_schema_extra=_without_null)

    url: Url | None = None
    eventTypes: EventTypes | None = None  # noqa: N815
    description: Description | None = None
    channels: Channels | None = None
    rateLimitPerSecond: Rate | None = None  # noqa: N815
    headers: Headers | None = None

    @field_validator("url", "eventTypes")
    @classmethod
    def _kept(cls, value: T | None) -> T:
        if value is None:
            raise PydanticCustomError("not_null", "a subscription always has one; leave it out to keep it")
        return value

    def change(self) -> SubscriptionChange:
        given = self.model_fields_set

        def field(name: str, value: T) -> T | UnsetType:
            return value if name in given else UNSET

        return SubscriptionChange(
            url=self.url if self.url is not None else UNSET,
            event_types=tuple(self.eventTypes) if self.eventTypes is not None else UNSET,
            channels=field("channels", tuple(self.channels or ())),
            description=field("description", self.description or None),
            rate_limit_per_second=field("rateLimitPerSecond", self.rateLimitPerSecond),
            headers=field("headers", self.headers or None),
        )


class TestRequest(StrictBody):
    __test__ = False  # not a pytest class, whatever the name says

    eventType: EventTypeName | None = Field(  # noqa: N815
        default=None, description="One of the subscription's event types (default: its first)"
    )


class SubscriptionRecoverRequest(StrictBody):
    """Which of the subscription's failed deliveries to re-queue: those accepted in [since, until)."""

    since: WindowEdge = Field(description="ISO-8601 time with offset: the window's start")
    until: WindowEdge | None = Field(default=None, description="The window's end (default: now)")
    cursor: str | None = Field(default=None, max_length=512, description="nextCursor of the previous call")
