"""What providers and payment processors report back to Herald, once verified and normalised.

Email providers (each vendor of the provider table, SES) report what happened to a message; each report
becomes a ``DeliveryEvent`` in Herald's own words. Payment processors (Polar, Paystack) report what
happened to a tenant's subscription; each report becomes a ``SubscriptionEvent``. Reports Herald has
no use for become ``IgnoredEvent`` so the caller can acknowledge them without acting.

Times are ISO-8601 UTC strings with milliseconds, as everywhere in the API.
"""

from __future__ import annotations

from enum import StrEnum

import msgspec

from herald.domain.money import Money
from herald.domain.vendors import ProviderName


class DeliveryEventType(StrEnum):
    DELIVERED = "delivered"
    OPENED = "opened"
    CLICKED = "clicked"
    # A permanent rejection: the address does not exist or refuses mail for good.
    BOUNCED = "bounced"
    # A rejection that may pass (mailbox full, greylisting, blocked for now): recorded only.
    SOFT_BOUNCED = "soft_bounced"
    COMPLAINED = "complained"
    UNSUBSCRIBED = "unsubscribed"
    DEFERRED = "deferred"
    # The provider will not send the message at all (suppressed address, quota, invalid).
    DROPPED = "dropped"


# Only these make Herald stop mailing the address for that tenant (a hard bounce, a spam complaint);
# an unsubscribe stops its list mail (``herald.domain.unsubscribes``); everything else, soft bounces
# and deferrals included, is only recorded.
SUPPRESSING_TYPES = frozenset({DeliveryEventType.BOUNCED, DeliveryEventType.COMPLAINED})


class DeliveryEvent(msgspec.Struct, frozen=True, kw_only=True):
    provider: ProviderName
    # The provider's id of this report, or one derived from a hash of what was signed where the
    # provider has none; duplicates of one report share it.
    event_id: str
    type: DeliveryEventType
    recipient: str  # lower-cased
    # None when the provider sent no readable time; the caller then uses the time of receipt.
    occurred_at: str | None
    # Read back from the ids Herald attached when sending. Only trustworthy together: the caller
    # ties the event to the job only if the job belongs to the tenant the webhook URL names.
    job_id: str | None
    tenant_id: str | None
    provider_message_id: str | None = None
    # A short description from the provider: bounce reason, SMTP answer, clicked link.
    reason: str | None = None

    @property
    def suppresses_recipient(self) -> bool:
        return self.type in SUPPRESSING_TYPES

    @property
    def unsubscribes_recipient(self) -> bool:
        """The recipient unsubscribed through the provider: from every topic, since the provider
        knows none of Herald's."""
        return self.type is DeliveryEventType.UNSUBSCRIBED

    @property
    def concerns_recipient(self) -> bool:
        """Acted on even when it ties to no job Herald keeps."""
        return self.suppresses_recipient or self.unsubscribes_recipient


class Processor(StrEnum):
    POLAR = "POLAR"
    PAYSTACK = "PAYSTACK"


class SubscriptionChange(StrEnum):
    ACTIVATED = "activated"
    # A further period has been paid for.
    RENEWED = "renewed"
    # Still paid up, but ends when the current period does.
    CANCELED_AT_PERIOD_END = "canceled_at_period_end"
    # A payment failed and the processor is still trying.
    PAST_DUE = "past_due"
    # Access ends now.
    REVOKED = "revoked"
    # Worth recording (it concerns a subscription) but changes nothing by itself.
    OTHER = "other"


class SubscriptionEvent(msgspec.Struct, frozen=True, kw_only=True):
    processor: Processor
    event_id: str
    event_name: str  # the processor's own name, for the record
    kind: SubscriptionChange
    # Herald's tenant id where the processor carries it back (checkout metadata, external id).
    tenant_id: str | None
    # What maps to a Herald plan: the Polar product id or the Paystack plan code.
    plan_key: str | None
    # The processor's subscription and customer ids: Paystack's invoice and subscription events
    # carry no tenant id (and invoices no plan), so the caller resolves them through these.
    subscription_ref: str | None
    customer_ref: str | None
    period_start: str | None
    period_end: str | None
    # What the event says was paid (a charge, a renewal, a subscription's recurring amount); None
    # when it does not say, or not in a way that shows what the customer paid.
    paid: Money | None


class IgnoredEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A verified report Herald acknowledges and does not act on (unknown or irrelevant type)."""

    source: str  # provider or processor name
    name: str  # the report's own type name, "" when it had none
    reason: str


class InboundWebhookError(Exception):
    """A webhook Herald must refuse. ``reason`` is short and safe to log: it never holds a secret,
    a signature or the body."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason!r})"


class InvalidSignature(InboundWebhookError):
    """The request is not proven to come from the provider: missing, stale or wrong signature."""


class MalformedPayload(InboundWebhookError):
    """The request was verified, but its body is not the JSON shape the provider documents."""


class UnusableSecret(InboundWebhookError):
    """The stored verification secret or key cannot be used at all (wrong format): a set-up
    problem on Herald's side, not the sender's fault."""
